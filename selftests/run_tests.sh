#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The module's kselftests: every twheel_*_test next to this script, then
# the same suites built with -m32 (make -C selftests m32, into m32/),
# through the kernel's compat paths, each of which must give the same
# totals as its 64-bit build.  Run it with the module loaded (without
# /dev/twheel every test skips) and the tests built, as root; it neither
# loads nor unloads the module.  scripts/guest.sh runs it in the QEMU guest,
# from the repository root:
#
#   selftests/run_tests.sh
#
# Prints each suite's TAP, then a line of ours for each -m32 comparison
# (and for a suite that is not built, ends without its totals, or exits
# non-zero with no failure counted, and a skip for one that skipped whole:
# without /dev/twheel), and ends with
# "# kselftest: N passed, N failed[, N skipped]", the suites' "# Totals:"
# folded in; exits non-zero on any failure.  Each suite's output and totals
# line are kept as NAME.tap and NAME.totals (m32-NAME.* for -m32) in
# $TWHEEL_OUT if it is set, else in a temporary directory.
#
# TWHEEL_KSFT_M32=0 leaves the -m32 pass out, TWHEEL_KSFT_ONLY="abi io"
# runs those programs alone (twheel_abi_test, twheel_io_test): the kernel
# matrix's other kernels (scripts/check.sh).
#
# POSIX sh, on scripts/lib/tap.sh of this repository: moved to
# tools/testing/selftests/twheel, it would take the kernel's
# kselftest/ktap_helpers.sh instead.
set -u

dir=$(dirname "$0")
# shellcheck source=scripts/lib/tap.sh
. "$dir/../scripts/lib/tap.sh"

if [ -n "${TWHEEL_OUT:-}" ]; then
	out=$TWHEEL_OUT
else
	out=$(mktemp -d "${TMPDIR:-/tmp}/twheel-kselftest.XXXXXX") || exit 1
	trap 'rm -rf "$out"' EXIT
fi

# ksft BIN TAG: run one kselftest binary, add its totals to ours and keep
# them in $out/TAG.totals (the last "# Totals:" line, "none" without one:
# for the -m32 comparison).
ksft() {
	t0=$(date +%s)
	"$1" > "$out/$2.tap" 2>&1
	rc=$?
	cat "$out/$2.tap"
	echo "# $2 took $(($(date +%s) - t0)) s"
	# without /dev/twheel, the whole program skips (KSFT_SKIP, plan 1..0)
	if [ "$rc" -eq 4 ] && grep -q '^1\.\.0 # SKIP' "$out/$2.tap"; then
		skip "$1" "$(sed -n 's/^1\.\.0 # SKIP //p' "$out/$2.tap")"
		echo "skip" > "$out/$2.totals"
		return
	fi
	f0=$tap_fail
	if ! tap_fold_totals "$out/$2.tap"; then
		not_ok "$1 ran to completion (rc $rc, no totals line)"
		echo "none" > "$out/$2.totals"
		return
	fi
	grep '^# Totals:' "$out/$2.tap" | tail -n 1 > "$out/$2.totals"
	if [ "$rc" -ne 0 ] && [ "$tap_fail" -eq "$f0" ]; then
		not_ok "$1 exit status $rc"
	fi
}

# only NAME: whether TWHEEL_KSFT_ONLY lets twheel_NAME_test run
only() {
	[ -z "${TWHEEL_KSFT_ONLY:-}" ] && return 0
	case " $TWHEEL_KSFT_ONLY " in
	*" $1 "*) return 0 ;;
	esac
	return 1
}

for t in "$dir"/twheel_*_test; do
	n=${t##*/twheel_}
	only "${n%_test}" || continue
	if [ ! -x "$t" ]; then
		not_ok "$t is built"
		continue
	fi
	ksft "$t" "$(basename "$t")"
done

# The fault suite's kmemleak scan after its sweeps runs in the 64-bit
# pass only (a scan takes 10-17 s on the debug kernel under TCG); the
# guest's final scan (scripts/guest.sh) covers the -m32 pass.
if [ -d "$dir/m32" ] && [ "${TWHEEL_KSFT_M32:-1}" != 0 ]; then
	export TWHEEL_FAULT_KMEMLEAK=0
	for t in "$dir"/twheel_*_test; do
		b=$(basename "$t")
		n=${b#twheel_}
		only "${n%_test}" || continue
		# liburing and libbpf are 64-bit only on Debian (selftests/Makefile)
		case $b in twheel_uring_test | twheel_bpf_test) continue ;; esac
		if [ ! -x "$dir/m32/$b" ]; then
			not_ok "$dir/m32/$b is built"
			continue
		fi
		ksft "$dir/m32/$b" "m32-$b"
		if [ "$(cat "$out/$b.totals")" = "$(cat "$out/m32-$b.totals")" ]; then
			ok "-m32 $b: same totals as the 64-bit build"
		else
			not_ok "-m32 $b: same totals as the 64-bit build" \
				"($(cat "$out/$b.totals") vs $(cat "$out/m32-$b.totals"))"
		fi
	done
fi

tap_summary kselftest
