// SPDX-License-Identifier: MIT

// Command idle-reaper is a TCP server on 127.0.0.1 that closes connections
// silent for -timeout, with one twheel for all of them: the Go port of
// userspace/examples/idle-reaper.c (seed 001).
//
// The C program multiplexes every socket with epoll.  In Go each
// connection has its goroutine, blocked in Read in the runtime poller;
// each read that returns data touches the connection's id.  One reaper
// goroutine waits on the wheel, in the same poller, and closes the
// connections whose ids expire.  A connection closed by its peer has its
// id cancelled.  Ids are a counter, never reused, so an event cannot name
// a newer connection.
//
// Without -serve, a load generator in the same process opens -conns
// connections; each pings every -interval, and a -quiet-fraction of them
// stops at a random time.  It checks that every quiet connection was
// closed no earlier than -timeout after its last ping and not much later,
// and that no active connection was closed.
//
// Exit status: 0 verified, 1 verification failed, 2 usage or setup error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"net"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"twheel/twheel"
)

type options struct {
	conns     int
	timeout   time.Duration
	interval  time.Duration
	quietFrac float64
	duration  time.Duration
	tick      time.Duration
	maxLate   time.Duration
	port      int
	seed      int64
	serve     bool
	quietFlag bool
}

// --------------------------------------------------------------- server

// conn is one accepted connection.
type conn struct {
	id     uint64
	nc     net.Conn
	last   atomic.Int64 // wheel clock before the touch of its latest data
	reaped atomic.Bool  // closed by the reaper
}

type server struct {
	w       *twheel.Wheel
	timeout time.Duration
	verbose bool

	mu     sync.Mutex
	conns  map[uint64]*conn
	nextID uint64

	accepted, closedIdle, closedPeer, rescued, stale, errs atomic.Int64
	lateMax                                                atomic.Int64
}

func (s *server) now() time.Duration {
	t, err := s.w.Now()
	if err != nil {
		panic(err)
	}
	return t
}

// accept registers each new connection and arms its id.
func (s *server) accept(ln net.Listener) {
	for {
		nc, err := ln.Accept()
		if err != nil {
			return // the listener was closed
		}
		s.mu.Lock()
		s.nextID++
		c := &conn{id: s.nextID, nc: nc}
		s.conns[c.id] = c
		s.mu.Unlock()
		s.accepted.Add(1)
		c.last.Store(int64(s.now()))
		if _, err := s.w.Touch(c.id); err != nil {
			fmt.Fprintln(os.Stderr, "idle-reaper:", err)
			s.errs.Add(1)
		}
		go s.serveConn(c)
	}
}

// serveConn reads what the peer sends; each read with data touches the id.
func (s *server) serveConn(c *conn) {
	buf := make([]byte, 4096)
	for {
		n, err := c.nc.Read(buf)
		if n > 0 {
			c.last.Store(int64(s.now())) // before the touch: see reap
			if _, err := s.w.Touch(c.id); err != nil {
				s.errs.Add(1)
			}
		}
		if err != nil {
			if c.reaped.Load() {
				return
			}
			s.w.Cancel(c.id)
			s.forget(c)
			s.closedPeer.Add(1)
			c.nc.Close()
			return
		}
	}
}

func (s *server) forget(c *conn) {
	s.mu.Lock()
	delete(s.conns, c.id)
	s.mu.Unlock()
}

// reap closes the connections whose ids expire, until ctx ends.
func (s *server) reap(ctx context.Context) {
	ev := make([]twheel.Event, 256)
	for {
		n, err := s.w.Wait(ctx, ev)
		if err != nil {
			if ctx.Err() == nil {
				fmt.Fprintln(os.Stderr, "idle-reaper:", err)
				s.errs.Add(1)
			}
			return
		}
		now := s.now()
		for _, e := range ev[:n] {
			s.mu.Lock()
			c := s.conns[e.ID]
			s.mu.Unlock()
			if c == nil {
				s.stale.Add(1) // its peer closed it meanwhile
				continue
			}
			// Data read after this deadline was set: the connection's
			// goroutine stored last, then touched (or is about to), and
			// the id is armed again.
			idle := now - time.Duration(c.last.Load())
			if idle < s.timeout {
				s.rescued.Add(1)
				continue
			}
			if late := int64(idle - s.timeout); late > s.lateMax.Load() {
				s.lateMax.Store(late)
			}
			c.reaped.Store(true)
			s.forget(c)
			c.nc.Close()
			s.closedIdle.Add(1)
			if s.verbose {
				fmt.Printf("closed idle connection %d after %v\n", c.id, idle.Round(time.Millisecond))
			}
		}
	}
}

