# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The kernels twheel supports, and where the harness finds each: sourced by
# the scripts that build against, boot or package a kernel.
#
# Support policy (docs/install.md, "Kernels"): every Debian kernel series a
# Debian stable release ships (bookworm: 6.1 and 6.12, each also in its
# PREEMPT_RT flavour), and the newest series Debian ships as source
# (sid's linux-source-$TW_NEWEST), which the harness builds itself.  A
# series leaves the list when no supported Debian release ships it; its
# shims in kmod/twheel_compat.h go with it.

# The Debian kernels the matrix tests, "SERIES FLAVOUR", oldest first:
# every series Debian ships as binary images (/boot/vmlinuz-*), in both
# flavours.
# shellcheck disable=SC2034 # used by the scripts that source this
TW_MATRIX=("6.1 amd64" "6.1 rt-amd64" "6.12 amd64" "6.12 rt-amd64")
# The newest series Debian ships as source: sid's linux-source-X.Y
# (scripts/newest-source.sh), built by scripts/debug-kernel.sh.
# shellcheck disable=SC2034
TW_NEWEST=7.2

# kernel_release SERIES [FLAVOUR]: the newest installed Debian kernel
# release of SERIES (6.1, 6.12) in FLAVOUR (amd64, the default, or
# rt-amd64), from /boot/vmlinuz-*; nothing (status 1) if none.  "6.1"
# matches 6.1.0-56-amd64, never 6.12.* nor 6.1.0-56-rt-amd64.
kernel_release() {
	local series=$1 flavour=${2:-amd64} f rel re found=()

	re="^${series//./\\.}\.[0-9]+[^-]*(-[0-9]+)?-${flavour}\$"
	for f in /boot/vmlinuz-*; do
		rel=${f#/boot/vmlinuz-}
		[[ $rel =~ $re ]] && found+=("$rel")
	done
	((${#found[@]})) || return 1
	printf '%s\n' "${found[@]}" | sort -V | tail -n 1
}

# kernel_series RELEASE: the series (6.1, 6.12, 7.2) of a kernel release.
kernel_series() {
	[[ $1 =~ ^([0-9]+\.[0-9]+) ]] && echo "${BASH_REMATCH[1]}"
}

# default_kver: the kernel `make` builds for: the running one if its
# headers are installed, else the newest installed headers of any version
# (the generic flavour before PREEMPT_RT at the same version).
default_kver() {
	local running rel
	running=$(uname -r)
	if [[ -f /lib/modules/$running/build/Makefile ]]; then
		echo "$running"
		return
	fi
	for rel in /usr/src/linux-headers-*/.config; do
		[[ -f $rel ]] || continue
		rel=${rel#/usr/src/linux-headers-}
		rel=${rel%/.config}
		# the version, then 0 for PREEMPT_RT, 1 for the generic flavour
		if [[ $rel == *-rt-* ]]; then
			printf '%s 0 %s\n' "${rel%-rt-*}" "$rel"
		else
			printf '%s 1 %s\n' "${rel%-*}" "$rel"
		fi
	done | sort -k1,1V -k2,2n | tail -n 1 | cut -d' ' -f3
}

# kernel_kdir KVER: the build directory of KVER's installed headers.
kernel_kdir() {
	local d
	for d in "/lib/modules/$1/build" "/usr/src/linux-headers-$1"; do
		[[ -f $d/Makefile ]] && { echo "$d"; return; }
	done
	return 1
}

# module_tree DIR: a fresh copy of the module's sources in DIR (emptied
# first), without the objects of an earlier build in the tree, for a build
# against another kernel that leaves kmod/ alone.  Run from the top.
module_tree() {
	rm -rf "$1"
	mkdir -p "$1"
	cp -r Kbuild kmod uapi "$1/"
	(cd "$1/kmod" && rm -f ./*.o ./*.ko ./*.mod ./*.mod.c ./.*.cmd modules.order)
}
