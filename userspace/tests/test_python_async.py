#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
"""asyncio and selectors tests of the twheel Python package.

Run directly, it prints one line per test ("PASS name", "FAIL name: why",
"SKIP name: why") for tests/run_guest.sh and exits 1 on any failure;
`python3 -m unittest` works too.

Three kinds of tests:
 - Stand-in: a twheel.Wheel over one end of a Unix socketpair, the test
   writing 32-byte event records into the other end.  The waiting,
   cancellation and held-event code is the package's own; only the
   kernel is missing.  These run anywhere.
 - Device: the same against /dev/twheel (skip without it).
 - The example userspace/python/examples/presence_async.py: against a
   user-space model of the wheel (a thread behind a socketpair) here,
   and at 100,000 users (TWHEEL_PRESENCE_USERS; 4,000 on a debug kernel,
   as examples/run_guest.sh) on /dev/twheel.
"""

import asyncio
import errno
import heapq
import io
import os
import select
import selectors
import socket
import struct
import subprocess
import sys
import threading
import time
import unittest
import unittest.mock

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.join(HERE, "..", "python")
EXAMPLE = os.path.join(PYDIR, "examples", "presence_async.py")
sys.path.insert(0, PYDIR)
sys.path.insert(0, os.path.dirname(EXAMPLE))
import twheel  # noqa: E402
import presence_async  # noqa: E402
import test_python  # noqa: E402

HAVE_DEV = test_python.HAVE_DEV
SEC = twheel.SEC
MS = twheel.MS
EVENT = struct.Struct("=QQQQ")
need_dev = unittest.skipUnless(HAVE_DEV, "no /dev/twheel")


def ev(i):
    """The event the stand-in queues for id i."""
    return twheel.Event(i, i * 10, 1000 + i, 2000 + i)


