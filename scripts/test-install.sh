#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Install paths, tested for real on the host (no module is loaded):
# make install/uninstall into a staging directory, modinfo of the built
# module, and DKMS add/build/install/remove against Debian's 6.1 kernel.
# TAP lines, then "# install: N passed, N failed"; non-zero on failure.
#
# Usage: scripts/test-install.sh KDIR
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
# shellcheck source=scripts/lib/tap.sh
. scripts/lib/tap.sh
kdir=${1:?usage: $0 KDIR}
krel=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"/\1/p' "$kdir/include/generated/utsrelease.h")
version=$(cat kmod/VERSION)
stage=$(mktemp -d)
tap_log=$(mktemp)
trap 'rm -rf "$stage" "$tap_log"' EXIT

staged_files() {
	(cd "$stage" && find . -type f | sort)
}

expect_staged() {
	local f
	for f in "lib/modules/$krel/extra/twheel.ko" lib/udev/rules.d/60-twheel.rules \
		usr/lib/modules-load.d/twheel.conf usr/include/linux/twheel.h; do
		[ -f "$stage/$f" ] || { echo "missing $f"; staged_files; return 1; }
	done
}

modinfo_complete() {
	local ko=kmod/twheel.ko p
	for f in license author description version; do
		[ -n "$(modinfo -F "$f" "$ko")" ] || { echo "modinfo: no $f"; return 1; }
	done
	modinfo -F version "$ko" | grep "^$version" > /dev/null || { echo "version is not $version*"; return 1; }
	for p in max_user_ids max_ids_total dev_mode; do
		modinfo -F parm "$ko" | grep -E "^$p:.{20,}" > /dev/null || { echo "no description for $p"; return 1; }
	done
	[ "$(modinfo -F parm "$ko" | wc -l)" -eq 3 ]
}

staged_empty() {
	[ -z "$(find "$stage" -type f)" ] || { staged_files; return 1; }
}

dkms_installed() {
	dkms status -m twheel -v "$version" -k "$krel" | grep installed > /dev/null &&
		find "/lib/modules/$krel" -name 'twheel.ko*' -path '*dkms*' | grep . > /dev/null
}

dkms_gone() {
	! dkms status -m twheel | grep . > /dev/null &&
		! find "/lib/modules/$krel" -name 'twheel.ko*' -path '*dkms*' | grep . > /dev/null &&
		[ ! -d "/usr/src/twheel-$version" ]
}

tap_cmd "make builds the module against $kdir" make -s KDIR="$kdir" modules
tap_cmd "modinfo: license, author, description, version, every parameter described" modinfo_complete
tap_cmd "make install into a staging dir (INSTALL_MOD_PATH, DESTDIR, PREFIX)" \
	make -s KDIR="$kdir" install INSTALL_MOD_PATH="$stage" DESTDIR="$stage" PREFIX=/usr
tap_cmd "module, udev rule, modules-load.d entry and uapi header installed" expect_staged
tap_cmd "udev rule sets group twheel, mode 0660" grep -q 'KERNEL=="twheel".*GROUP="twheel".*MODE="0660"' \
	"$stage/lib/udev/rules.d/60-twheel.rules"
tap_cmd "make uninstall removes everything" \
	make -s KDIR="$kdir" uninstall INSTALL_MOD_PATH="$stage" DESTDIR="$stage" PREFIX=/usr
tap_cmd "staging dir is empty after uninstall" staged_empty
# DKMS, for real, in this machine's DKMS tree; a leftover from an
# interrupted run is removed first.  One DKMS user of twheel at a time:
# test-deb.sh takes the same lock.
exec 9> /run/lock/twheel-dkms-test.lock
flock 9
make -s dkms-uninstall > /dev/null 2>&1
tap_cmd "make dkms-install (dkms add, build -k $krel, install)" make -s dkms-install KVER="$krel"
tap_cmd "dkms status shows twheel/$version installed for $krel" dkms_installed
tap_cmd "make dkms-uninstall (dkms remove --all)" make -s dkms-uninstall
tap_cmd "nothing of twheel left in DKMS or /lib/modules" dkms_gone

tap_summary install
