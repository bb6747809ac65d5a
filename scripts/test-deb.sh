#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The Debian packages, tested for real on the host (no module is loaded):
# make deb (out/deb) and its lintian run, apt-get install of the five
# packages, DKMS's build of the module for every installed kernel with
# headers (the kernel matrix: 6.1, 6.12 and their PREEMPT_RT flavours), the
# library through pkg-config, twheelctl from /usr/bin, the Python package
# from the system path; then, in the QEMU guest (Debian's 6.1 kernel),
# the module DKMS built, loaded, under the kselftests and the library and
# Python suites against the packaged files; then apt-get purge and a
# search for anything left.
# TAP lines, then "# deb: N passed, N failed[, N skipped]"; non-zero on
# failure.  Needs root, the packaging tools (debhelper, dh-dkms,
# dh-python), dkms and the 6.1 headers: without them it prints one skip
# with the reason.  Installs, builds and removes twheel/VERSION in the
# machine's DKMS tree, as test-install.sh does: not at the same time as
# another test-install.sh or test-deb.sh run (a lock orders them).
#
# Usage: scripts/test-deb.sh [--keep] [KDIR]
#          KDIR: the 6.1 headers (default: the newest 6.1 /lib/modules/*/build);
#          --keep: leave the packages installed (for --guest), purge skipped
#        scripts/test-deb.sh --guest
#          The guest's part, run by the host's through scripts/vm.sh (or
#          by hand after a --keep run): the tests against the packaged
#          module, library, twheelctl and Python package; see guest().
# TWHEEL_DEB_GUEST=0 leaves the guest out.
# The host run also runs the library and Python suites of userspace/tests
# against the installed library and package (their device tests skip).
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top" || exit 1
# shellcheck source=scripts/lib/tap.sh
. scripts/lib/tap.sh
version=$(cat kmod/VERSION)
pkgs=(twheel-dkms libtwheel0 libtwheel-dev twheel-tools python3-twheel)
work=$(mktemp -d)
tap_log=$work/log
trap 'rm -rf "$work"' EXIT
# Debian's python3, not a pyenv/venv one first in PATH.
py=/usr/bin/python3
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2> /dev/null || gcc -print-multiarch)

# ------------------------------------------- the suites, on the packages
# The user-space suites of userspace/tests against the installed files,
# not the tree's: test_lib.c built in $work against the installed
# libtwheel with pkg-config (no rpath into the tree), and the Python suites
# run from a copy in $work whose ../python has no twheel package (they put
# ../python first on sys.path), so that `import twheel` is the system's,
# with TWHEELCTL=/usr/bin/twheelctl.  Without /dev/twheel (the host) their
# device tests skip; in the guest they run.

packaged_suites() {
	local g=$work/suites
	mkdir -p "$g/tests" "$g/python/examples"
	# shellcheck disable=SC2046 # pkg-config's words
	if tap_cmd "test_lib.c builds against the installed libtwheel" \
		cc -D_GNU_SOURCE -O2 -o "$g/test_lib" userspace/tests/test_lib.c \
		$(pkg-config --cflags --libs libtwheel); then
		check "test_lib.c links the installed libtwheel.so.0" \
			sh -c "ldd '$g/test_lib' | grep -Eq '=> (/usr)?/lib/$multiarch/libtwheel.so.0 '"
		tap_lines test_lib "$g/test_lib" "$g"
	fi

	cp userspace/tests/test_python.py userspace/tests/test_python_async.py "$g/tests/"
	cp userspace/python/examples/presence_async.py "$g/python/examples/"
	check "the suites' import twheel is /usr/lib/python3/dist-packages/twheel" \
		sh -c "cd '$g/tests' && $py -c 'import sys; sys.path.insert(0, \"../python\"); import twheel; print(twheel.__file__)' |
			grep -q '^/usr/lib/python3/dist-packages/twheel/'"
	TWHEELCTL=/usr/bin/twheelctl PYTHONDONTWRITEBYTECODE=1 \
		tap_lines test_python "$py" "$g/tests/test_python.py"
	TWHEELCTL=/usr/bin/twheelctl PYTHONDONTWRITEBYTECODE=1 \
		tap_lines test_python_async "$py" "$g/tests/test_python_async.py"
}

