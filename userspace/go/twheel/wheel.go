// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT

package twheel

import (
	"context"
	"errors"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// dumpBatch is the number of entries fetched per DUMP ioctl.
const dumpBatch = 256

// A Wheel is one open /dev/twheel: an independent wheel of 64-bit ids.
// Its methods may be called from any number of goroutines at once.
//
// The descriptor is non-blocking and registered with Go's runtime poller:
// a goroutine in Wait is parked until the kernel reports events, it does
// not hold an OS thread.
type Wheel struct {
	f  *os.File
	rc syscall.RawConn

	// The read deadline of f belongs to Wait: set in the past while a
	// waiter whose context ended is still inside Wait, so that it can
	// get past the waiter parked in the poller (see watch).
	mu     sync.Mutex
	kicks  int           // such waiters
	kicked chan struct{} // closed when kicks drops back to 0
}

// Open opens a new wheel.  A nil cfg keeps the defaults (DefaultTick,
// DefaultTimeout, DefaultMaxIDs, ClockMonotonic); otherwise every non-zero
// field of cfg replaces the default.  The descriptor is opened with
// O_NONBLOCK and O_CLOEXEC.
func Open(cfg *Config) (*Wheel, error) {
	fd, err := unix.Open(DevicePath, unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &Error{Op: "open", Err: err}
	}
	w, err := newWheel(fd)
	if err != nil {
		return nil, err
	}
	if cfg != nil {
		if err := w.setNonZero(*cfg); err != nil {
			w.Close()
			return nil, err
		}
	}
	return w, nil
}

// FromFD makes a Wheel of fd, an open twheel descriptor (received over a
// Unix socket, or from pidfd_getfd(2)); the Wheel owns it from then on.
// fd is put in non-blocking mode.  A descriptor that is not a wheel fails
// with ENOTTY, and is left open.
func FromFD(fd int) (*Wheel, error) {
	var cfg Config
	if err := ioctlRetry(uintptr(fd), iocGetConfig, unsafe.Pointer(&cfg)); err != nil {
		return nil, &Error{Op: "open", Err: err}
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		return nil, &Error{Op: "open", Err: err}
	}
	return newWheel(fd)
}

func newWheel(fd int) (*Wheel, error) {
	// NewFile registers a non-blocking descriptor with the poller.
	f := os.NewFile(uintptr(fd), DevicePath)
	rc, err := f.SyscallConn()
	if err == nil {
		// fails with os.ErrNoDeadline if the poller did not take it
		err = f.SetReadDeadline(time.Time{})
	}
	if err != nil {
		f.Close()
		return nil, &Error{Op: "open", Err: err}
	}
	return &Wheel{f: f, rc: rc}, nil
}

// Close closes the wheel: its ids are gone, and a Wait in progress returns
// an error that wraps os.ErrClosed.
func (w *Wheel) Close() error {
	return opError("close", w.f.Close())
}

// SyscallConn gives access to the descriptor, to add it to an epoll set of
// one's own, pass it over a Unix socket or issue a raw call.  The
// descriptor must stay non-blocking.
func (w *Wheel) SyscallConn() (syscall.RawConn, error) {
	return w.rc, nil
}

// control runs fn on the descriptor; a closed wheel fails with
// os.ErrClosed.
func (w *Wheel) control(op string, fn func(fd uintptr) error) error {
	var err error
	if cerr := w.rc.Control(func(fd uintptr) { err = fn(fd) }); cerr != nil {
		return &Error{Op: op, Err: os.ErrClosed}
	}
	return opError(op, err)
}

// ioctlRetry issues a request that can be repeated as is after EINTR.
func ioctlRetry(fd, req uintptr, arg unsafe.Pointer) error {
	for {
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, fd, req, uintptr(arg))
		if errno != unix.EINTR {
			return errnoError(errno)
		}
	}
}

func (w *Wheel) ioctl(op string, req uintptr, arg unsafe.Pointer) error {
	return w.control(op, func(fd uintptr) error { return ioctlRetry(fd, req, arg) })
}

// batchIoctl issues ARM or CANCEL over count entries at ptr and returns
// the kernel's done count.  The //go:uintptrescapes directive keeps the
// memory at ptr on the heap (where it does not move) and alive for the
// call: the kernel finds it through the struct, not through an argument.
//
//go:uintptrescapes
func batchIoctl(rc syscall.RawConn, req, ptr uintptr, count int) (uint64, unix.Errno, error) {
	b := batch{ptr: uint64(ptr), count: uint64(count)}
	var errno unix.Errno
	err := rc.Control(func(fd uintptr) {
		_, _, errno = unix.Syscall(unix.SYS_IOCTL, fd, req, uintptr(unsafe.Pointer(&b)))
	})
	return b.done, errno, err
}

