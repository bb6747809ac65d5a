#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The benchmark's sanity run (`scripts/bench.sh --short`, and `make check`
# from its guest script): every workload with every contender at small
# sizes, once, in well under a minute under TCG.  It asserts only what must
# hold anywhere: no event early, every expected event delivered exactly
# once, no event from an idle wheel and no hrtimer fire on an empty one,
# numbers that are non-zero.  It runs in the QEMU guest with the twheel
# module ALREADY LOADED (it neither loads nor unloads it) and twheel_bench
# already built (make -C userspace/bench).  Prints TAP and ends with
# "# bench: N passed, N failed"; exits non-zero on any failure.  The JSON
# lines go to $TWHEEL_OUT/bench-short.jsonl (default /tmp).
#
#   userspace/bench/run_guest_short.sh [-v]     -v: also print the JSON lines
set -u

here=$(cd "$(dirname "$0")" && pwd)
bin=$here/twheel_bench
out=${TWHEEL_OUT:-/tmp}
res=$out/bench-short.jsonl
rcs=$out/bench-short.rc
N=10000
cs="scan timerfd twheel inproc"

echo "TAP version 13"
if [ ! -c /dev/twheel ]; then
	echo "Bail out! /dev/twheel missing: load kmod/twheel.ko first"
	echo "# bench: 0 passed, 1 failed"
	exit 1
fi
if [ ! -x "$bin" ]; then
	echo "Bail out! $bin not built: make -C userspace/bench"
	echo "# bench: 0 passed, 1 failed"
	exit 1
fi
: > "$res"
: > "$rcs"

# step NAME COMMAND...: run one bench process, keep its exit status and
# the last lines of its stderr for the report
step() {
	name=$1
	shift
	"$@" -o "$res" 2> "$out/bench-short.err"
	echo "$name $?" >> "$rcs"
	sed "s|^|$name: |" "$out/bench-short.err" | tail -n 5 >> "$rcs.err"
}
: > "$rcs.err"

# 1. heartbeat: every 100 ms period 10% of the ids go silent and must
#    expire, never early, exactly once
for c in $cs; do
	step "heartbeat/$c" "$bin" -c "$c" -n $N heartbeat --period-ms 100 \
		--window-ms 1000
done
# 2. touch throughput (the four side by side in one process), kernel
#    memory per id, an expiry burst of all ids
step touch "$bin" -c scan,timerfd,twheel,inproc -n $N touch --touches 20000 \
	--burst --mem
# 3. idle, side by side: 1 s empty, 1 s with 1000 ids a year away
for c in $cs; do
	"$bin" -c "$c" --seconds 1 --far 1000 -o "$out/bench-short-idle-$c.jsonl" \
		idle 2> /dev/null &
	eval "pid_$c=$!"
done
for c in $cs; do
	eval "wait \$pid_$c"
	echo "idle/$c $?" >> "$rcs"
	cat "$out/bench-short-idle-$c.jsonl" >> "$res" 2> /dev/null
	rm -f "$out/bench-short-idle-$c.jsonl"
done

