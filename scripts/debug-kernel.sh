#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build (once, cached) the debug kernel of the reliability tier from the
# newest kernel source Debian ships (sid's linux-source-X.Y, fetched by
# scripts/newest-source.sh): tinyconfig + scripts/kconfig/debug.config +
# bpf.config, and with --rt also rt.config (PREEMPT_RT under lockdep).
#
# Usage: scripts/debug-kernel.sh [--rt]
#                                     prints the build directory, which has
#                                     arch/x86/boot/bzImage, vmlinux and
#                                     what out-of-tree modules build against
#
# The cache key is the source package's version plus a hash of the
# fragments, so a cache hit costs seconds and any fragment change rebuilds.
# Environment: TWHEEL_CACHE (default /var/cache/twheel), JOBS (default nproc).
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${TWHEEL_CACHE:-/var/cache/twheel}
frags=("$top"/scripts/kconfig/debug.config "$top"/scripts/kconfig/bpf.config)
name=debug-kernel
case ${1:-} in
--rt) frags+=("$top"/scripts/kconfig/rt.config); name=debug-rt-kernel ;;
"") ;;
*) echo "usage: $0 [--rt]" >&2; exit 2 ;;
esac
"$top/scripts/deps.sh" flex bison bc libelf-dev libssl-dev >&2
{ read -r tarball; read -r version; } < <("$top/scripts/newest-source.sh")
[[ -n ${version:-} ]] || exit 1
key=$(cat "${frags[@]}" | sha256sum | cut -c1-16)
dest="$cache/$name-${version//:/_}-$key"

if [ -f "$dest/.twheel-complete" ]; then
	echo "$dest"
	exit 0
fi

mkdir -p "$cache"
# One build of a kernel at a time: a second run (CI starts the build
# early, in the background, and check-debug.sh asks for it later) waits
# for the first, then finds it.
exec 9> "$cache/.$name.lock"
flock 9
if [ -f "$dest/.twheel-complete" ]; then
	echo "$dest"
	exit 0
fi
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
