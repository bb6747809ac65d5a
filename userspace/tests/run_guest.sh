#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
#
# The user-space tests: libtwheel (tests/test_lib), the Python package
# (tests/test_python.py, its asyncio side tests/test_python_async.py),
# twheelctl and the man pages.  TAP on stdout, ending
# with "# userspace: N passed, N failed[, N skipped]" (scripts/lib/tap.sh);
# exits non-zero on any failure.
#
# Runs inside the QEMU guest (scripts/vm.sh) with the module ALREADY loaded
# (it never runs insmod/rmmod), from any directory; everything must be built
# beforehand (`make -C userspace`: the guest sees the tree read-only).
# Writes "pass N fail N skip N" to $TWHEEL_OUT/userspace-results if
# TWHEEL_OUT is set.
#
#   run_guest.sh          in the guest: /dev/twheel must exist
#   run_guest.sh --host   without the module: the device tests skip
set -u

here=$(cd "$(dirname "$0")" && pwd -P)
U=$(dirname "$here")
# shellcheck source=scripts/lib/tap.sh
. "$U/../scripts/lib/tap.sh"
CTL=$U/twheelctl/twheelctl
PY=${PYTHON:-python3}
export PYTHONDONTWRITEBYTECODE=1
export TWHEELCTL="$CTL"

host=0
case "${1:-}" in
--host) host=1 ;;
"") ;;
*) echo "usage: $0 [--host]" >&2; exit 2 ;;
esac

holder=

work=$(mktemp -d "${TMPDIR:-/tmp}/twheel-userspace.XXXXXX") || exit 1
tap_log=$work/lines

finish() {
	if [ -n "$holder" ]; then
		kill "$holder" 2>/dev/null
		wait "$holder" 2>/dev/null
	fi
	rm -rf "$work"
	if [ -n "${TWHEEL_OUT:-}" ] && [ -d "$TWHEEL_OUT" ]; then
		tap_results "$TWHEEL_OUT/userspace-results" 2>/dev/null
	fi
	echo "1..$tap_n"
	tap_summary userspace
	exit $?
}

# expect_exit CODE DESC CMD...: the command exits with CODE (output kept in
# $work/out and $work/err).
expect_exit() {
	want=$1
	desc=$2
	shift 2
	"$@" > "$work/out" 2> "$work/err"
	got=$?
	if [ "$got" -eq "$want" ]; then
		ok "$desc"
	else
		not_ok "$desc (exit $got, want $want)"
		sed 's/^/#   /' "$work/out" "$work/err" | head -n 20
	fi
}

# The last output of expect_exit contains a string.
out_has() { # DESC STRING [FILE]
	if grep -q -- "$2" "${3:-$work/out}"; then
		ok "$1"
	else
		not_ok "$1"
		sed 's/^/#   /' "${3:-$work/out}" | head -n 20
	fi
}

echo "# userspace tests: $(uname -r), $(nproc) cpus, python $($PY -c 'import sys; print(sys.version.split()[0])' 2>&1)"

# ----------------------------------------------------------- prerequisites
for b in "$U/tests/test_lib" "$CTL" "$U/lib/libtwheel.so.0" "$U/lib/libtwheel.a"; do
	if [ ! -e "$b" ]; then
		not_ok "$b is built (run: make -C userspace)"
		finish
	fi
done
if [ "$host" -eq 0 ]; then
	if [ -c /dev/twheel ]; then
		ok "/dev/twheel is present (module loaded)"
	else
		not_ok "/dev/twheel is present (module loaded)"
		finish
	fi
fi

# ---------------------------------------------------------------- library
tap_lines test_lib "$U/tests/test_lib" "$work"

# ----------------------------------------------------------------- python
if command -v "$PY" > /dev/null; then
	tap_lines test_python "$PY" "$U/tests/test_python.py"
	tap_lines test_python_async "$PY" "$U/tests/test_python_async.py"
else
	skip "python tests" "no $PY"
fi

