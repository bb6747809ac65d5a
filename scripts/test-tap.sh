#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Tests of scripts/lib/tap.sh, the TAP library of the shell test runners,
# on the host, under each shell that runs them: dash (Debian's /bin/sh,
# which runs the guest's scripts), busybox sh (ash) and bash (check.sh and
# the other bash runners).  Each case sources the library with `set -u` in a fresh
# shell, runs a few lines and compares their output (stdout and stderr)
# and status with what they must be.  Then every POSIX sh runner must parse
# (`SHELL -n`) under dash and busybox sh.
#
#   scripts/test-tap.sh [SHELL...]    default: dash, "busybox sh", bash
#
# TAP lines, then "# test-tap: N passed, N failed[, N skipped]" (a shell
# that is not installed is skipped); non-zero on failure.  Its own TAP lines
# do not go through the library: they would trust what they test.
# shellcheck disable=SC2016 # the cases' $ belong to the shell under test
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
lib=$top/scripts/lib/tap.sh
work=$(mktemp -d "${TMPDIR:-/tmp}/twheel-test-tap.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
n=0
passed=0
failed=0
skipped=0
nl='
'

# tc DESC WANT LINES: LINES, after `set -u` and sourcing the library in a
# fresh $sh, print WANT and then "status=" the status of their last command.
tc() {
	n=$((n + 1))
	got=$(cd "$work" && $sh -c 'set -u; . "$0"; eval "$1"; echo "status=$?"' \
		"$lib" "$3" 2>&1)
	if [ "$got" = "$2" ]; then
		passed=$((passed + 1))
		echo "ok $n $sh: $1"
	else
		failed=$((failed + 1))
		echo "not ok $n $sh: $1"
		printf '%s\n' "$2" > "$work/want"
		printf '%s\n' "$got" > "$work/got"
		diff -u "$work/want" "$work/got" | sed 's/^/#   /'
	fi
}

# A kselftest's output: its "# Totals:" line is the last one.
cat > "$work/k.tap" << 'EOF'
TAP version 13
1..6
# Totals: pass:9 fail:9 xfail:9 xpass:9 skip:9 error:9
ok 1 a
# Totals: pass:3 fail:1 xfail:0 xpass:0 skip:2 error:0
EOF
echo '# Totals: pass:1 fail:0 xfail:2 xpass:3 skip:0 error:4' > "$work/x.tap"
# Sub-suites' summary lines: the last one counts.
printf '%s\n' '# test_lib: 9 passed, 9 failed, 9 skipped' 'ok 1 x' \
	'# x: 4 passed, 1 failed' > "$work/x.log"
printf '%s\n' 'not ok 1 y' '# y: 2 passed, 0 failed, 3 skipped' > "$work/y.log"
printf '\n%s\n' '5 passed, 0 failed, 1 skipped' > "$work/check.log"
printf '%s\n' 'ok 1 nothing to see' '# Totals: pass:1' > "$work/none.log"
printf '%s\n' 'pass 2 fail x skip 0' > "$work/bad-results"
printf '%s\n' 'fail 2 pass 1 skip 0' > "$work/swapped-results"
echo '# Totals: pass:3 fail:x xfail: skip:1x error:-1' > "$work/junk.tap"
# A sub-suite, as scripts/guest.sh runs them.
cat > "$work/child.sh" << EOF
. "$lib"
ok one
ok two
not_ok three
skip four why
tap_summary child
EOF

# What tap_cmd prints of a failed command's 25 lines: the last 20.
tail20=
i=6
while [ $i -le 25 ]; do
	tail20="$tail20$nl#   $i"
	i=$((i + 1))
done

cases() {
	tc "ok, not_ok, skip: numbered lines, counted" \
		"ok 1 first${nl}not ok 2 second one${nl}ok 3 third # SKIP no /dev/x${nl}ok 4 a b${nl}4 2 1 1${nl}status=0" \
		'ok first; not_ok "second one"; skip third "no /dev/x"; ok a b
		 echo "$tap_n $tap_pass $tap_fail $tap_skip"'
	tc "descriptions printed as they are" \
		'ok 1 50% \t \\c -n %s'"${nl}ok 2 only # SKIP ${nl}status=0" \
		"ok '50% \\t \\\\c -n %s'; skip only"
	tc "check: ok if the command exits 0, else not ok; run in this shell" \
		"ok 1 yes${nl}not ok 2 no${nl}ok 3 args${nl}not ok 4 fn${nl}x=1 2 2 0${nl}status=0" \
		'f() { x=1; return 3; }
		 check yes true; check no false; check args test 2 -gt 1; check fn f
		 echo "x=$x $tap_pass $tap_fail $tap_skip"'
	tc "tap_cmd: check's lines, the output into \$tap_log, its end on failure" \
		"ok 1 yes${nl}not ok 2 no${tail20}${nl}rc=3 x=1 a=out err 25 1 1${nl}status=0" \
		'tap_log=log; f() { x=1; echo out; echo err >&2; }
		 tap_cmd yes f; a=$(tr "\n" " " < log)
		 tap_cmd no sh -c "i=0; while [ \$i -lt 25 ]; do i=\$((i + 1)); echo \$i; done; exit 3"
		 echo "rc=$? x=$x a=$a$(($(wc -l < log))) $tap_pass $tap_fail"'
	tc "tap_lines: a program's PASS, FAIL and SKIP lines as test lines" \
		"ok 1 L: a${nl}not ok 2 L: b: why${nl}ok 3 L: c d # SKIP no x: y${nl}# note${nl}# plain${nl}1 1 1 5${nl}status=0" \
		'tap_log=log; f() { echo "PASS a"; echo "FAIL b: why"; echo "SKIP c d: no x: y"
		   echo "# note"; echo plain; return 1; }
		 tap_lines L f; echo "$tap_pass $tap_fail $tap_skip $(($(wc -l < log)))"'
	tc "tap_lines: a non-zero exit without a FAIL line, or no result line, fails" \
		"ok 1 L: a${nl}not ok 2 L exits 3${nl}# x${nl}not ok 3 M ran (exit 0, no result lines)${nl}1 2${nl}status=0" \
		'tap_log=log; f() { echo "PASS a"; return 3; }
		 tap_lines L f; tap_lines M echo x; echo "$tap_pass $tap_fail"'
	tc "tap_fold_totals: the last # Totals line, later lines numbered after it" \
		"ok 1 before${nl}rc=0 7 4 1 2${nl}ok 8 after${nl}status=0" \
		'ok before; tap_fold_totals k.tap
		 echo "rc=$? $tap_n $tap_pass $tap_fail $tap_skip"; ok after'
	tc "tap_fold_totals: xfail passes, xpass and error fail" \
		"10 3 7 0${nl}status=0" \
		'tap_fold_totals x.tap; echo "$tap_n $tap_pass $tap_fail $tap_skip"'
	tc "tap_fold_totals: values that are not whole numbers are left out" \
		"rc=0 3 3 0 0${nl}status=0" \
		'tap_fold_totals junk.tap; echo "rc=$? $tap_n $tap_pass $tap_fail $tap_skip"'
	tc "tap_fold_totals: no totals line or no file: status 1, nothing added" \
		"rc=1 rc=1 0 0 0 0${nl}status=0" \
		'tap_fold_totals x.log; a=$?; tap_fold_totals missing; b=$?
		 echo "rc=$a rc=$b $tap_n $tap_pass $tap_fail $tap_skip"'
	tc "tap_fold_summary: the last summary line, with or without skips" \
		"ok 1 a${nl}6 5 1 0${nl}11 7 1 3${nl}17 12 1 4${nl}ok 18 b${nl}status=0" \
		'ok a; tap_fold_summary x.log; echo "$tap_n $tap_pass $tap_fail $tap_skip"
		 tap_fold_summary y.log; echo "$tap_n $tap_pass $tap_fail $tap_skip"
		 tap_fold_summary check.log; echo "$tap_n $tap_pass $tap_fail $tap_skip"
		 ok b'
	tc "tap_fold_summary: no summary line or no file: status 1, nothing added" \
		"rc=1 rc=1 0 0 0 0${nl}status=0" \
		'tap_fold_summary none.log; a=$?; tap_fold_summary missing; b=$?
		 echo "rc=$a rc=$b $tap_n $tap_pass $tap_fail $tap_skip"'
	tc "tap_summary NAME: skips only if any; status 0 without failures" \
		"ok 1 a${nl}# x: 1 passed, 0 failed${nl}status=0" \
		'ok a; tap_summary x'
	tc "tap_summary NAME: skips; status 1 with a failure" \
		"# x: 1 passed, 1 failed, 1 skipped${nl}status=1" \
		'ok a >/dev/null; not_ok b >/dev/null; skip c d >/dev/null; tap_summary x'
	tc "tap_summary: the line make check ends with" \
		"0 passed, 0 failed, 0 skipped${nl}1 passed, 1 failed, 0 skipped${nl}status=1" \
		'tap_summary; ok a >/dev/null; not_ok b >/dev/null; tap_summary'
	tc "tap_results, tap_fold_results: pass N fail N skip N, folded back" \
		"pass 3 fail 1 skip 1${nl}rc=0 10 6 2 2${nl}status=0" \
		'{ ok a; not_ok b; skip c d; ok e; ok f; } >/dev/null; tap_results r; cat r
		 tap_fold_results r; echo "rc=$? $tap_n $tap_pass $tap_fail $tap_skip"'
	tc "tap_fold_results: a bad or missing file: status 1, nothing added" \
		"rc=1 rc=1 rc=1 0 0 0 0${nl}status=0" \
		'tap_fold_results bad-results; a=$?; tap_fold_results missing; b=$?
		 tap_fold_results swapped-results; c=$?
		 echo "rc=$a rc=$b rc=$c $tap_n $tap_pass $tap_fail $tap_skip"'
	tc "tap_add: whole numbers only" \
		"rc=1 0${nl}rc=0 6 1 2 3${nl}status=0" \
		'tap_add 1 x 0; echo "rc=$? $tap_n"; tap_add 1 2 3
		 echo "rc=$? $tap_n $tap_pass $tap_fail $tap_skip"'
	tc "tap_bail_out: the line, the tests that cannot run as failures, exit 1" \
		"ok 1 a${nl}Bail out! no /dev/twheel here${nl}# z: 1 passed, 3 failed${nl}status=1" \
		'(ok a; tap_bail_out z 3 no /dev/twheel here; echo "not reached")'
	tc "a sub-suite's summary, folded into its parent's counts" \
		"ok 1 a${nl}ok 1 one${nl}ok 2 two${nl}not ok 3 three${nl}ok 4 four # SKIP why${nl}# child: 2 passed, 1 failed, 1 skipped${nl}rc=1 fold=0 5 3 1 1${nl}ok 6 b${nl}status=0" \
		"ok a; $sh child.sh > child.log; rc=\$?; cat child.log
		 tap_fold_summary child.log
		 echo \"rc=\$rc fold=\$? \$tap_n \$tap_pass \$tap_fail \$tap_skip\"; ok b"
}

