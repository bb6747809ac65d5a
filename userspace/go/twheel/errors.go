// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT

package twheel

import (
	"errors"

	"golang.org/x/sys/unix"
)

// Error is the error of a wheel operation.  Err is the errno of the
// failing system call (a syscall.Errno, so errors.Is(err, unix.ENOENT)
// works), os.ErrClosed for a closed wheel, or the error of a snapshot
// file's I/O.
type Error struct {
	Op  string // "open", "arm", "query", "wait", "save", ...
	Err error
}

func (e *Error) Error() string {
	s := "twheel " + e.Op + ": " + e.Err.Error()
	if h := hint(e.Op, e.Err); h != "" {
		s += " (" + h + ")"
	}
	return s
}

// Unwrap returns e.Err.
func (e *Error) Unwrap() error { return e.Err }

// hint says what an errno means for twheel, where the generic text does
// not (as twheel_strerror(3) does).
func hint(op string, err error) string {
	var errno unix.Errno
	if !errors.As(err, &errno) {
		return ""
	}
	switch errno {
	case unix.ENOENT:
		if op == "open" {
			return "is the twheel module loaded?"
		}
		if op == "query" {
			return "no such id"
		}
	case unix.ENODEV, unix.ENXIO:
		return "is the twheel module loaded?"
	case unix.EBUSY:
		return "tick or clock cannot change while ids are held, or max_ids below the ids held"
	case unix.ENOSPC:
		return "max_ids, max_user_ids or max_ids_total reached"
	case unix.EEXIST:
		return "id already present, ArmNoReplace"
	case unix.ENOTTY:
		return "not a twheel file descriptor"
	}
	return ""
}

func opError(op string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Op: op, Err: err}
}

// errnoError is err as an error, nil for 0 (a nil Errno is not a nil error).
func errnoError(errno unix.Errno) error {
	if errno == 0 {
		return nil
	}
	return errno
}