# -------------------------------------------------------------- twheelctl
expect_exit 0 "twheelctl --help exits 0" "$CTL" --help
out_has "twheelctl --help shows the usage" "usage: twheelctl"
expect_exit 0 "twheelctl --version exits 0" "$CTL" --version
out_has "twheelctl --version prints the version" "twheelctl 0\.1"
expect_exit 0 "twheelctl top --help exits 0" "$CTL" top --help
expect_exit 2 "twheelctl without arguments exits 2" "$CTL"
out_has "twheelctl without arguments prints the usage" "usage:" "$work/err"
for args in "bogus" "--bogus" "-x" "status extra" "top --interval" \
	"top --interval abc" "top --interval -1" "top --interval 1e9" \
	"top --iterations 0" "top --iterations x" "top --interval 0" "top --bogus" \
	"save" "save f" "save --fd x f" "save --fd 3" "save --pid 0 --fd 3 f" \
	"save --pid -5 --fd 3 f" "save --pid 99999999999 --fd 3 f" \
	"save --fd 3 --bogus f" "save --fd 3 a b" "restore f" "restore --fd" \
	"restore --pid" "check" "check a b" "check --bogus"; do
	# shellcheck disable=SC2086 # word splitting wanted
	expect_exit 2 "twheelctl $args: usage error, exit 2" "$CTL" $args
done
expect_exit 2 "twheelctl '' (empty command): exit 2" "$CTL" ""
expect_exit 2 "twheelctl save --fd '' f: exit 2" "$CTL" save --fd "" f

# A wheel held by another process: arms 8 ids, touches one every 20 ms.
if [ "$host" -eq 0 ]; then
	PYTHONPATH=$U/python "$PY" -c '
import sys, time, twheel
w = twheel.Wheel()
w.arm((i, 3600 * twheel.SEC, i) for i in range(8))
print(w.fileno(), flush=True)
while True:
    w.touch([0])
    time.sleep(0.02)
' > "$work/holder" 2> "$work/holder.err" &
	holder=$!
	i=0
	while [ ! -s "$work/holder" ] && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	hfd=$(head -n 1 "$work/holder")
	if [ -z "$hfd" ]; then
		not_ok "holder process started"
		sed 's/^/#   /' "$work/holder.err"
		finish
	fi
	echo "# holder pid $holder, twheel fd $hfd"

	expect_exit 0 "twheelctl status: exit 0 with the module loaded" "$CTL" status
	sed 's/^/#   /' "$work/out"
	out_has "twheelctl status: module loaded" "twheel loaded"
	out_has "twheelctl status: lists max_user_ids" "max_user_ids"
	out_has "twheelctl status: lists max_ids_total" "max_ids_total"
	out_has "twheelctl status: lists dev_mode" "dev_mode"
	out_has "twheelctl status: /dev/twheel is a character device" "/dev/twheel: character device"

	expect_exit 0 "twheelctl top --once: exit 0" "$CTL" top --once --interval 0.5
	sed 's/^/#   /' "$work/out"
	# PID COMM FD ARMED PENDING TOUCH/s EXPIRE/s DELIV/s MEM
	if awk -v p="$holder" -v f="$hfd" '$1 == p && $3 == f && $4 == 8 && $5 == 0 { ok = 1 }
		END { exit !ok }' "$work/out"; then
		ok "twheelctl top --once: sees the holder's wheel (8 armed)"
	else
		not_ok "twheelctl top --once: sees the holder's wheel (8 armed)"
	fi
	if awk -v p="$holder" -v f="$hfd" '$1 == p && $3 == f && $6 + 0 > 0 { ok = 1 }
		END { exit !ok }' "$work/out"; then
		ok "twheelctl top --once: a touch rate above 0"
	else
		not_ok "twheelctl top --once: a touch rate above 0"
	fi
	expect_exit 0 "twheelctl top --once --interval 0 (no rates)" "$CTL" top --once --interval 0
	out_has "twheelctl top --interval 0: the holder is listed" " $hfd "
	expect_exit 0 "twheelctl top --iterations 2" "$CTL" top --iterations 2 --interval 0.1
	if [ "$(grep -c '^twheel:' "$work/out")" -eq 2 ]; then
		ok "twheelctl top --iterations 2: two tables"
	else
		not_ok "twheelctl top --iterations 2: two tables"
	fi

	snap=$work/holder.snap
	expect_exit 0 "twheelctl save --pid --fd: exit 0" "$CTL" save --pid "$holder" --fd "$hfd" "$snap"
	out_has "twheelctl save: 8 ids" "saved 8 ids"
	expect_exit 0 "twheelctl check good file: exit 0" "$CTL" check "$snap"
	sed 's/^/#   /' "$work/out"
	out_has "twheelctl check: valid" "valid twheel snapshot"
	out_has "twheelctl check: 8 ids" "ids  *8\$"
	out_has "twheelctl check: version 1" "version  *1\$"
	out_has "twheelctl check: CLOCK_MONOTONIC" "CLOCK_MONOTONIC"
	expect_exit 0 "twheelctl restore --pid --fd: exit 0" "$CTL" restore --pid "$holder" --fd "$hfd" "$snap"
	out_has "twheelctl restore: 8 ids" "restored 8 ids"

	head -c 100 "$snap" > "$work/trunc.snap"
	expect_exit 1 "twheelctl check truncated file: exit 1" "$CTL" check "$work/trunc.snap"
	out_has "twheelctl check truncated file: says why" "invalid snapshot: truncated" "$work/err"
	cp "$snap" "$work/flip.snap"
	# 8 bytes of an entry overwritten: changed unless they held exactly these
	printf '\001\002\003\004\005\006\007\010' |
		dd of="$work/flip.snap" bs=1 seek=96 conv=notrunc 2> /dev/null
	expect_exit 1 "twheelctl check corrupt entry: exit 1" "$CTL" check "$work/flip.snap"
	out_has "twheelctl check corrupt entry: checksum" "checksum mismatch" "$work/err"
	cp "$snap" "$work/magic.snap"
	printf 'X' | dd of="$work/magic.snap" bs=1 seek=0 conv=notrunc 2> /dev/null
	expect_exit 1 "twheelctl check bad magic: exit 1" "$CTL" check "$work/magic.snap"
	expect_exit 1 "twheelctl restore corrupt file: exit 1" "$CTL" restore --pid "$holder" --fd "$hfd" "$work/flip.snap"
	out_has "twheelctl restore corrupt file: nothing armed" "nothing armed" "$work/err"
	expect_exit 1 "twheelctl check missing file: exit 1" "$CTL" check "$work/missing.snap"
	expect_exit 1 "twheelctl check a directory: exit 1" "$CTL" check "$work"

	expect_exit 1 "twheelctl save from a missing process: exit 1" "$CTL" save --pid 2147483647 --fd 3 "$work/x.snap"
	out_has "twheelctl save from a missing process: says so" "no process" "$work/err"
	expect_exit 1 "twheelctl save of a non-twheel fd: exit 1" "$CTL" save --pid "$holder" --fd 0 "$work/x.snap"
	out_has "twheelctl save of a non-twheel fd: says so" "not a twheel fd" "$work/err"
	expect_exit 1 "twheelctl save of a closed fd: exit 1" "$CTL" save --pid "$holder" --fd 999 "$work/x.snap"
	expect_exit 1 "twheelctl save --fd of our own non-twheel fd: exit 1" "$CTL" save --fd 1 "$work/x.snap"
	expect_exit 1 "twheelctl save into a missing directory: exit 1" "$CTL" save --pid "$holder" --fd "$hfd" "$work/no/such/x.snap"
	if [ ! -e "$work/x.snap" ]; then ok "failed saves leave no file"; else not_ok "failed saves leave no file"; fi

	# an fd inherited from the caller (twheelctl save --fd N without --pid)
	expect_exit 0 "twheelctl save --fd N (inherited fd)" "$PY" -c '
