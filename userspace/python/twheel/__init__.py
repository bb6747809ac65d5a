# SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
"""twheel: Python interface to /dev/twheel, the kernel timing wheel.

Pure standard library (os, fcntl, struct, array, select, binascii, and
asyncio when it is used); no C extension and no ctypes.  Each Wheel is one
open() of /dev/twheel: an independent wheel of 64-bit ids.  See twheel(4)
and libtwheel(3).

    import twheel
    with twheel.Wheel(timeout_ns=30 * twheel.SEC) as w:
        w.touch([1, 2, 3])                    # (re-)arm at now + 30 s
        w.arm(id=4, timeout_ns=5 * twheel.SEC, data=44)
        for ev in w.read(timeout=60):         # [Event(id, data, ...)]
            print(ev.id, ev.data)
        w.save("/var/lib/app/wheel.snap")     # same format as twheel_save(3)

With asyncio, on any running loop (loop.add_reader; the fd is made
O_NONBLOCK): aread() is the awaitable read(), events() an endless async
iterator of Events, wait() waits for one without reading it.  They are
cancellation-safe: a task cancelled while it waits (asyncio.timeout(),
wait_for(), task.cancel()) has read nothing, so no event is lost, and
several tasks may wait on one Wheel, each event going to one of them.

    async def watch(w: twheel.Wheel) -> None:
        async for ev in w.events():             # reads in batches
            await mark_offline(ev.id)

    async def serve(reader: asyncio.StreamReader) -> None:
        with twheel.Wheel(timeout_ns=30 * twheel.SEC) as w:
            watcher = asyncio.create_task(watch(w))
            async for line in reader:           # a user id a line
                w.touch(int(line))              # a plain call: no wait
            watcher.cancel()

    try:
        async with asyncio.timeout(1):
            evs = await w.aread(1024)           # 1 to 1024 events
    except TimeoutError:
        evs = []                                # and none was lost

With selectors (or select/poll/epoll): a Wheel has fileno(); open it with
nonblock=True and read(timeout=0) when it is readable.

    sel = selectors.DefaultSelector()
    w = twheel.Wheel(nonblock=True)
    sel.register(w, selectors.EVENT_READ)
    for key, _ in sel.select():
        if key.fileobj is w:
            for ev in w.read(1024, timeout=0):
                ...

The Wheel owns the loop's reader of its fd while a task waits: do not
add_reader() that fd yourself.  A Wheel is used by one thread at a time
(except that several threads' event loops may wait on it at once).

The package is typed (py.typed); mypy --strict accepts it.

Errors raise OSError with the errno of the failing call (ENOENT for an
absent id, EEXIST for TWHEEL_ARM_NOREPLACE, ENOSPC at the cap, EBADMSG for
a corrupt snapshot...).  For arm(), touch(), cancel() and restore(), an
OSError raised after some entries took effect carries their number in its
``done`` attribute (touch() returns the short count instead, like write()).
"""

from __future__ import annotations

import array
import binascii
import collections
import errno
import fcntl
import os
import select
import struct
import sys
import tempfile
import time
from collections.abc import Mapping
from typing import (TYPE_CHECKING, Any, AsyncIterator, Iterable, Iterator,
                    NamedTuple, Optional, Tuple, TypeVar, Union)

if TYPE_CHECKING:
    import asyncio

__all__ = [
    "Wheel", "Config", "Arm", "Query", "Stats", "Event", "SnapshotInfo",
    "snapshot_check", "DEVICE", "MS", "SEC",
    "TWHEEL_ARM_ABSTIME", "TWHEEL_ARM_NOREPLACE",
    "TWHEEL_STATE_ARMED", "TWHEEL_STATE_EXPIRED",
]

__version__ = "0.1.0"

DEVICE = "/dev/twheel"
MS = 1000000
SEC = 1000000000

