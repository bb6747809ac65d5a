// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT

package twheel

// Tests against /dev/twheel: they skip where the module is not loaded,
// and run in the QEMU guest (userspace/go/run_guest.sh).

import (
	"context"
	"errors"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func openWheel(t testing.TB, cfg *Config) *Wheel {
	t.Helper()
	w, err := Open(cfg)
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENODEV) || errors.Is(err, unix.ENXIO) {
			t.Skipf("%v: the device tests run where the module is loaded", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func now(t testing.TB, w *Wheel) time.Duration {
	t.Helper()
	n, err := w.Now()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestDeviceConfig(t *testing.T) {
	w := openWheel(t, nil)
	c, err := w.Config()
	if err != nil {
		t.Fatal(err)
	}
	if c.Tick != DefaultTick || c.Timeout != DefaultTimeout || c.MaxIDs != DefaultMaxIDs ||
		c.Clock != ClockMonotonic || c.Flags != 0 {
		t.Fatalf("defaults: %+v", c)
	}

	w = openWheel(t, &Config{Tick: 10 * time.Millisecond, Timeout: 3 * time.Second})
	c, _ = w.Config()
	if c.Tick != 10*time.Millisecond || c.Timeout != 3*time.Second || c.MaxIDs != DefaultMaxIDs ||
		c.Clock != ClockMonotonic {
		t.Fatalf("Open with Tick and Timeout: %+v", c)
	}
	bad := c
	bad.Tick = TickMin - 1
	if err := w.SetConfig(bad); !errors.Is(err, unix.EINVAL) {
		t.Errorf("tick below TickMin: %v", err)
	}
	c.MaxIDs = 100
	if err := w.SetConfig(c); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Touch(1); err != nil {
		t.Fatal(err)
	}
	c.Tick = 20 * time.Millisecond
	if err := w.SetConfig(c); !errors.Is(err, unix.EBUSY) {
		t.Errorf("tick change while ids are held: %v", err)
	}

	b := openWheel(t, &Config{Clock: ClockBoottime})
	if c, _ := b.Config(); c.Clock != ClockBoottime {
		t.Errorf("Open with ClockBoottime: %+v", c)
	}
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts)
	if n := now(t, b); n < time.Duration(ts.Nano()) {
		t.Errorf("Now on CLOCK_BOOTTIME went back: %v < %v", n, time.Duration(ts.Nano()))
	}
	if _, err := Open(&Config{Clock: 12345}); !errors.Is(err, unix.EINVAL) {
		t.Errorf("Open with a bad clock: %v", err)
	}
}

func TestDeviceTouchQueryCancel(t *testing.T) {
	w := openWheel(t, &Config{Timeout: 10 * time.Second})
	before := now(t, w)
	if n, err := w.Touch(1, 2, 3); n != 3 || err != nil {
		t.Fatalf("Touch: %d, %v", n, err)
	}
	after := now(t, w)
	q, err := w.Query(2)
	if err != nil {
		t.Fatal(err)
	}
	if q.ID != 2 || q.State != StateArmed || q.Data != 0 ||
		q.Deadline < before+10*time.Second || q.Deadline > after+10*time.Second {
		t.Fatalf("Query: %+v (touched between %v and %v)", q, before, after)
	}
	if n, err := w.Cancel(2, 99); n != 1 || err != nil {
		t.Fatalf("Cancel: %d, %v", n, err)
	}
	_, err = w.Query(2)
	if !errors.Is(err, unix.ENOENT) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Query of a cancelled id: %v", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Op != "query" {
		t.Fatalf("Query error: %#v", err)
	}
	st, err := w.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Armed != 2 || st.Touches != 3 || st.Cancels != 1 || st.MemBytes == 0 {
		t.Errorf("Stats: %+v", st)
	}
	if n, err := w.Touch(); n != 0 || err != nil {
		t.Errorf("Touch of nothing: %d, %v", n, err)
	}
}

func TestDeviceArm(t *testing.T) {
	w := openWheel(t, &Config{Timeout: 20 * time.Second})
	t0 := now(t, w)
	n, err := w.Arm(Arm{ID: 1, Timeout: 5 * time.Second, Data: 11}, Arm{ID: 2, Data: 22})
	if n != 2 || err != nil {
		t.Fatalf("Arm: %d, %v", n, err)
	}
	q1, _ := w.Query(1)
	q2, _ := w.Query(2)
	if q1.Data != 11 || q1.Deadline < t0+5*time.Second || q1.Deadline > t0+6*time.Second {
		t.Errorf("id 1: %+v", q1)
	}
	if q2.Data != 22 || q2.Deadline < t0+20*time.Second || q2.Deadline > t0+21*time.Second {
		t.Errorf("id 2 (default timeout): %+v", q2)
	}
	// a touch keeps the data
	w.Touch(1)
	if q, _ := w.Query(1); q.Data != 11 || q.Deadline < t0+20*time.Second {
		t.Errorf("id 1 after a touch: %+v", q)
	}

	n, err = w.Arm(Arm{ID: 3}, Arm{ID: 1, Flags: ArmNoReplace}, Arm{ID: 4})
	if n != 1 || !errors.Is(err, unix.EEXIST) {
		t.Fatalf("ArmNoReplace of a present id: %d, %v", n, err)
	}
	if _, err := w.Query(4); !errors.Is(err, unix.ENOENT) {
		t.Errorf("the entry after the failing one took effect: %v", err)
	}

	at := now(t, w) + time.Hour
	if _, err := w.Arm(Arm{ID: 5, Timeout: at, Data: 55, Flags: ArmAbsTime}); err != nil {
		t.Fatal(err)
	}
	if q, _ := w.Query(5); q.Deadline != at {
		t.Errorf("ArmAbsTime: deadline %v, want %v", q.Deadline, at)
	}
	if _, err := w.Arm(Arm{ID: 6, Timeout: DeadlineMax, Flags: ArmAbsTime}); err != nil {
		t.Errorf("DeadlineMax: %v", err)
	}
	if n, err := w.Arm(Arm{ID: 7, Timeout: -1}); n != 0 || !errors.Is(err, unix.EINVAL) {
		t.Errorf("a negative timeout: %d, %v", n, err)
	}
	if n, err := w.Arm(); n != 0 || err != nil {
		t.Errorf("Arm of nothing: %d, %v", n, err)
	}
}

func TestDeviceCap(t *testing.T) {
	w := openWheel(t, &Config{MaxIDs: 10})
	ids := make([]uint64, 20)
	for i := range ids {
		ids[i] = uint64(i)
	}
	n, err := w.Touch(ids...)
	if n != 10 || !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("Touch past MaxIDs: %d, %v", n, err)
	}
	entries := make([]Arm, 5)
	for i := range entries {
		entries[i] = Arm{ID: uint64(8 + i)}
	}
	if n, err := w.Arm(entries...); n != 2 || !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("Arm past MaxIDs: %d, %v", n, err)
	}
}

