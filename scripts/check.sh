#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The whole test run behind `make check`: installs what is missing, then
#   1. lint: checkpatch --strict, sparse C=2, W=1, kernel-doc
#   2. host: the wheel algorithm in user space under ASan/UBSan (the KUnit
#      suite of twheel_kunit.ko built as a program) and a fixed-length
#      libFuzzer run of it against a model
#   3. install paths: make install/uninstall, modinfo, DKMS
#   4. guest: the module in a QEMU guest on Debian's stock 6.1 kernel:
#      kselftests (64-bit and -m32), module lifecycle, slab baseline,
#      dmesg scan
# and ends with one line "N passed, N failed, N skipped" summing every tier.
# Exits non-zero on any failure.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
pass=0
fail=0
skip=0

tier() {
	echo
	echo "=== $* ==="
}

# Counts from a "N passed, N failed" line in a file.
add_counts() {
	local line
	line=$(grep -Eo '[0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1)
	if [ -z "$line" ]; then
		fail=$((fail + 1))
		return
	fi
	pass=$((pass + $(echo "$line" | awk '{print $1}')))
	fail=$((fail + $(echo "$line" | awk '{print $3}')))
}

summary() {
	echo
	echo "$pass passed, $fail failed, $skip skipped"
	[ "$fail" -eq 0 ]
	exit $?
}

tier "dependencies"
if ! scripts/deps.sh; then
	echo "dependency installation failed"
	fail=$((fail + 1))
	summary
fi
kimg=$(ls /boot/vmlinuz-6.1*-amd64 2>/dev/null | sort -V | tail -n 1)
kver=${kimg#/boot/vmlinuz-}
kdir=/lib/modules/$kver/build
echo "guest kernel $kver, headers $kdir"

log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

tier "lint"
scripts/lint.sh "$kdir" | tee "$log/lint"
add_counts "$log/lint"

tier "host: wheel algorithm: its KUnit suite (user space, ASan/UBSan)"
if make -s -C selftests/core kunit_core; then
	t0=$(date +%s%N)
	# a fixed seed, for the secrets and the random cases: the same run
	# every time (the debug tier's twheel_kunit.ko draws a random one)
	(cd selftests/core && TWHEEL_SEED=${TWHEEL_SEED:-0x5eed} ./kunit_core) 2>&1 |
		tee "$log/kunit"
	rc=${PIPESTATUS[0]}
	echo "# kunit_core ran $(( ($(date +%s%N) - t0) / 1000000 )) ms"
	add_counts "$log/kunit"
	n=$(sed -n 's/^# \([0-9]*\) skipped$/\1/p' "$log/kunit" | tail -n 1)
	skip=$((skip + ${n:-0}))
	# all passed, yet a non-zero exit: e.g. a LeakSanitizer report
	if [ "$rc" -ne 0 ] && grep -Eq '^# [0-9]+ passed, 0 failed$' "$log/kunit"; then
		echo "not ok: kunit_core exited with $rc"
		fail=$((fail + 1))
	fi
else
	echo "not ok: selftests/core kunit_core does not build"
	fail=$((fail + 1))
fi

tier "host: differential fuzzer of the wheel algorithm (libFuzzer, fixed run)"
make -s -C selftests/core fuzz-short 2>&1 | tail -n 20 | tee "$log/fuzz"
add_counts "$log/fuzz"

tier "install paths: make install/uninstall, modinfo, DKMS"
scripts/test-install.sh "$kdir" | tee "$log/install"
add_counts "$log/install"

tier "guest: build"
if ! make -s KDIR="$kdir" modules || ! make -s -C selftests || ! make -s -C selftests m32 ||
	! make -s -C userspace || ! make -s -C userspace/bench; then
	echo "not ok: module, selftests or user space do not build"
	fail=$((fail + 1))
	summary
fi

tier "guest: QEMU ($kver, TCG)"
out=${TWHEEL_OUT_DIR:-$(mktemp -d /tmp/twheel-check.XXXXXX)}
scripts/vm.sh --kernel "$kimg" --out "$out" --timeout "${TWHEEL_VM_TIMEOUT:-1500}" \
	-- selftests/run_guest.sh
vm_rc=$?
if [ -f "$out/guest-results" ]; then
	read -r _ gp _ gf _ gs < "$out/guest-results"
	pass=$((pass + gp))
	fail=$((fail + gf))
	skip=$((skip + gs))
else
	echo "not ok: the guest wrote no results"
	fail=$((fail + 1))
fi
if [ $vm_rc -ne 0 ]; then
	echo "not ok: the guest run failed (exit $vm_rc; see $out/console.log)"
	fail=$((fail + 1))
fi
summary
