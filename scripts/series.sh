#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The patch series for mainline: the tree as a kernel tree would hold it,
# in patches a maintainer can review, into out/series/ (a cover letter and
# 0001-*.patch ...), then verified in a fresh clone of the kernel source
# the project builds last (sid's linux-source-$TW_NEWEST,
# scripts/newest-source.sh):
#
#   git am of every patch
#   scripts/checkpatch.pl --strict of each patch: no error, warning or check
#     (the few types a patch may leave are listed with the reason, below)
#   a tinyconfig kernel with what twheel needs (CONFIG_TWHEEL=m,
#     CONFIG_TWHEEL_BPF, CONFIG_TWHEEL_KUNIT_TEST=m), modules_prepare, and
#     drivers/misc/twheel/ built at every patch that touches the build,
#     W=1 and sparse if it is new enough for the kernel, without a
#     warning; the last one from scratch, and also with CONFIG_TWHEEL_BPF
#     off
#   make headers, then make -C tools/testing/selftests TARGETS=twheel
#
# The repository keeps its layout; the series maps it onto kernel paths:
#
#   uapi/linux/twheel.h      include/uapi/linux/twheel.h
#   kmod/*.[ch]              drivers/misc/twheel/ (core, driver, BPF, KUnit)
#   selftests/               tools/testing/selftests/twheel/ (less the
#                            out-of-tree runner run_tests.sh and core/, the
#                            user-space build of the core)
#   docs/twheel.rst          Documentation/userspace-api/twheel.rst
#
# with the Kconfig, Makefiles and MAINTAINERS entry written here.  The
# kernel tree has no compatibility header: kmod/twheel_compat.h and every
# use of it that is a no-op on the newest kernel are dropped, by the
# explicit substitutions of kernel_file() (each must match as often as it
# says, and the build on the newest kernel proves nothing was left).
#
# The unpacked source is cached as a git repository of one commit
# ($TWHEEL_CACHE/series-base-VERSION); the clones are scratch, removed at
# the end.  Prints TAP lines, then "# series: N passed, N failed"; exits
# non-zero on failure.  Heavy steps run under nice -n 19.
#
# Usage: scripts/series.sh [-k]
#   -k  keep the scratch directory (its path is printed)
#
# Environment: TWHEEL_CACHE (default /var/cache/twheel), JOBS (default:
# the number of CPUs).
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
# shellcheck source=scripts/lib/tap.sh
. scripts/lib/tap.sh

keep=
[ "${1:-}" = -k ] && keep=1
cache=${TWHEEL_CACHE:-/var/cache/twheel}
out=$top/out/series
jobs=${JOBS:-$(nproc)}
start=$(date +%s)

die() {
	echo "series.sh: $*" >&2
	exit 1
}

# --- the kernel source, unpacked once -------------------------------------

src=$(scripts/newest-source.sh) || die "scripts/newest-source.sh failed"
tarball=$(sed -n 1p <<< "$src")
version=$(sed -n 2p <<< "$src")
base=$cache/series-base-$version
exec 8> "$cache/.series.lock"
flock 8
if [ ! -d "$base/.git" ]; then
	echo "# unpacking $tarball into $base (once)"
	tmp=$(mktemp -d "$cache/.series-base.XXXXXX")
	nice -n 19 tar -xJf "$tarball" -C "$tmp"
	tree=$(echo "$tmp"/linux-source-*)
	[ -f "$tree/MAINTAINERS" ] || die "no kernel tree in $tarball"
	stamp=$(date -R -r "$tarball")
	git -C "$tree" init -q -b base
	nice -n 19 git -C "$tree" add -A -f
	GIT_AUTHOR_DATE=$stamp GIT_COMMITTER_DATE=$stamp \
		git -C "$tree" -c user.name=twheel -c user.email=twheel@example.org \
		commit -q -m "Linux $version (Debian $(basename "$tree"))"
	mv "$tree" "$base"
	rmdir "$tmp"
fi

work=$(mktemp -d "$cache/.series.XXXXXX")
if [ -n "$keep" ]; then
	echo "# scratch: $work"
else
	trap 'rm -rf "$work"' EXIT
fi
log=$work/log
mkdir -p "$log"

# --- the series -------------------------------------------------------------

gen=$work/gen
git clone -q -s "$base" "$gen"
git -C "$gen" checkout -q -b twheel
basec=$(git -C "$gen" rev-parse HEAD)
name=$(git config user.name || true)
email=$(git config user.email || true)
if [ -z "$name" ] || [ -z "$email" ]; then
	name="The twheel authors"
	email=twheel@example.org
fi
# Dated as the tree's last commit: the same tree gives the same patches.
stamp=$(git log -1 --format=%cD)
export GIT_AUTHOR_NAME=$name GIT_AUTHOR_EMAIL=$email
export GIT_COMMITTER_NAME=$name GIT_COMMITTER_EMAIL=$email
export GIT_AUTHOR_DATE=$stamp GIT_COMMITTER_DATE=$stamp
tw=drivers/misc/twheel

