#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
"""unittest suite of the twheel Python package (userspace/python/twheel/).

Run directly, it prints one line per test ("PASS name", "FAIL name: why",
"SKIP name: why") for tests/run_guest.sh and exits 1 on any failure;
`python3 -m unittest` works too.  Tests that need /dev/twheel skip without
it.  TWHEELCTL names the twheelctl binary (default: ../twheelctl/twheelctl
next to this file).
"""

import errno
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import twheel  # noqa: E402

TWHEELCTL = os.environ.get("TWHEELCTL",
                           os.path.join(HERE, "..", "twheelctl", "twheelctl"))
SEC = twheel.SEC
MS = twheel.MS


def have_device():
    try:
        twheel.Wheel().close()
        return True
    except OSError as e:
        if e.errno == errno.ENOENT:
            return False
        raise


HAVE_DEV = have_device()
need_dev = unittest.skipUnless(HAVE_DEV, "no /dev/twheel")


class Base(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="test_python.")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def assertErrno(self, code, fn, *args, **kw):
        with self.assertRaises(OSError) as cm:
            fn(*args, **kw)
        self.assertEqual(cm.exception.errno, code, str(cm.exception))
        return cm.exception


@need_dev
class TestWheel(Base):
    def test_defaults_and_config(self):
        with twheel.Wheel() as w:
            c = w.get_config()
            self.assertEqual(c, twheel.Config(1 * MS, 30 * SEC, 1048576,
                                              twheel.CLOCK_MONOTONIC, 0))
            self.assertEqual(w.config, c)
            c2 = w.set_config(timeout_ns=5 * SEC)
            self.assertEqual(c2.timeout_ns, 5 * SEC)
            self.assertEqual(w.get_config().timeout_ns, 5 * SEC)
            w.config = c
            self.assertEqual(w.config, c)
            self.assertErrno(errno.EINVAL, w.set_config, tick_ns=1)
            self.assertErrno(errno.EINVAL, w.set_config, max_ids=0)
            self.assertErrno(errno.EINVAL, w.set_config, clockid=0)
            self.assertErrno(errno.EINVAL, w.set_config, tick_ns=-1)
            self.assertRaises(TypeError, w.set_config, bogus=1)
            w.touch(1)
            self.assertErrno(errno.EBUSY, w.set_config, tick_ns=2 * MS)
            w.touch([2, 3])
            self.assertErrno(errno.EBUSY, w.set_config, max_ids=2)
            self.assertEqual(w.set_config(max_ids=3).max_ids, 3)

    def test_constructor_kwargs(self):
        with twheel.Wheel(tick_ns=2 * MS, timeout_ns=7 * SEC, max_ids=10,
                          clockid=twheel.CLOCK_BOOTTIME, nonblock=True) as w:
            self.assertEqual(w.get_config(), twheel.Config(
                2 * MS, 7 * SEC, 10, twheel.CLOCK_BOOTTIME, 0))
            self.assertEqual(w.read(timeout=0), [])
            n = w.now()
            self.assertLess(abs(n - time.clock_gettime_ns(time.CLOCK_BOOTTIME)),
                            10 * SEC)
        self.assertErrno(errno.EINVAL, twheel.Wheel, tick_ns=1)

    def test_close_and_context(self):
        w = twheel.Wheel()
        fd = w.fileno()
        self.assertFalse(w.closed)
        with w:
            pass
        self.assertTrue(w.closed)
        self.assertRaises(ValueError, w.fileno)
        self.assertRaises(ValueError, w.touch, [1])
        w.close()       # twice is fine
        self.assertErrno(errno.EBADF, os.fstat, fd)

    def test_touch_query(self):
        with twheel.Wheel() as w:
            t0 = w.now()
            self.assertEqual(w.touch([1, 2, 3]), 3)
            self.assertEqual(w.touch([]), 0)
            self.assertEqual(w.touch(4), 1)
            q = w.query(2)
            self.assertEqual((q.id, q.state, q.data),
                             (2, twheel.TWHEEL_STATE_ARMED, 0))
            self.assertGreaterEqual(q.deadline_ns, t0 + 30 * SEC)
            self.assertIn(3, w)
            self.assertNotIn(99, w)
            self.assertErrno(errno.ENOENT, w.query, 99)
            self.assertErrno(errno.EINVAL, w.touch, [-1])
            self.assertErrno(errno.EINVAL, w.touch, [1 << 64])
            st = w.stats()
            self.assertEqual((st.armed, st.pending, st.touches), (4, 0, 4))

    def test_touch_cap(self):
        with twheel.Wheel(max_ids=5) as w:
            self.assertEqual(w.touch(range(3)), 3)
            self.assertEqual(w.touch(range(10, 20)), 2)  # short count
            self.assertErrno(errno.ENOSPC, w.touch, [30])
            self.assertEqual(w.touch(range(3)), 3)       # existing ids

    def test_arm_cancel(self):
        with twheel.Wheel() as w:
            now = w.now()
            self.assertEqual(w.arm([(1, SEC * 3600, 11), (2, 0, 22, 0),
                                    twheel.Arm(3, now + 3600 * SEC, 33,
                                               twheel.TWHEEL_ARM_ABSTIME),
                                    {"id": 4, "timeout_ns": SEC, "data": 44}]),
                             4)
            self.assertEqual(w.query(3).deadline_ns, now + 3600 * SEC)
            self.assertEqual(w.query(1).data, 11)
            self.assertGreaterEqual(w.query(2).deadline_ns, now + 30 * SEC)
            self.assertEqual(w.arm(id=5, timeout_ns=SEC, data=55), 1)
            self.assertEqual(w.arm(6), 1)
            self.assertEqual(w.arm([]), 0)
            e = self.assertErrno(
                errno.EEXIST, w.arm,
                [(7, SEC), (8, SEC), (1, SEC, 0, twheel.TWHEEL_ARM_NOREPLACE)])
            self.assertEqual(e.done, 2)
            self.assertIn(8, w)
            self.assertErrno(errno.EINVAL, w.arm, id=9, flags=0x80)
            self.assertErrno(errno.EINVAL, w.arm, id=9,
                             timeout_ns=twheel.TWHEEL_DEADLINE_MAX + 1)
            self.assertRaises(TypeError, w.arm)
            self.assertEqual(w.cancel([1, 2, 1000]), 2)
            self.assertEqual(w.cancel(3), 1)
            self.assertEqual(w.cancel([]), 0)
            st = w.stats()
            self.assertEqual(st.cancels, 3)
            self.assertEqual(st.armed, 5)   # 4 5 6 7 8

    def test_arm_many(self):
        # more than one ioctl chunk of the module, and of arm()'s 4096
        with twheel.Wheel() as w:
            n = 5000
            self.assertEqual(w.arm((i, 3600 * SEC, i * 2) for i in range(n)), n)
            self.assertEqual(w.stats().armed, n)
            d = w.dump()
            self.assertEqual(len(d), n)
            self.assertEqual(sorted(e.id for e in d), list(range(n)))
            self.assertTrue(all(e.data == e.id * 2 and
                                e.flags == twheel.TWHEEL_ARM_ABSTIME for e in d))
            self.assertEqual(w.cancel(range(n)), n)
            self.assertEqual(w.dump(), [])

    def test_read(self):
        with twheel.Wheel() as w:
            self.assertEqual(w.read(timeout=0), [])
            t0 = time.monotonic()
            self.assertEqual(w.read(timeout=0.15), [])
            self.assertGreaterEqual(time.monotonic() - t0, 0.14)
            self.assertErrno(errno.EINVAL, w.read, 0)
            w.arm(id=42, timeout_ns=100 * MS, data=4242)
            ev = w.read(timeout=10)
            self.assertEqual(len(ev), 1)
            self.assertEqual((ev[0].id, ev[0].data), (42, 4242))
            self.assertGreaterEqual(ev[0].expired_ns, ev[0].deadline_ns)
            self.assertLessEqual(ev[0].deadline_ns, w.now())
            self.assertNotIn(42, w)
            # past deadlines queue at once, in arm order; n limits the count
            w.arm([(i, 1 + i, i, twheel.TWHEEL_ARM_ABSTIME) for i in range(5)])
            self.assertEqual([e.id for e in w.read(2)], [0, 1])
            self.assertEqual([e.id for e in w.read(10, timeout=0)], [2, 3, 4])
            w.arm(id=7, timeout_ns=50 * MS)
            self.assertEqual([e.id for e in w.read()], [7])   # blocks
            st = w.stats()
            self.assertEqual((st.expirations, st.delivered), (7, 7))

    def test_read_nonblocking(self):
        with twheel.Wheel(nonblock=True) as w:
            self.assertErrno(errno.EAGAIN, os.read, w.fileno(), 32)
            self.assertEqual(w.read(timeout=0.05), [])
            w.arm(id=1, timeout_ns=1, flags=twheel.TWHEEL_ARM_ABSTIME)
            self.assertEqual([e.id for e in w.read(timeout=0)], [1])

    def test_expired_touch_and_query(self):
        with twheel.Wheel() as w:
            w.arm(id=1, timeout_ns=1, data=5, flags=twheel.TWHEEL_ARM_ABSTIME)
            self.assertEqual(w.query(1).state, twheel.TWHEEL_STATE_EXPIRED)
            self.assertEqual(w.touch([1]), 1)           # re-armed
            self.assertEqual(w.query(1).state, twheel.TWHEEL_STATE_ARMED)
            self.assertEqual(w.query(1).data, 5)
            self.assertEqual(w.read(timeout=0), [])
            self.assertEqual(w.stats().discarded, 1)

    def test_from_fd(self):
        fd = os.open("/dev/null", os.O_RDWR)
        self.assertErrno(errno.ENOTTY, twheel.Wheel.from_fd, fd, closefd=False)
        os.close(fd)
        with twheel.Wheel() as w:
            w2 = twheel.Wheel.from_fd(os.dup(w.fileno()))
            w2.touch([5])
            self.assertIn(5, w)      # same wheel
            w2.close()


