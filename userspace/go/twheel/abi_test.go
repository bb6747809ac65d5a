// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT

package twheel

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// abiFact is one value the Go side must share with uapi/linux/twheel.h:
// a C constant expression and the Go value.
type abiFact struct {
	c   string
	val uint64
}

func abiFacts() []abiFact {
	var (
		cfg Config
		arm Arm
		b   batch
		q   Query
		st  Stats
		d   dumpArg
		ev  Event
	)
	type f = abiFact
	size := func(name string, v uintptr) f {
		return f{"sizeof(struct " + name + ")", uint64(v)}
	}
	off := func(name, field string, v uintptr) f {
		return f{"offsetof(struct " + name + ", " + field + ")", uint64(v)}
	}
	return []abiFact{
		size("twheel_config", unsafe.Sizeof(cfg)),
		off("twheel_config", "tick_ns", unsafe.Offsetof(cfg.Tick)),
		off("twheel_config", "timeout_ns", unsafe.Offsetof(cfg.Timeout)),
		off("twheel_config", "max_ids", unsafe.Offsetof(cfg.MaxIDs)),
		off("twheel_config", "clockid", unsafe.Offsetof(cfg.Clock)),
		off("twheel_config", "flags", unsafe.Offsetof(cfg.Flags)),

		size("twheel_arm", unsafe.Sizeof(arm)),
		off("twheel_arm", "id", unsafe.Offsetof(arm.ID)),
		off("twheel_arm", "timeout_ns", unsafe.Offsetof(arm.Timeout)),
		off("twheel_arm", "data", unsafe.Offsetof(arm.Data)),
		off("twheel_arm", "flags", unsafe.Offsetof(arm.Flags)),

		size("twheel_batch", unsafe.Sizeof(b)),
		off("twheel_batch", "ptr", unsafe.Offsetof(b.ptr)),
		off("twheel_batch", "count", unsafe.Offsetof(b.count)),
		off("twheel_batch", "done", unsafe.Offsetof(b.done)),
		off("twheel_batch", "flags", unsafe.Offsetof(b.flags)),

		size("twheel_query", unsafe.Sizeof(q)),
		off("twheel_query", "id", unsafe.Offsetof(q.ID)),
		off("twheel_query", "deadline_ns", unsafe.Offsetof(q.Deadline)),
		off("twheel_query", "data", unsafe.Offsetof(q.Data)),
		off("twheel_query", "state", unsafe.Offsetof(q.State)),

		size("twheel_stats", unsafe.Sizeof(st)),
		off("twheel_stats", "armed", unsafe.Offsetof(st.Armed)),
		off("twheel_stats", "pending", unsafe.Offsetof(st.Pending)),
		off("twheel_stats", "touches", unsafe.Offsetof(st.Touches)),
		off("twheel_stats", "arms", unsafe.Offsetof(st.Arms)),
		off("twheel_stats", "cancels", unsafe.Offsetof(st.Cancels)),
		off("twheel_stats", "expirations", unsafe.Offsetof(st.Expirations)),
		off("twheel_stats", "delivered", unsafe.Offsetof(st.Delivered)),
		off("twheel_stats", "timer_fires", unsafe.Offsetof(st.TimerFires)),
		off("twheel_stats", "late_max_ns", unsafe.Offsetof(st.LateMax)),
		off("twheel_stats", "mem_bytes", unsafe.Offsetof(st.MemBytes)),
		off("twheel_stats", "discarded", unsafe.Offsetof(st.Discarded)),
		off("twheel_stats", "reslots", unsafe.Offsetof(st.Reslots)),
		off("twheel_stats", "runs", unsafe.Offsetof(st.Runs)),
		off("twheel_stats", "hold_max_ns", unsafe.Offsetof(st.HoldMax)),
		off("twheel_stats", "work_runs", unsafe.Offsetof(st.WorkRuns)),
		off("twheel_stats", "work_ns", unsafe.Offsetof(st.Work)),
		off("twheel_stats", "bpf_touches", unsafe.Offsetof(st.BPFTouches)),
		off("twheel_stats", "bpf_absent", unsafe.Offsetof(st.BPFAbsent)),

		size("twheel_dump", unsafe.Sizeof(d)),
		off("twheel_dump", "ptr", unsafe.Offsetof(d.ptr)),
		off("twheel_dump", "count", unsafe.Offsetof(d.count)),
		off("twheel_dump", "done", unsafe.Offsetof(d.done)),
		off("twheel_dump", "cursor", unsafe.Offsetof(d.cursor)),

		size("twheel_event", unsafe.Sizeof(ev)),
		off("twheel_event", "id", unsafe.Offsetof(ev.ID)),
		off("twheel_event", "data", unsafe.Offsetof(ev.Data)),
		off("twheel_event", "deadline_ns", unsafe.Offsetof(ev.Deadline)),
		off("twheel_event", "expired_ns", unsafe.Offsetof(ev.Expired)),

		{"TWHEEL_IOC_SET_CONFIG", uint64(iocSetConfig)},
		{"TWHEEL_IOC_GET_CONFIG", uint64(iocGetConfig)},
		{"TWHEEL_IOC_ARM", uint64(iocArm)},
		{"TWHEEL_IOC_CANCEL", uint64(iocCancel)},
		{"TWHEEL_IOC_QUERY", uint64(iocQuery)},
		{"TWHEEL_IOC_GET_STATS", uint64(iocGetStats)},
		{"TWHEEL_IOC_DUMP", uint64(iocDump)},

		{"TWHEEL_DEFAULT_TICK_NS", uint64(DefaultTick)},
		{"TWHEEL_DEFAULT_TIMEOUT_NS", uint64(DefaultTimeout)},
		{"TWHEEL_DEFAULT_MAX_IDS", DefaultMaxIDs},
		{"TWHEEL_TICK_MIN_NS", uint64(TickMin)},
		{"TWHEEL_TICK_MAX_NS", uint64(TickMax)},
		{"TWHEEL_MAX_IDS_LIMIT", MaxIDsLimit},
		{"TWHEEL_DEADLINE_MAX", uint64(DeadlineMax)},
		{"TWHEEL_ARM_ABSTIME", uint64(ArmAbsTime)},
		{"TWHEEL_ARM_NOREPLACE", uint64(ArmNoReplace)},
		{"TWHEEL_STATE_ARMED", uint64(StateArmed)},
		{"TWHEEL_STATE_EXPIRED", uint64(StateExpired)},
		{"CLOCK_MONOTONIC", ClockMonotonic},
		{"CLOCK_BOOTTIME", ClockBoottime},
	}
}

