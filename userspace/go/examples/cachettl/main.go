// SPDX-License-Identifier: MIT

// Command cachettl is seed 004's "cache expiry" case on twheel: a
// key-value cache whose keys expire after their TTL.
//
// The seed's version schedules a deletion callback per Set on a
// user-space wheel, so a key set twice is deleted by the first, stale,
// callback.  Here each key has one id for its life in the cache; Set arms
// it at an absolute deadline (an id re-armed loses any event still
// queued), and the expiry goroutine deletes a key only if the event's
// deadline is the key's current one.  Get checks the deadline itself, so
// a key is never served past its TTL even before the expiry goroutine
// has run.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"twheel/twheel"
)

// Cache maps string keys to values that expire.
type Cache struct {
	w     *twheel.Wheel
	mu    sync.Mutex
	items map[string]*item
	keys  map[uint64]string // id -> key
	next  uint64
}

type item struct {
	id       uint64
	value    string
	deadline time.Duration // on the wheel's clock
}

// New opens the cache's wheel (10 ms tick: TTLs are that precise).
func New() (*Cache, error) {
	w, err := twheel.Open(&twheel.Config{Tick: 10 * time.Millisecond})
	if err != nil {
		return nil, err
	}
	return &Cache{w: w, items: map[string]*item{}, keys: map[uint64]string{}}, nil
}

// Set stores value under key for ttl.
func (c *Cache) Set(key, value string, ttl time.Duration) error {
	now, err := c.w.Now()
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	it := c.items[key]
	if it == nil {
		c.next++
		it = &item{id: c.next}
	}
	deadline := now + ttl
	if _, err := c.w.Arm(twheel.Arm{ID: it.id, Timeout: deadline, Flags: twheel.ArmAbsTime}); err != nil {
		return err
	}
	it.value, it.deadline = value, deadline
	c.items[key], c.keys[it.id] = it, key
	return nil
}

// Get returns key's value if it has not expired.
func (c *Cache) Get(key string) (string, bool) {
	now, err := c.w.Now()
	if err != nil {
		return "", false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	it := c.items[key]
	if it == nil || now >= it.deadline {
		return "", false
	}
	return it.value, true
}

// Delete removes key.
func (c *Cache) Delete(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if it := c.items[key]; it != nil {
		c.w.Cancel(it.id)
		delete(c.items, key)
		delete(c.keys, it.id)
	}
}

// Len returns the number of keys held, expired ones not yet reaped included.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}

// Expire deletes keys as their TTLs end, until ctx ends; expired (called
// without the cache's lock held) reports each.
func (c *Cache) Expire(ctx context.Context, expired func(key string, late time.Duration)) error {
	ev := make([]twheel.Event, 256)
	for {
		n, err := c.w.Wait(ctx, ev)
		if err != nil {
			return err
		}
		var keys []string
		var late []time.Duration
		c.mu.Lock()
		for _, e := range ev[:n] {
			key, ok := c.keys[e.ID]
			// a Set after this event was read moved the deadline: keep
			if !ok || c.items[key].deadline != e.Deadline {
				continue
			}
			delete(c.items, key)
			delete(c.keys, e.ID)
			keys, late = append(keys, key), append(late, e.Late())
		}
		c.mu.Unlock()
		for i, key := range keys {
			expired(key, late[i])
		}
	}
}

// Close releases the wheel.
func (c *Cache) Close() error { return c.w.Close() }

func main() {
	c, err := New()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cachettl:", err)
		os.Exit(2)
	}
	defer c.Close()
	start := time.Now()
	since := func() time.Duration { return time.Since(start).Round(10 * time.Millisecond) }

	var mu sync.Mutex
	expiredAt := map[string]time.Duration{}
	expiredN := map[string]int{}
	pages := 0
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- c.Expire(ctx, func(key string, late time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			expiredAt[key] = time.Since(start)
			expiredN[key]++
			if strings.HasPrefix(key, "page:") {
				if pages++; pages%250 != 0 {
					return
				}
				key = fmt.Sprintf("%d pages", pages)
			}
			fmt.Printf("%6v  expired %-10s (queued %v after its deadline)\n", since(), key, late.Round(time.Microsecond))
		})
	}()

	must := func(err error) {
		if err != nil {
			fmt.Fprintln(os.Stderr, "cachettl:", err)
			os.Exit(2)
		}
	}
	for i := 0; i < 1000; i++ {
		must(c.Set(fmt.Sprintf("page:%d", i), "html", 400*time.Millisecond))
	}
	// the sessions' times count from here, however long the pages took
	t0 := time.Since(start)
	must(c.Set("session:1", "alice", 500*time.Millisecond))
	must(c.Set("session:2", "bob", 600*time.Millisecond))
	must(c.Set("config", "v1", time.Hour))
	fmt.Printf("%6v  set 1000 pages (400ms), session:1 (500ms), session:2 (600ms), config (1h): %d keys\n",
		since(), c.Len())

	ok := true
	want := func(key string, present bool) {
		_, got := c.Get(key)
		ok = ok && got == present
		fmt.Printf("%6v  get %-10s present %-5v (want %v)\n", since(), key, got, present)
	}
	sleepUntil := func(d time.Duration) { time.Sleep(time.Until(start.Add(t0 + d))) }

	sleepUntil(200 * time.Millisecond)
	must(c.Set("session:1", "alice", time.Second)) // refreshed: due at 1.2 s
	fmt.Printf("%6v  refreshed session:1 for 1s\n", since())
	sleepUntil(700 * time.Millisecond)
	want("session:1", true) // its first TTL has passed: the refresh holds it
	want("page:0", false)
	sleepUntil(1500 * time.Millisecond)
	want("session:1", false)
	want("session:2", false)
	want("config", true)
	for i := 0; i < 300 && c.Len() > 1; i++ { // the expiry goroutine catches up
		time.Sleep(10 * time.Millisecond)
	}
	left := c.Len()
	fmt.Printf("%6v  %d keys left\n", since(), left)
	cancel()
	<-done

	mu.Lock()
	defer mu.Unlock()
	check := func(what string, good bool) {
		ok = ok && good
		fmt.Printf("  %-46s %v\n", what, good)
	}
	fmt.Println("cachettl: verification")
	check("session:1 expired once, at its refreshed TTL", expiredN["session:1"] == 1 &&
		expiredAt["session:1"] >= t0+1200*time.Millisecond)
	check("session:2 expired at its TTL", expiredAt["session:2"] >= t0+600*time.Millisecond)
	check("the 1000 pages expired, none early", pages == 1000 && expiredAt["page:0"] >= 400*time.Millisecond)
	check("config is the only key left", left == 1)
	if !ok {
		fmt.Println("cachettl: FAILED")
		os.Exit(1)
	}
	fmt.Println("cachettl: ok")
}
