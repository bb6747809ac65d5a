#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The guest's whole test run, what scripts/check.sh and
# scripts/check-debug.sh hand to scripts/vm.sh.  Runs inside the QEMU
# guest, as root, from the repository root:
#
#   scripts/guest.sh [MODULE [NOBTF]]  MODULE: default kmod/twheel.ko;
#                                      NOBTF: the module built without BTF
#
# It loads the module and runs the KUnit suites of twheel_kunit.ko if that
# lies next to it (the debug kernel), checks that rmmod fails while an fd
# is open, runs the module's kselftests, 64-bit and -m32
# (selftests/run_tests.sh), the user-space suites (userspace/tests,
# userspace/examples) and the benchmark's sanity run
# (userspace/bench/run_guest_short.sh), folding their totals into ours,
# then checks that the node slab is back at its baseline, that rmmod works
# once every fd is closed, module load/unload churn, the module without
# BTF if NOBTF is given (and MODULE had BTF) and, where kmemleak is (the
# debug kernel), that it reports no leak.  Writes
# "pass N fail N skip N" to $TWHEEL_OUT/guest-results, ends with
# "# guest: N passed, N failed[, N skipped]" and exits non-zero on any
# failure.
#
# TWHEEL_MODULE_CYCLES: load/unload cycles of the churn (default 100).
# TWHEEL_GUEST_SUITES: the suites to run, of those below (default: all
# but the syscall fuzzer, scripts/trinity-guest.sh; the kernel matrix's
# other kernels run fewer, scripts/check.sh).
set -u

out=${TWHEEL_OUT:-/tmp}
ko=${1:-kmod/twheel.ko}
nobtf=${2:-}
lib=$(dirname "$0")/lib
# shellcheck source=scripts/lib/tap.sh
. "$lib/tap.sh"
# shellcheck source=scripts/lib/kunit.sh
. "$lib/kunit.sh"

finish() {
	tap_results "$out/guest-results"
	tap_summary guest
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
# twheel_bpf_test's softirq_race attaches to lo's ingress: lo up, and
# the clsact qdisc and cls_bpf (modules on Debian's kernel, the guest
# autoloads nothing; built into the debug kernel).
ip link set lo up 2> /dev/null
modprobe -q sch_ingress 2> /dev/null
modprobe -q cls_bpf 2> /dev/null
# The race suite needs two CPUs really running at once (vm.sh boots 2).
check "the guest runs on 2 or more CPUs ($(nproc))" test "$(nproc)" -ge 2
check "insmod $ko" insmod "$ko"
check "/dev/twheel is a character device" test -c /dev/twheel
had_btf=0
[ -e /sys/kernel/btf/twheel ] && had_btf=1
echo "# module BTF: $([ $had_btf = 1 ] && echo yes || echo no)"
if ! module_loaded || [ ! -c /dev/twheel ]; then
	finish
fi
# KUnit suites of the wheel and the index (twheel_wheel, twheel_index, ...):
# their own module, twheel_kunit.ko, built next to twheel.ko only for a
# kernel with KUnit (the debug kernel); they run at insmod and their
# results go away with rmmod.
: > "$out/kunit.ktap"
kunit_ko=$(dirname "$ko")/twheel_kunit.ko
if [ -f "$kunit_ko" ]; then
	check "insmod $kunit_ko" insmod "$kunit_ko"
	kunit_results_all twheel_ > "$out/kunit.ktap"
	check "rmmod twheel_kunit" rmmod twheel_kunit
fi
kres=$(tail -n 1 "$out/kunit.ktap" 2> /dev/null)
case $kres in
"pass "*)
	cat "$out/kunit.ktap"
	kp=$(echo "$kres" | cut -d' ' -f2)
	kf=$(echo "$kres" | cut -d' ' -f4)
	tap_add "$kp" "$kf" 0
	echo "# kunit twheel_*: $kp passed, $kf failed"
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

# suite SCRIPT: run a sub-suite, which prints TAP and ends with
# "# NAME: N passed, N failed[, N skipped]"; its output goes to the console
# as it comes and to $out/SCRIPT.log ('/' as '_'), its totals into ours.
suite() {
	log=$out/$(echo "$1" | tr / _).log
	if [ ! -x "$1" ]; then
		not_ok "$1 is executable"
		return
	fi
	rm -f "$log.rc"
	t0=$(date +%s)
	{
		"$1" 2>&1
		echo $? > "$log.rc"
	} | tee "$log"
	rc=$(cat "$log.rc" 2> /dev/null) || rc=unknown
	echo "# $1 took $(($(date +%s) - t0)) s"
	f0=$tap_fail
	if ! tap_fold_summary "$log"; then
		not_ok "$1 ran to completion (rc $rc, no summary line)"
	elif [ "$rc" != 0 ] && [ "$tap_fail" -eq "$f0" ]; then
		not_ok "$1 exit status $rc"
	fi
}

# The module's kselftests (64-bit, then -m32: the same totals), the
# user-space suites (library, tools, examples, the Go package) and the
# benchmark's short sanity run, with the module loaded.
all_suites="selftests/run_tests.sh userspace/tests/run_guest.sh
	userspace/examples/run_guest.sh userspace/go/run_guest.sh
	userspace/bench/run_guest_short.sh"
# and one only on request: the syscall fuzzer (check-debug, make fuzz)
known="$all_suites scripts/trinity-guest.sh"
for t in ${TWHEEL_GUEST_SUITES:-$all_suites}; do
	case " $(echo $known) " in
	*" $t "*) suite "$t" ;;
	*) not_ok "TWHEEL_GUEST_SUITES: $t is a guest suite" ;;
	esac
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

# NOBTF, the module as plain make and DKMS build it, without BTF (MODULE
# had it): it loads, says in dmesg that the BPF touch is unavailable,
# registers no kfunc and fails TWHEEL_IOC_BPF_HANDLE with EOPNOTSUPP (the
# abi suite's bpf_handle case checks that when it finds no
# /sys/kernel/btf/twheel).
nobtf_said() {
	dmesg | grep -c "twheel: no module BTF: the BPF touch is unavailable"
}
nobtf_run() {
	said=$(nobtf_said)
	insmod "$nobtf" || return 1
	[ "$(nobtf_said)" -eq $((said + 1)) ] && [ ! -e /sys/kernel/btf/twheel ] &&
		selftests/twheel_abi_test > "$out/abi-nobtf.log" 2>&1
	rc=$?
	grep -E "bpf_handle|Totals" "$out/abi-nobtf.log"
	rmmod twheel || return 1
	return $rc
}
if [ -n "$nobtf" ] && [ "$had_btf" = 1 ]; then
	check "without BTF ($nobtf): loads, says so, no kfunc, abi suite passes" nobtf_run
elif [ -n "$nobtf" ]; then
	not_ok "$ko has BTF (/sys/kernel/btf/twheel), to compare with $nobtf"
fi

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
