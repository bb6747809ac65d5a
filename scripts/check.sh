#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The whole test run behind `make check`: installs what is missing, then
#   1. lint: checkpatch --strict, sparse C=2, W=1, kernel-doc
#   2. host: the shell TAP library of the runners (scripts/test-tap.sh),
#      the wheel algorithm in user space under ASan/UBSan (the KUnit
#      suites of twheel_kunit.ko built as a program) and a fixed-length
#      libFuzzer run of it against a model; the Go package's vet and
#      device-less tests; the selftests dropped into a copy of the
#      kernel's tools/testing/selftests (scripts/ksft-dropin.sh); module
#      BTF: `make BTF=1` for the guest kernel, checked as split BTF on its
#      image's vmlinux BTF (scripts/test-btf.sh; its first run on a machine
#      builds the cached build directory, scripts/btf-kdir.sh, a minute)
#   3. install paths: make install/uninstall, modinfo, DKMS, and the
#      Debian packages (make deb, install, DKMS build, purge)
#   4. guest: the module (with BTF: the BPF touch) in a QEMU guest on
#      Debian's stock 6.1 kernel (scripts/guest.sh): kselftests (64-bit
#      and -m32), the user-space suites, module lifecycle, slab baseline,
#      the module without BTF, dmesg scan
#   5. the kernel matrix: the module built for each other Debian kernel
#      (6.1-rt, 6.12, 6.12-rt; scripts/lib/kernels.sh), with BTF, booted,
#      with TWHEEL_MATRIX_SUITES (default: the kselftests, 64-bit, those of
#      TWHEEL_MATRIX_KSFT: the ABI, the I/O paths, io_uring, the BPF
#      touch, time namespaces, the races and the owner-pays checks; "all"
#      for every one), module lifecycle, slab baseline and dmesg scan; the
#      newest kernel, built from source, is make check-debug's
# and ends with one line "N passed, N failed, N skipped" summing every tier.
# Exits non-zero on any failure.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
# shellcheck source=scripts/lib/tap.sh
. scripts/lib/tap.sh

tier() {
	echo
	echo "=== $* ==="
}

# Adds the counts of the last "N passed, N failed[, N skipped]" line of a
# tier's log (FILE), or a failure if it has none.
add_counts() { # FILE NAME
	tap_fold_summary "$1" || not_ok "$2 prints its summary line"
}

summary() {
	echo
	tap_summary
	exit $?
}

tier "dependencies"
if ! scripts/deps.sh; then
	not_ok "scripts/deps.sh installs the dependencies"
	summary
fi
# shellcheck source=scripts/lib/kernels.sh
. scripts/lib/kernels.sh
kver=$(kernel_release 6.1)
kimg=/boot/vmlinuz-$kver
kdir=/lib/modules/$kver/build
echo "guest kernel $kver, headers $kdir"

log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

tier "lint"
scripts/lint.sh "$kdir" | tee "$log/lint"
add_counts "$log/lint" lint

tier "host: the shell TAP library of the test runners, under each shell"
scripts/test-tap.sh | tee "$log/tap"
add_counts "$log/tap" test-tap.sh

tier "host: wheel algorithm: its KUnit suite (user space, ASan/UBSan)"
if make -s -C selftests/core kunit_core; then
	t0=$(date +%s%N)
	# a fixed seed, for the secrets and the random cases: the same run
	# every time (the debug tier's twheel_kunit.ko draws a random one)
	(cd selftests/core && TWHEEL_SEED=${TWHEEL_SEED:-0x5eed} ./kunit_core) 2>&1 |
		tee "$log/kunit"
	rc=${PIPESTATUS[0]}
	echo "# kunit_core ran $(( ($(date +%s%N) - t0) / 1000000 )) ms"
	add_counts "$log/kunit" kunit_core
	# all passed, yet a non-zero exit: e.g. a LeakSanitizer report
	if [ "$rc" -ne 0 ] &&
		grep -Eq '^# [0-9]+ passed, 0 failed(, [0-9]+ skipped)?$' "$log/kunit"; then
		not_ok "kunit_core exited with $rc"
	fi
else
	not_ok "selftests/core kunit_core builds"
fi

tier "host: differential fuzzer of the wheel algorithm (libFuzzer, fixed run)"
make -s -C selftests/core fuzz-short 2>&1 | tail -n 20 | tee "$log/fuzz"
add_counts "$log/fuzz" fuzz-short

# render DESC SRC DOCDIR: a TAP line for render.py SRC DOCDIR, its log's
# tail as comments if it fails
render() {
	if python3 userspace/bench/render.py "$2" "$3" > "$3.log" 2>&1; then
		ok "$1"
	else
		not_ok "$1"
		tail -n 20 "$3.log" | sed 's/^/# /'
		return 1
	fi
}

tier "host: the benchmark's report, rendered again from its committed run"
# make bench ends in render.py, after half an hour of guest: a renderer
# that breaks on real results, or a docs/bench/results.md that is not
# what the renderer makes of docs/bench/raw, is caught here
rdir=$(mktemp -d)
same="docs/bench/results.md is what render.py makes of docs/bench/raw"
if ! render "render.py renders the committed run (docs/bench/raw)" docs/bench/raw "$rdir/docs"; then
	skip "$same" "render.py failed"
elif diff -u docs/bench/results.md "$rdir/docs/results.md" > "$rdir/diff"; then
	ok "$same"
