# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# KUnit results in the guest, for scripts/guest.sh (source this file; POSIX
# sh).
#
# kunit_results SUITE
#	Prints the KTAP results of the KUnit suite SUITE (e.g. twheel_wheel)
#	from $KUNIT_DEBUGFS/SUITE/results (default KUNIT_DEBUGFS:
#	/sys/kernel/debug/kunit), then one line "pass N fail N".  Prints
#	nothing when the suite does not exist (kernel without KUnit or
#	debugfs, or a module built without the suite).  Returns 0 in both
#	cases, 1 if the results file is unreadable.  Read the results before
#	rmmod: they go away with the module.
#
# kunit_results_all PREFIX
#	kunit_results of every suite whose name starts with PREFIX (the
#	suites of one module: twheel_ for twheel_kunit.ko), their KTAP one
#	after the other, then one line "pass N fail N" with the sums.
#	Prints nothing when there is no such suite.  Returns 1 if a results
#	file is unreadable.
#
# The counts come from the suite's "# SUITE: pass:N fail:N skip:N total:N"
# line.  Without it, the test case lines ("ok"/"not ok" indented by 4
# spaces; SKIPs not counted) are counted instead, and a suite that says
# "not ok" with no failed case counts as one failure.  The case lines alone
# are not enough: KUnit keeps only the first 512 bytes of each case's log,
# so a case with many failed expectations loses its "not ok" line.

kunit_results() {
	_kr_dir=${KUNIT_DEBUGFS:-/sys/kernel/debug/kunit}/$1
	[ -d "$_kr_dir" ] || return 0
	_kr_ktap=$(cat "$_kr_dir/results") || return 1
	printf '%s\n' "$_kr_ktap"
	printf '%s\n' "$_kr_ktap" | awk -v suite="$1" '
		$0 ~ "^# " suite ": pass:[0-9]+ fail:[0-9]+ " {
			split($3, a, ":")
			split($4, b, ":")
			sp = a[2]
			sf = b[2]
			stats = 1
		}
		/^    (not )?ok [0-9]+ / && !/# SKIP/ {
			if ($1 == "ok")
				p++
			else
				f++
		}
		/^not ok [0-9]+ / { bad = 1 }
		END {
			if (stats) {
				p = sp
				f = sf
			}
			if (bad && !f)
				f = 1
			printf "pass %d fail %d\n", p, f
		}'
}

kunit_results_all() {
	_kra_p=0
	_kra_f=0
	_kra_any=0
	for _kra_dir in "${KUNIT_DEBUGFS:-/sys/kernel/debug/kunit}/$1"*; do
		[ -d "$_kra_dir" ] || continue
		_kra_out=$(kunit_results "${_kra_dir##*/}") || return 1
		[ -n "$_kra_out" ] || continue
		printf '%s\n' "$_kra_out" | sed '$d'
		_kra_last=$(printf '%s\n' "$_kra_out" | tail -n 1)
		_kra_p=$((_kra_p + $(echo "$_kra_last" | cut -d' ' -f2)))
		_kra_f=$((_kra_f + $(echo "$_kra_last" | cut -d' ' -f4)))
		_kra_any=1
	done
	[ $_kra_any = 0 ] || echo "pass $_kra_p fail $_kra_f"
}