// TestABINoPadding: every field of every ABI struct sits right after the
// previous one and the struct ends with its last field, so the layout does
// not depend on the architecture's alignment rules (386 aligns uint64 to
// 4, amd64 to 8): what the C check below proves on this architecture holds
// on the others.
func TestABINoPadding(t *testing.T) {
	for _, v := range []interface{}{Config{}, Arm{}, batch{}, Query{}, Stats{}, dumpArg{}, Event{}} {
		typ := reflect.TypeOf(v)
		var at uintptr
		for i := 0; i < typ.NumField(); i++ {
			fl := typ.Field(i)
			if fl.Offset != at {
				t.Errorf("%s.%s at offset %d, want %d", typ.Name(), fl.Name, fl.Offset, at)
			}
			if k := fl.Type.Kind(); k == reflect.Int || k == reflect.Uint || k == reflect.Uintptr ||
				k == reflect.Pointer || k == reflect.UnsafePointer {
				t.Errorf("%s.%s has a size that depends on the architecture", typ.Name(), fl.Name)
			}
			at += fl.Type.Size()
		}
		if typ.Size() != at {
			t.Errorf("%s: size %d, fields end at %d", typ.Name(), typ.Size(), at)
		}
	}
}

// TestABIValues: sizes and ioctl numbers as uapi/linux/twheel.h gives them
// on x86-64 (and every architecture with the generic _IOC encoding).
func TestABIValues(t *testing.T) {
	sizes := map[string]uintptr{
		"Config": unsafe.Sizeof(Config{}), "Arm": unsafe.Sizeof(Arm{}),
		"batch": unsafe.Sizeof(batch{}), "Query": unsafe.Sizeof(Query{}),
		"Stats": unsafe.Sizeof(Stats{}), "dumpArg": unsafe.Sizeof(dumpArg{}),
		"Event": unsafe.Sizeof(Event{}),
	}
	want := map[string]uintptr{
		"Config": 64, "Arm": 32, "batch": 40, "Query": 32, "Stats": 160,
		"dumpArg": 48, "Event": 32,
	}
	for k, v := range want {
		if sizes[k] != v {
			t.Errorf("sizeof %s = %d, want %d", k, sizes[k], v)
		}
	}
	if iocDirShift != 30 {
		t.Skipf("%s has its own _IOC encoding: checked against the C header only", runtime.GOARCH)
	}
	ioc := map[string][2]uintptr{
		"SET_CONFIG": {iocSetConfig, 0x4040d700},
		"GET_CONFIG": {iocGetConfig, 0x8040d701},
		"ARM":        {iocArm, 0xc028d702},
		"CANCEL":     {iocCancel, 0xc028d703},
		"QUERY":      {iocQuery, 0xc020d704},
		"GET_STATS":  {iocGetStats, 0x80a0d705},
		"DUMP":       {iocDump, 0xc030d706},
	}
	for k, v := range ioc {
		if v[0] != v[1] {
			t.Errorf("TWHEEL_IOC_%s = %#x, want %#x", k, v[0], v[1])
		}
	}
}

