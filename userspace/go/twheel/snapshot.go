// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT

package twheel

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"golang.org/x/sys/unix"
)

// Snapshots are the files of twheel_save(3), which documents the format:
// a 64-byte little-endian header, then 24-byte entries (id, deadline on
// CLOCK_REALTIME, data) sorted by deadline then id, both covered by an
// IEEE CRC-32.  libtwheel, the Python module and twheelctl read and write
// the same files.

// SnapshotVersion is the version of the snapshot format that Save writes.
const SnapshotVersion = 1

const (
	snapMagic     = "TWHEELCK"
	snapHdrSize   = 64
	snapEntrySize = 24
	armBatch      = 256
	deadlineMax   = uint64(DeadlineMax)
)

// SnapshotInfo is what CheckSnapshot found in a snapshot's header.
type SnapshotInfo struct {
	Version     uint32
	Flags       uint32
	Clock       uint32        // clock of the wheel saved
	EntrySize   uint32        // bytes per entry
	Count       uint64        // ids
	Saved       time.Time     // when it was saved
	Tick        time.Duration // of the wheel saved
	Timeout     time.Duration // of the wheel saved
	MinDeadline time.Time     // earliest deadline (zero if Count is 0)
	MaxDeadline time.Time     // latest deadline (zero if Count is 0)
	HeaderCRC   uint32
	EntriesCRC  uint32
}

// SnapshotError reports a snapshot file that is corrupt, truncated or of
// an unknown version.  It wraps unix.EBADMSG, as libtwheel's -EBADMSG.
type SnapshotError struct {
	Path    string
	Problem string // the first thing found wrong
}

func (e *SnapshotError) Error() string {
	return "twheel snapshot " + e.Path + ": " + e.Problem
}

// Unwrap returns unix.EBADMSG.
func (e *SnapshotError) Unwrap() error { return unix.EBADMSG }

// snapEntry is one entry of a snapshot; deadline is on CLOCK_REALTIME.
type snapEntry struct {
	id, deadline, data uint64
}

// clockPair reads the wheel's clock on both sides of CLOCK_REALTIME and
// returns the midpoint with the realtime reading.
func clockPair(clock uint32) (wheel, realtime uint64, err error) {
	var a, r, b unix.Timespec
	if err = unix.ClockGettime(int32(clock), &a); err == nil {
		if err = unix.ClockGettime(unix.CLOCK_REALTIME, &r); err == nil {
			err = unix.ClockGettime(int32(clock), &b)
		}
	}
	if err != nil {
		return 0, 0, err
	}
	wa, wb := uint64(a.Nano()), uint64(b.Nano())
	return wa + (wb-wa)/2, uint64(r.Nano()), nil
}

// convert moves deadline from clock A to clock B given a reading of both,
// clamped to [0, DeadlineMax]; DeadlineMax ("never") stays DeadlineMax.
func convert(deadline, nowA, nowB uint64) uint64 {
	if deadline >= deadlineMax {
		return deadlineMax
	}
	if deadline >= nowA {
		rem := deadline - nowA
		if rem > deadlineMax-nowB {
			return deadlineMax
		}
		return nowB + rem
	}
	if past := nowA - deadline; past < nowB {
		return nowB - past
	}
	return 0
}

// encodeSnapshot lays out a snapshot file of entries, already sorted.
func encodeSnapshot(e []snapEntry, clock uint32, tick, timeout time.Duration, savedRT uint64) []byte {
	le := binary.LittleEndian
	buf := make([]byte, snapHdrSize+len(e)*snapEntrySize)
	p := buf[snapHdrSize:]
	for i := range e {
		le.PutUint64(p[0:], e[i].id)
		le.PutUint64(p[8:], e[i].deadline)
		le.PutUint64(p[16:], e[i].data)
		p = p[snapEntrySize:]
	}
	copy(buf, snapMagic)
	le.PutUint32(buf[8:], SnapshotVersion)
	le.PutUint32(buf[12:], 0)
	le.PutUint64(buf[16:], uint64(len(e)))
	le.PutUint32(buf[24:], clock)
	le.PutUint32(buf[28:], snapEntrySize)
	le.PutUint64(buf[32:], savedRT)
	le.PutUint64(buf[40:], uint64(tick))
	le.PutUint64(buf[48:], uint64(timeout))
	le.PutUint32(buf[56:], crc32.ChecksumIEEE(buf[snapHdrSize:]))
	le.PutUint32(buf[60:], crc32.ChecksumIEEE(buf[:snapHdrSize-4]))
	return buf
}