# ------------------------------------------------------------------ guest
# scripts/vm.sh runs the guest in a read-only chroot of the host's root,
# so it sees the packages the host's run installed (/tmp is the guest's
# own tmpfs).  It loads the module DKMS installed for the running 6.1
# kernel (not kmod/twheel.ko), runs two of the tree's kselftest suites
# against it (the ABI and the I/O paths; make -C selftests on the host
# first: they use only the uapi header and /dev/twheel; make check's own
# guest runs them all on the tree's module), /usr/bin/twheelctl status,
# and packaged_suites with the device there.
# userspace/tests/run_guest.sh itself cannot be pointed at the installed
# files (it sets TWHEELCTL to the tree's binary and requires the tree's
# build); its twheelctl tests against a holder process are not repeated.
guest_ksft() { # the kselftest suites, their totals folded into ours
	local t
	for t in twheel_abi_test twheel_io_test; do
		if [ ! -x "selftests/$t" ]; then
			not_ok "selftests/$t is built (make -C selftests)"
			continue
		fi
		"selftests/$t" > "$work/$t.tap" 2>&1
		sed 's/^/# /' "$work/$t.tap" | grep -v '^# ok \|^# #  *OK\|^# #  RUN'
		tap_fold_totals "$work/$t.tap" ||
			not_ok "selftests/$t ran to completion (no totals line)"
	done
}

guest() {
	local ko out=${TWHEEL_OUT:-/tmp}
	ko=/lib/modules/$(uname -r)/updates/dkms/twheel.ko
	finish() {
		tap_results "$out/deb-guest-results"
		tap_summary deb-guest
		exit $?
	}
	check "DKMS's twheel.ko for $(uname -r) is installed" test -f "$ko"
	check "insmod $ko" insmod "$ko"
	if [ ! -c /dev/twheel ]; then
		not_ok "/dev/twheel is a character device"
		finish
	fi
	check "twheelctl status from /usr/bin: twheel loaded" \
		sh -c '/usr/bin/twheelctl status | grep -q "twheel loaded"'

	check "the loaded twheel is DKMS's build (srcversion of $ko)" sh -c \
		"[ \"\$(cat /sys/module/twheel/srcversion)\" = \"\$(modinfo -F srcversion '$ko')\" ]"
	guest_ksft
	packaged_suites

	check "rmmod twheel" rmmod twheel
	finish
}

if [ "${1:-}" = --guest ]; then
	guest
fi

# ------------------------------------------------------------------- host
keep=0
if [ "${1:-}" = --keep ]; then
	keep=1
	shift
fi
# shellcheck source=scripts/lib/kernels.sh
. scripts/lib/kernels.sh
kdir=${1:-$(kernel_kdir "$(kernel_release 6.1)")}
krel=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"/\1/p' "$kdir/include/generated/utsrelease.h" 2> /dev/null)

why=
if [ "$(id -u)" -ne 0 ]; then
	why="not root"
elif [ -z "$krel" ]; then
	why="no 6.1 kernel headers (${kdir:-none}; run scripts/deps.sh)"
else
	for tool in dpkg-buildpackage dh dh_dkms dh_python3 dh_installsysusers dkms \
		apt-get pkg-config cc; do
		command -v "$tool" > /dev/null || { why="no $tool (run scripts/deps.sh)"; break; }
	done
fi
if [ -n "$why" ]; then
	skip "Debian packages: build, install, DKMS, purge" "$why"
	tap_summary deb
	exit $?
fi

# One DKMS user of twheel at a time: test-install.sh takes the same lock.
exec 9> /run/lock/twheel-dkms-test.lock
flock 9

apt=(env DEBIAN_FRONTEND=noninteractive apt-get -y -q -o DPkg::Lock::Timeout=600)
installed() { # the twheel packages dpkg knows (installed or with conffiles)
	dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${pkgs[@]}" 2> /dev/null |
		awk '$2 != "un" { print $1 }'
}
had_group=0
getent group twheel > /dev/null && had_group=1

# A leftover of an interrupted run: its packages purged, a make
# dkms-install's registration removed.
if [ -n "$(installed)" ]; then
	# shellcheck disable=SC2046 # one word a package
	"${apt[@]}" purge $(installed) > /dev/null 2>&1
fi
if dkms status -m twheel | grep . > /dev/null; then
	make -s dkms-uninstall > /dev/null 2>&1
fi

debs() {
	local p
	for p in "${pkgs[@]}"; do
		ls "$top/out/deb/${p}_${version}"_*.deb 2> /dev/null || return 1
	done
}

# make deb: its lintian line is in its output, out/deb/lintian.txt
tap_cmd "make deb (dpkg-buildpackage -us -uc -b on a copy of the tree)" make -s deb
have_debs() { debs > /dev/null; }
check "the five packages are in out/deb" have_debs
if [ -r out/deb/lintian.txt ]; then
	le=$(grep -c '^E: ' out/deb/lintian.txt)
	lw=$(grep -c '^W: ' out/deb/lintian.txt)
	check "lintian: no error ($le errors, $lw warnings)" test "$le" -eq 0
	grep '^[EW]: ' out/deb/lintian.txt | sed 's/^/#   /'
