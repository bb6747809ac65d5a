// SPDX-License-Identifier: MIT

// Command conntimeout is seed 004's "network timeout management" case on
// twheel: a connection manager that closes each connection once it has
// been idle for its own timeout.
//
// The seed's version schedules one callback per connection on a
// user-space wheel and checks a map when it fires.  Here the kernel keeps
// the deadlines: Add arms the connection's id with its timeout, Activity
// arms it again (the deadline moves, the id stays), Remove cancels it, and
// Run waits on the wheel, in Go's poller, and closes what expires.
//
// The demo runs three in-memory connections (net.Pipe): one that talks
// every 100 ms and is removed by its owner, one that never talks, one
// that talks once; it checks that each was closed when it should be.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"twheel/twheel"
)

// Manager closes connections idle for longer than their timeout.
type Manager struct {
	w     *twheel.Wheel
	mu    sync.Mutex
	conns map[uint64]*Conn
	next  uint64
}

// Conn is a connection under the manager's watch.
type Conn struct {
	net.Conn
	ID      uint64
	Timeout time.Duration
}

// NewManager opens the manager's wheel (1 ms tick).
func NewManager() (*Manager, error) {
	w, err := twheel.Open(&twheel.Config{Tick: time.Millisecond})
	if err != nil {
		return nil, err
	}
	return &Manager{w: w, conns: make(map[uint64]*Conn)}, nil
}

// Add watches c: it is closed once idle for timeout.
func (m *Manager) Add(c net.Conn, timeout time.Duration) (*Conn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.next++
	mc := &Conn{Conn: c, ID: m.next, Timeout: timeout}
	if _, err := m.w.Arm(twheel.Arm{ID: mc.ID, Timeout: timeout}); err != nil {
		return nil, err
	}
	m.conns[mc.ID] = mc
	return mc, nil
}

// Activity restarts c's idle timeout.
func (m *Manager) Activity(c *Conn) error {
	_, err := m.w.Arm(twheel.Arm{ID: c.ID, Timeout: c.Timeout})
	return err
}

// Remove stops watching c (its owner closes it).
func (m *Manager) Remove(c *Conn) {
	m.mu.Lock()
	delete(m.conns, c.ID)
	m.mu.Unlock()
	m.w.Cancel(c.ID)
}

// Run closes the connections that time out, until ctx ends; closed
// reports each one.
func (m *Manager) Run(ctx context.Context, closed func(*Conn)) error {
	ev := make([]twheel.Event, 64)
	for {
		n, err := m.w.Wait(ctx, ev)
		if err != nil {
			return err
		}
		for _, e := range ev[:n] {
			m.mu.Lock()
			c := m.conns[e.ID]
			delete(m.conns, e.ID)
			m.mu.Unlock()
			if c != nil { // nil: removed while its event was in flight
				c.Close()
				closed(c)
			}
		}
	}
}

// Close releases the wheel.
func (m *Manager) Close() error { return m.w.Close() }

func main() {
	m, err := NewManager()
	if err != nil {
		fmt.Fprintln(os.Stderr, "conntimeout:", err)
		os.Exit(2)
	}
	defer m.Close()
	start := time.Now()
	since := func() time.Duration { return time.Since(start).Round(time.Millisecond) }

	var mu sync.Mutex
	closedAt := map[string]time.Duration{}
	names := map[uint64]string{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- m.Run(ctx, func(c *Conn) {
			mu.Lock()
			defer mu.Unlock()
			closedAt[names[c.ID]] = time.Since(start)
			fmt.Printf("%6v  manager: closed %s, idle for %v\n", since(), names[c.ID], c.Timeout)
		})
	}()

	// open adds a connection; its peer (the client side) reads until the
	// manager hangs up.
	var wg sync.WaitGroup
	open := func(name string, timeout time.Duration) (*Conn, net.Conn) {
		server, client := net.Pipe()
		c, err := m.Add(server, timeout)
		if err != nil {
			fmt.Fprintln(os.Stderr, "conntimeout:", err)
			os.Exit(2)
		}
		mu.Lock()
		names[c.ID] = name
		mu.Unlock()
		wg.Add(1)
		go func() { // the server side: drains what the client sends
			defer wg.Done()
			buf := make([]byte, 64)
			for {
				if _, err := c.Read(buf); err != nil {
					return
				}
				m.Activity(c)
			}
		}()
		return c, client
	}
	fmt.Printf("%6v  chatty (timeout 1s) talks every 100ms, then is removed at 1.2s\n", since())
	fmt.Printf("%6v  silent (timeout 500ms) never talks\n", since())
	fmt.Printf("%6v  once   (timeout 800ms) talks at 200ms\n", since())
	chatty, chattyClient := open("chatty", time.Second)
	_, silentClient := open("silent", 500*time.Millisecond)
	_, onceClient := open("once", 800*time.Millisecond)

	go func() {
		time.Sleep(200 * time.Millisecond)
		onceClient.Write([]byte("hello"))
	}()
	wg.Add(1)
	go func() { // the silent client sees the hang-up as EOF
		defer wg.Done()
		_, err := silentClient.Read(make([]byte, 1))
		fmt.Printf("%6v  silent client: read: %v\n", since(), err)
	}()
	for i := 0; i < 12; i++ {
		time.Sleep(100 * time.Millisecond)
		chattyClient.Write([]byte("ping"))
	}
	m.Remove(chatty)
	chatty.Close()
	fmt.Printf("%6v  owner: removed and closed chatty\n", since())

	for i := 0; i < 300; i++ { // "once" is due at 1s: wait up to 3s more
		mu.Lock()
		_, closed := closedAt["once"]
		mu.Unlock()
		if closed {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "conntimeout: Run:", err)
		os.Exit(1)
	}
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	ok := true
	expect := func(name string, lo, hi time.Duration) {
		at, closed := closedAt[name]
		good := closed && at >= lo && at <= hi
		ok = ok && good
		fmt.Printf("  %-7s closed by the manager at %-8v expected %v..%v: %v\n",
			name, at.Round(time.Millisecond), lo, hi, good)
	}
	fmt.Println("conntimeout: verification")
	expect("silent", 500*time.Millisecond, 2500*time.Millisecond)
	expect("once", 1000*time.Millisecond, 3000*time.Millisecond)
	_, closed := closedAt["chatty"]
	ok = ok && !closed
	fmt.Printf("  chatty  never closed by the manager: %v\n", !closed)
	if !ok {
		fmt.Println("conntimeout: FAILED")
		os.Exit(1)
	}
	fmt.Println("conntimeout: ok")
}