# sub FILE COUNT PERL-SUBSTITUTION: apply it to FILE (whole), where it must
# match COUNT times
sub() {
	N=$2 perl -0777 -i -pe '$n += ('"$3"'); END { exit($n != $ENV{N}) }' "$1" ||
		die "${1#"$gen"/}: $3 matched not $2 time(s)"
}

# kernel_file SRC DST: SRC of the repository into the tree as DST, less
# what only an out-of-tree build needs
kernel_file() {
	local f=$gen/$2

	mkdir -p "$(dirname "$f")"
	cp "$1" "$f"
	case $1 in
	kmod/*) sub "$f" "$(grep -c 'uapi/linux/twheel\.h' "$1" || true)" \
		's#(?<!include/)\buapi/linux/twheel\.h#include/uapi/linux/twheel.h#g' ;;
	esac
	case $1 in
	kmod/twheel.h)
		sub "$f" 1 's/^#include "twheel_compat\.h"\n//m'
		# the design document is the repository's, not the kernel's
		sub "$f" 1 's/^ \* The tables and rules; why each rule is as it is: docs\/design\.md\.\n/ * The tables and rules:\n/m'
		;;
	kmod/call.c)
		# no-ops on a kernel whose PREEMPT_RT locks carry sparse's context
		sub "$f" 2 's/^\ttw_compat_rt_(?:acquire|release)\(&wh->lock\);\n//mg'
		;;
	kmod/limits.c)
		# no sentinel entry since 6.6; const since 6.11
		sub "$f" 1 's/^\tTW_CTL_TABLE_END\n//m'
		sub "$f" 1 's/^static struct ctl_table /static const struct ctl_table /m'
		;;
	kmod/main.c)
		# in the tree, the kernel's release is the version
		sub "$f" 1 's/^#ifndef TWHEEL_VERSION\n#define TWHEEL_VERSION .*\n#endif\n\n//m'
		sub "$f" 1 's/^MODULE_VERSION\(TWHEEL_VERSION\);\n//m'
		;;
	selftests/config)
		# the module is the tree's own
		sub "$f" 1 's/^# twheel\.ko is built out of tree, against this kernel\nCONFIG_MODULES=y\n/CONFIG_MODULES=y\nCONFIG_TWHEEL=m\nCONFIG_TWHEEL_BPF=y\n/m'
		;;
	esac
}

# objs VAR: the objects kmod/Kbuild lists for VAR (twheel-y, twheel_kunit-y)
objs() {
	awk -v v="$1" '$1 == v && $2 == ":=" { on = 1; $1 = $2 = "" }
		on { c = sub(/\\$/, ""); printf "%s ", $0; if (!c) exit }' kmod/Kbuild |
		tr -s ' \t' '\n' | grep . | sort
}

# make_list VAR OBJ...: "VAR := OBJ ..." folded for a Makefile
make_list() {
	local var=$1
	shift
	printf '%s\n' "$@" | xargs -n 6 echo |
		sed "1s/^/$var := /; 2,\$s/^/\t/; \$!s/\$/ \\\\/"
}

# progs MAKEFILE: the first TEST_GEN_PROGS of a selftests Makefile
progs() {
	awk '$1 == "TEST_GEN_PROGS" && $2 == ":=" { on = 1; $1 = $2 = "" }
		on { c = sub(/\\$/, ""); printf "%s ", $0; if (!c) exit }' "$1" |
		tr -s ' \t' '\n' | grep .
}

core=(wheel.c wheel.h index.c index.h)
driver=(twheel.h main.c file.c ioctl.c call.c expire.c mem.c limits.c twheel_trace.h)
bpf=(bpf.c twheel_bpf.h)
mapfile -t kunit < <(cd kmod && ls ./*_kunit.c kunit_helpers.[ch] kunit_checks.c model.[ch] |
	sed 's#^\./##')

# Every file of kmod/ is in one patch, but the compatibility header.
diff <(printf '%s\n' "${core[@]}" "${driver[@]}" "${bpf[@]}" "${kunit[@]}" \
	twheel_compat.h | sort) <(cd kmod && ls ./*.[ch] | grep -v '\.mod\.c$' |
	sed 's#^\./##' | sort) ||
	die "kmod/ has files no patch takes: update the lists in series.sh"
# ... and the module's objects are kmod/Kbuild's.
mapfile -t mod_objs < <(objs twheel-y)
mapfile -t kunit_objs < <(objs twheel_kunit-y)
diff <(printf '%s\n' "${mod_objs[@]}" bpf.o | sort) \
	<(printf '%s\n' "${core[@]}" "${driver[@]}" "${bpf[@]}" | sed -n 's/\.c$/.o/p' | sort) ||
	die "kmod/Kbuild's twheel-y is not the core and the driver"

# The driver's Kconfig and Makefile, part by part: each patch adds its own.
kconfig_driver() {
	cat <<'EOF'
# SPDX-License-Identifier: GPL-2.0-only

config TWHEEL
	tristate "twheel: timing wheel of millions of timeouts (/dev/twheel)"
	depends on SYSCTL
	help
	  /dev/twheel: each open file is a hierarchical timing wheel of
	  64-bit ids.  A process touches the ids it watches (connections,
	  sessions, leases) in batches with write(), arms, cancels and
	  queries them with ioctl(), and reads the ids that timed out with
	  read(), poll() or epoll: millions of timeouts behind one file
	  descriptor, charged to the caller's memory cgroup, instead of a
	  timerfd per id or a timer library in every process.  See
	  Documentation/userspace-api/twheel.rst.

	  To compile this driver as a module, choose M here: the module
	  will be called twheel.

	  If unsure, say N.
EOF
}

kconfig_bpf() {
	cat <<'EOF'

config TWHEEL_BPF
	bool "BPF kfunc to touch twheel ids from XDP and TC programs"
	depends on TWHEEL && BPF_SYSCALL && DEBUG_INFO_BTF_MODULES
	default y
	help
	  The kfunc bpf_twheel_touch(): an XDP or TC program touches an id
	  of a wheel that its owner exported with TWHEEL_IOC_BPF_HANDLE,
	  on the receive path, so that a heartbeat packet need not wake
	  the process that watches its sender.  The kfunc is registered
	  when the module's BTF is loaded; without it, or with this option
	  off, TWHEEL_IOC_BPF_HANDLE fails with EOPNOTSUPP.

	  If unsure, say Y.
EOF
}

kconfig_kunit() {
	cat <<'EOF'

config TWHEEL_KUNIT_TEST
	tristate "KUnit tests for twheel" if !KUNIT_ALL_TESTS
	depends on TWHEEL && KUNIT
	default KUNIT_ALL_TESTS
	help
	  The KUnit suites of twheel's core, the timing wheel and the id
	  index: advancing and re-slotting, the ready queue, expiry order,
	  the index's probing and resizing, DUMP's walk, and random
	  operations checked against a simple model of the wheel.  They
	  are a module of their own, twheel_kunit, which builds the core
	  in with them and needs no device.

	  For more information on KUnit and unit tests in general, see
	  the KUnit documentation in Documentation/dev-tools/kunit/.

	  If unsure, say N.
EOF
}

makefile_driver() {
	echo '# SPDX-License-Identifier: GPL-2.0'
	echo
	echo 'obj-$(CONFIG_TWHEEL) += twheel.o'
	make_list twheel-y "${mod_objs[@]}"
	[ "$1" = driver ] || echo 'twheel-$(CONFIG_TWHEEL_BPF) += bpf.o'
	echo '# twheel_trace.h is found through TRACE_INCLUDE_PATH, relative to $(src)'
	echo 'CFLAGS_main.o := -I$(src)'
	[ "$1" = kunit ] || return 0
	cat <<'EOF'

# The KUnit suites are a module of their own, never part of twheel.ko:
# wheel_kunit.c and key_kunit.c include wheel.c and index.c, as
# tools/testing/radix-tree builds lib/xarray.c with its test, so that no
# object is in two modules.
obj-$(CONFIG_TWHEEL_KUNIT_TEST) += twheel_kunit.o
EOF
	make_list twheel_kunit-y "${kunit_objs[@]}"
}

# maintainers_entry F...: the MAINTAINERS section of twheel, with the
# given file patterns, in its alphabetical place (after TW686X)
maintainers_entry() {
	local f entry
	entry="TWHEEL TIMING WHEEL DEVICE"$'\n'"M:	$name <$email>"$'\n'
	entry+="L:	linux-kernel@vger.kernel.org"$'\n'"S:	Maintained"$'\n'
	for f in "$@"; do
		entry+="F:	$f"$'\n'
	done
	ENTRY=$entry perl -0777 -i -pe '
		s/^TWHEEL TIMING WHEEL DEVICE\n.*?\n\n//ms;
		$n = s/^(TW686X VIDEO4LINUX DRIVER\n.*?\n\n)/$1$ENV{ENTRY}\n/ms;
		END { exit(!$n) }' "$gen/MAINTAINERS" || die "no TW686X entry in MAINTAINERS"
}

# commit SUBJECT: commit everything, the body on stdin, signed off
commit() {
	git -C "$gen" add -A -f
	{
		echo "$1"
		echo
		cat
	} | git -C "$gen" commit -q -s -F -
}

# 1: the ABI
kernel_file uapi/linux/twheel.h include/uapi/linux/twheel.h
magic=$(sed -n 's/^#define TWHEEL_IOC_MAGIC[[:space:]]*0x\([0-9A-Fa-f]*\).*/\1/p' \
	uapi/linux/twheel.h)
nrs=$(sed -n "s/^#define TWHEEL_IOC_[A-Z_]*[[:space:]]*_IO[RW]*(TWHEEL_IOC_MAGIC, 0x\([0-9A-Fa-f]*\),.*/\1/p" \
	uapi/linux/twheel.h | sort | sed -n '1p;$p' | paste -sd-)
[ -n "$magic" ] && [ -n "$nrs" ] || die "no TWHEEL_IOC_MAGIC or ioctl numbers in the uapi header"
# 0xD7 goes after 0xCF, in the table's columns
LINE=$(printf '0x%-4s%-7s%-58s%s' "${magic^^}" "$nrs" uapi/linux/twheel.h \
	'twheel timing wheel device') MAGIC=${magic^^} perl -0777 -i -pe '
	$n = s/^(0x[0-9A-F]{2}  .*\n(?: .*\n)*)(?=0x([0-9A-F]{2}) )/
		(hex($2) > hex($ENV{MAGIC}) && !$done++) ? "$1$ENV{LINE}\n" : $1/mge;
	END { exit(!$done) }' "$gen/Documentation/userspace-api/ioctl/ioctl-number.rst" ||
	die "no place for 0x$magic in ioctl-number.rst"
maintainers_entry include/uapi/linux/twheel.h
commit "twheel: add the user-space API of /dev/twheel" <<EOF
Programs that watch many things for silence (a connection, a session, a
lease, a heartbeat) keep one timeout per id and re-arm it on every sign
of life: a timerfd per id costs a file and an hrtimer each, a timer
library in every process costs a thread or a loop that scans, and
neither survives an exec of the service.

Add the ABI of /dev/twheel, a character device whose every open file is
a hierarchical timing wheel of 64-bit ids: write() touches a batch of
ids (each re-armed at now plus the wheel's timeout), read() returns the
ids that timed out as fixed-size records, poll() and epoll() wait for
them, and ioctl() configures the wheel, arms ids with their own
deadlines and payloads, cancels, queries, counts and dumps them, and
exports the wheel to BPF.  Every structure has fixed-width fields and
no implicit padding, so 32-bit callers need no compat layer; reserved
fields must be zero.  Times are on CLOCK_MONOTONIC or CLOCK_BOOTTIME as
the opener's time namespace sees them.

Reserve ioctl code 0x$magic ($nrs) for it.
EOF

# 2: the core
for f in "${core[@]}"; do
	kernel_file "kmod/$f" "$tw/$f"
done
maintainers_entry "$tw/" include/uapi/linux/twheel.h
commit "twheel: add the timing wheel and the id index" <<'EOF'
The core of twheel, with no lock, no allocation and no device in it, so
that it can be tested on its own:

- wheel.c: a hierarchical timing wheel of 8 levels of 64 slots, as
  kernel/time/timer.c's, but whose entries of coarse levels are
  re-slotted as their deadline approaches, so that no timeout from one
  tick to the end of CLOCK_MONOTONIC expires early or more than a tick
  late; expired ids wait in a ready queue in deadline order.  A touch
  that only moves a deadline later changes no slot.
- index.c: the ids of a wheel in an open-addressing table of 24-byte
  entries, resized incrementally in bounded steps, with a keyed hash so
  that a caller cannot choose colliding ids, and an ordered walk for
  DUMP.  It is hand-written rather than an rhashtable for those three
  (the entry size, the ordered walk, keyed probing); the reasons are at
  the top of the file.

Nothing builds these files yet: the driver of the next patch does.
EOF

# 3: the driver
for f in "${driver[@]}"; do
	kernel_file "kmod/$f" "$tw/$f"
done
# The BPF kfunc is the next patch: until then, its stubs alone.
sub "$gen/$tw/twheel.h" 1 's/^#if IS_ENABLED\(CONFIG_TWHEEL_BPF\)\n.*?^#else\n(.*?)^#endif\n/$1/ms'
sub "$gen/$tw/twheel.h" 1 's/^\/\* bpf\.c; without CONFIG_TWHEEL_BPF, (TWHEEL_IOC_BPF_HANDLE is unsupported) \*\//\/* $1 until the BPF kfunc is there *\//m'
kconfig_driver > "$gen/$tw/Kconfig"
makefile_driver driver > "$gen/$tw/Makefile"
sub "$gen/drivers/misc/Kconfig" 1 's/^(source "drivers\/misc\/rp1\/Kconfig"\n)/$1source "drivers\/misc\/twheel\/Kconfig"\n/m'
sub "$gen/drivers/misc/Makefile" 1 's/^(obj-\$\(CONFIG_MISC_RP1\)\t\t\+= rp1\/\n)/$1obj-\$(CONFIG_TWHEEL)\t\t+= twheel\/\n/m'
commit "twheel: add the /dev/twheel driver" <<'EOF'
The misc device around the core: every open() of /dev/twheel creates a
wheel, and the file's calls enter it under its spinlock.  Every hold of
the lock is bounded (a chunk of a write(), an ARM or a DUMP, a batch of
expiry), nothing under it sleeps or faults, and a node the slab cannot
give without reclaim is allocated with the lock dropped.

The expiry is the owner's: the hrtimer, armed only for the next slot
that holds work, sets a flag and wakes the waiters; the expiry then runs
in the next call on the fd, at the caller's priority and charged to its
memory cgroup, not in a kworker that would spend another user's CPU.  A
work item does only what no call may be there to do: grow the index
when a nowait writer needs room, and expire a first batch while events
sit unread so that an edge-triggered epoll sees a new edge.

The fd is like the kernel's own: readv/writev, RWF_NOWAIT and io_uring
without worker threads, Linux aio, fdinfo, time namespaces as timerfd
has them, inheritance across fork() and exec().  All memory is
accounted (GFP_KERNEL_ACCOUNT); ids are capped per fd, per user and in
total (sysctls fs.twheel.max_user_ids and fs.twheel.max_ids_total), and
there are tracepoints for touch, arm, cancel, expiry and each batch.

TWHEEL_IOC_BPF_HANDLE fails with EOPNOTSUPP until the next patch.
EOF

# 4: the BPF kfunc
for f in "${bpf[@]}"; do
	kernel_file "kmod/$f" "$tw/$f"
done
kernel_file kmod/twheel.h "$tw/twheel.h"
{ kconfig_driver; kconfig_bpf; } > "$gen/$tw/Kconfig"
makefile_driver bpf > "$gen/$tw/Makefile"
commit "twheel: add a BPF kfunc to touch an id from XDP and TC" <<'EOF'
A service that learns of a client's life from its packets (a UDP
heartbeat, a keepalive) wakes for every one only to touch the client's
id.  Let an XDP or TC program do it on the receive path instead, and
drop the packet there.

TWHEEL_IOC_BPF_HANDLE exports a wheel under a handle, unique for the
boot and never reused; the kfunc bpf_twheel_touch(handle, id) finds the
wheel under RCU and touches the id under the wheel's lock, as write()
does, never sleeping and never allocating: an absent id is not created.
The export ends when the file is released, an RCU grace period before
the wheel is freed.  The kfunc is registered for XDP and SCHED_CLS
programs only if the module's BTF was loaded; otherwise the ioctl fails
with EOPNOTSUPP, as it does with CONFIG_TWHEEL_BPF off.
EOF

# 5: KUnit
for f in "${kunit[@]}"; do
	kernel_file "kmod/$f" "$tw/$f"
done
{ kconfig_driver; kconfig_bpf; kconfig_kunit; } > "$gen/$tw/Kconfig"
makefile_driver kunit > "$gen/$tw/Makefile"
commit "twheel: add KUnit tests of the wheel and the index" <<'EOF'
The core is where an off-by-one costs a timeout that fires early or a
tick late, so test it where it runs, in the kernel: one suite per
concern, the wheel's advance and re-slotting, the ready queue, expiry
order and policy, the index's probing, keys and resizing, DUMP's walk,
and random operations checked against a model of the wheel (model.c,
the same model a user-space fuzzer of the core uses).

The suites are a module of their own, twheel_kunit, which builds the
core in with them: no device is needed, and no object is in two
modules.
EOF

# 6: selftests
while IFS= read -r f; do
	case $f in
	selftests/core/* | selftests/run_tests.sh) ;;
	*) kernel_file "$f" "tools/testing/selftests/twheel/${f#selftests/}" ;;
	esac
done < <(git ls-files selftests)
# the built programs and BPF objects, for git status
{
	echo '# SPDX-License-Identifier: GPL-2.0-only'
	progs selftests/Makefile | sort
	echo 'twheel_bpf.bpf.o'
	echo 'twheel_bpf.skel.h'
} > "$gen/tools/testing/selftests/twheel/.gitignore"
sub "$gen/tools/testing/selftests/Makefile" 1 's/^(TARGETS \+= tty\n)/$1TARGETS += twheel\n/m'
maintainers_entry "$tw/" include/uapi/linux/twheel.h tools/testing/selftests/twheel/
commit "selftests: twheel: add tests of /dev/twheel" <<'EOF'
The ABI as a program sees it, on kselftest's harness: every call, its
errors and its exact partial counts (abi, io), expiry timing and order
(timing), an adversarial model run against the device (model), races
between calls, release and the hrtimer (race), the owner-pays rule
under CPU contention (owner), fault injection and the memory cgroup's
limit (fault), io_uring without worker threads (uring), time namespaces
(timens), scale (scale), fork/exec/SCM_RIGHTS (ecosystem), and the BPF
kfunc from an XDP and a TC program (bpf, which needs clang, bpftool and
libbpf).  Each test skips without /dev/twheel.
EOF

# 7: the documentation
kernel_file docs/twheel.rst Documentation/userspace-api/twheel.rst
sub "$gen/Documentation/userspace-api/index.rst" 1 's/^(   isapnp\n)/$1   twheel\n/m'
maintainers_entry Documentation/userspace-api/twheel.rst "$tw/" \
	include/uapi/linux/twheel.h tools/testing/selftests/twheel/
commit "Documentation: twheel: document /dev/twheel" <<'EOF'
The user-space guide to /dev/twheel: what it is for, the calls and their
records, the errors, the guarantees (never early, at most a tick late,
the owner pays, exactly once, bounded critical sections), the limits
and their sysctls, what the fd shares with the kernel's own, and how to
watch a wheel (fdinfo, sysfs, debugfs, tracepoints).
EOF

# Nothing of the compatibility header is left.
if grep -rnE 'twheel_compat|TW_CTL_TABLE_END|tw_compat_|LINUX_VERSION_CODE|TWHEEL_VERSION' \
	"$gen/$tw" > "$log/compat"; then
	cat "$log/compat" >&2
	die "the kernel tree still has a use of twheel_compat.h"
fi

git -C "$gen" config branch.twheel.description "$(cat <<EOF
twheel: a timing wheel of millions of timeouts behind /dev/twheel

twheel puts a hierarchical timing wheel behind a character device:
every open() of /dev/twheel is a wheel of 64-bit ids that a process
touches in batches with write() and whose expired ids it reads with
read(), poll() or epoll, like any fd.  It is for the services that
watch very many things for silence (1,000,000 online users, each
offline after 30 s without a heartbeat; idle connections; leases): a
timerfd per id costs a file and an hrtimer each, and a timer library in
every process costs a thread or a scanning loop, memory the kernel does
not account, and the deadlines at every restart.

Why in the kernel rather than in each process:
- one hrtimer per wheel, armed only for the next slot that holds work:
  an idle wheel costs nothing, and nothing polls;
- the expiry is the owner's, run in its next call at its priority and
  charged to its memory cgroup; every allocation is accounted, and ids
  are capped per fd, per user and in total;
- the wheel is an fd: it survives exec() of the service, passes over a
  Unix socket, and works with epoll, io_uring and aio;
- a BPF program on the receive path can touch an id for a heartbeat
  packet, without waking the process (patch 4).

The ABI in brief (patch 1, include/uapi/linux/twheel.h, ioctl code
0x$magic):
  write(fd, __u64 ids[], n * 8)      touch: re-arm each at now + timeout
  read(fd, struct twheel_event[], .) expired ids, in deadline order
  poll/epoll                         EPOLLIN while an event is queued
  TWHEEL_IOC_{SET,GET}_CONFIG        tick, timeout, cap, clock
  TWHEEL_IOC_{ARM,CANCEL,QUERY}      per-id deadlines and payloads
  TWHEEL_IOC_GET_STATS, _DUMP        counters; every id, to restore
  TWHEEL_IOC_BPF_HANDLE              export to the kfunc
Guarantees: never early, at most one tick late, exactly once and in
deadline order, bounded lock holds.

The series: the ABI; the core (wheel and index, no locks, testable on
its own); the driver; the BPF kfunc (CONFIG_TWHEEL_BPF); KUnit suites
of the core; kselftests; the documentation.  Each patch builds.

Testing: the module is developed out of tree and tested on Debian's
6.1 and 6.12 kernels (with and without PREEMPT_RT) in QEMU, and on a
KASAN, lockdep, kmemleak and fault-injection kernel built from this
source: the kselftests of patch 6 (64-bit and -m32), the KUnit suites,
a syscall fuzzer (trinity), io_uring and BPF programs.  This series was
generated from that tree by its scripts/series.sh, applied with git am
to Debian's linux-source $version, built with W=1 and C=2 (sparse)
without a warning, CONFIG_TWHEEL=m and CONFIG_TWHEEL_KUNIT_TEST=m, with
and without CONFIG_TWHEEL_BPF, and checked with checkpatch.pl --strict.
EOF
)"
rm -rf "$out"
mkdir -p "$out"
git -C "$gen" format-patch -q --cover-letter --cover-from-description=subject \
	--thread=shallow -o "$out" "$basec..HEAD"
mapfile -t patches < <(ls "$out"/0*.patch | grep -v /0000-cover-letter.patch)
ok "the series written: a cover letter and ${#patches[@]} patches in ${out#"$top"/}"
git -C "$gen" log --reverse --format=%s "$basec..HEAD" | sed 's/^/#   /'

# --- the verification, in a fresh clone -------------------------------------

set +e
t() { # DESCRIPTION LOG COMMAND...: tap_cmd, with its log in $log/LOG
	tap_log=$log/$2
	tap_cmd "$1" "${@:3}"
}

elapsed() {
	echo "# $(($(date +%s) - start)) s"
}

v=$work/verify
git clone -q -s "$base" "$v" && git -C "$v" checkout -q -b twheel ||
	tap_bail_out series 1 "cannot clone $base"
t "git am of the ${#patches[@]} patches on Linux $version" am \
	git -C "$v" am --whitespace=error-all "${patches[@]}" ||
	tap_bail_out series 1 "the series does not apply"
[ "$(git -C "$v" rev-parse HEAD^{tree})" = "$(git -C "$gen" rev-parse HEAD^{tree})" ]
check "the applied tree is the generated one" test $? -eq 0
mapfile -t commits < <(git -C "$v" rev-list --reverse "$basec..HEAD")

# What checkpatch may leave, by patch, and why:
# - FILE_PATH_CHANGES: a patch that adds files under drivers/misc/twheel/,
#   which the MAINTAINERS entry of the core's patch covers already;
# - in the selftests, user space, the idioms of user space: stdint's and
#   inttypes.h's names (PREFER_KERNEL_TYPES, CAMELCASE: PRIu64), no BIT(),
#   ARRAY_SIZE(), noinline or __noreturn of the kernel's headers, volatile
#   for a signal handler's flag, ENOSYS from syscall(), the harness's
#   flow-control macros (ASSERT_*), and the architecture's syscall numbers.
allowed() {
	case $1 in
	*-twheel-add-the-dev-twheel-driver.patch | *-twheel-add-a-BPF-kfunc-* | \
	*-twheel-add-KUnit-tests-*)
		echo FILE_PATH_CHANGES ;;
	*-selftests-twheel-*)
		echo PREFER_KERNEL_TYPES,CAMELCASE,BIT_MACRO,ARRAY_SIZE,PREFER_DEFINED_ATTRIBUTE_MACRO,VOLATILE,ENOSYS,MACRO_WITH_FLOW_CONTROL,ARCH_DEFINES ;;
	esac
}
for p in "${patches[@]}"; do
	ign=$(allowed "$p")
	# shellcheck disable=SC2046 # no word or one
	# spdxcheck.py wants Debian's python3, ply and git (scripts/deps.sh)
	(cd "$v" && PATH=/usr/bin:$PATH perl scripts/checkpatch.pl --strict --quiet --no-summary --show-types \
		$([ -n "$ign" ] && echo --ignore "$ign") "$p") > "$log/checkpatch" 2>&1
	rc=$?
	desc="checkpatch.pl --strict ${p##*/}${ign:+ (allowed: $ign)}"
	if [ $rc -eq 0 ] && [ ! -s "$log/checkpatch" ]; then
		ok "$desc"
	else
		not_ok "$desc"
		sed 's/^/#   /' "$log/checkpatch" | head -n 40
		echo "#   $(grep -cE '^(ERROR|WARNING|CHECK):' "$log/checkpatch") messages in all"
	fi
