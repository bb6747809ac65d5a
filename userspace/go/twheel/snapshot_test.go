// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT

package twheel

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestConvert(t *testing.T) {
	const max = deadlineMax
	cases := []struct{ d, a, b, want uint64 }{
		{100, 50, 1000, 1050},      // ahead
		{50, 100, 1000, 950},       // passed
		{0, 100, 50, 0},            // passed before B's zero: 0
		{max, 5, 7, max},           // never stays never
		{max - 1, 0, 10, max},      // saturates
		{1 << 62, 0, 1 << 62, max}, // past the end: saturates
		{(1 << 62) - 2, 0, 1 << 62, max - 1},
		{1000, 1000, 0, 0},
	}
	for _, c := range cases {
		if got := convert(c.d, c.a, c.b); got != c.want {
			t.Errorf("convert(%d, %d, %d) = %d, want %d", c.d, c.a, c.b, got, c.want)
		}
	}
}

func sampleEntries() []snapEntry {
	return []snapEntry{
		{id: 7, deadline: 1_000, data: 70},
		{id: 3, deadline: 2_000, data: 30},
		{id: 9, deadline: 2_000, data: 90},
		{id: 1 << 63, deadline: deadlineMax, data: ^uint64(0)},
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	e := sampleEntries()
	data := encodeSnapshot(e, ClockBoottime, 2*time.Millisecond, 5*time.Second, 123456789)
	if len(data) != snapHdrSize+len(e)*snapEntrySize {
		t.Fatalf("size %d", len(data))
	}
	info, problem := decodeSnapshot(data)
	if problem != "" {
		t.Fatalf("refused: %s", problem)
	}
	if info.Version != 1 || info.Count != 4 || info.Clock != ClockBoottime ||
		info.EntrySize != 24 || info.Tick != 2*time.Millisecond ||
		info.Timeout != 5*time.Second || info.Saved.UnixNano() != 123456789 ||
		info.MinDeadline.UnixNano() != 1000 || info.MaxDeadline.UnixNano() != int64(deadlineMax) {
		t.Fatalf("info %+v", info)
	}
	if info.HeaderCRC != crc32.ChecksumIEEE(data[:60]) {
		t.Error("header CRC")
	}
}

// Every way a file can be refused, in the order twheel_save(3) checks.
func TestSnapshotRefused(t *testing.T) {
	good := encodeSnapshot(sampleEntries(), ClockMonotonic, time.Millisecond, time.Second, 1)
	le := binary.LittleEndian
	fixHeader := func(b []byte) { le.PutUint32(b[60:], crc32.ChecksumIEEE(b[:60])) }
	fixBoth := func(b []byte) {
		le.PutUint32(b[56:], crc32.ChecksumIEEE(b[64:]))
		fixHeader(b)
	}
	cases := []struct {
		problem string
		edit    func([]byte) []byte
	}{
		{"empty file", func(b []byte) []byte { return b[:0] }},
		{"truncated header", func(b []byte) []byte { return b[:63] }},
		{"bad magic", func(b []byte) []byte { b[0] = 'X'; return b }},
		{"unsupported format version", func(b []byte) []byte { le.PutUint32(b[8:], 2); fixHeader(b); return b }},
		{"header checksum mismatch", func(b []byte) []byte { b[40]++; return b }},
		{"unknown flags", func(b []byte) []byte { le.PutUint32(b[12:], 1); fixHeader(b); return b }},
		{"unsupported entry size", func(b []byte) []byte { le.PutUint32(b[28:], 32); fixHeader(b); return b }},
		{"entry count out of range", func(b []byte) []byte { le.PutUint64(b[16:], MaxIDsLimit+1); fixHeader(b); return b }},
		{"truncated entries", func(b []byte) []byte { return b[:len(b)-1] }},
		{"trailing data", func(b []byte) []byte { return append(b, 0) }},
		{"entries checksum mismatch", func(b []byte) []byte { b[64]++; return b }},
		{"deadline out of range", func(b []byte) []byte { le.PutUint64(b[64+8:], deadlineMax+1); fixBoth(b); return b }},
	}
	dir := t.TempDir()
	for _, c := range cases {
		b := c.edit(append([]byte(nil), good...))
		if _, problem := decodeSnapshot(b); !strings.HasPrefix(problem, c.problem) {
			t.Errorf("%s: got %q", c.problem, problem)
		}
		path := filepath.Join(dir, "snap")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := CheckSnapshot(path)
		var se *SnapshotError
		if !errors.As(err, &se) || !errors.Is(err, unix.EBADMSG) {
			t.Errorf("%s: CheckSnapshot: %v", c.problem, err)
		}
	}
	if _, err := CheckSnapshot(dir); !errors.Is(err, unix.EISDIR) {
		t.Errorf("directory: %v", err)
	}
	if _, err := CheckSnapshot(filepath.Join(dir, "absent")); !errors.Is(err, unix.ENOENT) {
		t.Errorf("absent file: %v", err)
	}
}

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "w.snap")
	data := encodeSnapshot(sampleEntries(), ClockMonotonic, time.Millisecond, time.Second, 1)
	for i := 0; i < 2; i++ { // creates, then replaces
		if err := writeAtomic(path, data); err != nil {
			t.Fatal(err)
		}
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("stat: %v %v", st.Mode(), err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
	if _, err := CheckSnapshot(path); err != nil {
		t.Error(err)
	}
	if err := writeAtomic(dir+"/", data); !errors.Is(err, unix.EISDIR) {
		t.Errorf("directory path: %v", err)
	}
}

// The file this package writes is one libtwheel and the Python module
// accept, with the same header, and the reverse: a file laid out by the
// Python module's own header struct is one this package accepts.
func TestSnapshotInterop(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "go.snap")
	e := sampleEntries()
	if err := writeAtomic(path, encodeSnapshot(e, ClockMonotonic, time.Millisecond, 3*time.Second, 42)); err != nil {
		t.Fatal(err)
	}
	t.Run("twheelctl", func(t *testing.T) {
		ctl, _ := filepath.Abs(filepath.Join("..", "..", "twheelctl", "twheelctl"))
		if _, err := os.Stat(ctl); err != nil {
			t.Skip("twheelctl not built (make -C userspace)")
		}
		out, err := exec.Command(ctl, "check", path).CombinedOutput()
		if err != nil {
			t.Fatalf("twheelctl check: %v\n%s", err, out)
		}
		for _, want := range []string{"valid twheel snapshot", "ids          4",
			"timeout_ns   3000000000", "1970-01-01T00:00:00.000000042Z"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("twheelctl check output lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("python", func(t *testing.T) {
		py, err := exec.LookPath("python3")
		pydir, _ := filepath.Abs(filepath.Join("..", "..", "python"))
		if err != nil {
			t.Skip("no python3")
		}
		if _, err := os.Stat(filepath.Join(pydir, "twheel.py")); err != nil {
			t.Skip("no userspace/python/twheel.py")
		}
		script := `
import binascii, struct, sys
sys.path.insert(0, sys.argv[1])
import twheel
i = twheel.snapshot_check(sys.argv[2])
print(i.count, i.clockid, i.tick_ns, i.timeout_ns, i.saved_realtime_ns, i.min_deadline_ns)
body = struct.pack("<QQQ", 5, 777, 55) + struct.pack("<QQQ", 6, 778, 66)
hdr = twheel._HDR.pack(b"TWHEELCK", 1, 0, 2, 7, 24, 99, 1000000, 2000000000,
                       binascii.crc32(body), 0)
hdr = hdr[:60] + struct.pack("<I", binascii.crc32(hdr[:60]))
with open(sys.argv[3], "wb") as f:
    f.write(hdr + body)
`
		pyPath := filepath.Join(dir, "py.snap")
		cmd := exec.Command(py, "-c", script, pydir, path, pyPath)
		cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("python: %v\n%s", err, out)
		}
		if got := strings.TrimSpace(string(out)); got != "4 1 1000000 3000000000 42 1000" {
			t.Errorf("python read: %q", got)
		}
		info, err := CheckSnapshot(pyPath)
		if err != nil {
			t.Fatal(err)
		}
		if info.Count != 2 || info.Clock != ClockBoottime || info.Saved.UnixNano() != 99 ||
			info.MinDeadline.UnixNano() != 777 || info.MaxDeadline.UnixNano() != 778 ||
			info.Timeout != 2*time.Second {
			t.Errorf("info of the Python-made file: %+v", info)
		}
	})
}

func TestErrors(t *testing.T) {
	err := error(&Error{Op: "query", Err: unix.ENOENT})
	if !errors.Is(err, unix.ENOENT) || !errors.Is(err, os.ErrNotExist) {
		t.Error("errors.Is through *Error")
	}
	if !strings.Contains(err.Error(), "no such id") {
		t.Errorf("message %q", err)
	}
	err = &Error{Op: "open", Err: unix.ENOENT}
	if !strings.Contains(err.Error(), "module loaded") {
		t.Errorf("message %q", err)
	}
	var se error = &SnapshotError{Path: "x", Problem: "bad magic"}
	if !errors.Is(se, unix.EBADMSG) {
		t.Error("SnapshotError is EBADMSG")
	}
	if StateArmed.String() != "armed" || State(9).String() != "State(9)" {
		t.Error("State.String")
	}
	if (Event{Deadline: 10, Expired: 15}).Late() != 5 {
		t.Error("Event.Late")
	}
}
