#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The selftests as a kernel tree would hold them: selftests/ copied
# unchanged into tools/testing/selftests/twheel/ of a scratch copy of the
# tree scripts/ksrc.sh extracts (the kernel's selftests Makefile, lib.mk
# and kselftest/ runner), <linux/twheel.h> where `make headers_install`
# would put it (usr/include/linux/), then the kernel's own entry points:
#
#   make -C tools/testing/selftests TARGETS=twheel              build
#   make -C tools/testing/selftests TARGETS=twheel run_tests    runner.sh
#   make -C tools/testing/selftests TARGETS=twheel install      run_kselftest.sh
#   make -C tools/testing/selftests TARGETS=twheel clean
#
# Every program must be built, installed, listed and, /dev/twheel being
# absent here, reported "ok N selftests: twheel: NAME # SKIP" by both
# runners (with the module loaded, the runs are skipped: they are the
# guest's).  TAP lines, then "# ksft-dropin: N passed, N failed[, N
# skipped]"; non-zero on failure.
#
# Usage: scripts/ksft-dropin.sh [DIR]
#   DIR: build the scratch tree there and keep it (default: a temporary
#   directory, removed at the end); it must not exist yet.  Run from a git
#   checkout: the copy is what git has of selftests/.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top" || exit 1
# shellcheck source=scripts/lib/tap.sh
. scripts/lib/tap.sh

log=$(mktemp -d)
if [ $# -gt 0 ]; then
	tree=$1
	mkdir "$tree" || tap_bail_out ksft-dropin 1 "cannot create $tree"
	trap 'rm -rf "$log"' EXIT
else
	tree=$(mktemp -d "${TMPDIR:-/tmp}/ksft-dropin.XXXXXX")
	trap 'rm -rf "$log" "$tree"' EXIT
fi
tree=$(cd "$tree" && pwd)
ksft=$tree/tools/testing/selftests
# the variables the kernel's selftests Makefile and lib.mk read
unset OUTPUT O KBUILD_OUTPUT INSTALL_PATH KSFT_INSTALL_PATH KSFT_DIR \
	TARGETS SKIP_TARGETS CFLAGS LDFLAGS LDLIBS CC

names=$(cd selftests && ls twheel_*_test.c | sed 's/\.c$//')
n=$(echo "$names" | wc -l)
# With the module loaded the suites would run for real, for minutes: that
# is the guest's part (scripts/guest.sh).
norun=
[ -e /dev/twheel ] && norun="/dev/twheel is here: the suites would run for real"

t() { # DESCRIPTION LOG COMMAND...: tap_cmd, with its log in $log/LOG
	tap_log=$log/$2
	tap_cmd "$1" "${@:3}"
}

ksrc=$(scripts/ksrc.sh) || tap_bail_out ksft-dropin 1 "scripts/ksrc.sh failed"

copy() {
	cp -a "$ksrc/." "$tree/" &&
		mkdir -p "$ksft/twheel" &&
		# what git has of selftests/ (built programs are ignored)
		git ls-files -z -co --exclude-standard -- selftests |
		tar --null -T - -cf - | tar -xf - -C "$ksft/twheel" --strip-components=1 &&
		install -D -m 644 uapi/linux/twheel.h "$tree/usr/include/linux/twheel.h" &&
		diff -r -q -x '*_test' -x '*.bpf.o' -x '*.skel.h' -x m32 -x core selftests \
			"$ksft/twheel"
}
t "selftests/ and usr/include/linux/twheel.h in a copy of $ksrc" copy copy ||
	tap_bail_out ksft-dropin 5 "no scratch tree"

# -O0 (the selftests' Makefile takes CFLAGS from the environment): what
# this checks is the kernel's way of building and running them, in
# seconds; the -O2 build is `make -C selftests`'s.
ksft_make() {
	CFLAGS="-O0 -g" make -j"$(nproc)" -C "$ksft" TARGETS=twheel FORCE_TARGETS=1 "$@"
}

built() {
	local p
	ksft_make || return 1
	for p in $names; do
		[ -x "$ksft/twheel/$p" ] || { echo "$p is not built"; return 1; }
	done
	# in the tree, nothing comes from the repository
	! grep -F "$top" "$log/build"
}
t "make -C tools/testing/selftests TARGETS=twheel builds the $n programs" build built

# runner.sh's lines, in LOG: the TAP 13 header, the plan and each program
# "ok"; summed up in a comment line.
runner_lines() {
	local p bad=0
	grep -qx 'TAP version 13' "$1" || { echo "no TAP version 13 line"; bad=1; }
	grep -qx "1\.\.$n" "$1" || { echo "no plan 1..$n"; bad=1; }
	for p in $names; do
		grep -qx "ok [0-9]* selftests: twheel: $p # SKIP" "$1" ||
			{ echo "no 'ok N selftests: twheel: $p # SKIP'"; bad=1; }
	done
	echo "# $(grep -Ec '^ok [0-9]+ selftests: twheel: ' "$1") ok" \
		"($(grep -Ec '^ok [0-9]+ selftests: twheel: .* # SKIP$' "$1") # SKIP)," \
		"$(grep -Ec '^not ok [0-9]+ selftests: twheel: ' "$1") not ok of $n"
	return $bad
}

# runner.sh appends to /dev/stdout: read through a pipe, not a file that
# the shell's own writes would overwrite
run_tests() {
	ksft_make run_tests | cat > "$log/run_tests.tap" &&
		runner_lines "$log/run_tests.tap"
}
if [ -n "$norun" ]; then
	skip "make ... run_tests: runner.sh reports every program skipped" "$norun"
else
	t "make ... run_tests: runner.sh reports every program skipped" run run_tests &&
		tail -n 1 "$log/run"
fi

inst=$ksft/kselftest_install
installed() {
	ksft_make install || return 1
	[ -x "$inst/run_kselftest.sh" ] || { echo "no run_kselftest.sh"; return 1; }
	if [ ! -f "$inst/twheel/config" ] || [ ! -f "$inst/twheel/settings" ]; then
		echo "no twheel/config and twheel/settings"
		return 1
	fi
	diff <(echo "$names" | sed 's/^/twheel:/') <(sort "$inst/kselftest-list.txt")
}
t "make ... install: run_kselftest.sh, kselftest-list.txt, twheel/" install installed

run_installed() {
	"$inst/run_kselftest.sh" | cat > "$log/installed.tap" &&
		runner_lines "$log/installed.tap"
}
if [ -n "$norun" ]; then
	skip "run_kselftest.sh reports every program skipped" "$norun"
else
	t "run_kselftest.sh reports every program skipped" run-installed run_installed &&
		tail -n 1 "$log/run-installed"
fi

cleaned() {
	local p
	ksft_make clean || return 1
	for p in $names; do
		[ ! -e "$ksft/twheel/$p" ] || { echo "$p is still there"; return 1; }
	done
}
t "make ... clean removes them" clean cleaned

tap_summary ksft-dropin