func TestDeviceWaitExpiry(t *testing.T) {
	w := openWheel(t, &Config{Timeout: 50 * time.Millisecond})
	t0 := now(t, w)
	if _, err := w.Arm(Arm{ID: 1, Data: 10}, Arm{ID: 2, Timeout: 100 * time.Millisecond, Data: 20}); err != nil {
		t.Fatal(err)
	}
	ev := make([]Event, 4)
	if n, err := w.Read(ev); n != 0 || err != nil {
		t.Fatalf("Read before any expiry: %d, %v", n, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var got []Event
	for len(got) < 2 {
		n, err := w.Wait(ctx, ev)
		if err != nil {
			t.Fatalf("Wait: %v (got %+v)", err, got)
		}
		got = append(got, ev[:n]...)
	}
	seen := now(t, w)
	for i, e := range got {
		want := Event{ID: uint64(i + 1), Data: uint64(10 * (i + 1))}
		if e.ID != want.ID || e.Data != want.Data {
			t.Errorf("event %d: %+v, want id %d data %d", i, e, want.ID, want.Data)
		}
		if e.Deadline < t0+time.Duration(i+1)*50*time.Millisecond || e.Expired < e.Deadline ||
			seen < e.Deadline || e.Late() < 0 {
			t.Errorf("event %d early: %+v (armed at %v, seen at %v)", i, e, t0, seen)
		}
	}
	if _, err := w.Query(1); !errors.Is(err, unix.ENOENT) {
		t.Errorf("an id read from the queue is still there: %v", err)
	}
	if st, _ := w.Stats(); st.Expirations != 2 || st.Delivered != 2 || st.Pending != 0 {
		t.Errorf("Stats: %+v", st)
	}

	// an expired id shows as such until read; Read takes it without waiting
	w.Arm(Arm{ID: 3, Timeout: time.Millisecond})
	time.Sleep(100 * time.Millisecond)
	if q, err := w.Query(3); err != nil || q.State != StateExpired {
		t.Fatalf("Query of an expired id: %+v, %v", q, err)
	}
	if n, err := w.Read(ev); n != 1 || err != nil || ev[0].ID != 3 {
		t.Fatalf("Read: %d, %v, %+v", n, err, ev[0])
	}
}

func TestDeviceWaitContext(t *testing.T) {
	w := openWheel(t, nil)
	w.Touch(1) // 30 s: does not expire during the test
	// t0 before the context: its 50 ms start no later
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	n, err := w.Wait(ctx, make([]Event, 1))
	if n != 0 || !errors.Is(err, context.DeadlineExceeded) || time.Since(t0) < 50*time.Millisecond {
		t.Fatalf("Wait with a timeout: %d, %v after %v", n, err, time.Since(t0))
	}
	ctx, cancel = context.WithCancel(context.Background())
	ch := goWait(ctx, w)
	time.Sleep(20 * time.Millisecond)
	cancel()
	if r := recvWithin(t, ch, 5*time.Second, "cancelled Wait"); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled Wait: %+v", r)
	}
}

// Waiters on one wheel, half of them cancelled while they wait: those
// return, the others get the events.
func TestDeviceWaitCancelOneOfMany(t *testing.T) {
	w := openWheel(t, nil)
	checkCancelOneOfMany(t, w, 4, func(i int) {
		if _, err := w.Arm(Arm{ID: uint64(100 + i), Timeout: time.Duration(i+1) * 10 * time.Millisecond}); err != nil {
			t.Error(err)
		}
	})
}

func TestDeviceCloseWakesWaiter(t *testing.T) {
	w := openWheel(t, nil)
	ch := goWait(context.Background(), w)
	time.Sleep(20 * time.Millisecond)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if r := recvWithin(t, ch, 5*time.Second, "Wait on a closed wheel"); !errors.Is(r.err, os.ErrClosed) {
		t.Fatalf("Wait on a closed wheel: %+v", r)
	}
	if _, err := w.Query(1); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Query on a closed wheel: %v", err)
	}
}