done
elapsed

# The kernel: tinyconfig and what twheel needs, built out of the source
# tree (O=), which each commit of the series is checked out in turn.
b=$work/build
cat > "$work/twheel.config" <<'EOF'
CONFIG_64BIT=y
CONFIG_MULTIUSER=y
CONFIG_MODULES=y
CONFIG_MODULE_UNLOAD=y
CONFIG_PRINTK=y
CONFIG_SYSFS=y
CONFIG_PROC_FS=y
CONFIG_PROC_SYSCTL=y
CONFIG_DEBUG_FS=y
CONFIG_CGROUPS=y
CONFIG_MEMCG=y
CONFIG_NAMESPACES=y
CONFIG_TIME_NS=y
CONFIG_FTRACE=y
CONFIG_ENABLE_DEFAULT_TRACERS=y
CONFIG_BPF_SYSCALL=y
CONFIG_DEBUG_KERNEL=y
CONFIG_DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT=y
CONFIG_DEBUG_INFO_BTF=y
CONFIG_DEBUG_INFO_BTF_MODULES=y
CONFIG_KUNIT=y
CONFIG_TWHEEL=m
CONFIG_TWHEEL_BPF=y
CONFIG_TWHEEL_KUNIT_TEST=m
EOF
kmake() {
	nice -n 19 make -C "$v" O="$b" -j"$jobs" "$@"
}

