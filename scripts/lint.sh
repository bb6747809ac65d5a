#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Kernel-style checks of the module: checkpatch --strict, sparse C=2, W=1
# and kernel-doc against Debian's 6.1 headers, then the W=1 and sparse
# build against every other Debian kernel of the matrix whose headers are
# installed (scripts/lib/kernels.sh; the newest, built from source, gets
# it in make check-debug).  Prints one TAP line per check, then
# "# lint: N passed, N failed", and exits non-zero if any fails.
#
# Usage: scripts/lint.sh [KDIR]
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
# shellcheck source=scripts/lib/tap.sh
. scripts/lib/tap.sh
# shellcheck source=scripts/lib/kernels.sh
. scripts/lib/kernels.sh
kdir=${1:-${KDIR:-$(kernel_kdir "$(kernel_release 6.1)")}}
[ -n "$kdir" ] || { echo "lint.sh: no 6.1 kernel headers (run scripts/deps.sh)" >&2; exit 1; }
ksrc=$(scripts/ksrc.sh) || exit 1
# every source of the module and its tests, less the compatibility header
# (checked on its own below) and what a build generates (*.mod.c)
src=()
for f in kmod/*.[ch]; do
	case $f in
	kmod/twheel_compat.h | *.mod.c) ;;
	*) src+=("$f") ;;
	esac
done
src+=(uapi/linux/twheel.h)
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

# result DESC STATUS LOG: a TAP line; LOG as comments on failure
result() {
	if [ "$2" -eq 0 ]; then
		ok "$1"
	else
		not_ok "$1"
		sed 's/^/#   /' "$3"
	fi
}

perl "$ksrc/scripts/checkpatch.pl" --no-tree -f --strict --quiet \
	--no-summary "${src[@]}" > "$log/checkpatch" 2>&1
[ ! -s "$log/checkpatch" ]
result "checkpatch --strict" $? "$log/checkpatch"

# The compatibility header is where versions are tested and upstream's
# own macros re-created for older kernels (their shapes are upstream's):
# everything else of --strict holds there too.
perl "$ksrc/scripts/checkpatch.pl" --no-tree -f --strict --quiet --no-summary \
	--ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON,MULTISTATEMENT_MACRO_USE_DO_WHILE,COMPLEX_MACRO \
	kmod/twheel_compat.h > "$log/checkpatch-compat" 2>&1
[ ! -s "$log/checkpatch-compat" ]
result "checkpatch --strict of twheel_compat.h (version tests allowed)" $? "$log/checkpatch-compat"

# Rebuild from scratch so that every file is compiled and checked.  The
# clean is of kmod/ alone: kbuild's clean of M=$top deletes every *.mod
# file of the tree, userspace/go/go.mod among them.
make -s -C "$kdir" M="$top/kmod" clean > /dev/null 2>&1
make -C "$kdir" M="$top" C=2 W=1 modules > "$log/build" 2>&1
rc=$?
grep -E 'warning:|error:' "$log/build" > "$log/warn"
# a kernel whose sparse is too old drops C=2 with a note: that is no pass
grep -q '^  CHECK ' "$log/build" || grep 'sparse' "$log/build" >> "$log/warn" ||
	echo "sparse did not run" >> "$log/warn"
[ $rc -eq 0 ] && [ ! -s "$log/warn" ]
result "W=1 and sparse C=2 build without warnings" $? "$log/warn"

# The other kernels, each in a scratch copy of the sources.
for spec in "${TW_MATRIX[@]}"; do
	# shellcheck disable=SC2086 # "SERIES FLAVOUR"
	k=$(kernel_release $spec) || { skip "W=1 and sparse C=2 on Debian's $spec" "not installed"; continue; }
	kd=$(kernel_kdir "$k") || { skip "W=1 and sparse C=2 on $k" "no headers"; continue; }
	[ "$(readlink -f "$kd")" != "$(readlink -f "$kdir")" ] || continue
	b=$log/$k
	module_tree "$b"
	make -C "$kd" M="$b" C=2 W=1 modules > "$log/build-$k" 2>&1
	rc=$?
	grep -E 'warning:|error:' "$log/build-$k" > "$log/warn-$k"
	grep -q '^  CHECK ' "$log/build-$k" || grep 'sparse' "$log/build-$k" >> "$log/warn-$k" ||
		echo "sparse did not run" >> "$log/warn-$k"
	[ $rc -eq 0 ] && [ ! -s "$log/warn-$k" ]
	result "W=1 and sparse C=2 build without warnings on $k" $? "$log/warn-$k"
done

perl "$ksrc/scripts/kernel-doc" -none -Werror kmod/*.c kmod/*.h uapi/linux/twheel.h \
	> "$log/kdoc" 2>&1
result "kernel-doc -Werror" $? "$log/kdoc"

# Every non-static function definition has a kernel-doc comment.
python3 - kmod/*.c > "$log/kdoc-missing" <<'PY'
import re, sys
for path in sys.argv[1:]:
    lines = open(path).read().split("\n")
    for i, l in enumerate(lines):
        m = re.match(r"^(?!static|#|\s)[a-z].*?\b(\w+)\(", l)
        if not m or l.rstrip().endswith(";"):
            continue
        j = i - 1
        doc = False
        while j >= 0 and lines[j].startswith((" *", "/**")):
            if lines[j].startswith("/**"):
                doc = True
                break
            j -= 1
        if not doc:
            print(f"{path}:{i + 1}: {m.group(1)}() has no kernel-doc comment")
PY
[ ! -s "$log/kdoc-missing" ]
result "kernel-doc on every non-static function" $? "$log/kdoc-missing"

tap_summary lint