// Goroutines blocked in Wait are parked in the poller: 200 of them, on
// 200 wheels and then on one, do not take 200 OS threads.
func TestDeviceWaitParks(t *testing.T) {
	const n = 200
	wheels := make([]*Wheel, n)
	for i := range wheels {
		wheels[i] = openWheel(t, nil)
	}
	wake := func(ws []*Wheel, ids int) func() {
		return func() {
			for _, w := range ws {
				for i := 0; i < ids; i++ {
					if _, err := w.Arm(Arm{ID: uint64(i), Timeout: time.Millisecond}); err != nil {
						t.Error(err)
					}
				}
			}
		}
	}
	checkParked(t, wheels, 1, wake(wheels, 1))
	checkParked(t, wheels[:1], n, wake(wheels[:1], n))
}

func TestDeviceFromFD(t *testing.T) {
	openWheel(t, nil) // skips without the device
	fd, err := unix.Open(DevicePath, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	w, err := FromFD(fd)
	if err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	defer w.Close()
	if fl, _ := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); fl&unix.O_NONBLOCK == 0 {
		t.Error("FromFD left the descriptor blocking")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := w.Wait(ctx, make([]Event, 1)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait: %v", err)
	}
	null, _ := unix.Open("/dev/null", unix.O_RDWR|unix.O_CLOEXEC, 0)
	defer unix.Close(null)
	if _, err := FromFD(null); !errors.Is(err, unix.ENOTTY) {
		t.Errorf("FromFD of /dev/null: %v", err)
	}
}

func TestDeviceDumpSaveRestore(t *testing.T) {
	w := openWheel(t, &Config{Timeout: time.Hour})
	const n = 1000
	t0 := now(t, w)
	entries := make([]Arm, n)
	for i := range entries {
		// a minute ahead and more: nothing expires during the test
		entries[i] = Arm{ID: uint64(i) * 7919, Timeout: time.Duration(60+i) * time.Second, Data: uint64(i)}
	}
	entries[n-1] = Arm{ID: 1 << 63, Timeout: DeadlineMax, Data: 42, Flags: ArmAbsTime}
	if k, err := w.Arm(entries...); k != n || err != nil {
		t.Fatalf("Arm: %d, %v", k, err)
	}
	all, err := w.DumpAll()
	if err != nil || len(all) != n {
		t.Fatalf("DumpAll: %d entries, %v", len(all), err)
	}
	byID := map[uint64]Arm{}
	for _, a := range all {
		if a.Flags != ArmAbsTime {
			t.Fatalf("dump entry without ArmAbsTime: %+v", a)
		}
		byID[a.ID] = a
	}
	for i, e := range entries[:n-1] {
		a, ok := byID[e.ID]
		if !ok || a.Data != uint64(i) || a.Timeout < t0+e.Timeout || a.Timeout > t0+e.Timeout+time.Second {
			t.Fatalf("dump of id %d: %+v", e.ID, a)
		}
	}
	stop := errors.New("stop")
	calls := 0
	if err := w.Dump(func([]Arm) error { calls++; return stop }); err != stop || calls != 1 {
		t.Errorf("Dump stopped by fn: %v after %d calls", err, calls)
	}

	path := filepath.Join(t.TempDir(), "wheel.snap")
	if err := w.Save(path); err != nil {
		t.Fatal(err)
	}
	info, err := CheckSnapshot(path)
	if err != nil || info.Count != n || info.Timeout != time.Hour || info.Clock != ClockMonotonic {
		t.Fatalf("CheckSnapshot: %+v, %v", info, err)
	}
	if ctl, _ := filepath.Abs("../../twheelctl/twheelctl"); fileExists(ctl) {
		if out, err := exec.Command(ctl, "check", path).CombinedOutput(); err != nil {
			t.Errorf("twheelctl check: %v\n%s", err, out)
		}
	}

	r := openWheel(t, nil)
	k, err := r.Restore(path)
	if k != n || err != nil {
		t.Fatalf("Restore: %d, %v", k, err)
	}
	for _, a := range all {
		q, err := r.Query(a.ID)
		if err != nil || q.Data != a.Data {
			t.Fatalf("restored id %d: %+v, %v", a.ID, q, err)
		}
		// each conversion reads three clocks: allow for a preempted vCPU
		d := q.Deadline - a.Timeout
		if (a.Timeout == DeadlineMax && q.Deadline != DeadlineMax) || d < -50*time.Millisecond || d > 50*time.Millisecond {
			t.Fatalf("restored id %d: deadline %v, saved %v", a.ID, q.Deadline, a.Timeout)
		}
	}

	// a corrupt file arms nothing
	data, _ := os.ReadFile(path)
	data[len(data)-1]++
	os.WriteFile(path, data, 0o600)
	e := openWheel(t, nil)
	var se *SnapshotError
	if k, err := e.Restore(path); k != 0 || !errors.As(err, &se) || !errors.Is(err, unix.EBADMSG) {
		t.Fatalf("Restore of a corrupt file: %d, %v", k, err)
	}
	if st, _ := e.Stats(); st.Armed != 0 {
		t.Errorf("a corrupt file armed %d ids", st.Armed)
	}

	// into a wheel too small: the first ids of the file, in deadline order
	if err := w.Save(path); err != nil {
		t.Fatal(err)
	}
	small := openWheel(t, &Config{MaxIDs: 10})
	if k, err := small.Restore(path); k != 10 || !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("Restore into 10 ids: %d, %v", k, err)
	}
	if _, err := small.Query(entries[9].ID); err != nil {
		t.Errorf("the 10th earliest id is missing: %v", err)
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Goroutines that touch, arm, cancel and query while others wait and
// read: run under the race detector.  Each id's events are counted: an id
// expires at most once per arm.
func TestDeviceConcurrent(t *testing.T) {
	w := openWheel(t, &Config{Timeout: 5 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	events := 0
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) { // writers
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(g)))
			for ctx.Err() == nil {
				id := uint64(rng.Intn(1000))
				var err error
				switch rng.Intn(4) {
				case 0:
					_, err = w.Touch(id, id+1000)
				case 1:
					_, err = w.Arm(Arm{ID: id, Timeout: time.Duration(rng.Intn(10)) * time.Millisecond, Data: id})
				case 2:
					_, err = w.Cancel(id)
				case 3:
					_, err = w.Query(id)
					if errors.Is(err, unix.ENOENT) {
						err = nil
					}
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		}(g)
	}
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func(g int) { // readers
			defer wg.Done()
			ev := make([]Event, 16)
			for {
				var n int
				var err error
				if g == 0 {
					n, err = w.Read(ev)
					time.Sleep(time.Millisecond)
				} else {
					n, err = w.Wait(ctx, ev)
				}
				for _, e := range ev[:n] {
					if e.Expired < e.Deadline {
						t.Errorf("event before its deadline: %+v", e)
					}
				}
				mu.Lock()
				events += n
				mu.Unlock()
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	st, err := w.Stats()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d events read; %+v", events, st)
	if events == 0 || st.Delivered != uint64(events) {
		t.Errorf("read %d events, the wheel delivered %d", events, st.Delivered)
	}
}
