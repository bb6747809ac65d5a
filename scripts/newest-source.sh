#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Fetch (once, cached) the source of the newest kernel series Debian ships,
# sid's linux-source-$TW_NEWEST (scripts/lib/kernels.sh), and print the
# path of its tarball.  The line after it, on stdout too, is the package's
# version (the debug kernel's cache key).
#
# Usage: scripts/newest-source.sh
#
# sid is never added to the system's sources: apt reads a private sources
# list and keeps its own lists under the cache, so nothing on the machine
# is upgraded.  Without the archive (no network), the newest tarball
# already in the cache is used.
#
# Environment: TWHEEL_CACHE (default /var/cache/twheel).
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib/kernels.sh
. "$top/scripts/lib/kernels.sh"
cache=${TWHEEL_CACHE:-/var/cache/twheel}
dir=$cache/sid
pkg=linux-source-$TW_NEWEST
mkdir -p "$dir/lists/partial" "$dir/src"

die() {
	echo "newest-source.sh: $*" >&2
	exit 1
}

exec 9> "$dir/.lock"
flock 9
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian sid main" \
	> "$dir/sources.list"
apt=(-o Dir::Etc::sourcelist="$dir/sources.list" -o Dir::Etc::sourceparts=-
	-o Dir::State::Lists="$dir/lists" -o Dir::Cache="$dir/apt-cache")
mkdir -p "$dir/apt-cache"
version=
if apt-get "${apt[@]}" -qq update > "$dir/update.log" 2>&1; then
	version=$(apt-cache "${apt[@]}" show "$pkg" 2>/dev/null |
		sed -n 's/^Version: //p' | sort -V | tail -n 1)
	[[ -n $version ]] || die "sid has no $pkg (is it still the newest? scripts/lib/kernels.sh)"
else
	echo "newest-source.sh: sid's package lists unreachable; using the cache" >&2
	last=$(ls "$dir/src" 2>/dev/null | sed -n "s/^$pkg-\(.*\)\.tar\.xz\$/\1/p" |
		sort -V | tail -n 1)
	[[ -n $last ]] || die "no network and no cached $pkg"
	version=$last
fi
tarball=$dir/src/$pkg-${version//:/_}.tar.xz
if [[ ! -f $tarball ]]; then
	tmp=$(mktemp -d "$dir/.fetch.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	(cd "$tmp" && apt-get "${apt[@]}" -qq download "$pkg=$version") > "$tmp/log" 2>&1 ||
		{ cat "$tmp/log" >&2; die "could not download $pkg $version"; }
	dpkg-deb -x "$tmp"/"$pkg"_*.deb "$tmp/x"
	mv "$tmp/x/usr/src/$pkg.tar.xz" "$tarball"
fi
printf '%s\n%s\n' "$tarball" "$version"