class StandIn:
    """A Wheel whose fd is one end of a socketpair: queue() plays the
    kernel queueing events, touched() reads what touch() wrote."""

    def __init__(self, nonblock=False):
        a, self.dev = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.wheel = twheel.Wheel(_fd=a.detach())
        if nonblock:
            os.set_blocking(self.wheel.fileno(), False)

    def queue(self, *ids):
        self.dev.sendall(b"".join(EVENT.pack(*ev(i)) for i in ids))

    def touched(self):
        self.dev.setblocking(False)
        try:
            data = self.dev.recv(1 << 16)
        except BlockingIOError:
            data = b""
        return list(struct.unpack("=%dQ" % (len(data) // 8), data))

    def close(self):
        self.wheel.close()
        self.dev.close()


def run(coro, loop_factory=None):
    """Run coro on a new loop (of loop_factory(), else asyncio's default)."""
    loop = loop_factory() if loop_factory else asyncio.new_event_loop()
    try:
        return loop.run_until_complete(coro)
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


async def spin(n=5):
    """Let the loop run n rounds."""
    for _ in range(n):
        await asyncio.sleep(0)


def has_reader(fd):
    """Whether the running loop watches fd.  remove_reader() tells, and
    takes the reader away: ask only where none should be left."""
    return asyncio.get_running_loop().remove_reader(fd)


class TestStandIn(unittest.TestCase):
    def setUp(self):
        self.s = StandIn()
        self.w = self.s.wheel

    def tearDown(self):
        self.s.close()

    def test_aread_queued_and_n(self):
        async def main():
            self.s.queue(1, 2, 3)
            self.assertEqual(await self.w.aread(2), [ev(1), ev(2)])
            self.assertEqual(await self.w.aread(), [ev(3)])
            self.assertFalse(os.get_blocking(self.w.fileno()))
            self.assertFalse(has_reader(self.w.fileno()))
            with self.assertRaises(OSError) as cm:
                await self.w.aread(0)
            self.assertEqual(cm.exception.errno, errno.EINVAL)
        run(main())

    def test_aread_waits(self):
        async def main():
            loop = asyncio.get_running_loop()
            loop.call_later(0.05, self.s.queue, 7)
            t0 = time.monotonic()
            self.assertEqual(await self.w.aread(), [ev(7)])
            self.assertGreaterEqual(time.monotonic() - t0, 0.04)
            self.assertFalse(has_reader(self.w.fileno()))
        run(main())

    def test_cancelled_aread_loses_nothing(self):
        async def main():
            t = asyncio.ensure_future(self.w.aread())
            await spin()
            t.cancel()
            with self.assertRaises(asyncio.CancelledError):
                await t
            self.assertFalse(has_reader(self.w.fileno()))
            with self.assertRaises(asyncio.TimeoutError):
                await asyncio.wait_for(self.w.aread(), 0.05)
            self.assertFalse(has_reader(self.w.fileno()))
            self.s.queue(1, 2, 3)
            self.assertEqual(await self.w.aread(10), [ev(1), ev(2), ev(3)])
        run(main())

    def test_cancelled_after_wakeup_loses_nothing(self):
        """The reader callback wakes the task and the task is cancelled
        before it runs: it never reads, the events stay queued."""
        async def main():
            t = None
            wake = self.w._wake

            def wake_then_cancel(loop, fd):
                wake(loop, fd)
                t.cancel()
            self.w._wake = wake_then_cancel
            t = asyncio.ensure_future(self.w.aread())
            await spin()
            self.s.queue(1, 2)
            with self.assertRaises(asyncio.CancelledError):
                await t
            del self.w._wake
            self.assertFalse(has_reader(self.w.fileno()))
            self.assertEqual(await self.w.aread(), [ev(1), ev(2)])
        run(main())

    def test_many_waiters(self):
        """Every event goes to exactly one of several readers; a cancelled
        one takes none; wait() reads nothing."""
        async def main():
            readers = [asyncio.ensure_future(self.w.aread(1))
                       for _ in range(4)]
            waiter = asyncio.ensure_future(self.w.wait())
            await spin()
            readers[0].cancel()
            await spin()
            self.s.queue(1, 2, 3)
            got = await asyncio.gather(*readers[1:])
            self.assertIsNone(await waiter)
            self.assertTrue(readers[0].cancelled())
            self.assertEqual(sorted(e.id for r in got for e in r), [1, 2, 3])
            self.assertFalse(has_reader(self.w.fileno()))
            # more readers than events: the first one to run takes both,
            # the others find nothing and wait again
            readers = [asyncio.ensure_future(self.w.aread(5))
                       for _ in range(3)]
            await spin()
            self.s.queue(4, 5)
            done, pending = await asyncio.wait(
                readers, timeout=10, return_when=asyncio.FIRST_COMPLETED)
            await spin()
            self.assertEqual([[e.id for e in r.result()] for r in done],
                             [[4, 5]])
            self.assertEqual(len(pending), 2)
            self.assertFalse(any(r.done() for r in pending))
            for r in pending:
                r.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            self.assertFalse(has_reader(self.w.fileno()))
        run(main())

    def test_wait(self):
        async def main():
            asyncio.get_running_loop().call_later(0.02, self.s.queue, 9)
            await asyncio.wait_for(self.w.wait(), 5)
            await self.w.wait()             # still queued: returns at once
            self.assertEqual(self.w.read(timeout=0), [ev(9)])
            with self.assertRaises(asyncio.TimeoutError):
                await asyncio.wait_for(self.w.wait(), 0.05)
            self.assertFalse(has_reader(self.w.fileno()))
        run(main())

    def test_events_in_order(self):
        async def main():
            self.s.queue(*range(10))
            got = []
            async for e in self.w.events(batch=3):
                got.append(e)
                if len(got) == 10:
                    break
            self.assertEqual(got, [ev(i) for i in range(10)])
            with self.assertRaises(OSError) as cm:
                await self.w.events(0).__anext__()
            self.assertEqual(cm.exception.errno, errno.EINVAL)
        run(main())

    def test_events_break_holds_the_rest(self):
        """A loop that stops early leaves the events it did not yield with
        the Wheel; every kind of read returns them first."""
        async def main():
            self.s.queue(*range(8))
            async for e in self.w.events(batch=8):
                self.assertEqual(e, ev(0))
                break
            self.s.queue(8)
            self.assertEqual(self.w.read(2, timeout=0), [ev(1), ev(2)])
            self.assertEqual(await self.w.aread(2), [ev(3), ev(4)])
            await self.w.wait()
            rest = []
            async for e in self.w.events():
                rest.append(e.id)
                if e.id == 8:
                    break
            self.assertEqual(rest, [5, 6, 7, 8])
        run(main())

    def test_events_cancelled_in_body_loses_nothing(self):
        async def main():
            got = []
            gate = asyncio.Event()

            async def consumer():
                async for e in self.w.events(batch=64):
                    got.append(e.id)
                    await gate.wait()       # a slow handler
            self.s.queue(1, 2, 3, 4)
            t = asyncio.ensure_future(consumer())
            await spin()
            self.assertEqual(got, [1])
            t.cancel()
            await asyncio.gather(t, return_exceptions=True)
            self.assertEqual([e.id for e in await self.w.aread()], [2, 3, 4])
        run(main())

    def test_events_cancelled_waiting(self):
        async def main():
            async def consumer():
                async for e in self.w.events():
                    self.fail("no event was queued")
            t = asyncio.ensure_future(consumer())
            await spin()
            t.cancel()
            await asyncio.gather(t, return_exceptions=True)
            self.assertFalse(has_reader(self.w.fileno()))
            self.s.queue(5)
            self.assertEqual(self.w.read(timeout=1), [ev(5)])
        run(main())

    def test_touch_discards_held(self):
        """touch() of a held event's id drops it, as the kernel drops a
        queued event of a touched id."""
        async def main():
            self.s.queue(1, 2, 3, 4)
            async for e in self.w.events():
                break
            self.assertEqual(self.w.touch([3, 100, 1]), 3)
            self.assertEqual(self.s.touched(), [3, 100, 1])
            self.assertEqual(await self.w.aread(), [ev(2), ev(4)])
        run(main())

    def test_close_wakes_waiters(self):
        async def main():
            fd = self.w.fileno()
            t1 = asyncio.ensure_future(self.w.aread())
            t2 = asyncio.ensure_future(self.w.wait())
            await spin()
            self.w.close()
            for t in (t1, t2):
                with self.assertRaises(ValueError):
                    await t
            self.assertFalse(has_reader(fd))
            with self.assertRaises(ValueError):
                await self.w.aread()
        run(main())

    def test_close_while_iterating(self):
        async def main():
            self.s.queue(1, 2)
            with self.assertRaises(ValueError):
                async for e in self.w.events(batch=1):
                    self.w.close()
        run(main())

    def test_any_loop(self):
        """Successive loops, and a loop on another selector (poll)."""
        for factory in (None, None, lambda: asyncio.SelectorEventLoop(
                selectors.PollSelector())):
            async def main():
                asyncio.get_running_loop().call_later(0.01, self.s.queue, 3)
                self.assertEqual(await self.w.aread(), [ev(3)])
                self.assertFalse(has_reader(self.w.fileno()))
            run(main(), factory)
        self.assertEqual(self.w._waiters, {})

    def test_loop_in_threads(self):
        """Two threads, each with its own loop, take turns on one wheel."""
        results = []

        def worker(i):
            async def main():
                results.append(await asyncio.wait_for(self.w.aread(1), 5))
            run(main())
        threads = [threading.Thread(target=worker, args=(i,))
                   for i in range(2)]
        for t in threads:
            t.start()
        time.sleep(0.1)
        self.s.queue(1, 2)
        for t in threads:
            t.join(10)
        self.assertEqual(sorted(e.id for r in results for e in r), [1, 2])

    def test_selectors(self):
        """The selectors pattern of the module's docstring."""
        s = StandIn(nonblock=True)
        w = s.wheel
        try:
            with selectors.DefaultSelector() as sel:
                sel.register(w, selectors.EVENT_READ, data="wheel")
                self.assertEqual(sel.select(timeout=0.02), [])
                s.queue(1, 2)
                ready = sel.select(timeout=5)
                self.assertEqual([(k.fileobj, k.data) for k, _ in ready],
                                 [(w, "wheel")])
                self.assertEqual(w.read(64, timeout=0), [ev(1), ev(2)])
                self.assertEqual(w.read(64, timeout=0), [])
                self.assertEqual(sel.select(timeout=0.02), [])
                sel.unregister(w)
        finally:
            s.close()


@need_dev
class TestDevice(unittest.TestCase):
    def test_aread_expiry(self):
        async def main():
            with twheel.Wheel() as w:
                t0 = w.now()
                w.arm(id=42, timeout_ns=50 * MS, data=4242)
                evs = await asyncio.wait_for(w.aread(), 10)
                self.assertEqual([(e.id, e.data) for e in evs],
                                 [(42, 4242)])
                self.assertGreaterEqual(evs[0].expired_ns,
                                        evs[0].deadline_ns)
                self.assertLessEqual(evs[0].deadline_ns, w.now())
                self.assertGreaterEqual(evs[0].deadline_ns, t0 + 50 * MS)
        run(main())

    def test_cancel_loses_nothing(self):
        async def main():
            with twheel.Wheel() as w:
                w.arm(id=1, timeout_ns=3600 * SEC)
                for _ in range(20):
                    with self.assertRaises(asyncio.TimeoutError):
                        await asyncio.wait_for(w.aread(), 0.005)
                now = w.now()
                w.arm((i, now - SEC, i, twheel.TWHEEL_ARM_ABSTIME)
                      for i in range(10, 20))
                self.assertEqual(w.stats().pending, 10)
                t = asyncio.ensure_future(w.aread())
                t.cancel()                  # before it ever ran
                await asyncio.gather(t, return_exceptions=True)
                self.assertEqual(w.stats().pending, 10)
                evs = await w.aread(100)
                self.assertEqual([e.id for e in evs], list(range(10, 20)))
                st = w.stats()
                self.assertEqual((st.pending, st.delivered), (0, 10))
        run(main())

    def test_many_readers(self):
        async def main():
            with twheel.Wheel() as w:
                readers = [asyncio.ensure_future(w.aread(3))
                           for _ in range(5)]
                await spin()
                w.arm((i, 20 * MS + i * MS) for i in range(30))
                got = []
                while len(got) < 30:
                    done, _ = await asyncio.wait(
                        readers, return_when=asyncio.FIRST_COMPLETED,
                        timeout=10)
                    self.assertTrue(done)
                    for r in done:
                        got.extend(e.id for e in r.result())
                        readers[readers.index(r)] = \
                            asyncio.ensure_future(w.aread(3))
                self.assertEqual(sorted(got), list(range(30)))
                for r in readers:
                    r.cancel()
                await asyncio.gather(*readers, return_exceptions=True)
                self.assertEqual(w.stats().delivered, 30)
        run(main())

    def test_events_and_held(self):
        """Held events look queued: query() says expired, dump() lists
        them, touch()/arm()/cancel() discard them."""
        async def main():
            with twheel.Wheel() as w:
                now = w.now()
                w.arm((i, now - SEC + i, i * 7, twheel.TWHEEL_ARM_ABSTIME)
                      for i in range(1, 9))
                async for e in w.events(batch=16):
                    self.assertEqual(e.id, 1)
                    break
                self.assertEqual(w.stats().pending, 0)  # all held
                q = w.query(5)
                self.assertEqual((q.state, q.deadline_ns, q.data),
                                 (twheel.TWHEEL_STATE_EXPIRED,
                                  now - SEC + 5, 35))
                self.assertIn(6, w)
                self.assertNotIn(1, w)
                d = {a.id: a for a in w.dump()}
                self.assertEqual(sorted(d), list(range(2, 9)))
                self.assertEqual(d[3].flags, twheel.TWHEEL_ARM_ABSTIME)
                self.assertEqual(w.touch([2]), 1)      # re-armed
                self.assertEqual(w.query(2).state, twheel.TWHEEL_STATE_ARMED)
                self.assertEqual(w.cancel([3, 4, 99]), 2)
                with self.assertRaises(OSError) as cm:
                    w.arm([(50, 3600 * SEC), (5, 3600 * SEC, 0,
                                              twheel.TWHEEL_ARM_NOREPLACE)])
                self.assertEqual((cm.exception.errno,
                                  getattr(cm.exception, "done")),
                                 (errno.EEXIST, 1))
                self.assertIn(50, w)
                self.assertEqual(w.arm(id=6, timeout_ns=3600 * SEC), 1)
                self.assertEqual([e.id for e in await w.aread()], [5, 7, 8])
                self.assertEqual(w.read(timeout=0), [])
        run(main())

    def test_events_batch_one_holds_none(self):
        """events(batch=1) reads an event a time: a loop that stops
        leaves the rest queued in the kernel, for every fd to see."""
        async def main():
            with twheel.Wheel() as w:
                now = w.now()
                w.arm((i, now - SEC + i, 0, twheel.TWHEEL_ARM_ABSTIME)
                      for i in range(1, 6))
                async for e in w.events(batch=1):
                    self.assertEqual(e.id, 1)
                    break
                self.assertEqual(w.stats().pending, 4)
                self.assertEqual(w.stats().delivered, 1)
                self.assertEqual([e.id for e in w.read(8, timeout=0)],
                                 [2, 3, 4, 5])
        run(main())

    def test_selectors(self):
        with twheel.Wheel(nonblock=True) as w, \
                selectors.DefaultSelector() as sel:
            sel.register(w, selectors.EVENT_READ)
            self.assertEqual(sel.select(timeout=0.02), [])
            w.arm(id=3, timeout_ns=30 * MS)
            ready = sel.select(timeout=10)
            self.assertEqual([k.fileobj for k, _ in ready], [w])
            self.assertEqual([e.id for e in w.read(timeout=0)], [3])


class ModelWheel(twheel.Wheel):
    """A user-space model of /dev/twheel for the example: the package's
    Wheel over a socketpair, and a thread at the other end that arms each
    id written at now + timeout (less early_ns, to fake a broken wheel)
    and writes back an event record when it expires.  No ioctls: stats()
    is all zeros."""

    early_ns = 0

    def __init__(self, tick_ns, timeout_ns, max_ids, nonblock):
        a, self._dev = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        super().__init__(_fd=a.detach())
        os.set_blocking(self.fileno(), not nonblock)
        self._timeout = timeout_ns - self.early_ns
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self):
        try:
            self._expire()
        except OSError:
            pass                # the Wheel was closed

    def _expire(self):
        deadline, heap, rest = {}, [], b""
        dev = self._dev
        wait = 0.0
        while True:
            # every touch written so far first, as write() applies them
            if select.select([dev], [], [], wait)[0]:
                data = dev.recv(1 << 16)
                if not data:
                    return
                now = time.monotonic_ns()
                data, rest = rest + data, b""
                if len(data) % 8:
                    data, rest = data[:-(len(data) % 8)], \
                        data[-(len(data) % 8):]
                for i in struct.unpack("=%dQ" % (len(data) // 8), data):
                    deadline[i] = now + self._timeout
                    heapq.heappush(heap, (deadline[i], i))
                wait = 0.0
                continue
            now = time.monotonic_ns()
            while heap and heap[0][0] <= now:
                d, i = heapq.heappop(heap)
                if deadline.get(i) == d:
                    del deadline[i]
                    dev.sendall(EVENT.pack(i, 0, d, now))
            wait = (heap[0][0] - now) / SEC if heap else 1.0

    def stats(self):
        return twheel.Stats(*(0,) * len(twheel.Stats._fields))

    def close(self):
        super().close()
        if getattr(self, "_dev", None):
            self._dev.shutdown(socket.SHUT_WR)
            self._thread.join(5)
            self._dev.close()
            self._dev = None


class EarlyModelWheel(ModelWheel):
    early_ns = 300 * MS


def slow_kernel():
    return (os.environ.get("TWHEEL_SLOW_KERNEL") == "1" or
            os.path.exists("/sys/kernel/debug/kmemleak"))


class TestPresenceExample(unittest.TestCase):
    ARGS = ["--users", "2000", "--timeout", "1", "--interval", "0.25",
            "--duration", "3.5", "--tick-ms", "1", "--quiet"]

    def run_model(self, model):
        out = io.StringIO()
        with unittest.mock.patch.object(presence_async.twheel, "Wheel",
                                        model), \
                unittest.mock.patch("sys.stdout", out):
            rc = presence_async.main(self.ARGS)
        return rc, out.getvalue()

    def test_model(self):
        rc, out = self.run_model(ModelWheel)
        self.assertEqual(rc, 0, out)
        self.assertIn("presence_async: VERIFIED", out)
        self.assertRegex(out, r"went offline, 0 missing, 0 twice")

    def test_model_early_fails(self):
        rc, out = self.run_model(EarlyModelWheel)
        self.assertEqual(rc, 1, out)
        self.assertRegex(out, r"never early .*\[FAILED\]")

    def test_usage(self):
        for args in (["--users", "0"], ["--timeout", "1", "--interval",
                                        "0.9"], ["--bogus"],
                     ["--silent-fraction", "2"]):
            r = subprocess.run([sys.executable, EXAMPLE] + args,
                               capture_output=True, text=True,
                               env=dict(os.environ, PYTHONPATH=PYDIR))
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn("usage:", r.stderr)

    @need_dev
    def test_device(self):
        users = os.environ.get("TWHEEL_PRESENCE_USERS",
                               "4000" if slow_kernel() else "100000")
        t0 = time.monotonic()
        r = subprocess.run([sys.executable, EXAMPLE, "--users", users,
                            "--timeout", "3", "--duration", "12", "--quiet"],
                           capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, PYTHONPATH=PYDIR))
        for line in r.stdout.splitlines():
            print("# " + line)
        print("# presence_async ran %.1f s" % (time.monotonic() - t0))
        self.assertEqual(r.returncode, 0, r.stdout[-2000:] + r.stderr)
        self.assertIn("presence_async: VERIFIED", r.stdout)


if __name__ == "__main__":
    sys.exit(test_python.main(sys.modules[__name__], "test_python_async"))
