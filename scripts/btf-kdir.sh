#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A build directory that gives out-of-tree modules BTF, for Debian's
# kernel KVER, and its path printed.  Debian's 6.12 headers are one
# already (they ship a vmlinux with BTF and tools/bpf/resolve_btfids):
# their directory is printed as it is.  For 6.1 one is built once, cached.
#
# Usage: scripts/btf-kdir.sh [--make] [KVER]
#   KVER     a Debian kernel release (default: the one `make` builds for,
#            scripts/lib/kernels.sh); its image and headers must be installed
#   (none)   prints the build directory: `make -C DIR M=... modules`
#   --make   prints "KDIR=DIR RESOLVE_BTFIDS=DIR/tools/bpf/resolve_btfids/..."
#            for make's command line: `make $(scripts/btf-kdir.sh --make)`
#
# Why: a module gets BTF (pahole -J, then resolve_btfids for .BTF_ids, as
# BPF kfuncs need) only where the build directory has the kernel's vmlinux
# and tools/bpf/resolve_btfids.  Debian's headers ship neither; their build
# just prints "Skipping BTF generation" and makes a module without it.
#
# The cache entry, $TWHEEL_CACHE/btf-KVER-KEY/ (about 6 MB):
#   kdir/            the build directory: symlinks to every entry of
#                    /usr/src/linux-headers-KVER (its relative scripts and
#                    tools links re-pointed), plus
#   kdir/vmlinux     the .BTF and .notes (build id) of the vmlinux unpacked
#                    from /boot/vmlinuz-KVER: all kbuild and resolve_btfids
#                    read of it (the whole ELF is 66 MB)
#   kdir/tools/bpf/resolve_btfids/resolve_btfids
#                    built from linux-source-SERIES's tools/bpf/resolve_btfids
#                    (6.1 for 6.1.*), at the path kbuild looks for it
#   src/scripts/extract-vmlinux   linux-source-SERIES's, to check against the image
#   inputs           what the key is made of, and the .BTF's sha256
# KEY hashes KVER, the image's sha256, the headers' and linux-source-SERIES's
# package versions, libelf-dev's and this script: a new image or script
# makes a new entry, an unchanged one is found in about a second.  An entry
# is built in a temporary directory and renamed into place, under a lock
# per KVER, so an interrupted or a concurrent run never leaves half of one.
#
# Environment: TWHEEL_CACHE (default /var/cache/twheel), JOBS (default nproc).
set -euo pipefail

usage() {
	echo "usage: $0 [--make] [KVER]" >&2
	exit 2
}

