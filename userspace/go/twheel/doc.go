// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT

// Package twheel is the Go interface to /dev/twheel, the kernel's
// hierarchical timing wheel: hand it millions of timeouts on one file
// descriptor and read back the ids whose time has come.
//
// Each Wheel is one open of /dev/twheel, an independent wheel of 64-bit
// ids.  Touch re-arms ids at now + the wheel's timeout (the heartbeat
// case: a connection, a user, a session seen again); Arm sets ids at
// timeouts or deadlines of their own, with a 64-bit payload; Cancel
// removes them; Query, Stats and Dump look inside; Save and Restore keep
// a wheel across a restart in the snapshot format of libtwheel.  Wait
// returns the expired ids, oldest first.  These are the operations of the
// C library libtwheel(3), over the ABI of uapi/linux/twheel.h and
// twheel(4).
//
// The descriptor is non-blocking and registered with Go's runtime poller,
// like a socket: a goroutine in Wait is parked until the kernel queues an
// event, and does not hold an OS thread, so a program can wait on many
// wheels, or with many goroutines on one, at the cost of goroutines.
// Wait ends when its context.Context does.
//
// Times on a wheel's clock (CLOCK_MONOTONIC by default) are time.Duration
// values since that clock's zero: deadlines, Event.Expired, Wheel.Now.
// The structs have the exact layout of their C counterparts and go to the
// kernel as they are.
//
// Errors are *Error values that wrap the errno of the failing call, so
// errors.Is(err, unix.ENOENT) tells an absent id, unix.EEXIST an id that
// ArmNoReplace found, unix.ENOSPC a full wheel; a closed wheel gives
// os.ErrClosed, a corrupt snapshot a *SnapshotError (unix.EBADMSG).
//
// A wheel that closes idle connections:
//
//	w, err := twheel.Open(&twheel.Config{Timeout: 30 * time.Second})
//	if err != nil {
//		return err // errors.Is(err, unix.ENOENT): the module is not loaded
//	}
//	defer w.Close()
//
//	w.Touch(connID) // on every read that returned data
//
//	ev := make([]twheel.Event, 256)
//	for {
//		n, err := w.Wait(ctx, ev) // parks until ids expire, or ctx ends
//		if err != nil {
//			return err
//		}
//		for _, e := range ev[:n] {
//			closeConn(e.ID) // silent for 30 s
//		}
//	}
//
// userspace/go/examples has complete programs: idle-reaper (a TCP server
// closing idle connections, the Go port of the C example), conntimeout,
// cachettl and delayqueue (the connection timeout, cache TTL and delayed
// queue cases of seed 004).
package twheel