func realtime(ns uint64) time.Time { return time.Unix(0, int64(ns)) }

// decodeSnapshot validates a whole snapshot file; it returns what it
// could read of the header, and the reason it refuses the file ("" if it
// accepts it).
func decodeSnapshot(data []byte) (SnapshotInfo, string) {
	var info SnapshotInfo
	if len(data) < snapHdrSize {
		if len(data) == 0 {
			return info, "empty file"
		}
		return info, "truncated header"
	}
	le := binary.LittleEndian
	info.Version = le.Uint32(data[8:])
	info.Flags = le.Uint32(data[12:])
	info.Count = le.Uint64(data[16:])
	info.Clock = le.Uint32(data[24:])
	info.EntrySize = le.Uint32(data[28:])
	info.Saved = realtime(le.Uint64(data[32:]))
	info.Tick = time.Duration(le.Uint64(data[40:]))
	info.Timeout = time.Duration(le.Uint64(data[48:]))
	info.EntriesCRC = le.Uint32(data[56:])
	info.HeaderCRC = le.Uint32(data[60:])
	switch {
	case string(data[:8]) != snapMagic:
		return info, "bad magic (not a twheel snapshot)"
	case info.Version != SnapshotVersion:
		return info, "unsupported format version"
	case crc32.ChecksumIEEE(data[:snapHdrSize-4]) != info.HeaderCRC:
		return info, "header checksum mismatch"
	case info.Flags != 0:
		return info, "unknown flags"
	case info.EntrySize != snapEntrySize:
		return info, "unsupported entry size"
	case info.Count > MaxIDsLimit:
		return info, "entry count out of range"
	}
	want := snapHdrSize + info.Count*snapEntrySize
	switch {
	case uint64(len(data)) < want:
		return info, "truncated entries"
	case uint64(len(data)) > want:
		return info, "trailing data after the entries"
	case crc32.ChecksumIEEE(data[snapHdrSize:]) != info.EntriesCRC:
		return info, "entries checksum mismatch"
	}
	var lo, hi uint64
	for i, p := uint64(0), data[snapHdrSize:]; i < info.Count; i, p = i+1, p[snapEntrySize:] {
		d := le.Uint64(p[8:])
		if d > deadlineMax {
			return info, "deadline out of range"
		}
		if i == 0 || d < lo {
			lo = d
		}
		if i == 0 || d > hi {
			hi = d
		}
	}
	if info.Count > 0 {
		info.MinDeadline, info.MaxDeadline = realtime(lo), realtime(hi)
	}
	return info, ""
}

// loadSnapshot reads and validates the snapshot at path.
func loadSnapshot(path string) (SnapshotInfo, []byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return SnapshotInfo{}, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return SnapshotInfo{}, nil, err
	}
	if st.IsDir() {
		return SnapshotInfo{}, nil, &os.PathError{Op: "read", Path: path, Err: unix.EISDIR}
	}
	if !st.Mode().IsRegular() {
		return SnapshotInfo{}, nil, &SnapshotError{Path: path, Problem: "not a regular file"}
	}
	if st.Size() > snapHdrSize+MaxIDsLimit*snapEntrySize {
		return SnapshotInfo{}, nil, &SnapshotError{Path: path, Problem: "file too large"}
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return SnapshotInfo{}, nil, err
	}
	info, problem := decodeSnapshot(data)
	if problem != "" {
		return info, nil, &SnapshotError{Path: path, Problem: problem}
	}
	return info, data, nil
}

// CheckSnapshot validates the snapshot file at path without touching any
// wheel, as Restore would, and returns its header.  A corrupt file fails
// with a *SnapshotError (which wraps unix.EBADMSG), returned with what
// could be read of the header.
func CheckSnapshot(path string) (SnapshotInfo, error) {
	info, _, err := loadSnapshot(path)
	if err != nil {
		var se *SnapshotError
		if !errors.As(err, &se) {
			err = &Error{Op: "check snapshot", Err: err}
		}
	}
	return info, err
}