# uapi/linux/twheel.h
TWHEEL_DEFAULT_TICK_NS = 1000000
TWHEEL_DEFAULT_TIMEOUT_NS = 30000000000
TWHEEL_DEFAULT_MAX_IDS = 1048576
TWHEEL_TICK_MIN_NS = 100000
TWHEEL_TICK_MAX_NS = 3600000000000
TWHEEL_MAX_IDS_LIMIT = 0x100000000
TWHEEL_DEADLINE_MAX = 0x7FFFFFFFFFFFFFFF
TWHEEL_ARM_ABSTIME = 0x1
TWHEEL_ARM_NOREPLACE = 0x2
TWHEEL_STATE_ARMED = 1
TWHEEL_STATE_EXPIRED = 2
CLOCK_MONOTONIC = 1
CLOCK_BOOTTIME = 7

# ioctl structs: native byte order, fixed sizes, no padding (see the header)
_CONFIG = struct.Struct("=QQQII32x")     # 64
_ARM = struct.Struct("=QQQII")           # 32
_BATCH = struct.Struct("=QQQI12x")       # 40
_QUERY = struct.Struct("=QQQII")         # 32
_STATS = struct.Struct("=18Q16x")        # 160
_DUMP = struct.Struct("=QQQQ16x")        # 48
_EVENT = struct.Struct("=QQQQ")          # 32


def _ioc(direction: int, nr: int, size: int) -> int:
    return (direction << 30) | (size << 16) | (0xD7 << 8) | nr


_W, _R = 1, 2
TWHEEL_IOC_SET_CONFIG = _ioc(_W, 0x00, _CONFIG.size)
TWHEEL_IOC_GET_CONFIG = _ioc(_R, 0x01, _CONFIG.size)
TWHEEL_IOC_ARM = _ioc(_W | _R, 0x02, _BATCH.size)
TWHEEL_IOC_CANCEL = _ioc(_W | _R, 0x03, _BATCH.size)
TWHEEL_IOC_QUERY = _ioc(_W | _R, 0x04, _QUERY.size)
TWHEEL_IOC_GET_STATS = _ioc(_R, 0x05, _STATS.size)
TWHEEL_IOC_DUMP = _ioc(_W | _R, 0x06, _DUMP.size)


class Config(NamedTuple):
    """struct twheel_config: a wheel's configuration."""
    tick_ns: int
    timeout_ns: int
    max_ids: int
    clockid: int
    flags: int


class Arm(NamedTuple):
    """struct twheel_arm: one entry of arm(), and of dump()."""
    id: int
    timeout_ns: int = 0
    data: int = 0
    flags: int = 0


class Query(NamedTuple):
    """struct twheel_query: what query() tells of an id."""
    id: int
    state: int
    deadline_ns: int
    data: int


class Stats(NamedTuple):
    """struct twheel_stats: the wheel's counters."""
    armed: int
    pending: int
    touches: int
    arms: int
    cancels: int
    expirations: int
    delivered: int
    timer_fires: int
    late_max_ns: int
    mem_bytes: int
    discarded: int
    reslots: int
    runs: int
    hold_max_ns: int
    work_runs: int
    work_ns: int
    bpf_touches: int
    bpf_absent: int


class Event(NamedTuple):
    """struct twheel_event: one expiry, as read() returns it."""
    id: int
    data: int
    deadline_ns: int
    expired_ns: int


class SnapshotInfo(NamedTuple):
    """What snapshot_check() finds in a snapshot file."""
    version: int
    flags: int
    clockid: int
    entry_size: int
    count: int  # type: ignore[assignment]  # shadows tuple.count()
    saved_realtime_ns: int
    tick_ns: int
    timeout_ns: int
    min_deadline_ns: int
    max_deadline_ns: int
    header_crc: int
    entries_crc: int


# What arm() takes as an entry: an Arm, a tuple (id[, timeout_ns[, data[,
# flags]]]) or a mapping of Arm's field names.
ArmEntry = Union[Arm, Tuple[int, ...], Mapping[str, int]]
# A path for save(), restore() and snapshot_check().
StrPath = Union[str, "os.PathLike[str]"]
_Buf = TypeVar("_Buf", bytearray, "array.array[int]")
_WheelT = TypeVar("_WheelT", bound="Wheel")

