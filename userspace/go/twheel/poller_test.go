// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT

package twheel

// Wait, Read and Close over a pipe standing in for /dev/twheel: the pipe
// is a pollable descriptor that read() returns 32-byte records from, so
// these tests check the poller side (parking, context cancellation, one
// waiter among several cancelled, closing) on any machine.  The same
// properties are checked against the device in wheel_test.go.

import (
	"context"
	"errors"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// pipeWheel is a Wheel on the read end of a pipe; send writes events
// into it.
type pipeWheel struct {
	*Wheel
	wfd int
}

func newPipeWheel(t testing.TB) *pipeWheel {
	t.Helper()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	w, err := newWheel(p[0])
	if err != nil {
		unix.Close(p[1])
		t.Fatal(err)
	}
	pw := &pipeWheel{Wheel: w, wfd: p[1]}
	t.Cleanup(func() {
		w.Close()
		unix.Close(p[1])
	})
	return pw
}

// send writes events into the pipe, waiting (up to 10 s) while the pipe is
// full: on a slow machine the readers may fall 64 KiB behind the writer.
// Events are smaller than PIPE_BUF, so each write is whole or fails.
func (p *pipeWheel) send(t testing.TB, ev ...Event) {
	t.Helper()
	b := unsafe.Slice((*byte)(unsafe.Pointer(&ev[0])), len(ev)*eventSize)
	for {
		n, err := unix.Write(p.wfd, b)
		if err == unix.EAGAIN {
			fds := []unix.PollFd{{Fd: int32(p.wfd), Events: unix.POLLOUT}}
			if k, perr := unix.Poll(fds, 10000); k == 1 || perr == unix.EINTR {
				continue
			}
		}
		if err != nil || n != len(b) {
			t.Fatalf("write to the pipe: %d, %v", n, err)
		}
		return
	}
}

// threads returns the number of OS threads of this process.
func threads(t testing.TB) int {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Skipf("no /proc/self/task: %v", err)
	}
	return len(ents)
}

// waitResult is what a goroutine's Wait returned.
type waitResult struct {
	n   int
	ev  Event
	err error
}

func goWait(ctx context.Context, w *Wheel) <-chan waitResult {
	ch := make(chan waitResult, 1)
	go func() {
		ev := make([]Event, 1) // one event per waiter
		n, err := w.Wait(ctx, ev)
		ch <- waitResult{n, ev[0], err}
	}()
	return ch
}

func recvWithin(t *testing.T, ch <-chan waitResult, d time.Duration, what string) waitResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(d):
		t.Fatalf("%s: no return within %v", what, d)
	}
	return waitResult{}
}

func TestPipeWaitAndRead(t *testing.T) {
	w := newPipeWheel(t)
	ev := make([]Event, 8)
	if n, err := w.Read(ev); n != 0 || err != nil {
		t.Fatalf("Read of an empty queue: %d, %v", n, err)
	}
	w.send(t, Event{ID: 1, Data: 10}, Event{ID: 2, Data: 20})
	n, err := w.Wait(context.Background(), ev)
	if err != nil || n != 2 || ev[1].Data != 20 {
		t.Fatalf("Wait: %d %v %+v", n, err, ev[:n])
	}
	ch := goWait(context.Background(), w.Wheel)
	time.Sleep(20 * time.Millisecond)
	// Read does not queue behind the parked Wait
	done := make(chan struct{})
	go func() {
		w.Read(ev)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Read blocked behind a parked Wait")
	}
	w.send(t, Event{ID: 3})
	if r := recvWithin(t, ch, 5*time.Second, "Wait"); r.err != nil || r.ev.ID != 3 {
		t.Fatalf("Wait: %+v", r)
	}
	if _, err := w.Read(nil); !errors.Is(err, unix.EINVAL) {
		t.Errorf("Read(nil): %v", err)
	}
}

func TestPipeWaitContext(t *testing.T) {
	w := newPipeWheel(t)
	ctx, cancel := context.WithCancel(context.Background())
	ch := goWait(ctx, w.Wheel)
	time.Sleep(20 * time.Millisecond)
	cancel()
	if r := recvWithin(t, ch, 5*time.Second, "cancelled Wait"); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled Wait: %+v", r)
	}
	t0 := time.Now() // before the context: its 30 ms start no later
	tctx, tcancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer tcancel()
	r := recvWithin(t, goWait(tctx, w.Wheel), 5*time.Second, "Wait with a timeout")
	if !errors.Is(r.err, context.DeadlineExceeded) || !errors.Is(tctx.Err(), context.DeadlineExceeded) ||
		time.Since(t0) < 30*time.Millisecond {
		t.Fatalf("Wait with a timeout: %+v after %v (context: %v)", r, time.Since(t0), tctx.Err())
	}
	// the kick is over: the deadline is clear and events flow again
	w.send(t, Event{ID: 4})
	if r := recvWithin(t, goWait(context.Background(), w.Wheel), 5*time.Second, "Wait"); r.ev.ID != 4 {
		t.Fatalf("Wait after the cancellations: %+v", r)
	}
	if n, err := w.Wait(ctx, make([]Event, 1)); n != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait on an ended context: %d %v", n, err)
	}
}

