// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT

package twheel

import (
	"math"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// DevicePath is the character device that Open opens.
const DevicePath = "/dev/twheel"

// Defaults of a fresh wheel and the accepted ranges, as in
// uapi/linux/twheel.h (see twheel(4)).
const (
	DefaultTick    = time.Millisecond       // TWHEEL_DEFAULT_TICK_NS
	DefaultTimeout = 30 * time.Second       // TWHEEL_DEFAULT_TIMEOUT_NS
	DefaultMaxIDs  = 1 << 20                // TWHEEL_DEFAULT_MAX_IDS
	TickMin        = 100 * time.Microsecond // TWHEEL_TICK_MIN_NS
	TickMax        = time.Hour              // TWHEEL_TICK_MAX_NS
	MaxIDsLimit    = 1 << 32                // TWHEEL_MAX_IDS_LIMIT

	// DeadlineMax is the latest deadline, "never" (TWHEEL_DEADLINE_MAX):
	// deadlines beyond it are rejected with EINVAL and now + timeout
	// saturates at it.
	DeadlineMax = time.Duration(math.MaxInt64)
)

// The clocks a wheel can run on (Config.Clock).
const (
	ClockMonotonic = unix.CLOCK_MONOTONIC
	ClockBoottime  = unix.CLOCK_BOOTTIME
)

// ArmFlags are the flags of an Arm entry.
type ArmFlags uint32

const (
	// ArmAbsTime makes Arm.Timeout an absolute deadline on the wheel's
	// clock (as returned by Wheel.Now) instead of a timeout from now.
	ArmAbsTime ArmFlags = 0x1
	// ArmNoReplace fails the entry with EEXIST if the id is armed or
	// expired, instead of replacing its deadline and data.
	ArmNoReplace ArmFlags = 0x2
)

// State is the state of an id in the wheel (Query.State).
type State uint32

const (
	StateArmed   State = 1 // waiting for its deadline
	StateExpired State = 2 // its event is queued, not yet read
)

// String returns "armed", "expired", or the number for another value.
func (s State) String() string {
	switch s {
	case StateArmed:
		return "armed"
	case StateExpired:
		return "expired"
	}
	return "State(" + uitoa(uint64(s)) + ")"
}

func uitoa(v uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}

// Times on the wheel's clock (deadlines, Event.Expired, Wheel.Now) are
// time.Duration values counted from that clock's zero: the boot for
// CLOCK_MONOTONIC.  A time.Duration holds every valid deadline, up to
// DeadlineMax, so the structs below have the exact layout of their C
// counterparts (every field fixed-width, no implicit padding, the same on
// 32-bit and 64-bit) and are handed to the kernel as they are.

// Config is a wheel's configuration (struct twheel_config).
type Config struct {
	Tick    time.Duration // granularity, in [TickMin, TickMax]
	Timeout time.Duration // default timeout of Touch and of Arm with Timeout 0
	MaxIDs  uint64        // cap on ids held (armed + expired), in [1, MaxIDsLimit]
	Clock   uint32        // ClockMonotonic or ClockBoottime
	Flags   uint32        // must be 0
	_       [4]uint64
}

// Arm is one entry of Wheel.Arm (struct twheel_arm), and of Wheel.Dump.
type Arm struct {
	ID uint64
	// Timeout is the timeout from now (0: the wheel's default), or with
	// ArmAbsTime the absolute deadline on the wheel's clock.  A negative
	// value is rejected with EINVAL.
	Timeout time.Duration
	Data    uint64 // returned with the id's event
	Flags   ArmFlags
	_       uint32
}

// Query is what Wheel.Query reports of an id (struct twheel_query).
type Query struct {
	ID       uint64
	Deadline time.Duration // on the wheel's clock
	Data     uint64
	State    State
	_        uint32
}

// Stats are a wheel's counters (struct twheel_stats).  Counters only grow
// for the life of the wheel.
type Stats struct {
	Armed       uint64        // ids armed now
	Pending     uint64        // events queued, not yet read
	Touches     uint64        // ids touched through Touch (write)
	Arms        uint64        // entries applied by Arm
	Cancels     uint64        // ids removed by Cancel
	Expirations uint64        // ids that expired (events queued)
	Delivered   uint64        // events read
	TimerFires  uint64        // hrtimer callbacks
	LateMax     time.Duration // largest Expired - Deadline of an armed id
	MemBytes    uint64        // kernel memory held by the wheel
	Discarded   uint64        // queued events discarded by Touch, Arm or Cancel
	Reslots     uint64        // ids moved between slots
	Runs        uint64        // expiry batches, run by the calls on the wheel
	HoldMax     time.Duration // longest hold of the wheel lock by an expiry batch
	WorkRuns    uint64        // runs of the module's work item (upkeep, the edge)
	Work        time.Duration // time spent in those runs
	BPFTouches  uint64        // ids touched by BPF programs (bpf_twheel_touch)
	BPFAbsent   uint64        // BPF touches of ids the wheel did not have
	_           [2]uint64
}

// Event is one expiry (struct twheel_event).
type Event struct {
	ID       uint64
	Data     uint64
	Deadline time.Duration // the id's deadline, on the wheel's clock
	Expired  time.Duration // when it was queued; never before Deadline
}

// Late returns how long after its deadline the event was queued.
func (e Event) Late() time.Duration { return e.Expired - e.Deadline }

// batch is struct twheel_batch, the argument of ARM and CANCEL.
type batch struct {
	ptr   uint64
	count uint64
	done  uint64
	flags uint32
	_     [3]uint32
}

// dumpArg is struct twheel_dump, the argument of DUMP.
type dumpArg struct {
	ptr    uint64
	count  uint64
	done   uint64
	cursor uint64
	_      [2]uint64
}

const (
	iocMagic = 0xD7

	// The _IOC() encoding; the direction values are per architecture
	// (ioc_*.go).
	iocNRShift   = 0
	iocTypeShift = 8
	iocSizeShift = 16
)

// The ioctl requests of uapi/linux/twheel.h.
const (
	iocSetConfig = iocWrite<<iocDirShift | unsafe.Sizeof(Config{})<<iocSizeShift | iocMagic<<iocTypeShift | 0x00<<iocNRShift
	iocGetConfig = iocRead<<iocDirShift | unsafe.Sizeof(Config{})<<iocSizeShift | iocMagic<<iocTypeShift | 0x01<<iocNRShift
	iocArm       = (iocRead|iocWrite)<<iocDirShift | unsafe.Sizeof(batch{})<<iocSizeShift | iocMagic<<iocTypeShift | 0x02<<iocNRShift
	iocCancel    = (iocRead|iocWrite)<<iocDirShift | unsafe.Sizeof(batch{})<<iocSizeShift | iocMagic<<iocTypeShift | 0x03<<iocNRShift
	iocQuery     = (iocRead|iocWrite)<<iocDirShift | unsafe.Sizeof(Query{})<<iocSizeShift | iocMagic<<iocTypeShift | 0x04<<iocNRShift
	iocGetStats  = iocRead<<iocDirShift | unsafe.Sizeof(Stats{})<<iocSizeShift | iocMagic<<iocTypeShift | 0x05<<iocNRShift
	iocDump      = (iocRead|iocWrite)<<iocDirShift | unsafe.Sizeof(dumpArg{})<<iocSizeShift | iocMagic<<iocTypeShift | 0x06<<iocNRShift
)

const eventSize = int(unsafe.Sizeof(Event{}))