else
	skip "lintian: no error" "lintian is not installed"
fi
if ! debs > "$work/debs"; then
	tap_bail_out deb 1 "no packages to install"
fi
mapfile -t files < "$work/debs"

tap_cmd "apt-get install the five packages" "${apt[@]}" install "${files[@]}"
all_installed() {
	local p s
	for p in "${pkgs[@]}"; do
		s=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2> /dev/null)
		[ "$s" = "ii " ] || { echo "$p: '$s'"; return 1; }
	done
}
check "dpkg: the five packages are installed" all_installed

# DKMS: the postinst built for the kernels it chose (the running one if
# /lib/modules has it, else every one there); build for Debian's 6.1
# headers explicitly, as the running kernel may be another.
ko=/lib/modules/$krel/updates/dkms/twheel.ko
dkms_install() {
	if dkms status -m twheel -v "$version" -k "$krel" | grep ': installed' > /dev/null; then
		echo "postinst already installed it"
		return 0
	fi
	dkms install -m twheel -v "$version" -k "$krel"
}
tap_cmd "dkms install twheel/$version -k $krel" dkms_install
tail -n 1 "$tap_log" | sed 's/^/#   /'
check "dkms status: twheel/$version installed for $krel" \
	sh -c "dkms status -m twheel -v '$version' -k '$krel' | grep -q ': installed'"
check "$ko is there" test -f "$ko"
check "modinfo: version $version, vermagic $krel" sh -c \
	"modinfo -F version '$ko' | grep -q '^$version' && modinfo -F vermagic '$ko' | grep -q '^$krel '"
check "modules-load.d entry and udev rule installed" test -f /usr/lib/modules-load.d/twheel.conf \
	-a -f /lib/udev/rules.d/60-twheel.rules
check "system group twheel exists (sysusers.d)" sh -c "getent group twheel > /dev/null"

# The postinst builds for every installed kernel with headers, not only
# the running and the newest one: each kernel of the matrix here has it.
for spec in "${TW_MATRIX[@]}"; do
	# shellcheck disable=SC2086 # "SERIES FLAVOUR"
	k=$(kernel_release $spec) && kernel_kdir "$k" > /dev/null || continue
	[ "$k" != "$krel" ] || continue
	check "the postinst installed twheel/$version for $k too (vermagic $k)" sh -c \
		"dkms status -m twheel -v '$version' -k '$k' | grep -q ': installed' &&
		 modinfo -k '$k' -F vermagic twheel | grep -q '^$k '"
	# Debian's 6.12 headers have a vmlinux with BTF and resolve_btfids:
	# DKMS's module for it carries BTF, the BPF touch works out of the box
	# (6.12 compresses modules: twheel.ko.xz)
	case $k in
	6.12.*)
		check "DKMS's module for $k has a .BTF section (the BPF touch)" sh -c \
			"xz -dcf \$(modinfo -k '$k' -n twheel) > '$work/dkms.ko' &&
			 readelf -S -W '$work/dkms.ko' | grep -q ' \\.BTF '" ;;
	esac
done

# The library: a program built with pkg-config against the installed
# headers and library, run (no /dev/twheel here: -ENOENT).
cat > "$work/prog.c" << 'EOF'
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <twheel.h>

int main(void)
{
	struct twheel_config cfg = { 0 };
	int fd = twheel_open(NULL, O_CLOEXEC);

	(void)cfg;
	printf("twheel_open: %d (%s), header %d.%d\n", fd, twheel_strerror(fd),
	       LIBTWHEEL_VERSION_MAJOR, LIBTWHEEL_VERSION_MINOR);
	return fd >= 0 || fd == -ENOENT ? 0 : 1;
}
EOF
check "pkg-config: libtwheel $(pkg-config --modversion libtwheel 2>&1), -I/usr/include/twheel" \
	sh -c "pkg-config --cflags libtwheel | grep -q -- '-I/usr/include/twheel'"
# shellcheck disable=SC2046 # pkg-config's words
tap_cmd "cc \$(pkg-config --cflags --libs libtwheel) builds a program" \
	cc -Wall -Werror -o "$work/prog" "$work/prog.c" $(pkg-config --cflags --libs libtwheel)
check "the program links the installed libtwheel.so.0" \
	sh -c "ldd '$work/prog' | grep -Eq '=> (/usr)?/lib/$multiarch/libtwheel.so.0 '"