class TestSnapshotFormat(Base):
    """File-format checks that need no device."""

    def write(self, name, data):
        p = self.path(name)
        with open(p, "wb") as f:
            f.write(data)
        return p

    def make(self, entries, version=1, flags=0):
        import binascii
        import struct
        body = b"".join(struct.pack("<QQQ", *e) for e in entries)
        hdr = bytearray(struct.pack("<8sIIQIIQQQII", b"TWHEELCK", version,
                                    flags, len(entries), 1, 24, 123, MS,
                                    30 * SEC, binascii.crc32(body), 0))
        struct.pack_into("<I", hdr, 60, binascii.crc32(hdr[:60]))
        return bytes(hdr) + body

    def test_valid(self):
        p = self.write("ok.snap", self.make([(1, 100, 10), (2, 200, 20)]))
        info = twheel.snapshot_check(p)
        self.assertEqual((info.version, info.count, info.entry_size,
                          info.min_deadline_ns, info.max_deadline_ns,
                          info.saved_realtime_ns), (1, 2, 24, 100, 200, 123))
        p = self.write("empty.snap", self.make([]))
        self.assertEqual(twheel.snapshot_check(p).count, 0)

    def test_corrupt(self):
        good = self.make([(1, 100, 10), (2, 200, 20), (3, 300, 30)])
        cases = {
            "empty": b"",
            "short header": good[:50],
            "header only": good[:64],
            "short entries": good[:-1],
            "trailing": good + b"\0",
            "magic": b"X" + good[1:],
            "header flip": good[:20] + bytes([good[20] ^ 1]) + good[21:],
            "entry flip": good[:70] + bytes([good[70] ^ 1]) + good[71:],
            "version 2": self.make([(1, 1, 1)], version=2),
            "flags": self.make([(1, 1, 1)], flags=1),
            "deadline": self.make([(1, 1 << 63, 1)]),
        }
        for what, data in cases.items():
            p = self.write("bad.snap", data)
            e = self.assertErrno(errno.EBADMSG, twheel.snapshot_check, p)
            self.assertIn("bad.snap", str(e), what)
        self.assertErrno(errno.ENOENT, twheel.snapshot_check,
                         self.path("missing"))

    def test_twheelctl_check_reads_python_format(self):
        if not os.access(TWHEELCTL, os.X_OK):
            self.skipTest("twheelctl not built")
        p = self.write("ok.snap", self.make([(1, 100, 10), (2, 200, 20)]))
        r = subprocess.run([TWHEELCTL, "check", p], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"ids\s+2\n")
        p = self.write("bad.snap", self.make([(1, 100, 10)])[:-3])
        r = subprocess.run([TWHEELCTL, "check", p], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("truncated", r.stderr)


@need_dev
class TestSnapshots(Base):
    def fill(self, w, n=500):
        w.arm((i * 31 + 7, 60 * SEC + i * 977 * SEC, i ^ 0x5555)
              for i in range(n))
        w.arm(id=10 ** 12, timeout_ns=1, data=9,
              flags=twheel.TWHEEL_ARM_ABSTIME)           # expired, unread
        w.arm(id=10 ** 13, timeout_ns=twheel.TWHEEL_DEADLINE_MAX, data=8)
        return n + 2

    def same(self, a, b, tol=50 * MS):
        da = {e.id: e for e in a.dump()}
        db = {e.id: e for e in b.dump()}
        self.assertEqual(set(da), set(db))
        for i, e in da.items():
            self.assertEqual(e.data, db[i].data)
            self.assertLess(abs(e.timeout_ns - db[i].timeout_ns), tol, i)

    def test_roundtrip(self):
        p = self.path("w.snap")
        with twheel.Wheel() as a, twheel.Wheel() as b:
            n = self.fill(a)
            self.assertEqual(a.save(p), n)
            self.assertEqual(os.listdir(self.dir), ["w.snap"])
            self.assertEqual(a.save(p), n)       # replaced atomically
            self.assertEqual(os.listdir(self.dir), ["w.snap"])
            info = twheel.snapshot_check(p)
            self.assertEqual(info.count, n)
            self.assertEqual(info.max_deadline_ns, twheel.TWHEEL_DEADLINE_MAX)
            self.assertEqual(os.path.getsize(p), 64 + 24 * n)
            b.arm(id=7, timeout_ns=SEC, data=12345)      # also in the file
            self.assertEqual(b.restore(p), n)
            self.assertEqual(b.query(7).data, 0x5555)
            # the expired one came back expired; a's stays expired too
            ev = b.read(timeout=0)
            self.assertEqual([(e.id, e.data) for e in ev], [(10 ** 12, 9)])
            a.read(timeout=0)
            self.same(a, b)
        self.assertErrno(errno.EISDIR, twheel.Wheel().save, self.dir + "/")
        self.assertErrno(errno.ENOENT, twheel.Wheel().save,
                         self.path("no/such/dir"))

    def test_past_deadlines(self):
        p = self.path("past.snap")
        with twheel.Wheel() as a:
            now = a.now()     # absolute: one now for all, decreasing with i
            a.arm((i, now + 200 * MS + (50 - i) * MS, i,
                   twheel.TWHEEL_ARM_ABSTIME) for i in range(50))
            a.arm(id=1000, timeout_ns=3600 * SEC)
            a.save(p)
        time.sleep(0.6)
        with twheel.Wheel(nonblock=True) as b:
            self.assertEqual(b.restore(p), 51)
            st = b.stats()
            self.assertEqual((st.pending, st.armed), (50, 1))
            ev = b.read(100, timeout=0)
            self.assertEqual([e.id for e in ev], list(range(49, -1, -1)))
            self.assertTrue(all(e.expired_ns >= e.deadline_ns for e in ev))

    def test_corrupt_changes_nothing(self):
        p = self.path("good.snap")
        bad = self.path("bad.snap")
        with twheel.Wheel() as a, twheel.Wheel() as b:
            self.fill(a, 100)
            a.save(p)
            with open(p, "rb") as f:
                data = f.read()
            b.arm(id=7, timeout_ns=SEC, data=1)
            before = b.stats()
            for blob in (data[:-1], data[:10], b"",
                         data[:100] + bytes([data[100] ^ 0xff]) + data[101:],
                         b"TWHEELCX" + data[8:]):
                with open(bad, "wb") as f:
                    f.write(blob)
                self.assertErrno(errno.EBADMSG, b.restore, bad)
                after = b.stats()
                self.assertEqual((after.arms, after.armed, after.pending),
                                 (before.arms, before.armed, before.pending))
                self.assertEqual(b.query(7).data, 1)

    def test_partial_enospc(self):
        p = self.path("big.snap")
        with twheel.Wheel() as a, twheel.Wheel(max_ids=30) as b:
            a.arm((i, 3600 * SEC + i * SEC) for i in range(100))
            a.save(p)
            e = self.assertErrno(errno.ENOSPC, b.restore, p)
            self.assertEqual(e.done, 30)
            self.assertIn(29, b)
            self.assertNotIn(30, b)

    def test_c_compat_via_twheelctl(self):
        """twheelctl (the C library) saves our wheel through pidfd_getfd and
        restores a Python-written file into it; each side reads the other's."""
        if not os.access(TWHEELCTL, os.X_OK):
            self.skipTest("twheelctl not built")
        pid = str(os.getpid())
        cfile = self.path("c.snap")
        pyfile = self.path("py.snap")
        with twheel.Wheel() as a, twheel.Wheel() as b:
            n = self.fill(a, 300)
            r = subprocess.run([TWHEELCTL, "save", "--pid", pid, "--fd",
                                str(a.fileno()), cfile],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("saved %d ids" % n, r.stdout)
            self.assertEqual(twheel.snapshot_check(cfile).count, n)
            self.assertEqual(b.restore(cfile), n)
            b.read(timeout=0)
            a.read(timeout=0)
            self.same(a, b)
            # python -> C: restore into a third wheel through twheelctl
            b.save(pyfile)
            with twheel.Wheel() as c:
                r = subprocess.run([TWHEELCTL, "restore", "--pid", pid,
                                    "--fd", str(c.fileno()), pyfile],
                                   capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn("restored %d ids" % (n - 1), r.stdout)
                self.same(b, c)
            r = subprocess.run([TWHEELCTL, "check", pyfile],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)

    def test_twheelctl_top_sees_us(self):
        if not os.access(TWHEELCTL, os.X_OK):
            self.skipTest("twheelctl not built")
        with twheel.Wheel() as w:
            w.arm((i, 3600 * SEC) for i in range(37))
            r = subprocess.run([TWHEELCTL, "top", "--once", "--interval",
                                "0.2"], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            rows = [l.split() for l in r.stdout.splitlines()[2:]]
            mine = [x for x in rows if x[0] == str(os.getpid()) and
                    x[2] == str(w.fileno())]
            self.assertEqual(len(mine), 1, r.stdout)
            self.assertEqual(mine[0][3:5], ["37", "0"])


class LineResult(unittest.TestResult):
    """Prints PASS/FAIL/SKIP lines for tests/run_guest.sh."""

    def _name(self, test):
        return "python: %s.%s" % (type(test).__name__, test._testMethodName)

    def _say(self, word, test, why=""):
        line = "%s %s" % (word, self._name(test))
        if why:
            line += ": " + " | ".join(why.strip().splitlines()[-3:])
        print(line, flush=True)

    def addSuccess(self, test):
        super().addSuccess(test)
        self._say("PASS", test)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._say("FAIL", test, self.failures[-1][1])

    def addError(self, test, err):
        super().addError(test, err)
        self._say("FAIL", test, self.errors[-1][1])

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._say("SKIP", test, reason)

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._say("FAIL", test, "unexpected success")


def main(module=None, label="test_python"):
    """Run a module's tests (this one's by default) with PASS/FAIL/SKIP
    lines and a summary: the exit status."""
    suite = unittest.defaultTestLoader.loadTestsFromModule(
        module or sys.modules[__name__])
    result = LineResult()
    suite.run(result)
    bad = len(result.failures) + len(result.errors) + \
        len(result.unexpectedSuccesses)
    print("# %s: %d passed, %d failed, %d skipped" % (
        label, result.testsRun - bad - len(result.skipped), bad,
        len(result.skipped)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
