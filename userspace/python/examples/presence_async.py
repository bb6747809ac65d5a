#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""presence_async: the presence example as an asyncio service.

The logic of userspace/examples/presence.c (its "offline" half) on one
/dev/twheel and one event loop:

 - simulated clients (a task) send each user's heartbeat every --interval
   seconds over a Unix socket, users logging in spread over one interval;
   a --silent-fraction of them stops at a random round;
 - the service (two tasks) touches each heartbeat's user on the wheel
   (timeout --timeout) and marks the users whose ids expire offline,
   reading the wheel with `async for ev in wheel.events()`;
 - at the end every user is checked: exactly the silent ones went
   offline, once each, none before --timeout after its last heartbeat
   was sent, none later than --max-late-ms.

    PYTHONPATH=userspace/python \\
        userspace/python/examples/presence_async.py --users 100000 --timeout 3

Exit status: 0 verified, 1 verification failed, 2 usage or setup error.
"""

import argparse
import array
import asyncio
import errno
import random
import socket
import sys
import time

import twheel

MS = 1000000
SEC = 1000000000


class Plan:
    """Who heartbeats when.  Users are spread over `slots` slots of one
    interval, user u in slot u % slots; slot s sends its heartbeat k at
    t0 + s * interval / slots + k * interval.  Each slot keeps its users
    in an array, the active ones first, then the silent ones by
    decreasing stop round, so the users heartbeating in round k are a
    prefix of it: a heartbeat round is one slice, no loop over users."""

    def __init__(self, o):
        self.users = o.users
        self.interval = o.interval
        self.slots = min(max(o.interval // (100 * MS), 1), 100)
        rng = random.Random(o.seed)
        grace = SEC + o.tick + 200 * MS
        self.stop = {}      # silent user -> first round it does not send
        self.order, self.active, self.stops = [], [], []
        for s in range(self.slots):
            offset = s * o.interval // self.slots
            # the last heartbeat's deadline falls `grace` before the end
            rmax = max((o.duration - grace - o.timeout - offset)
                       // o.interval + 1, 1)
            active, silent = [], []
            for u in range(s, o.users, self.slots):
                if rng.random() < o.silent:
                    self.stop[u] = rng.randint(1, rmax)
                    silent.append(u)
                else:
                    active.append(u)
            silent.sort(key=self.stop.__getitem__, reverse=True)
            self.order.append(array.array("Q", active + silent))
            self.active.append(len(active))
            self.stops.append([self.stop[u] for u in silent])


class Service:
    def __init__(self, o, plan, wheel):
        self.o, self.plan, self.wheel = o, plan, wheel
        self.last_sent = {}             # silent user -> its last heartbeat
        self.offline = bytearray(o.users)
        self.sent = self.touched = self.logins = 0
        self.silent_off = self.false_off = self.dup = self.early = 0
        self.bad_id = self.touch_errors = 0
        self.late_kernel = self.late_service = self.lag = 0
        self.kmem = 0

    async def clients(self, sock, t0):
        """The users: slot after slot, round after round, forever."""
        loop = asyncio.get_running_loop()
        p, batch = self.plan, self.o.batch
        sending = [len(a) for a in p.order]
        for q in range(1 << 62):
            s, k = q % p.slots, q // p.slots
            t = t0 + s * p.interval // p.slots + k * p.interval
            now = time.monotonic_ns()
            if now < t:
                await asyncio.sleep((t - now) / SEC)
            else:
                self.lag = max(self.lag, now - t)
            order, stops, active = p.order[s], p.stops[s], p.active[s]
            n = sending[s]
            while n > active and stops[n - 1 - active] <= k:
                n -= 1
            sending[s] = n
            # those sending their last heartbeat: when it leaves
            t_sent, j = time.monotonic_ns(), n
            while j > active and stops[j - 1 - active] == k + 1:
                j -= 1
                self.last_sent[order[j]] = t_sent
            for i in range(0, n, batch):
                await loop.sock_sendall(
                    sock, order[i:min(i + batch, n)].tobytes())
            self.sent += n
            if k == 0:
                self.logins += n

    async def heartbeats(self, sock):
        """Each datagram of user ids: one touch of all of them."""
        loop = asyncio.get_running_loop()
        while True:
            data = await loop.sock_recv(sock, self.o.batch * 8)
            if not data:
                raise RuntimeError("the clients hung up")
            ids = array.array("Q")
            ids.frombytes(data)
            if self.wheel.touch(ids) != len(ids):
                self.touch_errors += 1
            self.touched += len(ids)

    async def expiries(self):
        """The wheel's expiries: users going offline."""
        o, timeout = self.o, self.o.timeout
        async for ev in self.wheel.events(batch=1024):
            now = time.monotonic_ns()
            u = ev.id
            if u >= o.users:
                self.bad_id += 1
                continue
            if self.offline[u]:
                self.dup += 1
                continue
            self.offline[u] = 1
            sent = self.last_sent.get(u)
            if sent is None:                # still heartbeating
                self.false_off += 1
                continue
            if (ev.expired_ns < ev.deadline_ns or now < ev.deadline_ns or
                    ev.deadline_ns < sent + timeout):
                self.early += 1
            self.late_kernel = max(self.late_kernel,
                                   ev.expired_ns - ev.deadline_ns)
            self.late_service = max(self.late_service,
                                    now - sent - timeout)
            self.silent_off += 1

    async def progress(self, t0):
        while True:
            await asyncio.sleep(1)
            st = self.wheel.stats()
            self.kmem = max(self.kmem, st.mem_bytes)
            if not self.o.quiet:
                off = self.silent_off + self.false_off
                print("[%5.1fs] online %7d  offline %7d  heartbeats %9d"
                      "  kmem %.1f MiB" % (
                          (time.monotonic_ns() - t0) / SEC,
                          self.logins - off, off, self.touched,
                          st.mem_bytes / (1 << 20)), flush=True)


