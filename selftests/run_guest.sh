#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the QEMU guest (scripts/vm.sh), as root, from the repo root:
# loads the module (argument 1, default kmod/twheel.ko), runs the kselftests, checks the module lifecycle and
# that the node slab returns to its baseline, unloads the module.  Writes
# "pass N fail N skip N" to $TWHEEL_OUT/guest-results and exits non-zero on
# any failure.
set -u

out=${TWHEEL_OUT:-/tmp}
ko=${1:-kmod/twheel.ko}
pass=0
fail=0
skip=0
n=0

ok() {
	n=$((n + 1))
	pass=$((pass + 1))
	echo "ok $n $*"
}

not_ok() {
	n=$((n + 1))
	fail=$((fail + 1))
	echo "not ok $n $*"
}

check() {
	desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}

finish() {
	echo "pass $pass fail $fail skip $skip" > "$out/guest-results"
	echo "# guest: $pass passed, $fail failed, $skip skipped"
	[ "$fail" -eq 0 ]
	exit $?
}

# Active objects of the node cache ("none" fails the check below: slab
# statistics must be there).  SLUB counts the free objects of per-cpu slabs
# as active: shrink flushes them.
slab_objs() {
	echo 1 > /sys/kernel/slab/twheel_node/shrink 2> /dev/null
	awk '$1 == "twheel_node" { p = $2; found++ }
	     END { print (found == 1 ? p : "none") }' /proc/slabinfo
}

module_loaded() {
	grep -q '^twheel ' /proc/modules
}

kmemleak=/sys/kernel/debug/kmemleak
echo "# kernel $(uname -r), $(nproc) cpus, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"
if [ -w "$kmemleak" ]; then
	echo clear > "$kmemleak"
	echo "# kmemleak: cleared"
fi
# The race suite needs two CPUs really running at once (vm.sh boots 2).
check "the guest runs on 2 or more CPUs ($(nproc))" test "$(nproc)" -ge 2
check "insmod $ko" insmod "$ko"
check "/dev/twheel is a character device" test -c /dev/twheel
if ! module_loaded || [ ! -c /dev/twheel ]; then
	finish
fi
# KUnit suite of the wheel algorithm: its own module, twheel_kunit.ko,
# built next to twheel.ko only for a kernel with KUnit (the debug
# kernel); it runs at insmod and its results go away with rmmod.
. selftests/kunit.sh
: > "$out/kunit.ktap"
kunit_ko=$(dirname "$ko")/twheel_kunit.ko
if [ -f "$kunit_ko" ]; then
	check "insmod $kunit_ko" insmod "$kunit_ko"
	kunit_results twheel_core > "$out/kunit.ktap"
	check "rmmod twheel_kunit" rmmod twheel_kunit
fi
kres=$(tail -n 1 "$out/kunit.ktap" 2> /dev/null)
case $kres in
"pass "*)
	cat "$out/kunit.ktap"
	kp=$(echo "$kres" | cut -d' ' -f2)
	kf=$(echo "$kres" | cut -d' ' -f4)
	pass=$((pass + kp))
	fail=$((fail + kf))
	n=$((n + kp + kf))
	echo "# kunit twheel_core: $kp passed, $kf failed"
	;;
esac

base=$(slab_objs)
echo "# twheel_node slab baseline: $base active objects"

# rmmod must fail while an fd is open, and succeed once it is closed.
exec 3< /dev/twheel
if rmmod twheel 2> /dev/null; then
	not_ok "rmmod fails while /dev/twheel is open"
	exec 3<&-
	insmod "$ko"
else
	ok "rmmod fails while /dev/twheel is open"
	exec 3<&-
fi

# ksft BIN TAG: run one kselftest binary, add its totals to ours and keep
# them in $out/TAG.totals (pass/fail/skip counts, for the -m32 comparison).
ksft() {
	"$1" > "$out/$2.tap" 2>&1
	rc=$?
	cat "$out/$2.tap"
	totals=$(grep '^# Totals:' "$out/$2.tap" | tail -n 1)
	if [ -z "$totals" ]; then
		not_ok "$1 ran to completion (rc $rc, no totals line)"
		echo "none" > "$out/$2.totals"
		return
	fi
	echo "$totals" > "$out/$2.totals"
	for kv in $(echo "$totals" | sed 's/^# Totals://'); do
		k=${kv%%:*}
		v=${kv#*:}
		case $k in
		pass | xfail) pass=$((pass + v)); n=$((n + v)) ;;
		fail | xpass | error) fail=$((fail + v)); n=$((n + v)) ;;
		skip) skip=$((skip + v)); n=$((n + v)) ;;
		esac
	done
	if [ "$rc" -ne 0 ] && ! echo "$totals" | grep -Eq 'fail:[1-9]|error:[1-9]'; then
		not_ok "$1 exit status $rc"
	fi
}