tap_cmd "the program runs" "$work/prog"
sed 's/^/#   /' "$tap_log"
tap_cmd "#include <twheel/twheel.h> builds without pkg-config" \
	sh -c "sed 's|<twheel.h>|<twheel/twheel.h>|' '$work/prog.c' > '$work/prog2.c' &&
		cc -Wall -Werror -c -o '$work/prog2.o' '$work/prog2.c'"

# twheelctl and the man pages
check "/usr/bin/twheelctl is twheel-tools'" sh -c "dpkg -S /usr/bin/twheelctl | grep -q '^twheel-tools:'"
tap_cmd "twheelctl --help" /usr/bin/twheelctl --help
tap_cmd "twheelctl --version: twheelctl $version" sh -c "/usr/bin/twheelctl --version | grep -q 'twheelctl $version'"
if command -v man > /dev/null; then
	tap_cmd "man -w finds twheelctl(8), twheel(4), libtwheel(3), twheel_wait(3)" \
		man -w twheelctl.8 twheel.4 libtwheel.3 twheel_wait.3
else
	skip "man -w finds the pages" "no man"
fi

# Python: the system's python3, isolated (-I: no PYTHONPATH, no user
# site), from / (outside the tree)
tap_cmd "python3 -I -c 'import twheel' from / is the installed package" \
	sh -c "cd / && $py -I -c 'import twheel; print(twheel.__file__)' |
		grep -q '^/usr/lib/python3/dist-packages/twheel/__init__.py$'"

packaged_suites

# The guest, on the packages just installed, before the purge.
deb_guest() {
	local kimg=/boot/vmlinuz-$krel out rc
	if [ "${TWHEEL_DEB_GUEST:-1}" = 0 ]; then
		skip "the packaged module in the guest" "TWHEEL_DEB_GUEST=0"
		return
	fi
	if [ ! -r "$kimg" ] || ! command -v qemu-system-x86_64 > /dev/null; then
		skip "the packaged module in the guest" "no $kimg or qemu-system-x86_64"
		return
	fi
	if ! make -s -C selftests > "$tap_log" 2>&1; then
		not_ok "make -C selftests (for the guest)"
		sed 's/^/#   /' "$tap_log" | tail -n 20
		return
	fi
	out=$(mktemp -d /tmp/twheel-deb-guest.XXXXXX)
	scripts/vm.sh --kernel "$kimg" --out "$out" --timeout "${TWHEEL_VM_TIMEOUT:-1200}" \
		-- scripts/test-deb.sh --guest > "$work/guest.log" 2>&1
	rc=$?
	grep -a -E '^(ok|not ok) |^# ' "$work/guest.log" | sed 's/^/# guest: /'
	tap_fold_results "$out/deb-guest-results" || not_ok "the guest writes its results"
	if [ $rc -ne 0 ]; then
		not_ok "the packages' guest run passes (vm.sh exit $rc; see $out/console.log)"
		tail -n 30 "$work/guest.log" | sed 's/^/#   /'
	else
		rm -rf "$out"
	fi
}
deb_guest

if [ "$keep" -eq 1 ]; then
	echo "# --keep: the packages stay installed (apt-get purge ${pkgs[*]})"
	tap_summary deb
	exit $?
fi

tap_cmd "apt-get purge the five packages" "${apt[@]}" purge "${pkgs[@]}"
check "dpkg knows none of them any more" test -z "$(installed)"
leftovers() {
	local left
	left=$( {
		dkms status -m twheel
		ls -d /var/lib/dkms/twheel /usr/src/twheel-* /usr/include/twheel \
			/usr/lib/python3/dist-packages/twheel /usr/bin/twheelctl \
			/usr/lib/modules-load.d/twheel.conf /lib/udev/rules.d/60-twheel.rules \
			/usr/lib/sysusers.d/twheel-dkms.conf /usr/lib/*/libtwheel* \
			/usr/lib/*/pkgconfig/libtwheel.pc /usr/share/doc/twheel-* \
			/usr/share/doc/libtwheel* /usr/share/doc/python3-twheel \
			/usr/share/man/man*/twheel* /usr/share/man/man3/libtwheel* 2> /dev/null
		find /lib/modules/*/updates/dkms -name 'twheel.ko*' 2> /dev/null
		dpkg -S twheel libtwheel 2> /dev/null
	} )
	[ -z "$left" ] || { echo "$left"; return 1; }
}
tap_cmd "nothing left: DKMS, /usr/src, /lib/modules, /usr/lib, /usr/include, dist-packages" leftovers
# The group stays on purge (Debian leaves system groups); one this run
# created goes, so that the machine is as it was.
if [ "$had_group" -eq 0 ] && getent group twheel > /dev/null; then
	groupdel twheel
fi

tap_summary deb