async def serve(o, plan, wheel):
    svc = Service(o, plan, wheel)
    tx, rx = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    for sk in (tx, rx):
        sk.setblocking(False)
        sk.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 21)
        sk.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 21)
    t0 = time.monotonic_ns() + 200 * MS
    tasks = [asyncio.create_task(c) for c in (
        svc.clients(tx, t0), svc.heartbeats(rx), svc.expiries(),
        svc.progress(t0))]
    end = t0 + o.duration
    try:
        # run to the end, then up to --max-late-ms for the late ones
        while time.monotonic_ns() < end + o.max_late:
            if (time.monotonic_ns() >= end and
                    svc.silent_off == len(plan.stop)):
                break
            done = [t for t in tasks if t.done()]
            if done:
                done[0].result()    # a task that failed: its exception
                raise RuntimeError("a task ended")
            await asyncio.sleep(0.05)
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        tx.close()
        rx.close()
    svc.wall = time.monotonic_ns() - t0
    return svc


def verify(o, plan, svc):
    """The summary; True if everything checked out."""
    silent = len(plan.stop)
    missing = silent - svc.silent_off
    # active users go offline only if their heartbeats were late by a
    # timeout: the clients fell behind (a busy host), not a wheel defect
    lagged = svc.lag + 250 * MS >= o.timeout - o.interval
    checks = [
        ("silent -> offline", missing == 0 and svc.dup == 0,
         "%d of %d silent users went offline, %d missing, %d twice" % (
             svc.silent_off, silent, missing, svc.dup)),
        ("active stay online", svc.false_off == 0 or lagged,
         "%d of %d active users went offline%s" % (
             svc.false_off, o.users - silent,
             " (the clients fell behind by a timeout)" if lagged else "")),
        ("never early", svc.early == 0,
         "%d offline before last heartbeat + timeout" % svc.early),
        ("on time", svc.late_service <= o.max_late,
         "latest %.1f ms after last heartbeat + timeout (kernel: %.1f ms "
         "after the deadline); failing bound %.0f ms" % (
             svc.late_service / MS, svc.late_kernel / MS, o.max_late / MS)),
        ("no errors", svc.bad_id == 0 and svc.touch_errors == 0,
         "%d bad ids, %d failed touches" % (svc.bad_id, svc.touch_errors)),
    ]
    print("presence_async: verification summary")
    print("  %-20s %d users, %d heartbeats sent, %d touched; clients' worst"
          " lag %.0f ms; %.1f MiB of kernel memory at most; %.1f s" % (
              "run", o.users, svc.sent, svc.touched, svc.lag / MS,
              svc.kmem / (1 << 20), svc.wall / SEC))
    for name, ok, what in checks:
        print("  %-20s %s  [%s]" % (name, what, "ok" if ok else "FAILED"))
    ok = all(c[1] for c in checks)
    print("presence_async: %s" % ("VERIFIED" if ok else "VERIFICATION FAILED"))
    return ok


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="presence_async",
        description="An asyncio presence service on /dev/twheel: users "
        "silent for --timeout go offline; every user is verified.")

    def seconds(v):
        return int(float(v) * SEC)

    ap.add_argument("--users", type=int, default=100000)
    ap.add_argument("--timeout", type=seconds, default=30 * SEC,
                    help="offline timeout, s (default 30)")
    ap.add_argument("--interval", type=seconds, default=0,
                    help="heartbeat interval, s (default timeout/3)")
    ap.add_argument("--duration", type=seconds, default=0,
                    help="run time, s (default 2*timeout+10)")
    ap.add_argument("--silent-fraction", dest="silent", type=float,
                    default=0.1)
    ap.add_argument("--tick-ms", dest="tick", type=lambda v: int(v) * MS,
                    default=10 * MS)
    ap.add_argument("--max-late-ms", dest="max_late",
                    type=lambda v: int(v) * MS, default=5000 * MS)
    ap.add_argument("--batch", type=int, default=4096,
                    help="ids per heartbeat datagram (default 4096)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quiet", action="store_true")
    o = ap.parse_args(argv)
    o.interval = o.interval or o.timeout // 3
    o.duration = o.duration or 2 * o.timeout + 10 * SEC
    if not 1 <= o.users <= 1 << 32 or not 1 <= o.batch <= 16384:
        ap.error("--users or --batch out of range")
    if not 0.0 <= o.silent <= 1.0 or o.tick < MS or o.max_late < MS:
        ap.error("--silent-fraction, --tick-ms or --max-late-ms out of range")
    if o.interval < MS or 2 * o.interval > o.timeout:
        ap.error("--interval must be at most half of --timeout")
    if o.duration < o.timeout + o.interval + 2 * SEC:
        ap.error("--duration must be at least timeout + interval + 2 s")
    return o


def main(argv=None):
    o = parse_args(argv)
    try:
        wheel = twheel.Wheel(tick_ns=o.tick, timeout_ns=o.timeout,
                             max_ids=max(o.users, 1 << 20), nonblock=True)
    except OSError as e:
        print("presence_async: cannot open the wheel: %s%s" % (
            e, " (is the twheel module loaded?)"
            if e.errno == errno.ENOENT else ""), file=sys.stderr)
        return 2
    plan = Plan(o)
    print("presence_async: %d users (%d go silent), offline after %.1f s, "
          "heartbeat every %.2f s, %d slots, %.0f s" % (
              o.users, len(plan.stop), o.timeout / SEC, o.interval / SEC,
              plan.slots, o.duration / SEC), flush=True)
    with wheel:
        svc = asyncio.run(serve(o, plan, wheel))
    return 0 if verify(o, plan, svc) else 1


if __name__ == "__main__":
    sys.exit(main())
