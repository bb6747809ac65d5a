# SPDX-License-Identifier: GPL-2.0 OR MIT
# shellcheck shell=sh
#
# TAP for the shell test runners: source this file.  POSIX sh: the guest
# runs the runners with its /bin/sh (dash on Debian, or busybox ash), the
# host's bash runners source it too.  Every name it defines starts with
# "tap_" or "_tap_", but for the four test functions.
#
# Counters (read them, do not set them):
#   tap_n      number of the last test line, folded sub-suites included
#   tap_pass, tap_fail, tap_skip
#
# Test lines:
#   ok DESC...             "ok N DESC", one pass
#   not_ok DESC...         "not ok N DESC", one failure
#   skip DESC WHY          "ok N DESC # SKIP WHY", one skip
#   check DESC CMD...      runs CMD: ok DESC if it exits 0, else not_ok DESC
#                          (CMD must not call check itself)
#   tap_cmd DESC CMD...    the same, CMD's output (stdout and stderr) into
#                          the file $tap_log, which the runner names: on
#                          failure its last 20 lines follow as comments;
#                          returns CMD's status (CMD must not call
#                          tap_cmd or check itself)
#   tap_lines LABEL CMD... runs CMD, a program that prints its own results
#                          as lines "PASS NAME", "FAIL NAME: WHY" and
#                          "SKIP NAME: WHY" (output into $tap_log too):
#                          each becomes a test line "LABEL: NAME", other
#                          lines comments; a failure if CMD prints no
#                          result line, or exits non-zero with none failing
#
# Folding a sub-suite's totals into ours (each adds its counts to tap_n as
# well, so that our later test lines are numbered after the sub-suite's):
#   tap_add PASS FAIL SKIP
#   tap_fold_totals FILE   the last kselftest line of FILE
#                          "# Totals: pass:N fail:N xfail:N xpass:N skip:N error:N":
#                          pass and xfail pass, fail, xpass and error fail
#   tap_fold_summary FILE  the last "N passed, N failed[, N skipped]" of
#                          FILE (what tap_summary prints)
#   tap_fold_results FILE  a "pass N fail N skip N" file (tap_results)
# The folds return 1 and add nothing if FILE has no such line, tap_add if
# a count is not a whole number.
#
# The end of a run:
#   tap_summary [NAME]     prints "# NAME: N passed, N failed" with
#                          ", N skipped" if any were, or without NAME the
#                          line `make check` and .ci/run end with,
#                          "N passed, N failed, N skipped"; returns 1 if a
#                          test failed, else 0: `tap_summary NAME; exit $?`
#   tap_results FILE       writes "pass N fail N skip N" to FILE
#   tap_bail_out NAME N WHY...
#                          "Bail out! WHY", then N failures (the tests that
#                          cannot run), tap_summary NAME, and exit 1

tap_n=0
tap_pass=0
tap_fail=0
tap_skip=0

ok() {
	tap_n=$((tap_n + 1))
	tap_pass=$((tap_pass + 1))
	printf 'ok %d %s\n' "$tap_n" "$*"
}

not_ok() {
	tap_n=$((tap_n + 1))
	tap_fail=$((tap_fail + 1))
	printf 'not ok %d %s\n' "$tap_n" "$*"
}

skip() {
	tap_n=$((tap_n + 1))
	tap_skip=$((tap_skip + 1))
	printf 'ok %d %s # SKIP %s\n' "$tap_n" "$1" "${2:-}"
}

check() {
	_tap_desc=$1
	shift
	if "$@"; then ok "$_tap_desc"; else not_ok "$_tap_desc"; fi
}

tap_cmd() {
	_tap_desc=$1
	shift
	# shellcheck disable=SC2154 # tap_log: the runner's
	"$@" > "$tap_log" 2>&1
	_tap_rc=$?
	if [ "$_tap_rc" -eq 0 ]; then
		ok "$_tap_desc"
	else
		not_ok "$_tap_desc"
		sed 's/^/#   /' "$tap_log" | tail -n 20
	fi
	return "$_tap_rc"
}

