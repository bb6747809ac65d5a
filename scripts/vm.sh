#!/usr/bin/env bash
# Boot a kernel (default: Debian's stock 6.1) in QEMU (TCG) and run one script inside a
# read-only chroot of the host's root filesystem, virtme-style.
#
# Usage:
#   scripts/vm.sh [--timeout SEC] [--mem MB] [--cpus N] [--kernel PATH]
#                 [--out DIR] [--append "EXTRA CMDLINE"] -- GUEST_SCRIPT [ARGS...]
#
# The guest script runs as root with the current working directory as its
# working directory (the host's cwd, seen read-only through 9p), with /tmp,
# /run and /dev/shm as guest tmpfs, and with TWHEEL_OUT=/tmp/twheel-out: a
# writable share of the host's --out directory (default: a fresh mktemp -d).
# The out directory is kept after the run; it also receives console.log (the
# whole serial console) and dmesg.txt (the guest's final kernel log).
#
# Exit status: 0 only if the guest booted, the guest script exited 0, the
# completion marker arrived on the result channel and the guest kernel log
# shows no warning/bug/lockdep/RCU-stall style report; 1 otherwise; 2 on a
# usage error.
#
# Progress: the serial console is streamed to stdout as it happens; the
# harness's own messages ("[vm.sh] ...", including the boot time and the
# final PASS/FAIL verdict) go to stderr.
#
# Environment:
#   TWHEEL_CACHE  cache root (default /var/cache/twheel) for the generated
#                 initramfs and the vmlinux decompressed from the bzImage
#                 (booted directly via PVH: saves ~6 s of TCG decompression)
set -euo pipefail

prog=${0##*/}
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)

usage() {
	cat >&2 <<EOF
usage: $prog [--timeout SEC] [--mem MB] [--cpus N] [--kernel PATH]
       $(printf '%*s' ${#prog} '') [--out DIR] [--append "EXTRA CMDLINE"] -- GUEST_SCRIPT [ARGS...]

  --timeout SEC   kill the guest and fail after SEC seconds (default 900)
  --mem MB        guest memory (default 4096)
  --cpus N        guest CPUs (default 2)
  --kernel PATH   kernel image (default: Debian's newest 6.1, generic flavour)
  --out DIR       host directory shared writable as \$TWHEEL_OUT
                  (default: a fresh mktemp -d; kept after the run)
  --append STR    extra kernel command line

GUEST_SCRIPT runs in a chroot of the host root (read-only), in the current
directory, with TWHEEL_OUT=/tmp/twheel-out (= the host's --out DIR, which
also receives console.log and dmesg.txt).  Exit status 0 only if the guest
script exited 0 and the guest kernel log is clean.
EOF
	exit 2
}

log() { printf '[%s] %s\n' "$prog" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# ---------------------------------------------------------------- arguments
timeout=900
mem=4096
cpus=2
kernel=
out=
extra_append=

need_arg() {
	(($2 >= 2)) || { echo "$prog: option $1 needs an argument" >&2; usage; }
}

while (($# > 0)); do
	case "$1" in
	--timeout | --mem | --cpus | --kernel | --out | --append)
		need_arg "$1" $#
		opt=${1#--}
		val=$2
		shift 2
		;;
	--timeout=* | --mem=* | --cpus=* | --kernel=* | --out=* | --append=*)
		opt=${1%%=*}
		opt=${opt#--}
		val=${1#*=}
		shift
		;;
	--)
		shift
		break
		;;
	-h | --help) usage ;;
	-*)
		echo "$prog: unknown option: $1" >&2
		usage
		;;
	*) break ;;
	esac
	case "$opt" in
	timeout) timeout=$val ;;
	mem) mem=$val ;;
	cpus) cpus=$val ;;
	kernel) kernel=$val ;;
	out) out=$val ;;
	append) extra_append=$val ;;
	esac
done