# configure [SYMBOL...]: the fragment onto tinyconfig; every line of it
# must have survived, but the SYMBOLs (not there yet at this commit)
configure() {
	local line missing=0
	kmake -s tinyconfig &&
		(cd "$b" && "$v/scripts/kconfig/merge_config.sh" -m -O "$b" .config \
			"$work/twheel.config") &&
		kmake -s olddefconfig || return 1
	while IFS= read -r line; do
		for sym in "$@"; do
			[ "${line%%=*}" = "CONFIG_$sym" ] && continue 2
		done
		grep -qx "$line" "$b/.config" || { echo "not set: $line"; missing=1; }
	done < "$work/twheel.config"
	return $missing
}

prepared() {
	git -C "$v" checkout -q "$basec" &&
		configure TWHEEL TWHEEL_BPF TWHEEL_KUNIT_TEST &&
		kmake modules_prepare
}
t "tinyconfig + twheel's options, modules_prepare (Linux $version)" prepare prepared ||
	tap_bail_out series 1 "no kernel to build in"
elapsed

# Sparse must know the newest kernel's __typeof_unqual__ (its own
# scripts/checker-valid.sh): Debian's 0.6.4 does not, and kbuild then
# skips it.  The same sources get sparse in make lint, on 6.1 and 6.12.
if [ "$(sh "$v/scripts/checker-valid.sh" sparse 2> /dev/null)" = 1 ]; then
	sparse=C=1
	ok "sparse $(sparse --version) is valid for Linux $version"