else
	not_ok "$same"
	head -n 40 "$rdir/diff" | sed 's/^/# /'
fi
rm -rf "$rdir"

tier "host: Go package: gofmt, go vet, tests without the device (race detector)"
# also builds what the guest runs of it (userspace/go/bin); the build
# cache outlives the clone, as the debug kernel does
GOCACHE=${GOCACHE:-${TWHEEL_CACHE:-/var/cache/twheel}/go-build} \
	make -s -C userspace/go check-host 2>&1 | tee "$log/go"
add_counts "$log/go" "userspace/go check-host"

tier "host: the selftests dropped into the kernel tree (kselftest's lib.mk and runner)"
scripts/ksft-dropin.sh | tee "$log/dropin"
add_counts "$log/dropin" ksft-dropin.sh

# 6.1 needs a build directory of ours, 6.12's headers are one
for k in "$kver" "$(kernel_release 6.12)"; do
	tier "host: module BTF for $k (make BTF=1, split BTF, .BTF_ids)"
	scripts/test-btf.sh "$k" | tee "$log/btf"
	add_counts "$log/btf" "test-btf.sh $k"
done

tier "install paths: make install/uninstall, modinfo, DKMS"
scripts/test-install.sh "$kdir" | tee "$log/install"
add_counts "$log/install" test-install.sh

tier "install paths: Debian packages: make deb, apt-get install, DKMS, purge"
scripts/test-deb.sh "$kdir" | tee "$log/deb"
add_counts "$log/deb" test-deb.sh

tier "guest: build"
# The guest runs the module with BTF (make BTF=1: the BPF touch, the
# bpf suite, the examples' --xdp and --tc), then once the module as
# plain make and DKMS build it, without BTF (out/nobtf, scripts/guest.sh).
if ! make -s KDIR="$kdir" modules || ! mkdir -p out/nobtf ||
	! cp kmod/twheel.ko out/nobtf/twheel.ko ||
	! make -s BTF=1 KVER="$kver" modules || ! make -s -C selftests ||
	! make -s -C selftests m32 || ! make -s -C userspace || ! make -s -C userspace/bench; then
	not_ok "module (with and without BTF), selftests and user space build"
	summary
fi

tier "guest: QEMU ($kver, TCG)"
out=${TWHEEL_OUT_DIR:-$(mktemp -d /tmp/twheel-check.XXXXXX)}
scripts/vm.sh --kernel "$kimg" --out "$out" --timeout "${TWHEEL_VM_TIMEOUT:-2400}" \
	-- scripts/guest.sh kmod/twheel.ko out/nobtf/twheel.ko
vm_rc=$?
tap_fold_results "$out/guest-results" || not_ok "the guest writes its results"
[ $vm_rc -eq 0 ] || not_ok "the guest run passes (vm.sh exit $vm_rc; see $out/console.log)"

# The bench's short run, through the renderer: the JSON this source's
# bench writes, not only the committed run's (above).
rdir=$(mktemp -d)
mkdir "$rdir/src"
if cp "$out/bench-short.jsonl" "$rdir/src/bench.jsonl" 2> /dev/null; then
	render "render.py renders the guest's short bench run" "$rdir/src" "$rdir/docs"
else
	skip "render.py renders the guest's short bench run" "the guest wrote no bench-short.jsonl"
fi
rm -rf "$rdir"

# matrix_guest SERIES FLAVOUR: the module built for that Debian kernel
# (with BTF), then the guest on it with the matrix's suites.
matrix_guest() {
	local k b kd o rc
	if ! k=$(kernel_release "$1" "$2"); then
		not_ok "Debian's $1 $2 kernel is installed (scripts/deps.sh)"
		return
	fi
	tier "guest: QEMU ($k, TCG): ${TWHEEL_MATRIX_SUITES:-selftests/run_tests.sh} (${ksft:-all})"
	b=out/kernels/$k
	module_tree "$b"
	if ! kd=$(scripts/btf-kdir.sh "$k") ||
		! make -s -C "$kd" M="$top/$b" modules > "$b/build.log" 2>&1; then
		tail -n 20 "$b/build.log" | sed 's/^/# /'
		not_ok "the module builds for $k, with BTF"
		return
	fi
	o=$out/$k
	mkdir -p "$o"
	scripts/vm.sh --kernel "/boot/vmlinuz-$k" --out "$o" \
		--timeout "${TWHEEL_VM_TIMEOUT:-2400}" -- \
		env TWHEEL_GUEST_SUITES="${TWHEEL_MATRIX_SUITES:-selftests/run_tests.sh}" \
		TWHEEL_KSFT_M32=0 TWHEEL_MODULE_CYCLES=10 TWHEEL_KSFT_ONLY="$ksft" \
		scripts/guest.sh "$b/kmod/twheel.ko"
	rc=$?
	tap_fold_results "$o/guest-results" || not_ok "the guest on $k writes its results"
	[ $rc -eq 0 ] || not_ok "the guest run on $k passes (vm.sh exit $rc; see $o/console.log)"
}
ksft=${TWHEEL_MATRIX_KSFT:-abi io uring bpf timens race owner}
[ "$ksft" != all ] || ksft=
for spec in "${TW_MATRIX[@]}"; do
	[ "$spec" = "6.1 amd64" ] && continue	# the guest above
	# shellcheck disable=SC2086 # "SERIES FLAVOUR"
	matrix_guest $spec
done
summary
