#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The full benchmark matrix, inside the QEMU guest (scripts/bench.sh boots
# it), from the repository root, as root.  Loads kmod/twheel.ko (argument 1)
# unless /dev/twheel exists, raises the fd limits, runs every workload with
# every contender side by side (contenders interleaved within each
# repetition), appends JSON lines to $TWHEEL_OUT/bench.jsonl and the guest's
# description to $TWHEEL_OUT/guest.json.  Ends with "# bench: N passed,
# N failed" (a bench process each, scripts/lib/tap.sh); exits non-zero if a
# run failed or a correctness check (never early, exactly once) did not
# hold.
#
# Sizes and repetitions come from the environment (defaults in brackets):
#   BENCH_REPS [3]            repetitions of everything below 4M ids
#   BENCH_N [10000 100000 1000000]   id counts for touch and heartbeat
#   BENCH_BIG [4000000]       the largest count (0: skip): heartbeat,
#   BENCH_BIG_REPS [3]        touch this many times
#   BENCH_BIG_TOUCH [twheel,inproc,scan]  contenders of the touch run at BENCH_BIG
#   BENCH_BIG_HB [twheel inproc scan and BENCH_LIBS]
#                             contenders of the heartbeat at BENCH_BIG
#   BENCH_BIG_HB_REPS [3]     the twheel and in-process heartbeats at BENCH_BIG
#                             this many times, alternating (their ratio is a
#                             target), the others once
#   BENCH_LIBS [libev,libevent,libuv]  the timer libraries' contenders, beside
#                             twheel, inproc and scan in every touch (and
#                             memory), heartbeat and idle run ("": none)
#   BENCH_TFD_MAX [100000]    timerfd runs in every repetition up to this count
#   BENCH_TFD_BIG [1000000]   and in the first one (touch and memory, no burst,
#                             no heartbeat) up to this count
#   BENCH_TOUCHES [200000]    random touches per touch measurement
#   BENCH_ROUNDS [8]          ... cut into this many interleaved rounds
#   BENCH_RATE [200]          heartbeat touches per ms: period = N / rate
#   BENCH_WINDOW_MS [3000]    heartbeat: at least this long, 2 periods at least
#   BENCH_IDLE_S [5]          seconds per idle phase
set -u

# shellcheck source=scripts/lib/tap.sh
. "$(dirname "$0")/../../scripts/lib/tap.sh"
out=${TWHEEL_OUT:-/tmp}
# scripts/bench.sh passes the host's BENCH_* variables in this file
if [ -f "$out/bench.env" ]; then
	set -a
	# shellcheck source=/dev/null
	. "$out/bench.env"
	set +a
fi
ko=${1:-kmod/twheel.ko}
bin=userspace/bench/twheel_bench
res=$out/bench.jsonl
reps=${BENCH_REPS:-3}
sizes=${BENCH_N:-10000 100000 1000000}
big=${BENCH_BIG:-4000000}
big_reps=${BENCH_BIG_REPS:-3}
big_touch=${BENCH_BIG_TOUCH:-twheel,inproc,scan}
libs=${BENCH_LIBS-libev,libevent,libuv}
lib_words=$(echo "$libs" | tr , ' ')
big_hb=${BENCH_BIG_HB:-twheel inproc scan $lib_words}
big_hb_reps=${BENCH_BIG_HB_REPS:-3}
tfd_max=${BENCH_TFD_MAX:-100000}
tfd_big=${BENCH_TFD_BIG:-1000000}
touches=${BENCH_TOUCHES:-200000}
rounds=${BENCH_ROUNDS:-8}
rate=${BENCH_RATE:-200}
window_ms=${BENCH_WINDOW_MS:-3000}
idle_s=${BENCH_IDLE_S:-5}
t0=$(cut -d ' ' -f 1 /proc/uptime)

log() {
	echo "bench: [$(awk -v t0="$t0" '{ printf "%6.1f", $1 - t0 }' /proc/uptime) s] $*"
}

# run DESCRIPTION COMMAND...: one bench process, counted as passed or
# failed
run() {
	d=$1
	shift
	if "$@" -o "$res" 2> "$out/stderr.txt"; then
		tap_add 1 0 0
		log "done: $d"
	else
		log "FAILED (exit $?): $d"
		tap_add 0 1 0
		sed 's/^/bench:   /' "$out/stderr.txt" | head -n 20
	fi
	cat "$out/stderr.txt" >> "$out/bench-stderr.log"
}

