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
#   tools/testing/selftests/lib.mk
#   tools/testing/selftests/kselftest/runner.sh
#   tools/testing/selftests/kselftest/prefix.pl
#   tools/testing/selftests/kselftest/module.sh
#   tools/testing/selftests/run_kselftest.sh
#   tools/testing/selftests/Makefile
#   scripts/subarch.include
#   scripts/checkpatch.pl
#   scripts/spelling.txt
#   scripts/const_structs.checkpatch
#   scripts/kernel-doc
#   scripts/extract-vmlinux
#   Documentation/userspace-api/ioctl/ioctl-number.rst
# (kselftest's lib.mk and runner are used in place by selftests/Makefile;
# the selftests Makefile and subarch.include by scripts/ksft-dropin.sh).
#
# The extraction goes to a temporary directory that is renamed into place
# only once complete, so an interrupted run never leaves a partial cache.
# A cache of an older, shorter list gets the files it lacks, each renamed
# into place: none is ever removed, a concurrent build may be reading it.
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
	tools/testing/selftests/lib.mk
	tools/testing/selftests/kselftest/runner.sh
	tools/testing/selftests/kselftest/prefix.pl
	tools/testing/selftests/kselftest/module.sh
	tools/testing/selftests/run_kselftest.sh
	tools/testing/selftests/Makefile
	scripts/subarch.include
	scripts/checkpatch.pl
	scripts/spelling.txt
	scripts/const_structs.checkpatch
	scripts/kernel-doc
	scripts/extract-vmlinux
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

# mv -T refuses to move into an existing directory: that of an older list
# (or of a concurrent run, complete then) gets what it lacks.
if ! mv -T "$tmp" "$dest" 2>/dev/null; then
	for f in "${files[@]}"; do
		[[ -f "$dest/$f" ]] && continue
		mkdir -p "$(dirname "$dest/$f")"
		mv -f "$tmp/$f" "$dest/$f"
	done
	if ! complete "$dest"; then
		echo "ksrc.sh: could not complete cache directory $dest" >&2
		exit 1
	fi
fi

printf '%s\n' "$dest"