// checkCancelOneOfMany starts 2*stay goroutines waiting on w and cancels
// the context of every other one while they wait: those must return,
// whichever of them holds the poller, and the others must then get one
// event each of the stay that produce(i) makes.
func checkCancelOneOfMany(t *testing.T, w *Wheel, stay int, produce func(i int)) {
	var stayers, leavers []<-chan waitResult
	var cancels []context.CancelFunc
	for i := 0; i < 2*stay; i++ {
		if i%2 == 0 {
			stayers = append(stayers, goWait(context.Background(), w))
			continue
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancels = append(cancels, cancel)
		leavers = append(leavers, goWait(ctx, w))
	}
	time.Sleep(50 * time.Millisecond)
	for i, c := range cancels {
		c()
		if r := recvWithin(t, leavers[i], 5*time.Second, "cancelled waiter"); !errors.Is(r.err, context.Canceled) {
			t.Fatalf("cancelled waiter: %+v", r)
		}
	}
	for i := 0; i < stay; i++ {
		produce(i)
	}
	seen := map[uint64]bool{}
	for _, ch := range stayers {
		r := recvWithin(t, ch, 10*time.Second, "waiter")
		if r.err != nil || r.n != 1 {
			t.Fatalf("waiter: %+v", r)
		}
		seen[r.ev.ID] = true
	}
	if len(seen) != stay {
		t.Fatalf("events delivered: %v", seen)
	}
}

func TestPipeWaitCancelOneOfMany(t *testing.T) {
	w := newPipeWheel(t)
	checkCancelOneOfMany(t, w.Wheel, 4, func(i int) { w.send(t, Event{ID: uint64(100 + i)}) })
}

func TestPipeCloseWakesWaiters(t *testing.T) {
	w := newPipeWheel(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, b := goWait(context.Background(), w.Wheel), goWait(ctx, w.Wheel)
	time.Sleep(20 * time.Millisecond)
	w.Close()
	for _, ch := range []<-chan waitResult{a, b} {
		if r := recvWithin(t, ch, 5*time.Second, "Wait on a closed wheel"); !errors.Is(r.err, os.ErrClosed) {
			t.Fatalf("Wait on a closed wheel: %+v", r)
		}
	}
	if _, err := w.Read(make([]Event, 1)); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Read on a closed wheel: %v", err)
	}
	if _, err := w.Touch(1); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Touch on a closed wheel: %v", err)
	}
	if _, err := w.Config(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Config on a closed wheel: %v", err)
	}
}

// checkParked runs waiters goroutines blocked in Wait on wheels and checks
// that the process did not gain an OS thread per waiter, then wakes them.
func checkParked(t *testing.T, wheels []*Wheel, perWheel int, wake func()) {
	before := threads(t)
	var wg sync.WaitGroup
	results := make(chan error, len(wheels)*perWheel)
	for _, w := range wheels {
		for i := 0; i < perWheel; i++ {
			wg.Add(1)
			go func(w *Wheel) {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				_, err := w.Wait(ctx, make([]Event, 1))
				results <- err
			}(w)
		}
	}
	time.Sleep(300 * time.Millisecond) // every waiter is blocked by now
	during := threads(t)
	waiters := len(wheels) * perWheel
	t.Logf("%d waiters: %d OS threads before, %d while they wait (GOMAXPROCS %d)",
		waiters, before, during, runtime.GOMAXPROCS(0))
	if during-before > 16 {
		t.Errorf("%d waiters took %d more OS threads: Wait holds a thread", waiters, during-before)
	}
	wake()
	wg.Wait()
	close(results)
	for err := range results {
		if err != nil {
			t.Fatalf("Wait: %v", err)
		}
	}
}

func TestPipeWaitParks(t *testing.T) {
	const n = 200
	wheels := make([]*Wheel, n)
	pipes := make([]*pipeWheel, n)
	for i := range pipes {
		pipes[i] = newPipeWheel(t)
		wheels[i] = pipes[i].Wheel
	}
	checkParked(t, wheels, 1, func() {
		for _, p := range pipes {
			p.send(t, Event{ID: 1})
		}
	})
	shared := newPipeWheel(t)
	checkParked(t, []*Wheel{shared.Wheel}, n, func() {
		for i := 0; i < n; i++ {
			shared.send(t, Event{ID: uint64(i)})
		}
	})
}

// Waiters whose contexts end at random times while events stream in:
// every event is delivered exactly once and nobody hangs.
func TestPipeWaitChurn(t *testing.T) {
	w := newPipeWheel(t)
	const events, waiters = 3000, 16
	var mu sync.Mutex
	got := make(map[uint64]int)
	total := 0
	stop := make(chan struct{})
	var wg sync.WaitGroup
	// however the test ends, its waiters end before it does
	stopped := false
	defer func() {
		if !stopped {
			close(stop)
			wg.Wait()
		}
	}()
	for i := 0; i < waiters; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ev := make([]Event, 1+i%3)
			for k := 0; ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(k%7)*time.Millisecond)
				n, err := w.Wait(ctx, ev)
				cancel()
				if err != nil && !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("Wait: %v", err)
					return
				}
				mu.Lock()
				for _, e := range ev[:n] {
					got[e.ID]++
				}
				total += n
				mu.Unlock()
			}
		}(i)
	}
	for i := 0; i < events; i++ {
		w.send(t, Event{ID: uint64(i)})
		if i%100 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		n := total
		mu.Unlock()
		if n == events || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(stop)
	stopped = true
	wg.Wait()
	if total != events || len(got) != events {
		t.Fatalf("%d events delivered, %d distinct, want %d", total, len(got), events)
	}
}
