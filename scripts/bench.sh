#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The twheel benchmark behind `make bench`.
#
#   scripts/bench.sh [--no-build] [--out DIR] [--timeout SEC]
#       Build the module (against Debian's 6.1 headers, as make check's
#       first guest does)
#       and userspace/bench/twheel_bench, boot the QEMU guest once and run
#       the whole matrix there (userspace/bench/run_guest.sh): four
#       contenders (scan, timerfd, twheel, inproc) side by side on the same
#       ids, heartbeat / touch / burst / memory / idle workloads, several
#       repetitions.  Raw results: DIR/bench.jsonl and DIR/guest.json (DIR
#       defaults to a fresh /tmp/twheel-bench.XXXXXX).  Then, on the host,
#       render docs/bench/results.md and docs/bench/*.png (gnuplot) from
#       them.  About 20 minutes under TCG.  BENCH_* variables (see
#       run_guest.sh) change sizes and repetitions.
#   scripts/bench.sh --short [--no-build] [--out DIR]
#       The sanity run (userspace/bench/run_guest_short.sh) in its own
#       guest: TAP, "# bench: N passed, N failed", non-zero exit on failure.
#       Under a minute in the guest.
#   scripts/bench.sh --render DIR [--docs DOCDIR]
#       Only render DIR/bench.jsonl into DOCDIR (default docs/bench).
#
# The guest boots with clocksource=tsc: under TCG the default HPET makes
# every clock read (clock_gettime, ktime_get) an emulated MMIO access of
# about 2 us, which would dominate every per-operation number.
#
# Exit status: 0 only if the build, the guest run (no failed run, no
# correctness check failed, clean kernel log) and the rendering succeeded.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
mode=full
build=1
out=
docs=$top/docs/bench
timeout=
vm_mem=8192
vm_append="clocksource=tsc tsc=reliable"

usage() { # STATUS
	sed -n '4,28p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
	exit "$1"
}

# ------------------------------------------------------------ in the guest
# --guest-short: the wrapper of run_guest_short.sh for a standalone run:
# load the module if it is not, run the checks, unload what we loaded.
if [[ "${1:-}" == --guest-short ]]; then
	cd "$top"
	loaded=
	if [[ ! -c /dev/twheel ]]; then
		insmod kmod/twheel.ko || { echo "bench: insmod failed"; exit 1; }
		loaded=1
		for _ in $(seq 50); do
			[[ -c /dev/twheel ]] && break
			sleep 0.1
		done
	fi
	echo 1073741816 > /proc/sys/fs/nr_open 2> /dev/null || true
	rc=0
	userspace/bench/run_guest_short.sh || rc=$?
	[[ -z "$loaded" ]] || rmmod twheel || rc=1
	exit "$rc"
fi

# ---------------------------------------------------------------- the host
while (($# > 0)); do
	case "$1" in
	--short) mode=short ;;
	--no-build) build=0 ;;
	--out) out=$2; shift ;;
	--timeout) timeout=$2; shift ;;
	--render) mode=render; out=$2; shift ;;
	--docs) docs=$2; shift ;;
	-h | --help) usage 0 ;;
	*) echo "bench.sh: unknown argument: $1" >&2; usage 2 >&2 ;;
	esac
	shift
done

render() {
	"$top/scripts/deps.sh" gnuplot-nox
	python3 "$top/userspace/bench/render.py" "$out" "$docs"
}

if [[ "$mode" == render ]]; then
	[[ -f "$out/bench.jsonl" ]] || { echo "bench.sh: no $out/bench.jsonl" >&2; exit 1; }
	render
	exit
fi

t0=$EPOCHREALTIME
secs() { # seconds since $1
	local now=$EPOCHREALTIME
	echo $(((${now/./} - ${1/./}) / 1000000))
}

cd "$top"
if ((build)); then
	"$top/scripts/deps.sh" gnuplot-nox
	# shellcheck source=scripts/lib/kernels.sh
	. "$top/scripts/lib/kernels.sh"
	kimg=/boot/vmlinuz-$(kernel_release 6.1) ||
		{ echo "bench.sh: no Debian 6.1 kernel in /boot (scripts/deps.sh)" >&2; exit 1; }
	echo "bench: building the module (${kimg#/boot/vmlinuz-}) and twheel_bench"
	make -s -C "$top" KDIR="/lib/modules/${kimg#/boot/vmlinuz-}/build" modules
	make -s -C "$top/userspace/bench"
fi
[[ -f kmod/twheel.ko ]] || { echo "bench.sh: kmod/twheel.ko missing" >&2; exit 1; }
[[ -x userspace/bench/twheel_bench ]] || { echo "bench.sh: twheel_bench missing" >&2; exit 1; }

if [[ -z "$out" ]]; then
	out=$(mktemp -d "${TMPDIR:-/tmp}/twheel-bench.XXXXXX")
fi
mkdir -p "$out"
# BENCH_* settings reach the guest (a clean environment) through a file
# in the shared out dir
: > "$out/bench.env"
while IFS= read -r var; do
	val=${!var}
	printf "%s='%s'\n" "$var" "${val//\'/\'\\\'\'}" >> "$out/bench.env"
done < <(compgen -e | grep '^BENCH_' || true)

if [[ "$mode" == short ]]; then
	guest=("$top/scripts/bench.sh" --guest-short)
	timeout=${timeout:-600}
else
	guest=(userspace/bench/run_guest.sh)
	timeout=${timeout:-3000}
fi
# The host's load while the guest ran (other work on a shared host makes
# TCG numbers noisier), and which module source was measured.
load_before=$(cut -d ' ' -f 1-3 /proc/loadavg)
date=$(date -u '+%Y-%m-%d %H:%M UTC')
source=$(git -C "$top" rev-parse --short HEAD 2> /dev/null || echo unknown)
if [[ -n "$(git -C "$top" status --porcelain -- kmod uapi 2> /dev/null)" ]]; then
	source+=" with uncommitted changes in kmod/ or uapi/"
fi
echo "bench: booting the guest ($vm_mem MiB, $vm_append); results in $out"
set +e
"$top/scripts/vm.sh" --mem "$vm_mem" --append "$vm_append" --timeout "$timeout" \
	--out "$out" -- "${guest[@]}" |
	sed -u -e '/^===== TWHEEL DMESG BEGIN/,$d' -e '/^TWHEEL-GUEST-/d' \
		-e '/^\[ *[0-9]*\.[0-9]*\]/d'
rc=${PIPESTATUS[0]}
set -e
echo "bench: guest done in $(secs "$t0") s (exit status $rc); console: $out/console.log"
printf '{"nproc":%s,"loadavg_before":"%s","loadavg_after":"%s","guest_s":%s,"source":"%s","date":"%s"}\n' \
	"$(nproc)" "$load_before" "$(cut -d ' ' -f 1-3 /proc/loadavg)" "$(secs "$t0")" \
	"$source" "$date" > "$out/host.json"
if [[ "$mode" == short ]]; then
	exit "$rc"
fi
if [[ -s "$out/bench.jsonl" ]]; then
	render || rc=1
else
	echo "bench.sh: the guest wrote no results" >&2
	rc=1
fi
echo "bench: total $(secs "$t0") s; exit status $rc"
exit "$rc"