(($# >= 1)) || { echo "$prog: missing GUEST_SCRIPT" >&2; usage; }

for pair in "timeout:$timeout" "mem:$mem" "cpus:$cpus"; do
	if ! [[ "${pair#*:}" =~ ^[1-9][0-9]*$ ]]; then
		echo "$prog: --${pair%%:*} must be a positive integer, got '${pair#*:}'" >&2
		usage
	fi
done

# ------------------------------------------------------------ dependencies
"$script_dir/deps.sh"

if [[ -z "$kernel" ]]; then
	# shellcheck source=scripts/lib/kernels.sh
	. "$script_dir/lib/kernels.sh"
	kernel=/boot/vmlinuz-$(kernel_release 6.1) || die "no Debian 6.1 kernel in /boot"
fi
[[ -r "$kernel" ]] || die "kernel image not readable: $kernel"

# The x86 boot header holds a pointer (at 0x20e, relative to 0x200) to the
# kernel version string; use it so that any --kernel image maps to its
# modules directory.
kernel_version() {
	local off
	off=$(od -An -tu2 -j 526 -N 2 "$1" | tr -d ' ')
	[[ "$off" =~ ^[0-9]+$ ]] || return 1
	dd if="$1" bs=1 skip=$((off + 512)) count=256 2>/dev/null |
		tr '\0' '\n' | head -n 1 | cut -d ' ' -f 1
}
kver=$(kernel_version "$kernel" || true)
if [[ -z "$kver" || ! -d "/lib/modules/$kver" ]]; then
	base=${kernel##*/}
	kver=${base#vmlinuz-}
fi
moddir=/lib/modules/$kver
# A kernel of our own (the debug kernel: an ELF vmlinux, or a bzImage whose
# version has no /lib/modules) has virtio-9p built in and needs no modules.
builtin=
if [[ ! -f "$moddir/modules.dep" ]]; then
	if [[ "$(head -c 4 "$kernel" | od -An -c | tr -d ' ')" == '177ELF' ]] ||
		[[ -n "$kver" && ! -d "$moddir" ]]; then
		builtin=1
		kver=custom-$(stat -L -c '%n %s %Y' "$kernel" | sha256sum | cut -c 1-16)
	else
		die "no modules for kernel $kver ($moddir/modules.dep missing)"
	fi
fi

# ------------------------------------------------------- guest script/paths
repo=$(pwd -P)
guest_cmd=("$@")
# A bare file name in the cwd is run as ./NAME (exec would search PATH).
if [[ "${guest_cmd[0]}" != */* && -f "${guest_cmd[0]}" ]]; then
	guest_cmd[0]=./${guest_cmd[0]}
fi
# What the guest must keep visible of the script if it lives in /tmp or
# /run (which get a guest tmpfs): its directory, or just the file if it lies
# directly in /tmp or /run.
script_keep=
if [[ "${guest_cmd[0]}" == */* ]]; then
	[[ -f "${guest_cmd[0]}" ]] || die "guest script not found: ${guest_cmd[0]}"
	script_keep=$(cd "$(dirname "${guest_cmd[0]}")" && pwd -P)
	case "$script_keep" in
	/tmp | /run) script_keep=$script_keep/${guest_cmd[0]##*/} ;;
	esac
fi

if [[ -z "$out" ]]; then
	out=$(mktemp -d "${TMPDIR:-/tmp}/twheel-out.XXXXXX")
else
	mkdir -p "$out"
fi
out=$(cd "$out" && pwd -P)
console_log=$out/console.log
dmesg_txt=$out/dmesg.txt
rm -f "$console_log" "$dmesg_txt"

run=$(mktemp -d "${TMPDIR:-/tmp}/twheel-vm.XXXXXX")
qpid=
wdpid=
# shellcheck disable=SC2317 # invoked via trap
cleanup() {
	if [[ -n "$wdpid" ]]; then
		kill "$wdpid" 2>/dev/null || true
	fi
	if [[ -n "$qpid" ]] && kill -0 "$qpid" 2>/dev/null; then
		kill -TERM "$qpid" 2>/dev/null || true
		sleep 1
		kill -KILL "$qpid" 2>/dev/null || true
	fi
	rm -rf "$run"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

cache_dir=${TWHEEL_CACHE:-/var/cache/twheel}
if ! mkdir -p "$cache_dir" 2>/dev/null || [[ ! -w "$cache_dir" ]]; then
	log "warning: cache dir $cache_dir not writable, not caching"
	cache_dir=$run
fi

# ------------------------------------------------------------------ kernel
# Under TCG the bzImage's own decompressor takes ~6 s.  If the kernel
# supports PVH boot, decompress the embedded vmlinux once (cached) and let
# QEMU boot the ELF image directly.
extract_vmlinux() { # BZIMAGE DEST
	local magic cmd off
	for magic in '\xfd7zXZ\x00:xz -dc' '\x28\xb5\x2f\xfd:zstd -qdc' \
		'\x1f\x8b\x08:gzip -dc'; do
		cmd=${magic#*:}
		magic=${magic%%:*}
		command -v "${cmd%% *}" >/dev/null || continue
		while read -r off; do
			# Trailing data after the stream makes the decompressor
			# complain; what matters is that a whole ELF image came out.
			tail -c +$((off + 1)) "$1" | $cmd >"$2" 2>/dev/null || true
			if [[ "$(head -c 4 "$2" | od -An -c | tr -d ' ')" == '177ELF' ]]; then
				return 0
			fi
		done < <(LC_ALL=C grep -obUaP "$magic" "$1" | cut -d : -f 1)
	done
	return 1
}

boot_image=$kernel
if [[ "$(head -c 4 "$kernel" | od -An -c | tr -d ' ')" != '177ELF' ]] &&
	grep -qx 'CONFIG_PVH=y' "/boot/config-$kver" 2>/dev/null; then
	key=$(stat -L -c '%n %s %Y' "$kernel" | sha256sum | cut -c 1-16)
	vmlinux=$cache_dir/vmlinux-$kver-$key
	if [[ ! -s "$vmlinux" ]]; then
		log "extracting vmlinux from $kernel for PVH boot"
		if extract_vmlinux "$kernel" "$vmlinux.tmp.$$"; then
			mv -f "$vmlinux.tmp.$$" "$vmlinux"
		else
			rm -f "$vmlinux.tmp.$$"
			log "warning: could not extract vmlinux; booting the bzImage"
		fi
	fi
	[[ ! -s "$vmlinux" ]] || boot_image=$vmlinux
fi

# ---------------------------------------------------------------- initramfs
# Markers shared between the guest init and the host-side checks.
M_START=TWHEEL-GUEST-START
M_EXIT=TWHEEL-GUEST-EXIT
M_DMESG_BEGIN='===== TWHEEL DMESG BEGIN ====='
M_DMESG_END='===== TWHEEL DMESG END ====='
M_DONE=TWHEEL-DONE

guest_modules=(virtio_pci 9pnet_virtio 9p)
[[ -z "$builtin" ]] || guest_modules=()

init_script() {
	cat <<'EOF'
#!/bin/sh
# twheel QEMU guest init (busybox sh as PID 1): mount the host root over 9p,
# run the requested command in a chroot of it, report, power off.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1

RESULT_DEV=/dev/ttyS1
P9_OPTS=trans=virtio,version=9p2000.L,msize=512000

# Without ACPI (the debug kernel runs with acpi=off) power-off only halts:
# reboot instead, which ends QEMU (-no-reboot).
power_off() {
	sync
	if [ -d /sys/firmware/acpi ]; then
		poweroff -f
		echo o >/proc/sysrq-trigger
	fi
	reboot -f
	echo b >/proc/sysrq-trigger
	sleep 10
}

fail() {
	echo "TWHEEL-INIT-ERROR: $*"
	echo "TWHEEL-INIT-ERROR: $*" >"$RESULT_DEV"
	power_off
}

mount -t proc proc /proc || fail "mount /proc"
mount -t sysfs sysfs /sys || fail "mount /sys"
[ -r /job/env ] || fail "/job/env missing from the initramfs"
. /job/env

for m in @MODULES@; do
	modprobe "$m" || fail "modprobe $m"
done

# virtio devices may finish probing asynchronously: retry briefly.
mount_9p() { # TAG DIR OPTS
	i=0
	while ! mount -t 9p -o "$P9_OPTS,$3" "$1" "$2"; do
		i=$((i + 1))
		[ "$i" -lt 50 ] || return 1
		sleep 0.1
	done
}

mkdir -p /host
mount_9p hostroot /host ro,cache=loose || fail "mount 9p hostroot"

# /tmp and /run get a guest tmpfs; keep the repository and the guest
# script (its directory, or the file itself if it lies directly in /tmp or
# /run) visible if they live there.
n=0
for p in "$TWHEEL_REPO" "$TWHEEL_SCRIPT_KEEP"; do
	case "$p" in
	/tmp/?* | /run/?*) ;;
	*) continue ;;
	esac
	[ -e "/host$p" ] || continue
	n=$((n + 1))
	if [ -d "/host$p" ]; then
		mkdir -p "/keep/$n"
	else
		: >"/keep/$n"
	fi
	mount -o bind "/host$p" "/keep/$n" || fail "bind $p"
	echo "$p" >"/keep/$n.path"
done

mount -t proc proc /host/proc || fail "mount /host/proc"
mount -t sysfs sysfs /host/sys || fail "mount /host/sys"
mount -t devtmpfs devtmpfs /host/dev || fail "mount /host/dev"
mkdir -p /host/dev/pts /host/dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /host/dev/pts ||
	fail "mount /host/dev/pts"
mount -t tmpfs -o mode=1777 tmpfs /host/dev/shm || fail "mount /host/dev/shm"
mount -t tmpfs -o mode=1777 tmpfs /host/tmp || fail "mount /host/tmp"
mount -t tmpfs -o mode=755 tmpfs /host/run || fail "mount /host/run"
if [ -d /host/sys/kernel/debug ]; then
	mount -t debugfs debugfs /host/sys/kernel/debug ||
		echo "twheel-init: warning: could not mount debugfs"
fi
mkdir -p /host/tmp/twheel-out
mount_9p out /host/tmp/twheel-out cache=mmap || fail "mount 9p out"

i=1
while [ "$i" -le "$n" ]; do
	p=$(cat "/keep/$i.path")
	if [ -d "/keep/$i" ]; then
		mkdir -p "/host$p"
	else
		mkdir -p "/host${p%/*}"
		: >"/host$p"
	fi
	mount -o bind "/keep/$i" "/host$p" || fail "rebind $p"
	i=$((i + 1))
done

# Boot ran with loglevel=4 to stay quiet; from now on let KERN_WARNING reach
# the console too, so that a WARN() that panics (panic_on_warn) shows its
# "WARNING: ... at file:line" header in the console log.
echo 5 >/proc/sys/kernel/printk
echo "@M_START@ uptime=$(cut -d ' ' -f 1 /proc/uptime)"
env -i \
	PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	HOME=/root USER=root LOGNAME=root SHELL=/bin/sh TERM=linux \
	LANG=C.UTF-8 TWHEEL_GUEST=1 TWHEEL_OUT=/tmp/twheel-out \
	TWHEEL_REPO="$TWHEEL_REPO" \
	/bin/busybox chroot /host /bin/sh -c \
	'cd "$TWHEEL_REPO" && exec "$@"' twheel-guest "$@" </dev/null
rc=$?
echo "@M_EXIT@ rc=$rc uptime=$(cut -d ' ' -f 1 /proc/uptime)"

echo "@M_DMESG_BEGIN@"
dmesg
echo "@M_DMESG_END@"
# stty sets the console attributes with TCSADRAIN: this waits until all
# console output has left the UART before we report and power off.
stty -F /dev/console onlcr 2>/dev/null || sleep 1
sync
printf 'rc=%s\n@M_DONE@\n' "$rc" >"$RESULT_DEV"
power_off
EOF
}

render_init() {
	local text
	text=$(init_script)
	text=${text//@MODULES@/${guest_modules[*]}}
	text=${text//@M_START@/$M_START}
	text=${text//@M_EXIT@/$M_EXIT}
	text=${text//@M_DMESG_BEGIN@/$M_DMESG_BEGIN}
	text=${text//@M_DMESG_END@/$M_DMESG_END}
	text=${text//@M_DONE@/$M_DONE}
	printf '%s\n' "$text"
}

# Module files (absolute paths) needed to load guest_modules, in load order.
module_files() {
	local m line
	for m in "${guest_modules[@]}"; do
		modprobe --show-depends -S "$kver" "$m" || return 1
	done | while read -r line; do
		case "$line" in
		insmod\ *)
			line=${line#insmod }
			printf '%s\n' "${line%% *}"
			;;
		esac
	done | awk '!seen[$0]++'
}

build_initramfs() { # DEST
	local dest=$1 stage f rel applet
	stage=$(mktemp -d "$run/stage.XXXXXX")
	mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,dev,proc,sys,host,keep,job}
	cp /bin/busybox "$stage/bin/busybox"
	# Lets the kernel give init a console before devtmpfs is mounted
	# (needs root; init copes without it).
	mknod -m 600 "$stage/dev/console" c 5 1 2>/dev/null || true
	while read -r applet; do
		[[ -e "$stage/$applet" || -L "$stage/$applet" ]] && continue
		mkdir -p "$stage/$(dirname "$applet")"
		ln -s /bin/busybox "$stage/$applet"
	done < <(/bin/busybox --list-full)
	render_init >"$stage/init"
	chmod 755 "$stage/init"

	if [[ -n "$builtin" ]]; then
		(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort |
			cpio --quiet -o -H newc -R 0:0) >"$dest.tmp.$$"
		mv -f "$dest.tmp.$$" "$dest"
		rm -rf "$stage"
		return
	fi
	mkdir -p "$stage/lib/modules/$kver"
	while read -r f; do
		rel=${f#"$moddir"/}
		mkdir -p "$stage/lib/modules/$kver/$(dirname "$rel")"
		case "$f" in
		*.ko) cp "$f" "$stage/lib/modules/$kver/$rel" ;;
		*.ko.xz) xz -dc "$f" >"$stage/lib/modules/$kver/${rel%.xz}" ;;
		*.ko.zst) zstd -qdc "$f" >"$stage/lib/modules/$kver/${rel%.zst}" ;;
		*.ko.gz) gzip -dc "$f" >"$stage/lib/modules/$kver/${rel%.gz}" ;;
		*) die "unexpected module file: $f" ;;
		esac
	done <<<"$modfiles"
	for f in modules.order modules.builtin modules.builtin.modinfo; do
		if [[ -f "$moddir/$f" ]]; then
			cp "$moddir/$f" "$stage/lib/modules/$kver/"
		fi
	done
	depmod -b "$stage" "$kver"

	(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort |
		cpio --quiet -o -H newc -R 0:0) >"$dest.tmp.$$"
	mv -f "$dest.tmp.$$" "$dest"
	rm -rf "$stage"
}

modfiles=
if [[ -z "$builtin" ]]; then
	modfiles=$(module_files) || die "cannot resolve modules for ${guest_modules[*]} in $moddir"
	[[ -n "$modfiles" ]] || die "no module files found for ${guest_modules[*]}"
fi

cache_key=$(
	{
		echo "twheel-initramfs-v1 $kver"
		render_init
		# shellcheck disable=SC2086
		stat -L -c '%n %s %Y' /bin/busybox $modfiles
	} | sha256sum | cut -c 1-16
)
base_initrd=$cache_dir/initramfs-$kver-$cache_key.cpio
if [[ ! -s "$base_initrd" ]]; then
	log "building initramfs for $kver ($base_initrd)"
	build_initramfs "$base_initrd"
fi

# Per-run job description, appended as a second cpio archive so the cached
# base archive stays independent of the command being run.
shq() { # single-quote for sh
	local s=${1//\'/\'\\\'\'}
	printf "'%s'" "$s"
}
mkdir -p "$run/jobroot/job"
{
	echo "TWHEEL_REPO=$(shq "$repo")"
	echo "TWHEEL_SCRIPT_KEEP=$(shq "$script_keep")"
	printf 'set --'
	for a in "${guest_cmd[@]}"; do
		printf ' %s' "$(shq "$a")"
	done
	printf '\n'
} >"$run/jobroot/job/env"
(cd "$run/jobroot" && find job | LC_ALL=C sort |
	cpio --quiet -o -H newc -R 0:0) >"$run/job.cpio"
cat "$base_initrd" "$run/job.cpio" >"$run/initrd.cpio"

# -------------------------------------------------------------------- QEMU
qesc() { printf '%s' "${1//,/,,}"; } # QEMU option values: ',' -> ',,'

append="console=ttyS0 panic=-1 oops=panic panic_on_warn=1 slab_nomerge"
append+=" loglevel=4 log_buf_len=4M"
# Under TCG every vCPU's TSC is the host's (invariant) TSC, but the guest's
# boot-time TSC sync check and clocksource watchdog see emulation jitter
# and, in some boots, mark it unstable: the guest then reads the HPET, an
# emulated MMIO device (about 1 us a read, and vDSO clock_gettime becomes
# a syscall), which changes every timing from one boot to the next.
append+=" tsc=reliable"
# The IO-APIC timer check counts timer ticks over a busy-wait; on a loaded
# host a TCG vCPU misses them and the boot panics with "IO-APIC + timer
# doesn't work!" (seen once here, host load 5 on 2 cores): skip the check.
append+=" no_timer_check"
[[ -z "$extra_append" ]] || append+=" $extra_append"

result_file=$run/result.txt
fifo=$run/console.fifo
mkfifo "$fifo"

# One socket per vCPU: SeaBIOS writes only the first logical CPU of each
# package into the MP table, which is where a guest booted with acpi=off
# (the debug kernel) finds its CPUs; with QEMU's default of cores in one
# socket it saw a single CPU.
# shellcheck disable=SC2054 # commas belong to QEMU option values
qemu=(
	qemu-system-x86_64
	-accel tcg -cpu max -smp "$cpus,sockets=$cpus,cores=1,threads=1" -m "$mem"
	-nographic -nodefaults -no-reboot -no-user-config
	-monitor none
	-kernel "$boot_image" -initrd "$run/initrd.cpio"
	-append "$append"
	-chardev stdio,id=con,signal=on
	-serial chardev:con
	-chardev "file,id=result,path=$(qesc "$result_file")"
	-serial chardev:result
	-fsdev local,id=root,path=/,security_model=none,readonly=on,multidevs=remap
	-device virtio-9p-pci,fsdev=root,mount_tag=hostroot
	-fsdev "local,id=out,path=$(qesc "$out"),security_model=none,multidevs=remap"
	-device virtio-9p-pci,fsdev=out,mount_tag=out
)
# qboot boots faster than SeaBIOS but has no MP table IRQ routing, which a
# kernel booted with acpi=off (the debug kernel) needs for virtio INTx.
if [[ -r /usr/share/qemu/qboot.rom && " $append " != *" acpi=off "* ]]; then
	qemu+=(-bios /usr/share/qemu/qboot.rom)
fi

log "kernel $kernel ($kver), ${cpus} cpus, ${mem} MiB, timeout ${timeout}s"
log "running: ${guest_cmd[*]}  (in $repo)"
log "output dir: $out"

# boot_once: one run of QEMU, its console streamed to stdout and to
# console.log, until it exits (or the watchdog kills it).
boot_once() {
	t0=$EPOCHREALTIME
	"${qemu[@]}" </dev/null >"$fifo" 2>&1 &
	qpid=$!

	# Kills QEMU after the timeout.  Every wait is on a background sleep so that
	# the TERM sent at the end of a normal run is handled at once.
	watchdog() {
		local s=
		trap '[[ -z "$s" ]] || kill "$s" 2>/dev/null; exit 0' TERM
		sleep "$timeout" &
		s=$!
		wait "$s" || exit 0
		: >"$run/timed-out"
		kill -TERM "$qpid" 2>/dev/null || exit 0
		sleep 10 &
		s=$!
		wait "$s" || exit 0
		kill -KILL "$qpid" 2>/dev/null || true
	}
	watchdog &
	wdpid=$!

	# elapsed seconds since t0 with one decimal
	elapsed() {
		local now=$EPOCHREALTIME
		local us=$(((${now/./} - ${t0/./}) / 1000))
		printf '%d.%02d' $((us / 1000)) $((us % 1000 / 10))
	}

	boot_time=
	exec 3>"$console_log"
	while IFS= read -r line || [[ -n "$line" ]]; do
		line=${line%$'\r'}
		printf '%s\n' "$line"
		printf '%s\n' "$line" >&3
		# (SeaBIOS's screen-clearing escapes can precede it on its line)
		if [[ -z "$boot_time" && "$line" == *"$M_START "* ]]; then
			boot_time=$(elapsed)
			log "guest booted: script started ${boot_time}s after QEMU start"
		fi
	done <"$fifo"
	exec 3>&-

	qrc=0
	wait "$qpid" || qrc=$?
	qpid=
	kill "$wdpid" 2>/dev/null || true
	wait "$wdpid" 2>/dev/null || true
	wdpid=
}

boot_once
# A guest kernel that panics before the guest script starts has not met
# twheel yet (the script loads it): a flake of the emulated boot, as the
# KASAN report of an interrupt taken in identify_cpu() on a not yet usable
# irq_desc that the debug kernel, booted with acpi=off, shows now and
# then.  It is booted once more; the first console is kept.
if [[ -z "$boot_time" && ! -e "$run/timed-out" ]] &&
	grep -q 'Kernel panic' "$console_log"; then
	log "the guest kernel panicked before the guest script started; booting it once more (first console: console-first-boot.log)"
	grep -m 3 -E 'BUG:|Kernel panic' "$console_log" | sed 's/^/    /' >&2
	mv "$console_log" "$out/console-first-boot.log"
	rm -f "$result_file"
	boot_once
fi

# ----------------------------------------------------------------- verdict
failures=()
[[ ! -e "$run/timed-out" ]] || failures+=("timed out after ${timeout}s (QEMU killed)")

result=
[[ ! -f "$result_file" ]] || result=$(tr -d '\r' <"$result_file")
guest_rc=
if grep -qx "$M_DONE" <<<"$result"; then
	guest_rc=$(sed -n 's/^rc=\([0-9][0-9]*\)$/\1/p' <<<"$result" | head -n 1)
	if [[ -z "$guest_rc" ]]; then
		failures+=("result channel has no exit code")
	elif ((guest_rc != 0)); then
		failures+=("guest script exited with status $guest_rc")
	fi
else
	failures+=("no completion marker on the result channel (guest crashed, panicked or hung?)")
	if grep -q '^TWHEEL-INIT-ERROR' <<<"$result"; then
		failures+=("guest init failed: $(grep -m 1 '^TWHEEL-INIT-ERROR' <<<"$result")")
	fi
fi

# The guest's final kernel log, as dumped between the markers.
awk -v b="$M_DMESG_BEGIN" -v e="$M_DMESG_END" '
	$0 == e { inside = 0 }
	inside { print }
	$0 == b { inside = 1 }' "$console_log" >"$dmesg_txt"
if ! grep -qxF "$M_DMESG_END" "$console_log"; then
	failures+=("guest kernel log dump missing or incomplete")
fi

bad_fixed=(
	'BUG:' 'WARNING:' 'ODEBUG:' 'UBSAN:' 'general protection fault'
	'list_add corruption' 'list_del corruption' 'unreferenced object'
	'Call Trace:' 'Kernel panic' 'KASAN' 'possible circular locking'
	'possible recursive locking' 'INFO: rcu' 'INFO: task'
)
# Lines that are expected when loading our unsigned out-of-tree module.
allowed_re='loading out-of-tree module taints kernel|module verification failed'
kernel_log_bad() { # FILE
	local args=() p
	for p in "${bad_fixed[@]}"; do
		args+=(-e "$p")
	done
	{ grep -Ev "$allowed_re" "$1" || true; } >"$run/kernel.txt"
	{
		grep -F "${args[@]}" "$run/kernel.txt" || true
		# "stall" as a word start, so that "Installing ..." is fine.
		grep -E '(^|[^[:alnum:]_])stall' "$run/kernel.txt" || true
		# A newer kernel's word that the module uses an API on its way
		# out (7.2: "work func tw_work_fn [twheel] enqueued on
		# deprecated workqueue"): the next kernel may not have it.
		grep -iE 'twheel.*deprecat|deprecat.*twheel' "$run/kernel.txt" || true
	} >"$run/bad.txt"
	[[ -s "$run/bad.txt" ]]
}
if kernel_log_bad "$dmesg_txt"; then
	failures+=("guest kernel log reports problems:")
	while IFS= read -r l; do
		failures+=("    $l")
	done < <(head -n 20 "$run/bad.txt")
elif [[ ! -s "$dmesg_txt" ]] && kernel_log_bad "$console_log"; then
	# No dmesg dump (e.g. a panic): show what the console caught.
	failures+=("guest console shows kernel problems:")
	while IFS= read -r l; do
		failures+=("    $l")
	done < <(head -n 20 "$run/bad.txt")
fi

echo >&2
log "boot time: ${boot_time:-n/a}s (QEMU start until the guest script started)"
log "total time: $(elapsed)s; QEMU exit status $qrc"
log "guest script exit status: ${guest_rc:-unknown}"
log "console log: $console_log"
log "output dir: $out"
if ((${#failures[@]} > 0)); then
	for f in "${failures[@]}"; do
		log "FAIL: $f"
	done
	exit 1
fi
log "PASS"
exit 0