// dumpIoctl issues DUMP into count entries at ptr (see batchIoctl).
//
//go:uintptrescapes
func dumpIoctl(rc syscall.RawConn, ptr uintptr, count int, cursor uint64) (uint64, uint64, error) {
	d := dumpArg{ptr: uint64(ptr), count: uint64(count), cursor: cursor}
	var errno unix.Errno
	err := rc.Control(func(fd uintptr) {
		for {
			_, _, errno = unix.Syscall(unix.SYS_IOCTL, fd, iocDump, uintptr(unsafe.Pointer(&d)))
			if errno != unix.EINTR {
				return
			}
		}
	})
	if err == nil {
		err = errnoError(errno)
	}
	return d.done, d.cursor, err
}

// Config returns the wheel's configuration.
func (w *Wheel) Config() (Config, error) {
	var c Config
	err := w.ioctl("get config", iocGetConfig, unsafe.Pointer(&c))
	return c, err
}

// SetConfig replaces the whole configuration: start from Config.
// Changing Tick or Clock while the wheel holds ids fails with EBUSY, as
// does a MaxIDs below the number of ids held.
func (w *Wheel) SetConfig(c Config) error {
	return w.ioctl("set config", iocSetConfig, unsafe.Pointer(&c))
}

// setNonZero sets the non-zero fields of c over the current configuration.
func (w *Wheel) setNonZero(c Config) error {
	cur, err := w.Config()
	if err != nil {
		return err
	}
	if c.Tick != 0 {
		cur.Tick = c.Tick
	}
	if c.Timeout != 0 {
		cur.Timeout = c.Timeout
	}
	if c.MaxIDs != 0 {
		cur.MaxIDs = c.MaxIDs
	}
	if c.Clock != 0 {
		cur.Clock = c.Clock
	}
	cur.Flags = c.Flags
	return w.SetConfig(cur)
}

// Now returns the current time on the wheel's clock, the time base of
// deadlines.
func (w *Wheel) Now() (time.Duration, error) {
	c, err := w.Config()
	if err != nil {
		return 0, err
	}
	var ts unix.Timespec
	if err := unix.ClockGettime(int32(c.Clock), &ts); err != nil {
		return 0, &Error{Op: "now", Err: err}
	}
	return time.Duration(ts.Nano()), nil
}

// Touch (re-)arms each id at now + the wheel's timeout, with one
// write(2): a new id gets data 0, an id already present keeps its data
// (an expired one loses its unread event).  It returns the
// number of ids that took effect, ids[:n]; n < len(ids) only with an
// error (ENOSPC at the cap, ENOMEM).
func (w *Wheel) Touch(ids ...uint64) (int, error) {
	done := 0
	var werr error
	err := w.rc.Write(func(fd uintptr) bool {
		for done < len(ids) {
			p := unsafe.Slice((*byte)(unsafe.Pointer(&ids[done])), (len(ids)-done)*8)
			n, err := unix.Write(int(fd), p)
			switch {
			case err == unix.EINTR:
				continue
			case err == unix.EAGAIN:
				return false // no room until the kernel grows the index
			case err != nil:
				werr = err
				return true
			case n <= 0 || n%8 != 0:
				werr = unix.EIO // not in the ABI: do not spin on it
				return true
			}
			// a short count: the next write reports the error
			done += n / 8
		}
		return true
	})
	if err != nil {
		return done, &Error{Op: "touch", Err: os.ErrClosed}
	}
	return done, opError("touch", werr)
}

// Arm arms each entry: its id at its timeout (or absolute deadline, with
// ArmAbsTime), with its data; an id already present is replaced unless
// ArmNoReplace.  It returns the number of entries that took effect,
// entries[:n]; on an error, entries[n] is the one that failed.
func (w *Wheel) Arm(entries ...Arm) (int, error) {
	done := 0
	for done < len(entries) {
		n, errno, err := batchIoctl(w.rc, iocArm, uintptr(unsafe.Pointer(&entries[done])), len(entries)-done)
		if err != nil {
			return done, &Error{Op: "arm", Err: os.ErrClosed}
		}
		done += int(n)
		if errno == unix.EINTR {
			continue // a signal stopped it at entries[done]
		}
		if errno != 0 {
			return done, &Error{Op: "arm", Err: errno}
		}
		break
	}
	return done, nil
}

// Cancel removes each id, armed or expired (its queued event is dropped),
// and returns the number of ids that were present.
func (w *Wheel) Cancel(ids ...uint64) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	n, errno, err := batchIoctl(w.rc, iocCancel, uintptr(unsafe.Pointer(&ids[0])), len(ids))
	if err != nil {
		return 0, &Error{Op: "cancel", Err: os.ErrClosed}
	}
	return int(n), opError("cancel", errnoError(errno))
}

// Query reports an id's deadline, data and state.  An absent id fails
// with an error that wraps unix.ENOENT.
func (w *Wheel) Query(id uint64) (Query, error) {
	q := Query{ID: id}
	err := w.ioctl("query", iocQuery, unsafe.Pointer(&q))
	return q, err
}

// Stats returns the wheel's counters.
func (w *Wheel) Stats() (Stats, error) {
	var s Stats
	err := w.ioctl("stats", iocGetStats, unsafe.Pointer(&s))
	return s, err
}