// ------------------------------------------------------- load generator

// outcome is what one client connection saw.
type outcome struct {
	quiet  bool
	closed bool          // by the server (EOF or reset)
	idle   time.Duration // from its last ping to the close
}

// client runs one connection: a ping every interval, from phase on,
// until end or, for a quiet one, until quietAt; then it waits for the
// server to close it (a quiet one, up to maxLate after end).
func client(addr string, o *options, quiet bool, quietAt, end time.Time, phase time.Duration,
	dialing chan struct{}) outcome {
	dialing <- struct{}{}
	// the server may accept, and arm the id, before Dial returns
	lastSend := time.Now()
	nc, err := net.Dial("tcp", addr)
	<-dialing
	if err != nil {
		fmt.Fprintln(os.Stderr, "idle-reaper: load:", err)
		os.Exit(2)
	}
	defer nc.Close()
	next := time.Now().Add(phase)
	stopAt := end
	if quiet {
		stopAt = quietAt
	}
	buf := make([]byte, 64)
	for {
		pinging := next.Before(stopAt)
		switch {
		case pinging:
			nc.SetReadDeadline(next)
		case quiet:
			nc.SetReadDeadline(end.Add(o.maxLate))
		default:
			nc.SetReadDeadline(end)
		}
		_, err := nc.Read(buf)
		var ne net.Error
		switch {
		case err == nil:
			continue // the server sends nothing
		case errors.As(err, &ne) && ne.Timeout() && pinging:
			before := time.Now()
			if _, err := nc.Write([]byte("ping\n")); err == nil {
				lastSend = before
			}
			next = next.Add(o.interval)
			if now := time.Now(); next.Before(now) {
				next = now.Add(o.interval)
			}
		case errors.As(err, &ne) && ne.Timeout():
			return outcome{quiet: quiet} // still open at the end
		default:
			return outcome{quiet: quiet, closed: true, idle: time.Since(lastSend)}
		}
	}
}

type loadResult struct {
	quiet, quietClosed, activeClosed, activeGap, early, tooLate int
	lateMax                                                     time.Duration
}

// add counts one connection's outcome.
func (r *loadResult) add(x outcome, o *options) {
	switch {
	case x.quiet:
		r.quiet++
		if !x.closed {
			return // missing
		}
		r.quietClosed++
		if x.idle < o.timeout {
			r.early++
			fmt.Fprintf(os.Stderr, "load: EARLY close: %v after the last ping\n", x.idle)
			return
		}
		if late := x.idle - o.timeout; late > r.lateMax {
			r.lateMax = late
		}
		if x.idle-o.timeout > o.maxLate {
			r.tooLate++
		}
	case !x.closed:
	case x.idle >= o.timeout:
		r.activeGap++ // its goroutine fell behind its pings
	default:
		r.activeClosed++
		fmt.Fprintf(os.Stderr, "load: active connection closed %v after its last ping\n", x.idle)
	}
}

// runLoad opens o.conns connections, 64 handshakes at a time, and waits
// for them.
func runLoad(addr string, o *options) loadResult {
	rng := rand.New(rand.NewSource(o.seed))
	start := time.Now()
	end := start.Add(o.duration)
	grace := time.Second + o.tick // quiet ones are due this long before the end
	outcomes := make(chan outcome)
	dialing := make(chan struct{}, 64)
	for i := 0; i < o.conns; i++ {
		quiet := rng.Float64() < o.quietFrac
		quietAt := start.Add(time.Duration(rng.Float64() * float64(o.duration-o.timeout-grace)))
		phase := time.Duration(rng.Float64() * float64(o.interval))
		go func() { outcomes <- client(addr, o, quiet, quietAt, end, phase, dialing) }()
	}
	var r loadResult
	for i := 0; i < o.conns; i++ {
		r.add(<-outcomes, o)
	}
	return r
}

// ----------------------------------------------------------------- main

