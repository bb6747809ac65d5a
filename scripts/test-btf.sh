#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Module BTF, tested on the host (no module is loaded): `make BTF=1` in a
# scratch copy of the module's sources, against scripts/btf-kdir.sh's
# directory for Debian's kernel KVER (6.1: a cached one; 6.12: its own
# headers), must give twheel.ko a .BTF that is split BTF on exactly that
# kernel's vmlinux BTF.  A probe module built
# alongside (a kfunc set and a BTF_ID_LIST, as the BPF kfuncs will need)
# checks that resolve_btfids fills .BTF_ids with the right ids; twheel.ko's
# own .BTF_ids is checked the same way once it has one.
# TAP lines, then "# btf: N passed, N failed[, N skipped]"; non-zero on
# failure.
#
# Usage: scripts/test-btf.sh [KVER]   (default: Debian's newest 6.1)
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top" || exit 1
# shellcheck source=scripts/lib/tap.sh
. scripts/lib/tap.sh
# shellcheck source=scripts/lib/kernels.sh
. scripts/lib/kernels.sh
kver=${1:-$(kernel_release 6.1)}
[ -n "$kver" ] || { echo "test-btf.sh: no Debian 6.1 kernel in /boot (run scripts/deps.sh)" >&2; exit 1; }
command -v bpftool > /dev/null || scripts/deps.sh >&2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tap_log=$tmp/log

ms_since() { # START (date +%s%N)
	echo $((($(date +%s%N) - $1) / 1000000))
}

has_section() { # ELF SECTION
	readelf -S -W "$1" | grep " $2 " > /dev/null
}

btf_sum() { # ELF: the sha256 of its .BTF section
	objcopy -O binary --only-section=.BTF "$1" "$tmp/btf.bin" 2> /dev/null &&
		sha256sum < "$tmp/btf.bin" | cut -c1-64
}

build_id() { # ELF
	readelf -n "$1" | sed -n 's/^ *Build ID: //p'
}

# -------------------------------------------------- the build directory
t0=$(date +%s%N)
if ! make_vars=$(scripts/btf-kdir.sh --make "$kver" 2> "$tmp/kdir.log"); then
	sed 's/^/# /' "$tmp/kdir.log"
	tap_bail_out btf 13 "scripts/btf-kdir.sh $kver failed"
fi
kdir_ms=$(ms_since "$t0")
how=cached
if grep -q 'built in' "$tmp/kdir.log"; then
	how=built
	sed 's/^/# /' "$tmp/kdir.log"