else
	sparse=
	skip "sparse on Linux $version" \
		"sparse $(sparse --version 2>&1) lacks __typeof_unqual__ (make lint runs it on 6.1, 6.12)"
fi

# build [all]: drivers/misc/twheel/ with W=1 (and sparse), without a
# warning; all: every file, not only what changed.  The objects and
# twheel.o, twheel_kunit.o: the .ko would need vmlinux's symbols.
built() {
	[ "${1:-}" != all ] || rm -rf "$b/drivers/misc/twheel"
	kmake W=1 $sparse drivers/misc/twheel/ > "$log/kbuild" 2>&1
	local rc=$?
	cat "$log/kbuild"
	! grep -E 'warning:|error:' "$log/kbuild" && [ $rc -eq 0 ] &&
		[ -f "$b/drivers/misc/twheel/twheel.o" ]
}

# Each patch in turn: its options, and a build of the driver for each that
# changes what is built (headers for the ABI's).
syms=(TWHEEL TWHEEL_BPF TWHEEL_KUNIT_TEST)
for i in "${!commits[@]}"; do
	c=${commits[$i]}
	subj=$(git -C "$v" log -1 --format=%s "$c")
	n=$((i + 1))
	git -C "$v" checkout -q "$c"
	case $subj in
	*"the /dev/twheel driver") syms=(TWHEEL_BPF TWHEEL_KUNIT_TEST) ;;
	*"a BPF kfunc"*) syms=(TWHEEL_KUNIT_TEST) ;;
	*"KUnit tests"*) syms=() ;;
	esac
	t "patch $n: its options set (${syms[*]:+not yet: ${syms[*]}})" config-$n \
		configure "${syms[@]}" || continue
	files=$(git -C "$v" diff --name-only "$c^" "$c")
	if grep -q '^include/uapi/' <<< "$files"; then
		t "patch $n: make headers (headers_install's checks)" headers-$n kmake headers
	fi
	if grep -qE '^drivers/misc/(twheel/)?(Kconfig|Makefile)$' <<< "$files"; then
		t "patch $n builds: W=1 ${sparse:+$sparse }drivers/misc/twheel/, no warning" build-$n built
		elapsed
	fi