_U64 = (1 << 64) - 1
_ARM_BATCH = 256
_DUMP_BATCH = 256


def _oserror(code: int, detail: Optional[str] = None,
             done: Optional[int] = None) -> OSError:
    msg = os.strerror(code)
    if detail:
        msg = "%s: %s" % (msg, detail)
    e = OSError(code, msg)
    if done is not None:
        setattr(e, "done", done)
    return e


def _u64(v: Any, what: str = "value") -> int:
    n = int(v)
    if not 0 <= n <= _U64:
        raise _oserror(errno.EINVAL, "%s %d is not a u64" % (what, n))
    return n


def _ids_array(ids: Union[int, Iterable[int]]) -> array.array[int]:
    """ids as an array("Q"): an array("Q") as it is, else converted in C
    (per id in Python only to name a bad id, or for ids that are not ints).
    """
    if isinstance(ids, array.array) and ids.typecode == "Q":
        return ids
    if isinstance(ids, int):
        ids = (ids,)
    elif not isinstance(ids, (list, tuple, range)):
        ids = list(ids)
    try:
        return array.array("Q", ids)
    except (OverflowError, TypeError):
        pass
    a = array.array("Q")
    for i in ids:
        a.append(_u64(i, "id"))
    return a


def _count(n: int, what: str) -> int:
    n = int(n)
    if n < 1:
        raise _oserror(errno.EINVAL, "%s needs n >= 1" % what)
    return n


def _events(data: bytes) -> list[Event]:
    return [Event(*_EVENT.unpack_from(data, off))
            for off in range(0, len(data), _EVENT.size)]


def _addr(buf: array.array[int]) -> int:
    """Address of an array.array's storage (kept alive by the caller)."""
    addr: int = buf.buffer_info()[0]
    return addr


# --------------------------------------------------------------- snapshots
#
# Same file as twheel_save(3), version 1, little-endian:
#   magic "TWHEELCK", u32 version, u32 flags, u64 count, u32 clockid,
#   u32 entry_size (24), u64 saved_realtime_ns, u64 tick_ns, u64 timeout_ns,
#   u32 entries_crc, u32 header_crc (CRC-32 of the 60 bytes before it),
#   then count entries { u64 id, u64 deadline_realtime_ns, u64 data }
#   sorted by deadline then id.  CRC-32 is IEEE (binascii.crc32).

_MAGIC = b"TWHEELCK"
_SNAP_VERSION = 1
_HDR = struct.Struct("<8sIIQIIQQQII")    # 64
_ENTRY_SIZE = 24


def _clock_pair(clockid: int) -> Tuple[int, int]:
    a = time.clock_gettime_ns(clockid)
    rt = time.clock_gettime_ns(time.CLOCK_REALTIME)
    b = time.clock_gettime_ns(clockid)
    return a + (b - a) // 2, rt


def _convert(deadline: int, now_a: int, now_b: int) -> int:
    """The instant deadline (on clock A) on clock B, clamped to [0, MAX];
    TWHEEL_DEADLINE_MAX ("never") stays TWHEEL_DEADLINE_MAX."""
    if deadline >= TWHEEL_DEADLINE_MAX:
        return TWHEEL_DEADLINE_MAX
    v = deadline - now_a + now_b
    return 0 if v < 0 else min(v, TWHEEL_DEADLINE_MAX)


def _le_words(data: bytes) -> array.array[int]:
    a = array.array("Q")
    a.frombytes(data)
    if sys.byteorder != "little":
        a.byteswap()
    return a


