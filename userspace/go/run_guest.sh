#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
#
# The Go package's tests and examples: TAP on stdout (scripts/lib/tap.sh),
# ending with "# go: N passed, N failed[, N skipped]"; exits non-zero on
# any failure.
#
# Runs inside the QEMU guest (scripts/vm.sh) with the module ALREADY loaded
# (it never runs insmod/rmmod), from any directory.  It runs binaries built
# beforehand on the host by `make -C userspace/go guest` (the guest sees
# the tree read-only and needs neither the Go toolchain nor a build cache):
#   bin/twheel.test       the package's tests, with the race detector
#   bin/twheel-386.test   the same tests as a 32-bit program (compat ioctls)
#   bin/<example>         idle-reaper, conntimeout, cachettl, delayqueue
# Writes "pass N fail N skip N" to $TWHEEL_OUT/go-results if TWHEEL_OUT is
# set.  About 1 minute under TCG.
#
#   run_guest.sh          in the guest: /dev/twheel must exist
#   run_guest.sh --host   without the module: the device tests skip, the
#                         examples are not run
set -u

here=$(cd "$(dirname "$0")" && pwd -P)
bin=$here/bin
# shellcheck source=scripts/lib/tap.sh
. "$here/../../scripts/lib/tap.sh"
host=0
case "${1:-}" in
--host) host=1 ;;
"") ;;
*) echo "usage: $0 [--host]" >&2; exit 2 ;;
esac

work=$(mktemp -d "${TMPDIR:-/tmp}/twheel-go.XXXXXX") || exit 1
finish() {
	rm -rf "$work"
	if [ -n "${TWHEEL_OUT:-}" ] && [ -d "$TWHEEL_OUT" ]; then
		tap_results "$TWHEEL_OUT/go-results" 2>/dev/null
	fi
	echo "1..$tap_n"
	tap_summary go
	exit $?
}

if [ "$host" -eq 0 ] && [ ! -c /dev/twheel ]; then
	not_ok "/dev/twheel exists (load kmod/twheel.ko first)"
	finish
fi

# gotest LABEL BINARY: one TAP line per top-level test of a `go test -c`
# binary, run in the package's directory (its tests find uapi/, twheelctl
# and the Python module from there); the whole log on failure.
gotest() {
	label=$1
	prog=$2
	if [ ! -x "$prog" ]; then
		not_ok "$label: $prog not built (make -C userspace/go guest)"
		return
	fi
	# a 32-bit program on a kernel without IA32 emulation
	if ! "$prog" -test.list '^$' > /dev/null 2>&1; then
		skip "$label" "$prog cannot run here"
		return
	fi
	log=$work/$label.log
	(cd "$here/twheel" && TMPDIR=$work "$prog" -test.v -test.count=1 -test.timeout=600s) \
		> "$log" 2>&1
	rc=$?
	f0=$tap_fail
	seen=0
	said=
	while IFS= read -r line; do
		case $line in
		"--- PASS: "*) ok "$label: ${line#--- PASS: }" ;;
		"--- FAIL: "*) not_ok "$label: ${line#--- FAIL: }" ;;
		# -test.v prints a skip's reason (t.Skip) before its verdict
		"--- SKIP: "*) skip "$label: ${line#--- SKIP: }" "${said:-no reason given}" ;;
		"    "*.go:*) said=$(echo "$line" | sed 's/^ *[^ ]*\.go:[0-9]*: //'); continue ;;
		*) continue ;;
		esac
		said=
		seen=$((seen + 1))
	done < "$log"
	if [ "$rc" -ne 0 ] && [ "$tap_fail" -eq "$f0" ]; then
		not_ok "$label: exit status $rc"
	fi
	if [ "$seen" -eq 0 ]; then
		not_ok "$label: ran no test"
	fi
	if [ "$tap_fail" -ne "$f0" ] || [ "${TWHEEL_GO_VERBOSE:-0}" = 1 ]; then
		sed 's/^/# /' "$log"
	else
		grep -E 'OS threads|events read' "$log" | sed 's/^ */# /'
	fi
}

gotest "go test -race" "$bin/twheel.test"
gotest "go test 386" "$bin/twheel-386.test"

# example NAME TIMEOUT ARGS...: an example verifies itself (exit status 0).
example() {
	name=$1
	limit=$2
	shift 2
	if [ "$host" -eq 1 ]; then
		skip "example $name" "needs /dev/twheel"
		return
	fi
	if [ ! -x "$bin/$name" ]; then
		not_ok "example $name: not built (make -C userspace/go guest)"
		return
	fi
	log=$work/$name.log
	desc="example $name${*:+ $*}"
	timeout -s KILL "$limit" "$bin/$name" "$@" > "$log" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ]; then
		ok "$desc"
		sed -n '/verification/,$p' "$log" | sed 's/^/# /'
	else
		not_ok "$desc (exit status $rc)"
		tail -n 60 "$log" | sed 's/^/# /'
	fi
}

# idle-reaper talks TCP over 127.0.0.1: the guest boots with lo down.
if [ "$host" -eq 0 ] && ! ip link show lo 2>/dev/null | grep -q 'UP'; then
	ip link set lo up 2>/dev/null || ifconfig lo up 2>/dev/null || true
fi
conns=500
if [ "${TWHEEL_SLOW_KERNEL:-0}" = 1 ] || [ -e /sys/kernel/debug/kmemleak ]; then
	conns=100
fi
example idle-reaper 60 -conns "$conns" -timeout 3s -duration 9s -quiet
example conntimeout 30
example cachettl 30
example delayqueue 30
finish