tap_lines() {
	_tap_desc=$1
	shift
	"$@" > "$tap_log" 2>&1
	_tap_rc=$?
	_tap_f0=$tap_fail
	_tap_seen=0
	while IFS= read -r _tap_line; do
		case $_tap_line in
		"PASS "*) ok "$_tap_desc: ${_tap_line#PASS }" ;;
		"FAIL "*) not_ok "$_tap_desc: ${_tap_line#FAIL }" ;;
		"SKIP "*)
			_tap_line=${_tap_line#SKIP }
			skip "$_tap_desc: ${_tap_line%%: *}" "${_tap_line#*: }"
			;;
		"#"*) echo "$_tap_line"; continue ;;
		*) echo "# $_tap_line"; continue ;;
		esac
		_tap_seen=1
	done < "$tap_log"
	if [ "$_tap_seen" -eq 0 ]; then
		not_ok "$_tap_desc ran (exit $_tap_rc, no result lines)"
	elif [ "$_tap_rc" -ne 0 ] && [ "$tap_fail" -eq "$_tap_f0" ]; then
		not_ok "$_tap_desc exits $_tap_rc"
	fi
}

# Whether every argument is a whole number (what the folds accept).
_tap_nums() {
	for _tap_x in "$@"; do
		case $_tap_x in
		'' | *[!0-9]*) return 1 ;;
		esac
	done
}

tap_add() {
	_tap_nums "$1" "$2" "$3" || return 1
	tap_pass=$((tap_pass + $1))
	tap_fail=$((tap_fail + $2))
	tap_skip=$((tap_skip + $3))
	tap_n=$((tap_n + $1 + $2 + $3))
}

tap_fold_totals() {
	_tap_line=$(grep '^# Totals:' "$1" 2> /dev/null | tail -n 1)
	[ -n "$_tap_line" ] || return 1
	set -- 0 0 0
	# shellcheck disable=SC2086 # split into its key:value words
	for _tap_kv in ${_tap_line#'# Totals:'}; do
		_tap_v=${_tap_kv#*:}
		_tap_nums "$_tap_v" || continue
		case $_tap_kv in
		pass:* | xfail:*) set -- $(($1 + _tap_v)) "$2" "$3" ;;
		fail:* | xpass:* | error:*) set -- "$1" $(($2 + _tap_v)) "$3" ;;
		skip:*) set -- "$1" "$2" $(($3 + _tap_v)) ;;
		esac
	done
	tap_add "$@"
}

tap_fold_summary() {
	_tap_line=$(grep -Eo '[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?' "$1" \
		2> /dev/null | tail -n 1)
	[ -n "$_tap_line" ] || return 1
	# shellcheck disable=SC2086 # "P passed, F failed[, S skipped]"
	set -- $_tap_line
	tap_add "$1" "$3" "${5:-0}"
}

tap_fold_results() {
	[ -r "$1" ] || return 1
	read -r _tap_k1 _tap_p _tap_k2 _tap_f _tap_k3 _tap_s < "$1" || return 1
	[ "$_tap_k1 $_tap_k2 $_tap_k3" = "pass fail skip" ] || return 1
	tap_add "$_tap_p" "$_tap_f" "$_tap_s"
}

tap_summary() {
	if [ $# -eq 0 ]; then
		echo "$tap_pass passed, $tap_fail failed, $tap_skip skipped"
	elif [ "$tap_skip" -gt 0 ]; then
		echo "# $1: $tap_pass passed, $tap_fail failed, $tap_skip skipped"
	else
		echo "# $1: $tap_pass passed, $tap_fail failed"
	fi
	[ "$tap_fail" -eq 0 ]
}

tap_results() {
	echo "pass $tap_pass fail $tap_fail skip $tap_skip" > "$1"
}

tap_bail_out() {
	_tap_name=$1
	_tap_k=$2
	shift 2
	echo "Bail out! $*"
	tap_add 0 "$_tap_k" 0
	tap_summary "$_tap_name"
	exit 1
}