def _load(path: StrPath) -> Tuple[SnapshotInfo, array.array[int]]:
    """Read and validate a snapshot: (SnapshotInfo, entry words)."""
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        if not (st.st_mode & 0o170000) == 0o100000:
            raise _oserror(errno.EBADMSG, "%s: not a regular file" % path)
        data = f.read()

    def bad(why: str) -> OSError:
        return _oserror(errno.EBADMSG, "%s: %s" % (path, why))

    if len(data) < _HDR.size:
        raise bad("empty file" if not data else "truncated header")
    (magic, version, flags, count, clockid, entry_size, saved, tick,
     timeout, entries_crc, header_crc) = _HDR.unpack_from(data)
    if magic != _MAGIC:
        raise bad("bad magic (not a twheel snapshot)")
    if version != _SNAP_VERSION:
        raise bad("unsupported format version")
    if binascii.crc32(data[:_HDR.size - 4]) != header_crc:
        raise bad("header checksum mismatch")
    if flags:
        raise bad("unknown flags")
    if entry_size != _ENTRY_SIZE:
        raise bad("unsupported entry size")
    if count > TWHEEL_MAX_IDS_LIMIT:
        raise bad("entry count out of range")
    want = _HDR.size + count * _ENTRY_SIZE
    if len(data) < want:
        raise bad("truncated entries")
    if len(data) > want:
        raise bad("trailing data after the entries")
    body = memoryview(data)[_HDR.size:]
    if binascii.crc32(body) != entries_crc:
        raise bad("entries checksum mismatch")
    words = _le_words(body)
    deadlines = words[1::3]
    if deadlines and max(deadlines) > TWHEEL_DEADLINE_MAX:
        raise bad("deadline out of range")
    info = SnapshotInfo(version, flags, clockid, entry_size, count, saved,
                        tick, timeout, min(deadlines) if count else 0,
                        max(deadlines) if count else 0, header_crc,
                        entries_crc)
    return info, words


def snapshot_check(path: StrPath) -> SnapshotInfo:
    """Validate a snapshot file; return its SnapshotInfo.

    Raises OSError(EBADMSG) if it is corrupt or truncated (the message says
    what is wrong), or the error of opening/reading it.
    """
    return _load(path)[0]