# One awk pass: TAP lines from the exit statuses and the JSON lines.
awk -v N=$N -v errs="$rcs.err" '
function num(l, k,   m) {	# value of a flat key, "" if absent
	if (!match(l, "\"" k "\":\"?[^,\"}]*"))
		return ""
	m = substr(l, RSTART, RLENGTH)
	sub(/^"[^"]*":"?/, "", m)
	return m
}
function cache(l, k,   i) {	# field of the twheel_node entry of slab_top
	i = index(l, "{\"cache\":\"twheel_node\",")
	if (!i)
		return ""
	l = substr(l, i)
	return num(substr(l, 1, index(l, "}")), k)
}
function tap(good, d) {
	t++
	if (good) { pass++; print "ok " t " - " d }
	else { fail++; print "not ok " t " - " d }
}
function pos(x) { return x != "" && x + 0 > 0 }
# a duration measured on a clock of resolution res ns: > 0, or 0 when the
# clock is coarser than 1 us (a debug guest that fell back to the jiffies
# clocksource: a short measurement then reads 0)
function dur(x, res) { return pos(x) || (x != "" && x + 0 == 0 && res > 1000) }
FNR == 1 { file++ }
file == 1 { rc[$1] = $2; next }
{
	w = num($0, "workload"); c = num($0, "contender")
	if (w == "touch") {
		tl[c] = tl[c] ", " num($0, "ns_per_touch") " ns at batch " num($0, "batch")
		r = num($0, "clock_res_ns") + 0
		if (r > cres)
			cres = r
		if (!dur(num($0, "ns_per_touch"), r))
			tbad[c] = 1
		else if (!pos(num($0, "ns_per_touch")))
			coarse[c] = r
	}
	else if (w == "idle") rec["idle/" c "/" num($0, "state")] = $0
	else rec[w "/" c] = $0
}
END {
	split("scan timerfd twheel inproc", cs, " ")
	for (i = 1; i <= 4; i++) {
		c = cs[i]; l = rec["heartbeat/" c]
		tap(rc["heartbeat/" c] == 0 && l != "" && num(l, "early") == 0 &&
		    num(l, "delivered_expected") == num(l, "expected") &&
		    num(l, "duplicates") == 0 && num(l, "foreign") == 0,
		    "heartbeat " c " n=" N ": exit " rc["heartbeat/" c] ", early " num(l, "early") \
		    ", delivered " num(l, "delivered_expected") "/" num(l, "expected") \
		    ", lateness p99 " num(l, "late_p99_ms") " ms, " \
		    num(l, "cpu_sys_s_per_mtouch") " CPU-s per M touches" \
		    (num(l, "kept_up") == "1" ? "" : " (fell behind the touch rate: " \
		     num(l, "spurious") " spurious expirations)"))
		tap(pos(num(l, "touches")) && pos(num(l, "window_s")) &&
		    pos(num(l, "cpu_self_s")) && pos(num(l, "expected")),
		    "heartbeat " c ": touches, wall time, CPU, expected events non-zero")
	}
	for (i = 1; i <= 4; i++) {
		c = cs[i]
		tap(rc["touch"] == 0 && tl[c] != "" && !tbad[c],
		    "touch " c " n=" N ": exit " rc["touch"] ", ns per touch non-zero (" substr(tl[c], 3) ")" \
		    (c in coarse ? "; 0 allowed: guest clock resolution " coarse[c] " ns" : ""))
		l = rec["insert/" c]
		tap(dur(num(l, "ns_per_id"), cres), "insert " c ": " num(l, "ns_per_id") " ns per new id")
		if (c == "twheel" || c == "inproc") {
			l = rec["settle/" c]
			tap(l != "" && num(l, "ns") != "",
			    "settle " c ": deferred work done before the touch rounds in " sprintf("%.1f", num(l, "ns") / 1e6) " ms")
		}
		l = rec["burst/" c]
		tap(l != "" && num(l, "delivered") == N && num(l, "queued_delivered") == N &&
		    num(l, "early") == 0 && num(l, "duplicates") == 0 &&
		    dur(num(l, "all_read_s"), cres) && dur(num(l, "queued_read_s"), cres),
		    "burst " c ": " num(l, "delivered") "/" N " due in one tick read in " \
		    num(l, "all_read_s") " s, early " num(l, "early") "; already queued: " \
		    num(l, "queued_delivered") " in " num(l, "queued_read_s") " s")
		if (c == "twheel" || c == "timerfd") {
			l = rec["memory/" c]
			tap(pos(num(l, "kernel_bytes_per_id")),
			    "memory " c ": " num(l, "kernel_bytes_per_id") " kernel bytes per id" \
			    (c == "twheel" ? ", stats.mem_bytes " num(l, "mem_bytes_per_id") " per id" : ""))
		}
	}
	# ids armed with data: the same node as touched ids (for both, one
	# twheel_node object per id, of the same size: 32 B, more on a debug
	# kernel); stats.mem_bytes per id differs only by the fill of the
	# index table (3/4 to 9/10 of 24-byte slots: less than 6 B per id)
	l = rec["memory/twheel"]; d = rec["memory_data/twheel"]
	x = num(d, "mem_bytes_per_id") - num(l, "mem_bytes_per_id")
	tap(num(d, "armed") == N && pos(num(d, "kernel_bytes_per_id")) && x > -6 && x < 6 &&
	    cache(d, "objsize") + 0 >= 32 && cache(d, "objsize") == cache(l, "objsize") &&
	    cache(d, "objs_per_id") + 0 >= 0.99 && cache(d, "objs_per_id") + 0 <= 1.01 &&
	    cache(l, "objs_per_id") + 0 >= 0.99 && cache(l, "objs_per_id") + 0 <= 1.01,
	    "memory twheel, ids armed with data: " num(d, "kernel_bytes_per_id") \
	    " kernel bytes per id, " cache(d, "objs_per_id") " twheel_node objects of " cache(d, "objsize") \
	    " B per id, stats.mem_bytes " x " per id more than touched ids")
	for (i = 1; i <= 4; i++) {
		c = cs[i]; e = rec["idle/" c "/empty"]; f = rec["idle/" c "/far"]
		tap(rc["idle/" c] == 0 && e != "" && f != "" && num(e, "events") == 0 &&
		    num(f, "events") == 0,
		    "idle " c ": no event; CPU " num(e, "cpu_pct") "% empty, " num(f, "cpu_pct") "% with far ids")
	}
	e = rec["idle/twheel/empty"]; f = rec["idle/twheel/far"]
	tap(num(e, "timer_fires") == "0", "idle twheel, no id: " num(e, "timer_fires") " hrtimer fires")
	print "# idle twheel, only ids a year away: " num(f, "timer_fires") " hrtimer fires in " num(f, "seconds") " s"
	if (fail)
		while ((getline l < errs) > 0)
			print "# " l
	print "# bench: " pass + 0 " passed, " fail + 0 " failed"
	exit fail != 0
}' "$rcs" "$res"
rc=$?
[ "${1:-}" = "-v" ] && sed 's/^/# /' "$res"
exit $rc