done

t "the series builds: W=1 ${sparse:+$sparse }drivers/misc/twheel/, every file, no warning" \
	build built all
kfunc() {
	nm "$b/drivers/misc/twheel/twheel.o" "$b/drivers/misc/twheel/twheel_kunit.o" \
		> "$log/nm" 2>&1 && grep -q ' T bpf_twheel_touch$' "$log/nm"
}
check "twheel.o and twheel_kunit.o built, with the kfunc" kfunc
nobpf() {
	"$v/scripts/config" --file "$b/.config" -d TWHEEL_BPF &&
		kmake -s olddefconfig && ! grep -q '^CONFIG_TWHEEL_BPF=y' "$b/.config" &&
		built all && ! nm "$b/drivers/misc/twheel/twheel.o" | grep -q bpf_twheel_touch
}
t "the series builds with CONFIG_TWHEEL_BPF off: W=1, no warning, no kfunc" nobpf nobpf
elapsed

# The selftests, on the headers make headers installed.
unset OUTPUT O KBUILD_OUTPUT INSTALL_PATH KSFT_INSTALL_PATH KSFT_DIR \
	TARGETS SKIP_TARGETS CFLAGS LDFLAGS LDLIBS CC
ksft() {
	local p
	kmake -s headers &&
		nice -n 19 make -C "$v/tools/testing/selftests" -j"$jobs" TARGETS=twheel \
			KHDR_INCLUDES="-isystem $b/usr/include" || return 1
	for p in $(progs "$v/tools/testing/selftests/twheel/Makefile"); do
		[ -x "$v/tools/testing/selftests/twheel/$p" ] || { echo "$p is not built"; return 1; }
	done
	! grep -E 'warning:' "$log/ksft"
}
t "make -C tools/testing/selftests TARGETS=twheel builds every program" ksft ksft

echo "# $(($(date +%s) - start)) s in all"
tap_summary series
