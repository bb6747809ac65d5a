#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A syscall fuzzer against /dev/twheel: trinity (Debian's package), as an
# unprivileged user, with /dev/twheel its only victim file, calling the
# syscalls that take a file descriptor.  A guest suite of scripts/guest.sh
# (the module loaded): make check-debug runs a fixed budget of it on the
# debug kernel, make fuzz a longer one.  What decides is the kernel's
# log, which scripts/vm.sh scans after the run (KASAN, lockdep, WARN,
# BUG, hung task): this script checks that trinity ran its budget with
# /dev/twheel open, that the taint it watches stayed clear, and that the
# wheel still works afterwards.
#
# TWHEEL_TRINITY_SYSCALLS: the budget (default 20000), TWHEEL_TRINITY_SEED
# (default: the time), TWHEEL_TRINITY_CHILDREN (default 2).
set -u

dir=$(dirname "$0")
# shellcheck source=scripts/lib/tap.sh
. "$dir/lib/tap.sh"

n=${TWHEEL_TRINITY_SYSCALLS:-20000}
seed=${TWHEEL_TRINITY_SEED:-$(date +%s)}
children=${TWHEEL_TRINITY_CHILDREN:-2}
out=${TWHEEL_OUT:-/tmp}

if ! command -v trinity > /dev/null; then
	skip "trinity against /dev/twheel" "no trinity (scripts/deps.sh)"
	tap_summary trinity
	exit $?
fi
check "/dev/twheel is there and open to every user" sh -c \
	'[ -c /dev/twheel ] && [ "$(stat -c %a /dev/twheel)" = 666 ]'

# Its own writable directory (it writes nothing there with logging off,
# but a syscall may create a file in its cwd), owned by nobody.
work=$(mktemp -d /tmp/trinity.XXXXXX)
chown nobody "$work"
taint0=$(cat /proc/sys/kernel/tainted)
echo "# trinity: $n syscalls, seed $seed, $children children, taint before: $taint0"

# The syscalls that take an fd, and those that make one from it.  The
# fds: the victim's (trinity's "pseudo" provider opens the -V files),
# and pipes, epoll, eventfd and timerfd ones beside them (splice, tee,
# epoll_ctl on a wheel); no sockets, perf, test files, memfd or DRM.
calls="read write readv writev pread64 pwrite64 preadv pwritev preadv2
	pwritev2 ioctl poll ppoll select pselect6 epoll_ctl epoll_wait
	epoll_pwait lseek fcntl dup dup2 dup3 close newfstat splice tee sendfile
	mmap fsync fdatasync flock io_uring_setup io_uring_enter
	io_submit io_setup"
args=
for c in $calls; do
	args="$args -c $c"
done
# How many fds of /dev/twheel trinity held, sampled while it runs
# (/sys/class/misc/twheel/fds): that it fuzzed the wheel at all.
fds=/sys/class/misc/twheel/fds
echo 0 > "$out/trinity-fds"
(
	max=0
	while :; do
		n=$(cat "$fds" 2> /dev/null || echo 0)
		[ "$n" -le "$max" ] || { max=$n; echo "$max" > "$out/trinity-fds"; }
		sleep 0.2
	done
) &
sampler=$!
t0=$(date +%s)
# shellcheck disable=SC2086 # one word a syscall
(cd "$work" && setpriv --reuid=nobody --regid=nogroup --clear-groups \
	--inh-caps=-all -- trinity -q -l off -s "$seed" -C "$children" \
	-N "$n" -V /dev/twheel -T WARN,BAD_PAGE,DIE,MACHINE_CHECK \
	--disable-fds=sockets,perf,testfile,memfd,drm $args) \
	> "$out/trinity.log" 2>&1
rc=$?
secs=$(($(date +%s) - t0))
kill "$sampler" 2> /dev/null
wait "$sampler" 2> /dev/null
maxfds=$(cat "$out/trinity-fds")
tail -n 15 "$out/trinity.log" | sed 's/^/#   /'
ran=$(sed -n 's/.*Ran \([0-9]*\) syscalls.*/\1/p' "$out/trinity.log" | tail -n 1)
echo "# trinity: rc $rc, ${ran:-no count of} syscalls in $secs s"
check "trinity held fds of /dev/twheel (up to $maxfds at once)" test "$maxfds" -gt 0
check "trinity ran its $n syscalls (ran ${ran:-?} in $secs s)" \
	test "${ran:-0}" -ge "$n"
taint1=$(cat /proc/sys/kernel/tainted)
# bits: 5 BAD_PAGE, 7 DIE, 9 WARN, 4 MACHINE_CHECK
check "no new taint: WARN, BAD_PAGE, DIE, MACHINE_CHECK ($taint0 -> $taint1)" \
	test $((taint1 & 0x2b0)) -eq $((taint0 & 0x2b0))
rm -rf "$work"
check "the wheel still works: twheel_abi_test" sh -c \
	"selftests/twheel_abi_test > '$out/trinity-abi.log' 2>&1"
tap_summary trinity
