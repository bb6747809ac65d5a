#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The twheel demo behind `make demo`: a presence service for 1,000,000
# users on /dev/twheel, in the QEMU guest of scripts/vm.sh.
#
#   scripts/demo.sh [--no-build] [-- PRESENCE_OPTIONS...]
#
# Builds the module, libtwheel and the examples (unless --no-build), boots
# the guest and runs userspace/examples/presence there: one progress line a
# second (online/away/offline users, offline/s, heartbeats/s, the wheels'
# kernel memory, the service's CPU), then the verification summary.  The
# timeouts are compressed so that it takes about a minute under TCG:
# offline after 10 s, away after 20 s, 30 s of traffic.  PRESENCE_OPTIONS
# replace those defaults (see presence --help).
#
# Exit status: the demo's (0 only if every user was verified and the guest
# kernel log stayed clean).
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
presence=$top/userspace/examples/presence
demo_args=(--users 1000000 --timeout 10 --away 20 --login 10 --duration 30)

usage() { # STATUS
	sed -n '4,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
	exit "$1"
}

# ------------------------------------------------------------ in the guest
if [[ "${1:-}" == --guest ]]; then
	shift
	if [[ ! -c /dev/twheel ]]; then
		insmod "$top/kmod/twheel.ko" || { echo "demo: insmod failed"; exit 1; }
		loaded=1
	fi
	echo "demo: $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo);" \
		"presence $*"
	rc=0
	"$presence" "$@" || rc=$?
	if [[ -n "${loaded:-}" ]]; then
		rmmod twheel || true
	fi
	exit "$rc"
fi

# ---------------------------------------------------------------- the host
build=1
while (($# > 0)); do
	case "$1" in
	--no-build) build=0 ;;
	--) shift; demo_args=("$@"); break ;;
	-h | --help) usage 0 ;;
	*) echo "demo.sh: unknown argument: $1" >&2; usage 2 >&2 ;;
	esac
	shift
done

t0=$EPOCHREALTIME
secs() { # seconds since $1 with one decimal
	local now=$EPOCHREALTIME us
	us=$((${now/./} - ${1/./}))
	printf '%d.%d' $((us / 1000000)) $((us % 1000000 / 100000))
}

cd "$top"
if ((build)); then
	"$top/scripts/deps.sh"
	echo "demo: building the module, libtwheel and the examples"
	# The guest runs Debian's stock 6.1 kernel: build against its headers.
	# shellcheck source=scripts/lib/kernels.sh
	. "$top/scripts/lib/kernels.sh"
	kimg=/boot/vmlinuz-$(kernel_release 6.1)
	make -s -C "$top" KDIR="/lib/modules/${kimg#/boot/vmlinuz-}/build" modules
	make -s -C "$top/userspace/examples"
fi
[[ -f kmod/twheel.ko ]] || { echo "demo: kmod/twheel.ko missing (make)" >&2; exit 1; }
[[ -x "$presence" ]] || { echo "demo: $presence missing (make -C userspace/examples)" >&2; exit 1; }
t_build=$(secs "$t0")

out=$(mktemp -d "${TMPDIR:-/tmp}/twheel-demo.XXXXXX")
echo "demo: booting the guest (console and results in $out)"
t1=$EPOCHREALTIME
# The console streams live; the guest's kernel log dump at the end (and the
# power-off after it) goes to $out/console.log and dmesg.txt only (vm.sh
# still fails the run if the log shows a problem).
set +e
"$top/scripts/vm.sh" --timeout 600 --out "$out" -- "$top/scripts/demo.sh" --guest \
	"${demo_args[@]}" |
	awk '/^===== TWHEEL DMESG BEGIN/ { skip = 1 }
	     !skip && !/^TWHEEL-GUEST-(START|EXIT)/ { print; fflush() }'
rc=${PIPESTATUS[0]}
set -e
guest_rc=$(sed -n 's/^TWHEEL-GUEST-EXIT rc=\([0-9]*\).*/\1/p' "$out/console.log" 2>/dev/null | tail -n 1)
if ((rc != 0)) && [[ -n "$guest_rc" && "$guest_rc" != 0 ]]; then
	rc=$guest_rc
fi
echo "demo: wall time $(secs "$t0") s (build ${t_build} s, guest $(secs "$t1") s);" \
	"exit status $rc"
exit "$rc"
