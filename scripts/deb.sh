#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make deb`: the Debian packages (debian/), built with
# `dpkg-buildpackage -us -uc -b` from a copy of the tree, so that the tree
# itself is left as it was.  The copy holds git's files (tracked and
# untracked, not ignored; working-tree contents), or without git the
# whole tree but out/.
#
#   scripts/deb.sh [OUT]     OUT: default out/deb
#
# OUT receives the .debs, the .changes and .buildinfo, and lintian.txt
# (lintian on the .changes, if lintian is installed).  The version is
# kmod/VERSION: if the top entry of debian/changelog is another version,
# the copy gets an entry for it on top.  Exits non-zero if the build fails
# or lintian reports an error.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$(mkdir -p "${1:-$top/out/deb}" && cd "${1:-$top/out/deb}" && pwd)
version=$(cat "$top/kmod/VERSION")
build=$out/build
src=$build/twheel-$version

for tool in dpkg-buildpackage dpkg-parsechangelog dh; do
	command -v "$tool" > /dev/null ||
		{ echo "deb.sh: no $tool (apt-get install build-essential debhelper dh-dkms dh-python python3-all)" >&2; exit 1; }
done

rm -rf "$build" "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo "$out/lintian.txt"
mkdir -p "$src"
if git -C "$top" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
	# tracked files deleted in the working tree are left out
	(cd "$top" && git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do
			if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi
		done | tar --null --no-recursion -T - -cf -) | tar -xf - -C "$src"
else
	tar -C "$top" --exclude=./out -cf - . | tar -xf - -C "$src"
fi

cd "$src"
have=$(dpkg-parsechangelog -S Version)
if [ "$have" != "$version" ]; then
	maint=$(sed -n 's/^Maintainer: //p' debian/control)
	{
		printf 'twheel (%s) unstable; urgency=medium\n\n' "$version"
		printf '  * Version %s (kmod/VERSION).\n\n' "$version"
		printf ' -- %s  %s\n\n' "$maint" "$(date -R)"
		cat debian/changelog
	} > debian/changelog.new
	mv debian/changelog.new debian/changelog
	echo "deb.sh: debian/changelog is at $have: building $version (kmod/VERSION)"
fi

dpkg-buildpackage -us -uc -b
cd "$build"
mv ./*.deb ./*.changes ./*.buildinfo "$out"/
rm -rf "$build"
cd "$out"
ls -l ./*.deb

if command -v lintian > /dev/null; then
	lintian --display-level '>=warning' ./*.changes 2>&1 |
		grep -v '^running with root privileges' | tee lintian.txt || true
	errors=$(grep -c '^E: ' lintian.txt || true)
	warnings=$(grep -c '^W: ' lintian.txt || true)
	echo "deb.sh: lintian: $errors errors, $warnings warnings ($out/lintian.txt)"
	[ "$errors" -eq 0 ] || exit 1
else
	echo "deb.sh: lintian is not installed: not run"
fi
