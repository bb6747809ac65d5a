#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build (once, cached) the debug kernel of the reliability tier from
# Debian's linux-source-6.1: tinyconfig + scripts/kconfig/*.config.
#
# Usage: scripts/debug-kernel.sh      prints the build directory, which has
#                                     arch/x86/boot/bzImage, vmlinux and
#                                     what out-of-tree modules build against
#
# The cache key is the linux-source-6.1 version plus a hash of the
# fragments, so a cache hit costs seconds and any fragment change rebuilds.
# Environment: TWHEEL_CACHE (default /var/cache/twheel), JOBS (default nproc).
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${TWHEEL_CACHE:-/var/cache/twheel}
tarball=/usr/src/linux-source-6.1.tar.xz
"$top/scripts/deps.sh" flex bison bc libelf-dev libssl-dev >&2
version=$(dpkg-query -W -f='${Version}' linux-source-6.1)
frags=("$top"/scripts/kconfig/*.config)
key=$(cat "${frags[@]}" | sha256sum | cut -c1-16)
dest="$cache/debug-kernel-${version//:/_}-$key"

if [ -f "$dest/.twheel-complete" ]; then
	echo "$dest"
	exit 0
fi

mkdir -p "$cache"
tmp="$dest.tmp"
rm -rf "$tmp"
mkdir -p "$tmp"
echo "debug-kernel.sh: extracting $tarball" >&2
tar -xJf "$tarball" -C "$tmp" --strip-components=1
cd "$tmp"
make -s tinyconfig >&2
scripts/kconfig/merge_config.sh -m .config "${frags[@]}" >&2
make -s olddefconfig >&2
# Every option of the fragments must have survived olddefconfig.
missing=0
while read -r line; do
	case $line in
	CONFIG_*=*)
		grep -qx "$line" .config || { echo "debug-kernel.sh: not set: $line" >&2; missing=1; } ;;
	"# CONFIG_"*" is not set")
		opt=${line#\# }; opt=${opt%% *}
		! grep -q "^$opt=" .config || { echo "debug-kernel.sh: set: $opt" >&2; missing=1; } ;;
	esac
done < <(cat "${frags[@]}")
[ $missing -eq 0 ] || exit 1
start=$(date +%s)
echo "debug-kernel.sh: building (this takes a while)" >&2
make -j"${JOBS:-$(nproc)}" bzImage modules_prepare >&2
make -j"${JOBS:-$(nproc)}" modules >&2 || true
echo "debug-kernel.sh: built in $(( $(date +%s) - start )) s" >&2
echo "$(( $(date +%s) - start ))" > .twheel-build-seconds
touch .twheel-complete
cd /
rm -rf "$dest"
mv "$tmp" "$dest"
echo "$dest"