// uapiDir is the directory of the repository's uapi headers.
func uapiDir(t *testing.T) string {
	dir, err := filepath.Abs(filepath.Join("..", "..", "..", "uapi"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "linux", "twheel.h")); err != nil {
		t.Skipf("uapi/linux/twheel.h not found: %v", err)
	}
	return dir
}

// TestABIAgainstCHeader compiles a C file of static assertions, one per
// fact, against uapi/linux/twheel.h: the C compiler checks every Go value
// (nothing is run, so it works for -m32 without 32-bit execution).  Only
// the host's C compiler is needed, not cgo.
func TestABIAgainstCHeader(t *testing.T) {
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		t.Skipf("no C compiler (%s): %v", cc, err)
	}
	inc := uapiDir(t)
	var src strings.Builder
	src.WriteString("#include <stddef.h>\n#include <time.h>\n#include <linux/twheel.h>\n")
	for _, f := range abiFacts() {
		fmt.Fprintf(&src, "_Static_assert((unsigned long long)(%s) == %dULL, \"%s is not %d\");\n",
			f.c, f.val, f.c, f.val)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "abi.c")
	if err := os.WriteFile(file, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	modes := [][]string{nil}
	if runtime.GOARCH == "amd64" || runtime.GOARCH == "386" {
		modes = [][]string{{"-m64"}, {"-m32"}}
	}
	for _, m := range modes {
		args := append(append([]string{"-std=gnu11", "-fsyntax-only", "-D_GNU_SOURCE", "-I", inc}, m...), file)
		name := strings.Join(m, " ")
		if name == "" {
			name = "native"
		}
		t.Run(name, func(t *testing.T) {
			if len(m) > 0 && m[0] == "-m32" {
				probe := filepath.Join(dir, "probe.c")
				os.WriteFile(probe, []byte("#include <stddef.h>\n#include <linux/types.h>\n"), 0o644)
				if out, err := exec.Command(cc, "-m32", "-fsyntax-only", probe).CombinedOutput(); err != nil {
					t.Skipf("%s -m32 cannot compile (gcc-multilib missing?): %s", cc, out)
				}
			}
			out, err := exec.Command(cc, args...).CombinedOutput()
			if err != nil {
				t.Fatalf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, out)
			}
		})
	}
}