def _write_atomic(path: StrPath, blob: bytes) -> None:
    path = os.fspath(path)
    d, base = os.path.split(path)
    if not base:
        raise _oserror(errno.EISDIR, path)
    fd, tmp = tempfile.mkstemp(prefix="." + base + ".", dir=d or ".")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    dfd = os.open(d or ".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dfd)
    except OSError as e:
        if e.errno not in (errno.EINVAL, errno.EROFS, errno.ENOTSUP):
            raise
    finally:
        os.close(dfd)


# ------------------------------------------------------------------ Wheel

class Wheel:
    """One wheel: an open /dev/twheel.

    Wheel(tick_ns=, timeout_ns=, max_ids=, clockid=, nonblock=False,
          cloexec=True, device=DEVICE)

    Config keywords left out keep the module's defaults (1 ms tick, 30 s
    timeout, 1048576 ids, CLOCK_MONOTONIC).
    """

    def __init__(self, tick_ns: Optional[int] = None,
                 timeout_ns: Optional[int] = None,
                 max_ids: Optional[int] = None, clockid: Optional[int] = None,
                 nonblock: bool = False, cloexec: bool = True,
                 device: StrPath = DEVICE, _fd: Optional[int] = None,
                 _closefd: bool = True) -> None:
        self._fd: Optional[int] = None
        self._closefd = _closefd
        # events read from the kernel that no caller has had yet: see _held
        self._held: collections.deque[Event] = collections.deque()
        # tasks waiting for the fd to be readable, per event loop
        self._waiters: dict[asyncio.AbstractEventLoop,
                            set[asyncio.Future[None]]] = {}
        self._nonblock = nonblock and _fd is None   # O_NONBLOCK known set
        if _fd is None:
            flags = os.O_RDWR | (os.O_NONBLOCK if nonblock else 0)
            if cloexec:
                flags |= os.O_CLOEXEC
            _fd = os.open(device, flags)
            if not cloexec:
                os.set_inheritable(_fd, True)
        self._fd = _fd
        try:
            given = dict(tick_ns=tick_ns, timeout_ns=timeout_ns,
                         max_ids=max_ids, clockid=clockid)
            kw = {k: v for k, v in given.items() if v is not None}
            if kw:
                self.set_config(None, **kw)
        except BaseException:
            self.close()
            raise

    @classmethod
    def from_fd(cls: type[_WheelT], fd: int, closefd: bool = True) -> _WheelT:
        """Wrap an existing twheel fd (inherited, received over SCM_RIGHTS)."""
        w = cls(_fd=fd, _closefd=closefd)
        w.get_config()      # ENOTTY if it is not a twheel fd
        return w

    # -- fd plumbing
    def fileno(self) -> int:
        if self._fd is None:
            raise ValueError("I/O operation on a closed Wheel")
        return self._fd

    @property
    def closed(self) -> bool:
        return self._fd is None

    def close(self) -> None:
        """Close the fd.  Tasks waiting in wait(), aread() or events()
        wake up and raise ValueError; held events (see events()) are
        dropped, as the kernel drops the queued ones."""
        fd, self._fd = self._fd, None
        self._held.clear()
        if fd is not None:
            self._wake_all(fd)
        if fd is not None and self._closefd:
            os.close(fd)

    def __enter__(self: _WheelT) -> _WheelT:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        if self._fd is None:
            return "<twheel.Wheel closed>"
        return "<twheel.Wheel fd=%d>" % self._fd

    def _ioctl(self, req: int, buf: _Buf) -> _Buf:
        fcntl.ioctl(self.fileno(), req, buf, True)
        return buf

    # -- configuration
    def get_config(self) -> Config:
        b = self._ioctl(TWHEEL_IOC_GET_CONFIG, bytearray(_CONFIG.size))
        return Config(*_CONFIG.unpack(b))

    def set_config(self, config: Optional[Iterable[int]] = None,
                   **changes: int) -> Config:
        """Replace the configuration: a Config, and/or fields to change.

        Fields not given keep their current values.  EINVAL for values
        out of range, EBUSY to change tick_ns/clockid while ids are held.
        """
        cur = self.get_config() if config is None else Config(*config)
        for k in changes:
            if k not in Config._fields:
                raise TypeError("unknown config field %r" % k)
        cur = cur._replace(**changes)
        try:
            b = bytearray(_CONFIG.pack(*(int(v) for v in cur)))
        except struct.error as e:
            raise _oserror(errno.EINVAL, "config value out of range (%s)" % e)
        self._ioctl(TWHEEL_IOC_SET_CONFIG, b)
        return Config(*(int(v) for v in cur))

    @property
    def config(self) -> Config:
        """The Config; assign a Config to replace it."""
        return self.get_config()

    @config.setter
    def config(self, config: Config) -> None:
        self.set_config(config)

    def now(self) -> int:
        """Current time on the wheel's clock, in ns."""
        return time.clock_gettime_ns(self.get_config().clockid)

    # -- ids
    def touch(self, ids: Union[int, Iterable[int]]) -> int:
        """(Re-)arm ids at now + timeout_ns: the number that took effect.

        Like write(): if the first id fails the error is raised, if a later
        one fails the short count is returned.
        """
        a = _ids_array(ids)
        mv = memoryview(a).cast("B")
        done = 0
        while done < len(mv):
            try:
                n = os.write(self.fileno(), mv[done:])
            except OSError:
                if done:
                    break
                raise
            if n <= 0:
                break
            done += n
        if self._held:
            self._discard_held(a[:done // 8])
        return done // 8

    def arm(self, entries: Union[Iterable[ArmEntry], int, None] = None,
            id: Optional[int] = None, timeout_ns: int = 0, data: int = 0,
            flags: int = 0) -> int:
        """Arm ids: arm([(id, timeout_ns, data, flags), ...]) or
        arm(id=.., timeout_ns=.., data=.., flags=..).  Returns the count.

        timeout_ns is relative (0: the default timeout) unless flags has
        TWHEEL_ARM_ABSTIME.  On error, OSError.done = entries that took
        effect (the failing entry is entries[done]).
        """
        if entries is None:
            if id is None:
                raise TypeError("arm() needs entries or id=")
            entries = [(id, timeout_ns, data, flags)]
        elif isinstance(entries, int):
            entries = [(entries, timeout_ns, data, flags)]
        items = []
        for e in entries:
            row = tuple(Arm(**e) if isinstance(e, Mapping) else e)
            if not 1 <= len(row) <= 4:
                raise TypeError(
                    "an arm entry is (id, timeout_ns, data, flags)")
            items.append(row + (0,) * (4 - len(row)))
        held = {e.id for e in self._held}
        total = 0
        for start in range(0, len(items), 4096):
            chunk = items[start:start + 4096]
            buf = array.array("B", bytes(len(chunk) * _ARM.size))
            ids = array.array("Q")
            for eid, t, d, f in chunk:
                f = int(f)
                if not 0 <= f <= 0xFFFFFFFF:
                    raise _oserror(errno.EINVAL, "flags", done=total)
                eid = _u64(eid, "id")
                if f & TWHEEL_ARM_NOREPLACE and eid in held:
                    break       # an expired id, as far as callers know
                _ARM.pack_into(buf, len(ids) * _ARM.size, eid,
                               _u64(t, "timeout_ns"), _u64(d, "data"), f, 0)
                ids.append(eid)
            try:
                done = self._batch(TWHEEL_IOC_ARM, buf, len(ids), total)
            except OSError as e:
                self._discard_held(ids[:getattr(e, "done") - total])
                raise
            self._discard_held(ids[:done])
            total += done
            if len(ids) < len(chunk):
                raise _oserror(errno.EEXIST, "id %d" % chunk[len(ids)][0],
                               done=total)
        return total

    def _batch(self, req: int, buf: array.array[int], count: int,
               before: int) -> int:
        b = bytearray(_BATCH.pack(_addr(buf) if count else 0, count, 0, 0))
        try:
            self._ioctl(req, b)
        except OSError as e:
            setattr(e, "done", before + _BATCH.unpack(b)[2])
            raise
        done: int = _BATCH.unpack(b)[2]
        return done

    def cancel(self, ids: Union[int, Iterable[int]]) -> int:
        """Remove ids (armed or expired): the number that were present."""
        a = _ids_array(ids)
        done = self._batch(TWHEEL_IOC_CANCEL, a, len(a), 0)
        return done + self._discard_held(a)

    def query(self, id: int) -> Query:
        """Query(id, state, deadline_ns, data); OSError(ENOENT) if absent."""
        want = _u64(id, "id")
        b = bytearray(_QUERY.pack(want, 0, 0, 0, 0))
        try:
            self._ioctl(TWHEEL_IOC_QUERY, b)
        except OSError as e:
            for ev in self._held:
                if e.errno == errno.ENOENT and ev.id == want:
                    return Query(ev.id, TWHEEL_STATE_EXPIRED,
                                 ev.deadline_ns, ev.data)
            raise
        i, deadline, data, state, _ = _QUERY.unpack(b)
        return Query(i, state, deadline, data)

    def __contains__(self, id: int) -> bool:
        try:
            self.query(id)
        except OSError as e:
            if e.errno == errno.ENOENT:
                return False
            raise
        return True

    def stats(self) -> Stats:
        return Stats(*_STATS.unpack(
            self._ioctl(TWHEEL_IOC_GET_STATS, bytearray(_STATS.size))))

    # -- events
    def read(self, n: int = 64,
             timeout: Optional[float] = None) -> list[Event]:
        """Up to n expired Events, oldest first.

        timeout None waits for at least one, 0 does not wait, a number
        waits at most that many seconds; [] when nothing came in time.
        Held events (see events()) come first, without a system call.
        """
        n = _count(n, "read()")
        fd = self.fileno()
        if self._held:
            return self._take_held(n)
        end = None if timeout is None else time.monotonic() + max(timeout, 0)
        p = select.poll()
        p.register(fd, select.POLLIN)
        while True:
            if end is None:
                ms = None
            else:
                left = end - time.monotonic()
                ms = max(0, int(left * 1000 + 0.999))
            ready = p.poll(ms)
            if ready:
                if ready[0][1] & select.POLLNVAL:
                    raise _oserror(errno.EBADF)
                try:
                    data = os.read(fd, n * _EVENT.size)
                except BlockingIOError:
                    data = b""       # another reader took them
                if data:
                    return _events(data)
            if end is not None and time.monotonic() >= end:
                return []

    # -- events, for asyncio
    #
    # A task waits for the fd to be readable (loop.add_reader, one per
    # loop for all the tasks waiting on this Wheel) and only then reads,
    # itself, with O_NONBLOCK, returning what it read before its next
    # await.  A task cancelled while it waits has read nothing, so it
    # cannot take events with it.  Tasks woken together each try a read;
    # the ones that find the queue empty wait again.

    async def wait(self) -> None:
        """Wait until an event is queued; read nothing.

        Another reader may still take the event first: a task that wants
        events should call aread() or iterate events(), which wait and
        read.  Cancellation-safe, like everything here.
        """
        self.fileno()
        if not self._held:
            await self._readable()

    async def aread(self, n: int = 64) -> list[Event]:
        """Up to n expired Events, oldest first, waiting for at least one.

        The asyncio read(): it never blocks the loop, and a task cancelled
        while it waits (asyncio.timeout(), wait_for(), task.cancel()) has
        read nothing, so no event is lost:

            try:
                async with asyncio.timeout(5):
                    events = await wheel.aread(1024)
            except TimeoutError:
                events = []     # and none were taken from the wheel
        """
        n = _count(n, "aread()")
        fd = self._async_fd()
        while True:
            if self._held:
                return self._take_held(n)
            evs = self._read_nowait(fd, n)
            if evs:
                return evs
            await self._readable()

    async def events(self, batch: int = 64) -> AsyncIterator[Event]:
        """Every expired Event as it comes: an endless async iterator.

            async for ev in wheel.events():
                await mark_offline(ev.id)

        It reads up to batch events at a time and yields them one by one.
        Those it has not yielded when the loop stops (a break, an
        exception, a cancelled task) stay buffered in the Wheel, as bytes
        read ahead stay in an asyncio.StreamReader: "held" events, still
        queued as far as this Wheel's callers can tell: the next read of
        any kind (read(), aread(), events()) returns them first; touch(),
        arm() and cancel() of their ids discard them, as the kernel
        discards a queued event; query() and dump() report them as
        expired.  stats().pending does not count them, and touches
        through another fd of the same wheel cannot see them: a wheel
        shared with another process wants events(batch=1), which holds
        none (a read a time costs ~10 times as much per event: 3.1 us
        against 0.3 us on a pipe).  A loop left with break leaves the
        iterator open until it is garbage-collected;
        contextlib.aclosing(wheel.events()) closes it at once.
        """
        batch = _count(batch, "events()")
        while True:
            if not self._held:
                # the fd again after each yield: the Wheel may be closed
                evs = self._read_nowait(self._async_fd(), batch)
                if not evs:
                    await self._readable()
                    continue
                self._held.extend(evs)
            yield self._held.popleft()

    def _async_fd(self) -> int:
        """The fd, made O_NONBLOCK (once) so that a read never blocks the
        loop."""
        fd = self.fileno()
        if not self._nonblock:
            os.set_blocking(fd, False)
            self._nonblock = True
        return fd

    def _read_nowait(self, fd: int, n: int) -> list[Event]:
        try:
            return _events(os.read(fd, n * _EVENT.size))
        except BlockingIOError:
            return []

    async def _readable(self) -> None:
        """Return once the fd polls readable; ValueError if the Wheel was
        closed meanwhile."""
        import asyncio

        loop = asyncio.get_running_loop()
        fd = self.fileno()
        waiters = self._waiters.get(loop)
        if waiters is None:
            loop.add_reader(fd, self._wake, loop, fd)
            waiters = self._waiters[loop] = set()
        fut = loop.create_future()
        waiters.add(fut)
        try:
            await fut
        finally:
            waiters.discard(fut)
            if not waiters and self._waiters.get(loop) is waiters:
                del self._waiters[loop]
                loop.remove_reader(fd)
        self.fileno()

    def _wake(self, loop: asyncio.AbstractEventLoop, fd: int) -> None:
        """The reader callback: wake every task waiting on this loop."""
        waiters = self._waiters.pop(loop, set())
        loop.remove_reader(fd)
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)

    def _wake_all(self, fd: int) -> None:
        for loop in list(self._waiters):
            if loop.is_closed():
                del self._waiters[loop]
            else:
                self._wake(loop, fd)

    # -- held events (see events())
    def _take_held(self, n: int) -> list[Event]:
        evs: list[Event] = []
        try:
            while len(evs) < n:
                evs.append(self._held.popleft())
        except IndexError:      # taken by another thread
            pass
        return evs

    def _discard_held(self, ids: array.array[int]) -> int:
        """Drop the held events of ids: the number dropped."""
        if not self._held:
            return 0
        hit = {e.id for e in self._held}.intersection(ids)
        if not hit:
            return 0
        keep = [e for e in self._held if e.id not in hit]
        dropped = len(self._held) - len(keep)
        self._held.clear()
        self._held.extend(keep)
        return dropped

    def dump(self) -> list[Arm]:
        """Every armed or expired id as Arm(id, deadline_ns, data,
        TWHEEL_ARM_ABSTIME): feed it to arm() to recreate the wheel."""
        return list(self.iter_dump())

    def iter_dump(self, batch: int = _DUMP_BATCH) -> Iterator[Arm]:
        """dump() one entry at a time; held events (see events()) last."""
        held = list(self._held)
        seen = set()
        buf = array.array("B", bytes(batch * _ARM.size))
        cursor = 0
        while True:
            d = bytearray(_DUMP.pack(_addr(buf), batch, 0, cursor))
            self._ioctl(TWHEEL_IOC_DUMP, d)
            _, _, done, cursor = _DUMP.unpack(d)
            if not done:
                break
            for i in range(done):
                eid, t, data, flags, _ = _ARM.unpack_from(buf, i * _ARM.size)
                if held:
                    seen.add(eid)
                yield Arm(eid, t, data, flags)
        for ev in held:
            if ev.id not in seen:
                yield Arm(ev.id, ev.deadline_ns, ev.data, TWHEEL_ARM_ABSTIME)

    # -- snapshots
    def save(self, path: StrPath) -> int:
        """Snapshot the wheel to path, atomically; returns the id count.

        Same format as twheel_save(3): deadlines against CLOCK_REALTIME.
        """
        cfg = self.get_config()
        entries = {}
        for e in self.iter_dump():
            entries[e.id] = e
        now_w, now_rt = _clock_pair(cfg.clockid)
        rows = sorted((_convert(e.timeout_ns, now_w, now_rt), e.id, e.data)
                      for e in entries.values())
        words = array.array("Q")
        for deadline, eid, data in rows:
            words.append(eid)
            words.append(deadline)
            words.append(data)
        if sys.byteorder != "little":
            words.byteswap()
        body = words.tobytes()
        hdr = bytearray(_HDR.pack(_MAGIC, _SNAP_VERSION, 0, len(rows),
                                  cfg.clockid, _ENTRY_SIZE, now_rt,
                                  cfg.tick_ns, cfg.timeout_ns,
                                  binascii.crc32(body), 0))
        struct.pack_into("<I", hdr, 60, binascii.crc32(hdr[:60]))
        _write_atomic(path, bytes(hdr) + body)
        return len(rows)

    def restore(self, path: StrPath) -> int:
        """Arm every id of a snapshot: the number restored.

        The file is validated before anything is armed (OSError(EBADMSG)
        and nothing changes if it is corrupt).  Deadlines already passed
        are armed at now, so they expire at once.
        """
        cfg = self.get_config()
        _, words = _load(path)
        now_w, now_rt = _clock_pair(cfg.clockid)
        entries = []
        for i in range(0, len(words), 3):
            d = _convert(words[i + 1], now_rt, now_w)
            entries.append((words[i], max(d, now_w), words[i + 2],
                            TWHEEL_ARM_ABSTIME))
        return self.arm(entries)
