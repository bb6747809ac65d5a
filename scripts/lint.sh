#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Kernel-style checks of the module: checkpatch --strict, sparse C=2, W=1
# and kernel-doc, all against Debian's 6.1 headers.  Prints one TAP line per
# check, then "# lint: N passed, N failed", and exits non-zero if any fails.
#
# Usage: scripts/lint.sh [KDIR]
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
# shellcheck source=scripts/lib/tap.sh
. scripts/lib/tap.sh
kdir=${1:-${KDIR:-$(ls -d /usr/src/linux-headers-6.1*-amd64 2>/dev/null | sort -V | tail -n 1)}}
[ -n "$kdir" ] || { echo "lint.sh: no 6.1 kernel headers (run scripts/deps.sh)" >&2; exit 1; }
ksrc=$(scripts/ksrc.sh) || exit 1
src=(kmod/twheel_main.c kmod/twheel_bpf.h kmod/twheel_core.c kmod/twheel_core.h kmod/twheel_kunit.c
     kmod/twheel_model.h kmod/twheel_trace.h
     uapi/linux/twheel.h)
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

# Rebuild from scratch so that every file is compiled and checked.  The
# clean is of kmod/ alone: kbuild's clean of M=$top deletes every *.mod
# file of the tree, userspace/go/go.mod among them.
make -s -C "$kdir" M="$top/kmod" clean > /dev/null 2>&1
make -C "$kdir" M="$top" C=2 W=1 modules > "$log/build" 2>&1
rc=$?
grep -E 'warning:|error:' "$log/build" > "$log/warn"
[ $rc -eq 0 ] && [ ! -s "$log/warn" ]
result "W=1 and sparse C=2 build without warnings" $? "$log/warn"

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