func parse() *options {
	o := &options{}
	flag.IntVar(&o.conns, "conns", 2000, "connections of the load generator")
	flag.DurationVar(&o.timeout, "timeout", 30*time.Second, "idle timeout")
	flag.DurationVar(&o.interval, "interval", 0, "ping interval of active connections (default timeout/3)")
	flag.Float64Var(&o.quietFrac, "quiet-fraction", 0.3, "fraction of connections that stop pinging")
	flag.DurationVar(&o.duration, "duration", 0, "load time (default 2*timeout+5s)")
	flag.DurationVar(&o.tick, "tick", 10*time.Millisecond, "wheel tick")
	flag.DurationVar(&o.maxLate, "max-late", 5*time.Second, "lateness that fails the run")
	flag.IntVar(&o.port, "port", 0, "TCP port (0: any free port)")
	flag.Int64Var(&o.seed, "seed", 1, "seed of the load generator")
	flag.BoolVar(&o.serve, "serve", false, "only run the server, until SIGINT/SIGTERM")
	flag.BoolVar(&o.quietFlag, "quiet", false, "no progress lines")
	flag.Parse()
	if o.interval == 0 {
		o.interval = o.timeout / 3
	}
	if o.duration == 0 {
		o.duration = 2*o.timeout + 5*time.Second
	}
	switch {
	case flag.NArg() > 0:
		usage("unexpected argument %q", flag.Arg(0))
	case o.conns < 1 || o.timeout < 10*time.Millisecond || o.interval <= 0 || o.quietFrac < 0 || o.quietFrac > 1:
		usage("bad -conns, -timeout, -interval or -quiet-fraction")
	case 2*o.interval > o.timeout:
		usage("-interval must be at most half of -timeout")
	case !o.serve && o.duration < o.timeout+2*time.Second+o.tick:
		usage("-duration must be at least timeout + 2s + tick")
	}
	return o
}

func usage(format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "idle-reaper: "+format+"\n", a...)
	flag.Usage()
	os.Exit(2)
}

func check(name string, ok bool, format string, a ...interface{}) bool {
	verdict := "ok"
	if !ok {
		verdict = "FAILED"
	}
	fmt.Printf("  %-18s %s  [%s]\n", name, fmt.Sprintf(format, a...), verdict)
	return ok
}

func main() {
	o := parse()
	w, err := twheel.Open(&twheel.Config{Tick: o.tick, Timeout: o.timeout})
	if err != nil {
		fmt.Fprintln(os.Stderr, "idle-reaper:", err)
		os.Exit(2)
	}
	defer w.Close()
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", o.port))
	if err != nil {
		fmt.Fprintln(os.Stderr, "idle-reaper:", err)
		os.Exit(2)
	}
	s := &server{w: w, timeout: o.timeout, verbose: o.serve && !o.quietFlag, conns: map[uint64]*conn{}}
	fmt.Printf("idle-reaper: listening on %s, closing connections idle for %v (tick %v)\n",
		ln.Addr(), o.timeout, o.tick)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	reaped := make(chan struct{})
	go func() {
		s.reap(ctx)
		close(reaped)
	}()
	go s.accept(ln)

	if o.serve {
		<-ctx.Done()
		ln.Close()
		<-reaped
		fmt.Printf("idle-reaper: accepted %d, closed %d idle, %d by the peer\n",
			s.accepted.Load(), s.closedIdle.Load(), s.closedPeer.Load())
		return
	}
	if !o.quietFlag {
		fmt.Printf("load: %d connections, pinging every %v for %v\n", o.conns, o.interval, o.duration)
	}
	r := runLoad(ln.Addr().String(), o)
	// the server's side of the connections the load closed
	for i := 0; i < 200 && s.accepted.Load() > s.closedIdle.Load()+s.closedPeer.Load(); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	ln.Close()
	<-reaped
	st, _ := w.Stats()

	fmt.Println("idle-reaper: verification summary")
	ok := check("quiet -> closed", r.quietClosed == r.quiet,
		"%d of %d quiet connections closed by the server", r.quietClosed, r.quiet)
	ok = check("active stay open", r.activeClosed == 0,
		"%d active connections closed within a timeout of a ping", r.activeClosed) && ok
	ok = check("never early", r.early == 0, "%d closed before last ping + timeout", r.early) && ok
	ok = check("lateness", r.tooLate == 0, "close seen - (last ping + timeout): max %v, bound %v",
		r.lateMax.Round(time.Millisecond), o.maxLate) && ok
	ok = check("server", s.errs.Load() == 0,
		"accepted %d, closed %d idle, %d by the peer, %d saved by late data, %d errors",
		s.accepted.Load(), s.closedIdle.Load(), s.closedPeer.Load(), s.rescued.Load(), s.errs.Load()) && ok
	if r.activeGap > 0 {
		fmt.Printf("  note: %d active connections sent no ping for a whole timeout (the load fell behind)\n",
			r.activeGap)
	}
	fmt.Printf("  wheel              %d touches, %d expirations, %d cancels, late max %v\n",
		st.Touches, st.Expirations, st.Cancels, st.LateMax.Round(time.Microsecond))
	if ok {
		fmt.Println("idle-reaper: VERIFIED")
		return
	}
	fmt.Println("idle-reaper: VERIFICATION FAILED")
	os.Exit(1)
}