fi
ok "scripts/btf-kdir.sh $kver: the build directory ($how, $kdir_ms ms)"
kdir=${make_vars#KDIR=}
kdir=${kdir%% *}
base=$kdir/vmlinux
image=/boot/vmlinuz-$kver
# a cache entry of btf-kdir.sh (6.1), or the headers themselves (6.12)
entry=
[ "${kdir%/kdir}" = "$kdir" ] || entry=${kdir%/kdir}

base_ok() {
	has_section "$base" .BTF || { echo "$base: no .BTF"; return 1; }
	[ -x "$kdir/tools/bpf/resolve_btfids/resolve_btfids" ] ||
		{ echo "no resolve_btfids"; return 1; }
	[ -z "$entry" ] ||
		grep -qx "image $(sha256sum < "$image" | cut -c1-64)" "$entry/inputs" ||
		{ echo "the cache entry is not for this $image"; return 1; }
}
tap_cmd "its vmlinux has a .BTF, resolve_btfids is there$([ -n "$entry" ] && echo ", the entry is $image's")" base_ok

# ------------------------------------------------------------- the build
# A scratch copy: the sources (as `make dkms-src` takes them), the top
# Makefile, scripts/ by a symlink, and the probe module.
src=$tmp/src
mkdir -p "$src/kmod" "$src/uapi/linux" "$src/btfprobe"
cp Makefile Kbuild "$src/"
cp kmod/Kbuild kmod/VERSION kmod/*.c kmod/*.h "$src/kmod/"
cp uapi/linux/twheel.h "$src/uapi/linux/"
ln -s "$top/scripts" "$src/scripts"
echo 'obj-m += btfprobe/' >> "$src/Kbuild"
echo 'obj-m += btfprobe.o' > "$src/btfprobe/Kbuild"
cat > "$src/btfprobe/btfprobe.c" <<'EOF'
// SPDX-License-Identifier: GPL-2.0
/* test-btf.sh: what resolve_btfids must resolve in a module with kfuncs */
#include <linux/btf.h>
#include <linux/btf_ids.h>
#include <linux/module.h>
#include "../kmod/twheel_compat.h"

struct btfprobe_node {
	u64 deadline;
};

__bpf_kfunc_start_defs();

__bpf_kfunc int btfprobe_touch(struct btfprobe_node *n, u64 deadline)
{
	n->deadline = deadline;
	return 0;
}

__bpf_kfunc int btfprobe_untouch(struct btfprobe_node *n)
{
	n->deadline = 0;
	return 0;
}

__bpf_kfunc_end_defs();

BTF_KFUNCS_START(btfprobe_kfuncs)
BTF_ID_FLAGS(func, btfprobe_touch)
BTF_ID_FLAGS(func, btfprobe_untouch)
BTF_KFUNCS_END(btfprobe_kfuncs)

static const struct btf_kfunc_id_set btfprobe_set = {
	.owner = THIS_MODULE,
	.set = &btfprobe_kfuncs,
};

BTF_ID_LIST(btfprobe_ids)
BTF_ID(struct, task_struct)
BTF_ID(struct, btfprobe_node)
BTF_ID(func, btfprobe_touch)

static int __init btfprobe_init(void)
{
	if (!btfprobe_ids[0] || !btfprobe_ids[1] || !btfprobe_ids[2])
		return -EINVAL;
	return register_btf_kfunc_id_set(BPF_PROG_TYPE_XDP, &btfprobe_set);
}
module_init(btfprobe_init);
MODULE_LICENSE("GPL");
EOF
ko=$src/kmod/twheel.ko
probe=$src/btfprobe/btfprobe.ko

t0=$(date +%s%N)
make -j"$(nproc)" -C "$src" BTF=1 KVER="$kver" modules > "$tmp/build.log" 2>&1
rc=$?
build_ms=$(ms_since "$t0")
tap_cmd "make BTF=1 builds twheel.ko and the probe in a scratch copy ($build_ms ms)" \
	sh -c "[ $rc -eq 0 ] && [ -f '$ko' ] && [ -f '$probe' ] || { tail -n 20 '$tmp/build.log'; exit 1; }"

build_log_ok() {
	! grep -i 'skipping btf' "$tmp/build.log" &&
		! grep -iE 'resolve_btfids|unresolved|warn' "$tmp/build.log" &&
		grep -q "BTF \[M\] $ko" "$tmp/build.log" &&
		grep -q "BTF \[M\] $probe" "$tmp/build.log"
}
tap_cmd "the build log: 'BTF [M]' for both, no 'Skipping BTF generation', no warning" build_log_ok
tap_cmd "twheel.ko has a .BTF section" has_section "$ko" .BTF

# --------------------------------------------------- split BTF on the base
bpftool btf dump file "$base" > "$tmp/base.btf" 2> "$tmp/base.err"
bpftool -B "$base" btf dump file "$ko" > "$tmp/ko.btf" 2> "$tmp/ko.err"
ko_rc=$?
module_types() {
	[ "$ko_rc" -eq 0 ] || { cat "$tmp/ko.err"; return 1; }
	grep -E "^\[[0-9]+\] STRUCT 'twheel' " "$tmp/ko.btf" &&
		grep -E "^\[[0-9]+\] STRUCT 'tw_node' " "$tmp/ko.btf"
}
tap_cmd "bpftool -B vmlinux btf dump file twheel.ko: struct twheel, struct tw_node" module_types

type_id() { # BTF_DUMP head|tail: the number of its first or last type
	grep -o '^\[[0-9]*\]' "$1" | "$2" -n 1 | tr -d '[]'
}
split_ids() {
	local last first
	last=$(type_id "$tmp/base.btf" tail)
	first=$(type_id "$tmp/ko.btf" head)
	echo "base: types 1..$last, twheel.ko from $first"
	[ -n "$last" ] && [ "$first" = $((last + 1)) ]
}
tap_cmd "split BTF: twheel.ko's types are numbered on from the base's last" split_ids

# The members of struct twheel whose types are the kernel's: their names
# come from the base's types, so a foreign base gives other names (or none).
members_resolve() { # BASE
	local c
	c=$(bpftool -B "$1" btf dump file "$ko" format c 2>&1 |
		sed -n '/^struct twheel {/,/^};/p')
	printf '%s\n' "$c" | head -n 12
	grep -Eq '	(struct mutex|spinlock_t) lock;' <<< "$c" &&
		grep -q '	wait_queue_head_t wq;' <<< "$c" &&
		grep -q '	struct hrtimer timer;' <<< "$c" &&
		grep -Eq '	struct (delayed_work|work_struct) work;' <<< "$c"
}
tap_cmd "struct twheel's kernel-typed members resolve in the base (lock, wait queue, hrtimer, work)" \
	members_resolve "$base"

# The base must be the image's own BTF: unpacked afresh from the image with
# linux-source-6.1's extract-vmlinux (scripts/ksrc.sh; a few seconds),
# compared.
t0=$(date +%s%N)
sh "$(scripts/ksrc.sh)/scripts/extract-vmlinux" "$image" > "$tmp/vmlinux" 2> /dev/null
image_btf=$(btf_sum "$tmp/vmlinux")
image_id=$(build_id "$tmp/vmlinux")
rm -f "$tmp/vmlinux"
base_btf=$(btf_sum "$base")
same_base() {
	echo "$image: .BTF $image_btf, build id $image_id"
	echo "base:  .BTF $base_btf, build id $(build_id "$base")"
	[ -n "$image_btf" ] && [ "$image_btf" = "$base_btf" ] || return 1
	# Debian's 6.12 headers ship the .BTF alone, without the .notes
	[ -z "$entry" ] && [ -z "$(build_id "$base")" ] && return 0
	[ -n "$image_id" ] && [ "$image_id" = "$(build_id "$base")" ]
}
tap_cmd "the base is $image's: same .BTF sha256 and build id (if it has one) ($(ms_since "$t0") ms)" same_base

# /sys/kernel/btf/vmlinux is the running kernel's .BTF: the base a loaded
# module is checked against.
runtime=/sys/kernel/btf/vmlinux
runtime_btf=$( [ -r $runtime ] && sha256sum < $runtime | cut -c1-64)
if [ "$(uname -r)" = "$kver" ] && [ -n "$runtime_btf" ]; then
	tap_cmd "$runtime (this host runs $kver) is the base" [ "$runtime_btf" = "$base_btf" ]
else
	skip "$runtime is the base" "this host runs $(uname -r), not $kver"
fi
if [ -n "$runtime_btf" ] && [ "$runtime_btf" != "$base_btf" ]; then
	foreign_base_fails() { ! members_resolve "$runtime"; }
	tap_cmd "a foreign base ($(uname -r)'s $runtime) does not resolve struct twheel" \
		foreign_base_fails
else
	skip "a foreign base does not resolve struct twheel" "no other kernel's BTF here"
fi

# -------------------------------------------------------------- .BTF_ids
# Every BTF_ID(kind, name) slot must hold the id of a type of that kind and
# name, in the base or the module; a set's or set8's count must be its
# size, its ids those of its members (resolve_btfids sorts them).
btf_ids_resolved() { # KO
	bpftool -B "$base" btf dump file "$1" > "$tmp/mod.btf" || return 1
	objcopy --dump-section .BTF_ids="$tmp/ids.bin" "$1" "$tmp/ids.o" || return 1
	readelf -S -W "$1" > "$tmp/sections"
	readelf -s -W "$1" > "$tmp/symbols"
	python3 - "$tmp/sections" "$tmp/symbols" "$tmp/ids.bin" \
		"$tmp/base.btf" "$tmp/mod.btf" <<'PY'
import re, struct, sys
sections, symbols, data, *dumps = sys.argv[1:]
data = open(data, "rb").read()
idx = next(m.group(1) for l in open(sections)
           if (m := re.match(r"\s*\[\s*(\d+)\] \.BTF_ids ", l)))
types = {}
for path in dumps:
    for l in open(path):
        if m := re.match(r"\[(\d+)\] (\w+) '([^']*)'", l):
            types.setdefault((m.group(2), m.group(3)), set()).add(int(m.group(1)))
u32 = lambda off: struct.unpack_from("<I", data, off)[0]
sets, ids, bad = [], [], []
for l in open(symbols):
    f = l.split()
    if len(f) < 8 or f[6] != idx or not f[7].startswith("__BTF_ID__"):
        continue
    off, size, name = int(f[1], 16), int(f[2]), f[7]
    if m := re.match(r"__BTF_ID__(set8?)__(.+)$", name):
        sets.append((m.group(1), m.group(2), off, size))
    elif m := re.match(r"__BTF_ID__(\w+?)__(.+)__\d+$", name):
        want = types.get((m.group(1).upper(), m.group(2)), set())
        if not want:
            bad.append(f"{name}: no {m.group(1)} {m.group(2)} in the BTF")
        ids.append((off, name, want))
    else:
        bad.append(f"{name}: not a BTF_ID symbol")
in_set = set()
for kind, name, off, size in sets:
    step = 8 if kind == "set8" else 4
    n = size // step - 1
    if u32(off) != n:
        bad.append(f"{kind} {name}: count {u32(off)}, {n} members")
    slots = [off + step * (i + 1) for i in range(n)]
    got = sorted(u32(s) for s in slots)
    members = [i for i in ids if i[0] in slots]
    in_set.update(i[0] for i in members)
    if len(members) != n or any(g == 0 for g in got) or \
       not all(any(g in w for _, _, w in members) for g in got):
        bad.append(f"{kind} {name}: ids {got}, members "
                   f"{[(nm, sorted(w)) for _, nm, w in members]}")
for off, name, want in ids:
    if off not in in_set and u32(off) not in want:
        bad.append(f"{name}: id {u32(off)}, want one of {sorted(want)}")
print(f"{len(ids)} ids, {len(sets)} sets: " + ("; ".join(bad) or "all resolved"))
sys.exit(1 if bad or not ids else 0)
PY
}

if has_section "$ko" .BTF_ids; then
	tap_cmd "twheel.ko's .BTF_ids: every id resolved, each the id of its type" \
		btf_ids_resolved "$ko"
else
	skip "twheel.ko's .BTF_ids: every id resolved" "twheel.ko has no .BTF_ids (no kfuncs yet)"
fi
tap_cmd "the probe's .BTF_ids (kfunc set8, BTF_ID_LIST of base and module types) resolved" \
	btf_ids_resolved "$probe"

where="the headers, $kdir"
[ -z "$entry" ] || where="cache entry $entry: $(du -sh "$entry" | cut -f1)"
echo "# btf-kdir.sh $kdir_ms ms ($how), build $build_ms ms; $where"
tap_summary btf
