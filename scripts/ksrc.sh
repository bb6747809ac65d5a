#!/usr/bin/env bash
# Extract (once, cached) the few kernel source files twheel needs from
# Debian's linux-source-6.1 tarball, and print the cache directory.
#
# Usage: scripts/ksrc.sh
#
# Environment:
#   TWHEEL_CACHE  cache root (default /var/cache/twheel)
#
# Output: the directory ${TWHEEL_CACHE}/ksrc-<linux-source-6.1 version>/
# containing, relative to the kernel tree root:
#   tools/testing/selftests/kselftest_harness.h
#   tools/testing/selftests/kselftest.h
#   scripts/checkpatch.pl
#   scripts/spelling.txt
#   scripts/const_structs.checkpatch
#   scripts/kernel-doc
#   Documentation/userspace-api/ioctl/ioctl-number.rst
#
# The extraction goes to a temporary directory that is renamed into place
# only once complete, so an interrupted run never leaves a partial cache.
set -euo pipefail

usage() {
	echo "usage: $0   (prints the cached kernel source directory)" >&2
	exit 2
}

(($# == 0)) || usage

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
pkg=linux-source-6.1
tarball=/usr/src/linux-source-6.1.tar.xz
prefix=linux-source-6.1
files=(
	tools/testing/selftests/kselftest_harness.h
	tools/testing/selftests/kselftest.h
	scripts/checkpatch.pl
	scripts/spelling.txt
	scripts/const_structs.checkpatch
	scripts/kernel-doc
	Documentation/userspace-api/ioctl/ioctl-number.rst
)

pkg_version() {
	dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null || true
}

cache_root=${TWHEEL_CACHE:-/var/cache/twheel}

version=$(pkg_version)
if [[ -z "$version" || ! -f "$tarball" ]]; then
	"$script_dir/deps.sh" >&2
	version=$(pkg_version)
fi
if [[ -z "$version" || ! -f "$tarball" ]]; then
	echo "ksrc.sh: $pkg is not installed ($tarball missing)" >&2
	exit 1
fi
# Keep the directory name filesystem-friendly (epochs contain ':').
dest="$cache_root/ksrc-${version//:/_}"

complete() {
	local f
	for f in "${files[@]}"; do
		[[ -f "$1/$f" ]] || return 1
	done
}

if complete "$dest"; then
	printf '%s\n' "$dest"
	exit 0
fi

mkdir -p "$cache_root"
tmp=$(mktemp -d "$cache_root/.ksrc-tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

members=()
for f in "${files[@]}"; do
	members+=("$prefix/$f")
done

echo "ksrc.sh: extracting ${#files[@]} files from $tarball (takes a while)..." >&2
tar -xJf "$tarball" -C "$tmp" --strip-components=1 "${members[@]}"

if ! complete "$tmp"; then
	echo "ksrc.sh: extraction from $tarball is incomplete" >&2
	exit 1
fi
chmod 755 "$tmp"

# A stale, incomplete cache (e.g. from an older layout) is replaced.
if [[ -e "$dest" ]] && ! complete "$dest"; then
	rm -rf "$dest"
fi
# mv -T refuses to move into an existing directory; if a concurrent run
# won the race, its (complete) result is kept and ours is discarded.
if ! mv -T "$tmp" "$dest" 2>/dev/null; then
	if ! complete "$dest"; then
		echo "ksrc.sh: could not install cache directory $dest" >&2
		exit 1
	fi
fi

printf '%s\n' "$dest"