mode=dir
case ${1:-} in
--make) mode='make'; shift ;;
-*) usage ;;
esac
(($# <= 1)) || usage

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
self=$top/scripts/btf-kdir.sh
cache=${TWHEEL_CACHE:-/var/cache/twheel}
# shellcheck source=scripts/lib/kernels.sh
. "$top/scripts/lib/kernels.sh"

die() {
	echo "btf-kdir.sh: $*" >&2
	exit 1
}

# What the build needs (pahole: the module's BTF, at make time); one
# dpkg-query when all is there, else deps.sh installs them (its list has
# them all).
needed=(make gcc pkg-config python3 xz-utils libelf-dev pahole)
if dpkg-query -W -f='${Status}\n' "${needed[@]}" 2>&1 |
	grep -qvx 'install ok installed'; then
	"$top/scripts/deps.sh" >&2
fi

if (($# == 1)); then
	kver=$1
else
	kver=$(default_kver) || true
	[[ -n "$kver" ]] || die "no kernel headers installed (run scripts/deps.sh)"
fi
image=/boot/vmlinuz-$kver
headers=/usr/src/linux-headers-$kver
[[ -f "$image" ]] || die "no $image (apt-get install linux-image-$kver)"
[[ -f "$headers/Makefile" ]] || die "no $headers (apt-get install linux-headers-$kver)"
grep -qx 'CONFIG_DEBUG_INFO_BTF_MODULES=y' "$headers/.config" ||
	die "$kver is not configured with CONFIG_DEBUG_INFO_BTF_MODULES"

# Headers that have it all (Debian's 6.12: a vmlinux with .BTF, and
# resolve_btfids in their kbuild tools) are the directory.
if [[ -x "$headers/tools/bpf/resolve_btfids/resolve_btfids" ]] &&
	readelf -S -W "$headers/vmlinux" 2> /dev/null | grep -q ' \.BTF '; then
	if [[ $mode == make ]]; then
		printf 'KDIR=%s\n' "$headers"
	else
		printf '%s\n' "$headers"
	fi
	exit 0
fi
series=$(kernel_series "$kver")
tarball=/usr/src/linux-source-$series.tar.xz
if [[ ! -f $tarball ]]; then
	"$top/scripts/deps.sh" "linux-source-$series" >&2 ||
		die "$kver: its headers lack vmlinux and resolve_btfids, and linux-source-$series (to build them) is not installed"
fi

version() { # PACKAGE
	dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo none
}

inputs=$(printf '%s\n' \
	"kver $kver" \
	"image $(sha256sum < "$image" | cut -c1-64)" \
	"linux-headers-$kver $(version "linux-headers-$kver")" \
	"linux-source-$series $(version "linux-source-$series")" \
	"libelf-dev $(version libelf-dev)" \
	"btf-kdir.sh $(sha256sum < "$self" | cut -c1-64)")
key=$(sha256sum <<< "$inputs" | cut -c1-16)
dest=$cache/btf-$kver-$key
kdir=$dest/kdir
resolve=$kdir/tools/bpf/resolve_btfids/resolve_btfids

# pahole encodes the module's BTF at build time (it is not in the cache):
# one older than the kernel's may lack the kinds and flags its BTF has.
pahole_ver=$(pahole --version 2>/dev/null | tr -dc 0-9)
kernel_pahole=$(sed -n 's/^CONFIG_PAHOLE_VERSION=//p' "$headers/.config")
if [[ -n "$pahole_ver" && -n "$kernel_pahole" && "$pahole_ver" -lt "$kernel_pahole" ]]; then
	echo "btf-kdir.sh: warning: pahole $pahole_ver is older than $kver's $kernel_pahole" >&2
fi

print_result() {
	if [[ $mode == make ]]; then
		printf 'KDIR=%s RESOLVE_BTFIDS=%s\n' "$kdir" "$resolve"
	else
		printf '%s\n' "$kdir"
	fi
	exit 0
}

[[ ! -f "$dest/.twheel-complete" ]] || print_result

mkdir -p "$cache"
# One build per KVER at a time: a second run waits, then finds the entry.
exec 9> "$cache/.btf-$kver.lock"
flock 9
[[ ! -f "$dest/.twheel-complete" ]] || print_result
# What an interrupted run of ours left behind (we hold the lock).
rm -rf "$cache/.btf-tmp-$kver".*

start=$(date +%s)
tmp=$(mktemp -d "$cache/.btf-tmp-$kver.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# resolve_btfids builds its own libbpf and libsubcmd (bpf_doc.py makes
# libbpf's helper definitions); extract-vmlinux unpacks the image.
echo "btf-kdir.sh: extracting resolve_btfids and extract-vmlinux from $tarball" >&2
members=(scripts/extract-vmlinux scripts/bpf_doc.py tools/bpf/resolve_btfids
	tools/lib tools/include tools/build tools/scripts tools/arch/x86)
mkdir "$tmp/src"
tar -xJf "$tarball" -C "$tmp/src" --strip-components=1 \
	"${members[@]/#/linux-source-$series/}"

echo "btf-kdir.sh: building resolve_btfids" >&2
mkdir -p "$tmp/build"
if ! make -C "$tmp/src/tools/bpf/resolve_btfids" OUTPUT="$tmp/build/" \
	-j"${JOBS:-$(nproc)}" > "$tmp/build.log" 2>&1; then
	tail -n 30 "$tmp/build.log" >&2
	die "resolve_btfids did not build"
fi

# The build directory: Debian's headers, by symlinks.  Their scripts and
# tools are relative links (into /usr/lib/linux-kbuild-SERIES), resolved here;
# tools becomes a directory of its own, to hold bpf/resolve_btfids.
mkdir "$tmp/kdir"
for path in "$headers"/* "$headers"/.[!.]*; do
	[[ -e "$path" || -L "$path" ]] || continue
	name=${path##*/}
	case $name in
	tools)
		mkdir "$tmp/kdir/tools"
		for t in "$(readlink -f "$path")"/*; do
			[[ ! -e "$t" ]] || ln -s "$t" "$tmp/kdir/tools/"
		done ;;
	vmlinux) ;;
	*) ln -s "$(readlink -f "$path")" "$tmp/kdir/$name" ;;
	esac
done
[[ ! -e "$tmp/kdir/tools/bpf" ]] || die "$headers/tools already has a bpf/"
install -D -m 755 "$tmp/build/resolve_btfids" \
	"$tmp/kdir/tools/bpf/resolve_btfids/resolve_btfids"

echo "btf-kdir.sh: extracting vmlinux from $image" >&2
sh "$tmp/src/scripts/extract-vmlinux" "$image" > "$tmp/vmlinux.full" ||
	die "extract-vmlinux could not unpack $image"
readelf -S -W "$tmp/vmlinux.full" | grep ' \.BTF ' > /dev/null ||
	die "the vmlinux of $image has no .BTF section"
grep -aq "Linux version $kver " "$tmp/vmlinux.full" ||
	die "the vmlinux of $image is not $kver"
objcopy --only-section=.BTF --only-section=.notes "$tmp/vmlinux.full" \
	"$tmp/kdir/vmlinux" 2> "$tmp/objcopy.log" || { cat "$tmp/objcopy.log" >&2; exit 1; }
btf_sum() { # ELF: the sha256 of its .BTF section
	objcopy -O binary --only-section=.BTF "$1" "$tmp/btf.bin" 2> /dev/null
	sha256sum < "$tmp/btf.bin" | cut -c1-64
}
btf=$(btf_sum "$tmp/vmlinux.full")
[[ "$(btf_sum "$tmp/kdir/vmlinux")" == "$btf" ]] ||
	die "the .BTF of the trimmed vmlinux differs from the image's"

# Keep what the checks use; the sources and objects (20 MB) go.
rm -rf "$tmp/build" "$tmp/build.log" "$tmp/vmlinux.full" "$tmp/btf.bin" \
	"$tmp/objcopy.log" "$tmp/src/tools" "$tmp/src/scripts/bpf_doc.py"
printf '%s\nbtf %s\nbuilt-seconds %s\n' "$inputs" "$btf" \
	"$(($(date +%s) - start))" > "$tmp/inputs"
touch "$tmp/.twheel-complete"
chmod 755 "$tmp"
# An entry without the marker is not ours to trust: replace it.
rm -rf "$dest"
mv -T "$tmp" "$dest"
echo "btf-kdir.sh: $dest built in $(($(date +%s) - start)) s" >&2
print_result