# The kselftests, TAP.
for t in selftests/twheel_*_test; do
	if [ ! -x "$t" ]; then
		not_ok "$t is built"
		continue
	fi
	ksft "$t" "$(basename "$t")"
done

# The same kselftests built with -m32 (make -C selftests m32), through the
# kernel's compat paths: every suite must give the same totals.
# The fault suite's kmemleak scan after its sweeps runs in the 64-bit
# pass only (a scan takes 10-17 s on the debug kernel under TCG); the final
# scan below covers the -m32 pass.
if [ -d selftests/m32 ]; then
	export TWHEEL_FAULT_KMEMLEAK=0
	for t in selftests/twheel_*_test; do
		b=$(basename "$t")
		# liburing is 64-bit only on Debian (selftests/Makefile)
		[ "$b" = twheel_uring_test ] && continue
		if [ ! -x "selftests/m32/$b" ]; then
			not_ok "selftests/m32/$b is built"
			continue
		fi
		ksft "selftests/m32/$b" "m32-$b"
		if [ "$(cat "$out/$b.totals")" = "$(cat "$out/m32-$b.totals")" ]; then
			ok "-m32 $b: same totals as the 64-bit build"
		else
			not_ok "-m32 $b: same totals as the 64-bit build" \
				"($(cat "$out/$b.totals") vs $(cat "$out/m32-$b.totals"))"
		fi
	done
	unset TWHEEL_FAULT_KMEMLEAK
fi

# User-space suites (library, tools, examples) and the benchmark's short
# sanity run, with the module loaded.  Each prints TAP lines and ends with
# "# NAME: N passed, N failed".
for t in userspace/tests/run_guest.sh userspace/examples/run_guest.sh \
	userspace/bench/run_guest_short.sh; do
	[ -x "$t" ] || continue
	name=$(echo "$t" | tr / _)
	"$t" > "$out/$name.log" 2>&1
	rc=$?
	cat "$out/$name.log"
	line=$(grep -Eo '[0-9]+ passed, [0-9]+ failed' "$out/$name.log" | tail -n 1)
	if [ -z "$line" ]; then
		not_ok "$t ran to completion (rc $rc, no summary line)"
		continue
	fi
	p=${line%% passed*}
	f=${line#*passed, }
	f=${f%% failed*}
	pass=$((pass + p))
	fail=$((fail + f))
	n=$((n + p + f))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		not_ok "$t exit status $rc"
	fi
done

# Every fd is closed: the node slab must be back at its baseline.
i=0
while [ "$(slab_objs)" != "$base" ] && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
now=$(slab_objs)
if [ "$now" = "$base" ] && [ "$now" != none ]; then
	ok "twheel_node slab back at baseline ($now)"
else
	not_ok "twheel_node slab back at baseline (baseline $base, now $now)"
fi

check "rmmod twheel succeeds once every fd is closed" rmmod twheel
check "module is gone" sh -c '! grep -q "^twheel " /proc/modules'

# Module load/unload churn, with an fd opened and closed each time.
churn() {
	i=0
	while [ $i -lt "${TWHEEL_MODULE_CYCLES:-100}" ]; do
		insmod "$ko" || return 1
		dd if=/dev/twheel of=/dev/null count=0 2> /dev/null || return 1
		rmmod twheel || return 1
		i=$((i + 1))
	done
}
check "insmod, open, close, rmmod x${TWHEEL_MODULE_CYCLES:-100}" churn

# Debug kernel: scan, wait past kmemleak's minimum object age, scan again.
if [ -w "$kmemleak" ]; then
	# a write fails (EPERM) once kmemleak has disabled itself
	if ! { echo scan > "$kmemleak" && sleep 6 && echo scan > "$kmemleak"; }; then
		not_ok "kmemleak still enabled at the end of the run"
	fi
	cat "$kmemleak" > "$out/kmemleak.txt"
	if [ -s "$out/kmemleak.txt" ]; then
		not_ok "kmemleak reports no leak"
		cat "$out/kmemleak.txt"
	else
		ok "kmemleak reports no leak"
	fi
fi
finish