# heartbeat period: the same touch rate for every N
period_ms() {
	echo $(($1 / rate > 10 ? $1 / rate : 10))
}

[ -x "$bin" ] || { echo "bench: $bin not built (make -C userspace/bench)"; exit 1; }
loaded=
if [ ! -c /dev/twheel ]; then
	insmod "$ko" || { echo "bench: insmod $ko failed"; exit 1; }
	loaded=1
	i=0
	while [ ! -c /dev/twheel ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
fi

# As far as the kernel lets root go: nr_open up to its hard maximum
# (sysctl_nr_open_max), then the system-wide file and epoll caps.
for v in 2147483584 1073741816 1073741824 536870912 16777216; do
	echo "$v" > /proc/sys/fs/nr_open 2> /dev/null && break
done
echo 1000000000 > /proc/sys/fs/file-max 2> /dev/null
echo 1000000000 > /proc/sys/fs/epoll/max_user_watches 2> /dev/null

# the module's batch sizes, for the report (index.h, file.c: any
# source of kmod/ that defines them)
kmod_define() { # NAME
	sed -n "s/^#define $1[^0-9]*\([0-9]*\).*/\1/p" kmod/*.h kmod/*.c | head -n 1
}
expire_batch=$(kmod_define TW_HOLD_NODES)
read_chunk=$(kmod_define TW_HOLD_EVENTS)
[ -n "$expire_batch" ] && [ -n "$read_chunk" ] ||
	{ echo "bench: TW_HOLD_NODES or TW_HOLD_EVENTS not found in kmod/"; exit 1; }

: > "$res"
: > "$out/bench-stderr.log"
cat > "$out/guest.json" << EOF
{"kernel":"$(uname -r)","cpus":$(nproc),"mem_kb":$(awk '/MemTotal/ {print $2}' /proc/meminfo),"clocksource":"$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)","cpu_model":"$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)","thp":"$(cat /sys/kernel/mm/transparent_hugepage/enabled)","reps":$reps,"sizes":"$sizes","big":$big,"big_reps":$big_reps,"big_touch":"$big_touch","big_hb":"$big_hb","big_hb_reps":$big_hb_reps,"libs":"$libs","tfd_max":$tfd_max,"tfd_big":$tfd_big,"touches":$touches,"rounds":$rounds,"rate":$rate,"window_ms":$window_ms,"idle_s":$idle_s,"twheel_expire_batch":$expire_batch,"twheel_read_chunk":$read_chunk}
EOF
log "guest: $(cat "$out/guest.json")"
run "limits" "$bin" limits

rep=1
while [ "$rep" -le "$reps" ]; do
	log "=== repetition $rep of $reps"
	# idle: side by side, each in its own process
	log "idle: ${idle_s} s empty, ${idle_s} s with 10000 ids a year away"
	pids=
	for c in scan timerfd twheel inproc $lib_words; do
		"$bin" -r "$rep" -c "$c" --seconds "$idle_s" --far 10000 \
			-o "$out/idle-$c.jsonl" idle 2>> "$out/bench-stderr.log" &
		pids="$pids $!"
	done
	for p in $pids; do
		if wait "$p"; then
			tap_add 1 0 0
		else
			tap_add 0 1 0
			log "FAILED: an idle run"
		fi
	done
	cat "$out"/idle-*.jsonl >> "$res"
	rm -f "$out"/idle-*.jsonl

	# touch, memory, burst: the contenders side by side in one process
	for n in $sizes; do
		cl=twheel,inproc,scan${libs:+,$libs}
		bl=twheel,inproc,scan
		if [ "$n" -le "$tfd_max" ]; then
			cl=$cl,timerfd
			bl=$bl,timerfd
		elif [ "$rep" -eq 1 ] && [ "$n" -le "$tfd_big" ]; then
			cl=$cl,timerfd	# once: slow to create; no burst
		fi
		extra=
		[ "$n" -ge 100000 ] && extra="--burst-only $bl"
		# shellcheck disable=SC2086 # $extra: zero or two words
		run "touch $cl n=$n rep $rep" "$bin" -r "$rep" -c "$cl" -n "$n" \
			touch --touches "$touches" --rounds "$rounds" --mem $extra
	done
	# structured ids against the keyed index: dense, and the ids whose
	# keys were 0, 1, 2, ... under the old fixed multiplier
	for f in dense flood; do
		run "touch twheel,inproc n=100000 ids $f rep $rep" "$bin" -r "$rep" \
			--tag "ids-$f" --ids "$f" -c twheel,inproc -n 100000 \
			touch --touches "$touches" --rounds "$rounds"
	done
	# touch through io_uring on a blocking fd against write(): 1024 and
	# 8192 ids per call (1 and 8 SQEs per submit), with and without SQPOLL
	for n in $sizes; do
		[ "$n" -ge 100000 ] || continue
		run "touch twheel,uring,sqpoll n=$n io_uring rep $rep" "$bin" \
			-r "$rep" --tag io_uring -c twheel,uring,sqpoll -n "$n" \
			touch --touches "$touches" --rounds "$rounds" \
			--batches 1024,8192
	done
	for n in $sizes; do
		p=$(period_ms "$n")
		for c in twheel inproc scan timerfd $lib_words; do
			[ "$c" = timerfd ] && [ "$n" -gt "$tfd_max" ] && continue
			run "heartbeat $c n=$n period ${p} ms rep $rep" \
				"$bin" -r "$rep" -c "$c" -n "$n" heartbeat --period-ms "$p" \
				--window-ms "$window_ms"
		done
	done
	rep=$((rep + 1))
done

if [ "$big" -gt 0 ]; then
	avail=$(awk '/MemAvailable/ {print $2}' /proc/meminfo)
	# ~400 B per id covers the largest contender (ids, map, nodes)
	if [ $((big * 400 / 1024)) -lt "$avail" ]; then
		log "=== $big ids ($big_reps touch repetitions, $big_hb_reps heartbeats of twheel and inproc)"
		rep=1
		while [ "$rep" -le "$big_reps" ]; do
			run "touch $big_touch n=$big rep $rep" "$bin" -r "$rep" \
				-c "$big_touch" -n "$big" \
				touch --touches "$touches" --rounds "$rounds" --mem
			rep=$((rep + 1))
		done
		p=$(period_ms "$big")
		rep=1
		while [ "$rep" -le "$big_hb_reps" ]; do
			for c in $big_hb; do
				case $c in
				twheel | inproc) ;;
				*) [ "$rep" -eq 1 ] || continue ;;
				esac
				run "heartbeat $c n=$big period ${p} ms rep $rep" "$bin" \
					-r "$rep" -c "$c" -n "$big" heartbeat \
					--period-ms "$p" --window-ms "$window_ms"
			done
			rep=$((rep + 1))
		done
	else
		log "=== skipping $big ids: only $avail kB available"
	fi
fi

# Memory-cgroup kernel accounting, last: creating the first child memory
# cgroup switches it on for good (every new slab page of an accounted cache
# then carries an obj_cgroup pointer per object, whatever cgroup the task
# is in; hosts where systemd runs services in cgroups always have it on).
# Kernel memory per id again: from inside a child cgroup, then from the
# root cgroup with accounting on.
cg=/sys/fs/cgroup
grep -q "^cgroup2 $cg " /proc/mounts || mount -t cgroup2 none "$cg" 2> /dev/null
echo +memory > "$cg/cgroup.subtree_control" 2> /dev/null
if mkdir -p "$cg/twheel-bench" 2> /dev/null && [ -f "$cg/twheel-bench/memory.current" ]; then
	log "=== memory per id with memory-cgroup kernel accounting on"
	for nc in twheel:1000000 timerfd:100000; do
		# shellcheck disable=SC2016 # $0, $@ belong to the inner shell
		run "memory ${nc%%:*} n=${nc#*:} in a child memory cgroup" \
			sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg/twheel-bench" \
			"$bin" -r 1 --tag memcg -c "${nc%%:*}" -n "${nc#*:}" touch \
			--touches 1000 --mem
	done
	run "memory twheel n=1000000 in the root cgroup, accounting on" \
		"$bin" -r 1 --tag kmem -c twheel -n 1000000 touch --touches 1000 --mem
	rmdir "$cg/twheel-bench" 2> /dev/null
else
	log "=== no memory cgroup (cgroup2 with the memory controller): skipped"
fi

[ -n "$loaded" ] && rmmod twheel
log "$tap_n runs, $tap_fail failed; results in $res"
tap_summary bench