# The POSIX sh runners and libraries: the guest runs them with its /bin/sh.
posix="scripts/guest.sh scripts/lib/tap.sh scripts/lib/kunit.sh
	scripts/test-tap.sh selftests/run_tests.sh userspace/tests/run_guest.sh
	userspace/examples/run_guest.sh userspace/bench/run_guest.sh
	userspace/bench/run_guest_short.sh"

[ $# -gt 0 ] || set -- dash "busybox sh" bash
for sh in "$@"; do
	if ! command -v "${sh%% *}" > /dev/null; then
		n=$((n + 1))
		skipped=$((skipped + 1))
		echo "ok $n $sh: the library's cases # SKIP no ${sh%% *}"
		continue
	fi
	cases
	[ "$sh" = bash ] && continue
	for f in $posix; do
		n=$((n + 1))
		if $sh -n "$top/$f" > "$work/parse" 2>&1; then
			passed=$((passed + 1))
			echo "ok $n $sh -n $f"
		else
			failed=$((failed + 1))
			echo "not ok $n $sh -n $f"
			sed 's/^/#   /' "$work/parse"
		fi
	done
done

if [ "$skipped" -gt 0 ]; then
	echo "# test-tap: $passed passed, $failed failed, $skipped skipped"
else
	echo "# test-tap: $passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