// readEvents reads up to len(ev) events; EAGAIN when none is queued.
func readEvents(fd uintptr, ev []Event) (int, error) {
	p := unsafe.Slice((*byte)(unsafe.Pointer(&ev[0])), len(ev)*eventSize)
	for {
		n, err := unix.Read(int(fd), p)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		return n / eventSize, nil
	}
}

// Read reads the events queued, up to len(ev), oldest first, without
// waiting: it returns 0 and no error when none is queued.
func (w *Wheel) Read(ev []Event) (int, error) {
	if len(ev) == 0 {
		return 0, &Error{Op: "read", Err: unix.EINVAL}
	}
	n := 0
	err := w.control("read", func(fd uintptr) error {
		var err error
		n, err = readEvents(fd, ev)
		if err == unix.EAGAIN {
			err = nil
		}
		return err
	})
	return n, err
}

// Wait reads up to len(ev) events, oldest first, waiting for at least one.
// The goroutine is parked in Go's poller while it waits.  Wait returns
// ctx.Err() if ctx ends first, and an error wrapping os.ErrClosed if the
// wheel is closed.  Several goroutines may wait on one wheel: each event
// goes to one of them.
func (w *Wheel) Wait(ctx context.Context, ev []Event) (int, error) {
	if len(ev) == 0 {
		return 0, &Error{Op: "wait", Err: unix.EINVAL}
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	release := w.watch(ctx)
	defer release()
	for {
		n := 0
		var rerr error
		err := w.rc.Read(func(fd uintptr) bool {
			if ctx.Err() != nil {
				return true
			}
			n, rerr = readEvents(fd, ev)
			if rerr == unix.EAGAIN {
				rerr = nil
				return false // park until the kernel wakes the poller
			}
			return true
		})
		if err == nil && rerr != nil {
			return 0, &Error{Op: "wait", Err: rerr}
		}
		if n > 0 {
			return n, nil
		}
		if cerr := ctx.Err(); cerr != nil {
			return 0, cerr
		}
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			return 0, &Error{Op: "wait", Err: os.ErrClosed}
		}
		// Another waiter's context ended: let it leave, then wait again.
		w.mu.Lock()
		kicked := w.kicked
		kicks := w.kicks
		w.mu.Unlock()
		if kicks > 0 {
			select {
			case <-kicked:
			case <-ctx.Done():
			}
		}
	}
}

// A goroutine blocked on a file in Go's poller can only be woken by the
// file's deadline, which is shared by every reader (and the one parked
// holds the file's read lock, the others queue behind it).  So when the
// context of a waiter ends, watch sets the read deadline in the past:
// every waiter comes out of the poller and the read lock; those whose
// context ended return, the others wait on w.kicked until the last of
// those has left and the deadline is cleared, then go back to the poller.
// The deadline is never seen in the past by a waiter with a live context
// once the kick is over.

// watch arranges for the end of ctx to kick the waiters; the function it
// returns must be called when the Wait is over.
func (w *Wheel) watch(ctx context.Context) func() {
	done := ctx.Done()
	if done == nil {
		return func() {}
	}
	stop := make(chan struct{})
	kicked, over := false, false
	go func() {
		select {
		case <-done:
			w.mu.Lock()
			if !over {
				kicked = true
				w.kicks++
				if w.kicks == 1 {
					w.kicked = make(chan struct{})
					w.f.SetReadDeadline(time.Unix(1, 0))
				}
			}
			w.mu.Unlock()
		case <-stop:
		}
	}()
	return func() {
		w.mu.Lock()
		over = true
		if kicked {
			w.kicks--
			if w.kicks == 0 {
				w.f.SetReadDeadline(time.Time{})
				close(w.kicked)
			}
		}
		w.mu.Unlock()
		close(stop)
	}
}

// Dump calls fn with every armed or expired id, in batches (each entry
// with ArmAbsTime and its absolute deadline), until the end or until fn
// returns an error, which Dump then returns as is.  The slice passed to fn
// is reused after fn returns.  Ids present for the whole dump appear
// exactly once; fed to Arm on a new wheel, the entries recreate it.
func (w *Wheel) Dump(fn func(entries []Arm) error) error {
	buf := make([]Arm, dumpBatch)
	var cursor uint64
	for {
		n, next, err := dumpIoctl(w.rc, uintptr(unsafe.Pointer(&buf[0])), len(buf), cursor)
		if err != nil {
			if !errors.As(err, new(unix.Errno)) {
				err = os.ErrClosed
			}
			return &Error{Op: "dump", Err: err}
		}
		if n == 0 {
			return nil
		}
		if n > uint64(len(buf)) {
			return &Error{Op: "dump", Err: unix.EIO}
		}
		if err := fn(buf[:n]); err != nil {
			return err
		}
		cursor = next
	}
}

// DumpAll returns every armed or expired id (see Dump).
func (w *Wheel) DumpAll() ([]Arm, error) {
	var all []Arm
	err := w.Dump(func(e []Arm) error {
		all = append(all, e...)
		return nil
	})
	return all, err
}