import os, subprocess, sys
sys.path.insert(0, sys.argv[1])
import twheel
w = twheel.Wheel(cloexec=False)
w.arm((i, 60 * twheel.SEC) for i in range(5))
sys.exit(subprocess.run([sys.argv[2], "save", "--fd", str(w.fileno()), sys.argv[3]],
                        close_fds=False).returncode)
' "$U/python" "$CTL" "$work/inherited.snap"
	out_has "twheelctl save --fd N (inherited fd): 5 ids" "saved 5 ids"

	kill "$holder" 2> /dev/null
	wait "$holder" 2> /dev/null
	holder=
else
	expect_exit 1 "twheelctl status without the module: exit 1" "$CTL" status
	out_has "twheelctl status without the module: not loaded" "not loaded"
	expect_exit 0 "twheelctl top --once without the module: exit 0" "$CTL" top --once --interval 0
fi

# ------------------------------------------------------------- man pages
# Checked from a man3/man4/man8 tree, as installed, so ".so" links resolve.
if command -v groff > /dev/null; then
	mkdir -p "$work/man/man3" "$work/man/man4" "$work/man/man8"
	for p in "$U"/man/*.[348]; do
		cp "$p" "$work/man/man${p##*.}/"
	done
	for p in "$work"/man/man*/*; do
		rel=${p#"$work"/man/}
		w=$(cd "$work/man" && {
			groff -s -t -man -Tutf8 -ww -z -I. "$rel"
			if command -v man > /dev/null; then
				LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 "$rel" > /dev/null
			fi
		} 2>&1)
		if [ -z "$w" ]; then
			ok "man page $rel: no warnings"
		else
			not_ok "man page $rel: no warnings"
			echo "$w" | sed 's/^/#   /' | head -n 10
		fi
	done
else
	skip "man pages" "no groff"
fi

finish
