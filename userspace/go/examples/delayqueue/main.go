// SPDX-License-Identifier: MIT

// Command delayqueue is seed 004's "delayed message queue" case on
// twheel: messages published with a delay come out of a channel when
// their delay has passed, in deadline order, and can be withdrawn until
// then.
//
// The seed's version runs a callback per message that pushes it into the
// channel.  Here each message is an id armed for its delay; Run waits on
// the wheel (the goroutine is parked in Go's poller, not holding a
// thread) and forwards the messages whose ids expire.  A cancelled
// context stops Run, the usual way to shut a goroutine down.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"twheel/twheel"
)

// Message is a message of the queue.
type Message struct {
	ID   uint64
	Body string
	Due  time.Duration // on the wheel's clock
}

// DelayQueue delivers messages once their delay has passed.
type DelayQueue struct {
	w    *twheel.Wheel
	out  chan Message
	mu   sync.Mutex
	msgs map[uint64]Message
	next uint64
}

// New opens the queue's wheel (1 ms tick).
func New() (*DelayQueue, error) {
	w, err := twheel.Open(&twheel.Config{Tick: time.Millisecond})
	if err != nil {
		return nil, err
	}
	return &DelayQueue{w: w, out: make(chan Message, 64), msgs: map[uint64]Message{}}, nil
}

// Publish queues body for delivery after delay; it returns the message's
// id, for Cancel.
func (q *DelayQueue) Publish(body string, delay time.Duration) (uint64, error) {
	now, err := q.w.Now()
	if err != nil {
		return 0, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.next++
	m := Message{ID: q.next, Body: body, Due: now + delay}
	if _, err := q.w.Arm(twheel.Arm{ID: m.ID, Timeout: m.Due, Flags: twheel.ArmAbsTime}); err != nil {
		return 0, err
	}
	q.msgs[m.ID] = m
	return m.ID, nil
}

// Cancel withdraws a message not yet delivered; false if it was.
func (q *DelayQueue) Cancel(id uint64) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	n, _ := q.w.Cancel(id)
	delete(q.msgs, id)
	return n == 1
}

// Messages is the channel of delivered messages, closed when Run returns.
func (q *DelayQueue) Messages() <-chan Message { return q.out }

// Run delivers messages until ctx ends.
func (q *DelayQueue) Run(ctx context.Context) error {
	defer close(q.out)
	ev := make([]twheel.Event, 64)
	for {
		n, err := q.w.Wait(ctx, ev)
		if err != nil {
			return err
		}
		for _, e := range ev[:n] { // oldest deadline first
			q.mu.Lock()
			m, ok := q.msgs[e.ID]
			delete(q.msgs, e.ID)
			q.mu.Unlock()
			if ok {
				q.out <- m
			}
		}
	}
}

// Close releases the wheel.
func (q *DelayQueue) Close() error { return q.w.Close() }

func main() {
	q, err := New()
	if err != nil {
		fmt.Fprintln(os.Stderr, "delayqueue:", err)
		os.Exit(2)
	}
	defer q.Close()
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- q.Run(ctx) }()

	start := time.Now()
	since := func() time.Duration { return time.Since(start).Round(time.Millisecond) }
	plan := []struct {
		body  string
		delay time.Duration
	}{
		{"remind: order 17 unpaid", 500 * time.Millisecond},
		{"retry: webhook 3", 100 * time.Millisecond},
		{"cancel: order 17", 900 * time.Millisecond},
		{"retry: webhook 4", 300 * time.Millisecond},
		{"deliver: message to bob", 700 * time.Millisecond},
	}
	ids := map[string]uint64{}
	for _, p := range plan {
		id, err := q.Publish(p.body, p.delay)
		if err != nil {
			fmt.Fprintln(os.Stderr, "delayqueue:", err)
			os.Exit(2)
		}
		ids[p.body] = id
		fmt.Printf("%6v  published %-26q in %v\n", since(), p.body, p.delay)
	}

	ok := true
	var got []string
	var lastDue time.Duration
	for m := range q.Messages() {
		now, _ := q.w.Now()
		fmt.Printf("%6v  delivered %-26q %v after its due time\n", since(), m.Body, (now - m.Due).Round(time.Microsecond))
		if now < m.Due || m.Due < lastDue {
			fmt.Println("  early or out of order")
			ok = false
		}
		lastDue = m.Due
		got = append(got, m.Body)
		if m.Body == "retry: webhook 4" {
			// the order was paid meanwhile: withdraw its cancellation
			fmt.Printf("%6v  order 17 paid: withdrawing %q: %v\n", since(), "cancel: order 17",
				q.Cancel(ids["cancel: order 17"]))
		}
		if m.Body == "deliver: message to bob" {
			time.Sleep(400 * time.Millisecond) // past the withdrawn message's time
			cancel()                           // shuts Run down, which closes the channel
		}
	}
	if err := <-ran; !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "delayqueue: Run:", err)
		ok = false
	}

	want := []string{"retry: webhook 3", "retry: webhook 4", "remind: order 17 unpaid", "deliver: message to bob"}
	same := len(got) == len(want)
	for i := range want {
		same = same && got[i] == want[i]
	}
	fmt.Printf("delayqueue: verification\n  delivered in due order, none early, the withdrawn one never: %v\n", ok && same)
	if !ok || !same {
		fmt.Printf("  got %q\n", got)
		fmt.Println("delayqueue: FAILED")
		os.Exit(1)
	}
	fmt.Println("delayqueue: ok")
}