// Save writes every armed or expired id of the wheel to a snapshot file at
// path, atomically (a temporary file in the same directory, synced, then
// renamed over path, and the directory synced) with mode 0600.  Deadlines
// are stored on CLOCK_REALTIME, so that a snapshot outlives a reboot.
func (w *Wheel) Save(path string) error {
	if path == "" {
		return &Error{Op: "save", Err: unix.EINVAL}
	}
	cfg, err := w.Config()
	if err != nil {
		return err
	}
	all, err := w.DumpAll()
	if err != nil {
		return err
	}
	nowW, nowRT, err := clockPair(cfg.Clock)
	if err != nil {
		return &Error{Op: "save", Err: err}
	}
	e := make([]snapEntry, len(all))
	for i, a := range all {
		e[i] = snapEntry{id: a.ID, deadline: convert(uint64(a.Timeout), nowW, nowRT), data: a.Data}
	}
	// An id re-armed during the dump may show up twice: keep the last.
	sort.SliceStable(e, func(i, j int) bool { return e[i].id < e[j].id })
	n := 0
	for i := range e {
		if n > 0 && e[n-1].id == e[i].id {
			e[n-1] = e[i]
		} else {
			e[n] = e[i]
			n++
		}
	}
	e = e[:n]
	sort.Slice(e, func(i, j int) bool {
		if e[i].deadline != e[j].deadline {
			return e[i].deadline < e[j].deadline
		}
		return e[i].id < e[j].id
	})
	data := encodeSnapshot(e, cfg.Clock, cfg.Tick, cfg.Timeout, nowRT)
	return opError("save", writeAtomic(path, data))
}

// writeAtomic writes data to path through a temporary file and rename.
func writeAtomic(path string, data []byte) (err error) {
	dir, base := filepath.Split(path)
	if base == "" {
		return &os.PathError{Op: "save", Path: path, Err: unix.EISDIR}
	}
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*") // mode 0600
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(f.Name())
		}
	}()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	// Some filesystems cannot sync a directory: that is not an error.
	if err := d.Sync(); err != nil && !errors.Is(err, unix.EINVAL) &&
		!errors.Is(err, unix.EROFS) && !errors.Is(err, unix.ENOTSUP) {
		return err
	}
	return nil
}

// Restore arms the ids of the snapshot file at path, replacing ids already
// in the wheel.  The whole file is validated first: a corrupt one fails
// with a *SnapshotError and arms nothing.  Deadlines that have passed are
// armed at now, so their events are queued at once, in deadline order.
// The wheel's configuration is not changed.  Restore returns the number
// of ids armed: on an error midway (ENOSPC...), the first n entries of the
// file, in deadline order.
func (w *Wheel) Restore(path string) (int, error) {
	cfg, err := w.Config()
	if err != nil {
		return 0, err
	}
	info, data, err := loadSnapshot(path)
	if err != nil {
		var se *SnapshotError
		if !errors.As(err, &se) {
			err = &Error{Op: "restore", Err: err}
		}
		return 0, err
	}
	nowW, nowRT, err := clockPair(cfg.Clock)
	if err != nil {
		return 0, &Error{Op: "restore", Err: err}
	}
	le := binary.LittleEndian
	p := data[snapHdrSize:]
	batch := make([]Arm, 0, armBatch)
	total := 0
	for i := uint64(0); i < info.Count; i++ {
		d := convert(le.Uint64(p[8:]), nowRT, nowW)
		if d < nowW {
			d = nowW // already due: it expires at once
		}
		batch = append(batch, Arm{
			ID:      le.Uint64(p),
			Timeout: time.Duration(d),
			Data:    le.Uint64(p[16:]),
			Flags:   ArmAbsTime,
		})
		p = p[snapEntrySize:]
		if len(batch) == cap(batch) || i == info.Count-1 {
			n, err := w.Arm(batch...)
			total += n
			if err != nil {
				return total, err
			}
			batch = batch[:0]
		}
	}
	return total, nil
}
