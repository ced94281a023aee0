"""The two shared-memory rings of a client, in Agrona's ring buffer layout.

A ring is ``capacity`` bytes of records (a power of two) followed by a 768-byte trailer of int64 positions, each
alone on its own 128-byte line::

    trailer + 128  tail        producer position (bytes ever claimed)
    trailer + 256  head cache  the producer's last look at head
    trailer + 384  head        consumer position (bytes ever consumed)
    trailer + 512  correlation counter (unused here)
    trailer + 640  an int32 doorbell: on the submit ring the daemon's (:class:`Doorbell`), on the completion ring
                   this client's (:class:`CompletionDoorbell`)

A record is ``int32 length`` (header included, before alignment; negative or zero while being written),
``int32 type``, then the body; records start at multiples of 8. Type -1 is padding that fills the end of the data
area when the next record does not fit there.

Memory ordering: every int32/int64 field is read and written through a native ``memoryview`` cast, one aligned
load or store of the field's width, so no field is ever torn. CPython performs each such access as its own C call,
in program order; on x86-64 (TSO) stores become visible to the daemon in that order and loads are not reordered
with older loads, which is all the one-to-one protocol needs (release = plain store, acquire = plain load). On
other architectures a full fence (the kernel's, :func:`_fence`) is issued before the releasing stores.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import sys
import threading
from typing import Callable

from .protocol import PADDING, align8

TRAILER_LENGTH = 768
TAIL_OFFSET = 128
HEAD_CACHE_OFFSET = 256
HEAD_OFFSET = 384
CORRELATION_COUNTER_OFFSET = 512
CONSUMER_HEARTBEAT_OFFSET = 640
SUBMIT_DOORBELL_OFFSET = CONSUMER_HEARTBEAT_OFFSET
COMPLETION_DOORBELL_OFFSET = CONSUMER_HEARTBEAT_OFFSET
DOORBELL_ASLEEP = 1
RECORD_HEADER_LENGTH = 8

if sys.byteorder != "little":  # pragma: no cover - the protocol is little-endian and so are the native views
    raise ImportError("xferd's shared-memory rings need a little-endian machine")

_TSO = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")
_fence_lock = threading.Lock()


def _fence() -> None:
    """A full memory barrier on weakly ordered CPUs, before a releasing store (a record's length, the ring's head):
    the kernel's atomic exchange (:func:`_kernel_fence`, one system call). A lock round trip is not enough there: on
    arm64 under CPython 3.10-3.12 (a semaphore-based lock) it need not order a body's stores before the length's,
    and the daemon could read a committed record with a stale body. Where futex(2) is unusable the lock round trip
    is the best there is. A no-op on x86-64, where stores are not reordered."""
    if not _TSO:
        if _futex_usable():
            _kernel_fence()
        else:
            with _fence_lock:
                pass


# futex(2)'s number where it is known; elsewhere the daemon still serves the request within its bounded sleep, and
# a waiting client polls instead of sleeping on its completion doorbell. platform.machine() names the kernel's
# architecture: a 32-bit interpreter on a 64-bit kernel would call another system call by these numbers (i386's 202
# is getegid32), hence the interpreter's own word size
_SYS_FUTEX = {"x86_64": 202, "amd64": 202, "aarch64": 98, "arm64": 98}.get(platform.machine().lower()) \
    if sys.maxsize > 2**32 else None
_FUTEX_WAIT = 0
_FUTEX_WAKE = 1
_FUTEX_WAKE_OP = 5
# FUTEX_OP(FUTEX_OP_SET, 1, FUTEX_OP_CMP_LT, 0): store 1 in the second word; wake its waiters only if its old value
# was negative, which a doorbell's never is
_FUTEX_OP_SET_ONE = (0 << 28) | (2 << 24) | (1 << 12) | 0
_libc: ctypes.CDLL | None = None
# the first word of FUTEX_WAKE_OP, which nobody waits on, so that marking a doorbell wakes nobody
_NOBODY = ctypes.c_int32(0)
# the second word of FUTEX_WAKE_OP when it only stands in for a fence (:func:`_kernel_fence`)
_FENCE_WORD = ctypes.c_int32(0)


# the errors a FUTEX_WAIT ends with in normal use: the word was not the expected value, the bound passed, a signal
_FUTEX_WAIT_ENDINGS = frozenset((errno.EAGAIN, errno.ETIMEDOUT, errno.EINTR))
_futex_checked: bool | None = None  # whether futex(2) behaves as one, once found out (:func:`_futex_usable`)


class _Timespec(ctypes.Structure):
    """The kernel's ``struct timespec`` (64-bit ``long`` fields): a FUTEX_WAIT's relative bound."""

    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def _syscall() -> Callable[..., int]:
    """libc's ``syscall`` (a ``CDLL`` function: the GIL is released while it runs)."""
    global _libc
    if _libc is None:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        _libc = libc
    return _libc.syscall


def _store_one(address: int) -> int:
    """Store 1 in the int32 at ``address`` in the kernel (FUTEX_WAKE_OP, waking nobody): an atomic exchange, a full
    barrier (x86-64: ``xchg``, a locked instruction; arm64: an exclusive pair and ``dmb ish``). The system call's
    result: negative when it failed."""
    return _syscall()(ctypes.c_long(_SYS_FUTEX), ctypes.byref(_NOBODY), ctypes.c_long(_FUTEX_WAKE_OP),
                      ctypes.c_long(0), ctypes.c_void_p(0), ctypes.c_void_p(address), ctypes.c_long(_FUTEX_OP_SET_ONE))


def _kernel_fence() -> None:
    """A full barrier, store then load included, from the kernel (:func:`_store_one` on a word of this module)."""
    _store_one(ctypes.addressof(_FENCE_WORD))


def _futex_usable() -> bool:
    """Whether :data:`_SYS_FUTEX` is futex(2) and the kernel lets this process use it, found out once, on a word of
    this process: FUTEX_WAKE_OP must store 1 in its second word, and a FUTEX_WAIT expecting another value must fail
    with EAGAIN. Another system call under that number (or a seccomp filter that answers in its place) does neither,
    and a waiter that trusted it would never really sleep: a busy loop."""
    global _futex_checked
    if _futex_checked is None:
        # the answer is published once, when known: the check's system calls let other threads run, and one that
        # built its first client meanwhile would otherwise read a provisional answer and keep it for that client's
        # life (two threads may both check: they find the same)
        usable = False
        if _SYS_FUTEX is not None:
            word = ctypes.c_int32(0)
            if _store_one(ctypes.addressof(word)) >= 0 and word.value == 1:
                ctypes.set_errno(0)
                waited = _syscall()(ctypes.c_long(_SYS_FUTEX), ctypes.byref(word), ctypes.c_long(_FUTEX_WAIT),
                                    ctypes.c_long(0), ctypes.byref(_Timespec(0, 1)))
                usable = waited == -1 and ctypes.get_errno() == errno.EAGAIN
        _futex_checked = usable
    return _futex_checked


def _futex_wake(address: int) -> int:
    """Wake one thread of any process waiting on the shared futex word at ``address``; returns how many woke."""
    if _SYS_FUTEX is None:
        return 0
    return max(0, _syscall()(ctypes.c_long(_SYS_FUTEX), ctypes.c_void_p(address), ctypes.c_long(_FUTEX_WAKE),
                             ctypes.c_long(1)))


class RingView:
    """Native views over one ring (data and trailer) inside a mapped buffer: int32 and int64 indexable arrays."""

    def __init__(self, buffer, offset: int, length: int) -> None:
        capacity = length - TRAILER_LENGTH
        if capacity <= 0 or capacity & (capacity - 1) or offset % 8:
            raise ValueError(f"ring of {length} bytes at offset {offset}: capacity {capacity} must be a power of "
                             f"two plus the {TRAILER_LENGTH}-byte trailer, 8-byte aligned")
        whole = memoryview(buffer)
        if offset + length > len(whole):
            raise ValueError(f"ring [{offset}, {offset + length}) beyond a buffer of {len(whole)} bytes")
        self.capacity = capacity
        self.bytes = whole[offset:offset + length]
        self.i32 = self.bytes.cast("i")
        self.i64 = self.bytes.cast("q")
        self.tail_index = (capacity + TAIL_OFFSET) // 8
        self.head_cache_index = (capacity + HEAD_CACHE_OFFSET) // 8
        self.head_index = (capacity + HEAD_OFFSET) // 8
        # the largest body a record may carry, as Agrona's rings enforce it (capacity / 8)
        self.max_message_length = max(RECORD_HEADER_LENGTH, capacity >> 3)

    def release(self) -> None:
        """Drop the views so the underlying mapping can be closed."""
        for view in (self.i64, self.i32, self.bytes):
            view.release()

    def tail(self) -> int:
        """The producer position."""
        return self.i64[self.tail_index]

    def head(self) -> int:
        """The consumer position."""
        return self.i64[self.head_index]


class SubmitRingWriter:
    """The single producer of a one-to-one ring (the client's submit ring; the daemon is the only consumer).

    Not thread-safe: the caller serialises :meth:`try_claim` ... :meth:`commit` pairs (one lock per client).
    """

    def __init__(self, ring: RingView) -> None:
        self._ring = ring
        self._mask = ring.capacity - 1
        self.capacity = ring.capacity
        self.max_message_length = ring.max_message_length
        # bound once for :meth:`claim`, which runs once per request
        self._i64 = ring.i64
        self._tail_index = ring.tail_index
        self._head_cache_index = ring.head_cache_index
        #: the index of the record claimed and not yet published, else -1. Set in the same run of stores as the
        #: tail that claims it (no call between them, so no signal handler can run there) and cleared in the same
        #: run as the store that publishes it: a caller interrupted in between (even by KeyboardInterrupt, or
        #: losing the index :meth:`claim` returned) finds the claim here and voids it, so the ring never stalls
        self.open_claim = -1

    @property
    def buffer(self) -> memoryview:
        """The ring's bytes: write the claimed body at the index :meth:`try_claim` returned."""
        return self._ring.bytes

    def claim(self, record_type: int, record_length: int) -> int:
        """Claim space for a whole record (header included, ``record_length`` at most
        :attr:`max_message_length` + 8) whose header the caller writes itself, length negative first (one
        ``pack_into`` of header and body together), then publishes with :meth:`publish`.

        The common case (room before the end of the data area, per the cached head) is a few loads and two stores;
        everything else goes through :meth:`try_claim`.

        :returns: the record's offset in :attr:`buffer`, or -1 when the consumer has not freed enough space yet.
        """
        i64 = self._i64
        tail = i64[self._tail_index]
        index = tail & self._mask
        aligned = (record_length + 7) & -8
        required = aligned + RECORD_HEADER_LENGTH
        if required <= self.capacity - index and required <= self.capacity - tail + i64[self._head_cache_index]:
            i64[(index + aligned) >> 3] = 0  # the next record's header, so the consumer stops there
            i64[self._tail_index] = tail + aligned
            self.open_claim = index
            return index
        body = self.try_claim(record_type, record_length - RECORD_HEADER_LENGTH)
        return body - RECORD_HEADER_LENGTH if body >= 0 else -1

    def publish(self, record_index: int, record_length: int) -> None:
        """Publish a record claimed with :meth:`claim` whose header and body are written: its length turns
        positive in one aligned store, and the consumer may read it."""
        if not _TSO:
            _fence()
        self._ring.i32[record_index >> 2] = record_length
        self.open_claim = -1

    def try_claim(self, record_type: int, body_length: int) -> int:
        """Claim space for a record and mark it as being written.

        :returns: the offset of the record's body in :attr:`buffer`, or -1 when the consumer has not freed enough
            space yet (try again later).
        :raises ValueError: for a body longer than the ring accepts.
        """
        if body_length < 0 or body_length > self.max_message_length:
            raise ValueError(f"record body of {body_length} bytes; this ring takes at most {self.max_message_length}")
        ring = self._ring
        i32, i64 = ring.i32, ring.i64
        record_length = body_length + RECORD_HEADER_LENGTH
        aligned = align8(record_length)
        # room for the record plus the next record's header, which is zeroed ahead so the consumer stops there
        required = aligned + RECORD_HEADER_LENGTH
        capacity = self.capacity
        head = i64[ring.head_cache_index]
        tail = i64[ring.tail_index]
        if required > capacity - (tail - head):
            head = i64[ring.head_index]
            if required > capacity - (tail - head):
                return -1
            i64[ring.head_cache_index] = head
        index = tail & self._mask
        to_end = capacity - index
        write_index = index
        padding = 0
        if required > to_end and aligned != to_end:  # does not fit before the end: pad to the end, write at 0
            write_index = 0
            head_index = head & self._mask
            if required > head_index:
                head = i64[ring.head_index]
                head_index = head & self._mask
                if required > head_index:
                    write_index = -1
                i64[ring.head_cache_index] = head
            padding = to_end
        # every store into the data area first: the consumer takes a record only once the tail covers it (PROTOCOL.md
        # 3.3, step 6), so an exception before the tail's store leaves nothing taken, and the next claim, from the
        # same tail, stores the same again
        if padding:
            i64[0] = 0
            i32[index // 4 + 1] = PADDING
            if not _TSO:
                _fence()
            i32[index // 4] = padding
        if write_index >= 0:
            next_header = write_index + aligned
            if next_header < capacity:
                i64[next_header // 8] = 0
            else:
                i64[0] = 0  # the record ends exactly at the end of the data area
            i32[write_index // 4] = -record_length
            i32[write_index // 4 + 1] = record_type
        # then, with no call between them (a signal handler runs only at one): the tail, and the claim it makes
        i64[ring.tail_index] = tail + padding + (aligned if write_index >= 0 else 0)
        if write_index < 0:
            return -1
        self.open_claim = write_index
        return write_index + RECORD_HEADER_LENGTH

    def commit(self, body_index: int) -> None:
        """Publish a claimed record whose body is written: its length turns positive, and the consumer may read it."""
        i32 = self._ring.i32
        at = (body_index - RECORD_HEADER_LENGTH) // 4
        length = i32[at]
        if length >= 0:
            raise RuntimeError(f"record at {body_index - RECORD_HEADER_LENGTH} was not claimed (length {length})")
        if not _TSO:
            _fence()
        i32[at] = -length
        self.open_claim = -1


class RingReader:
    """The single consumer of a ring (the client's completion ring): reads records in order, zeroes what it
    consumed, then advances head, so a producer's claim never sees stale bytes.

    Not thread-safe: one thread reads at a time (the client holds a poll lock).
    """

    def __init__(self, ring: RingView) -> None:
        self._ring = ring
        self._zeros = memoryview(bytes(ring.capacity))

    def read(self, handler, limit: int = 1 << 30) -> int:
        """Call ``handler(record_type, buffer, body_offset, body_length)`` for each complete record, up to ``limit``.

        :returns: the number of records handed over (padding excluded).
        """
        ring = self._ring
        i32 = ring.i32
        buffer = ring.bytes
        capacity = ring.capacity
        head = ring.i64[ring.head_index]
        head_index = head & (capacity - 1)
        block = capacity - head_index
        consumed = 0
        records = 0
        try:
            while consumed < block and records < limit:
                index = head_index + consumed
                length = i32[index // 4]
                if length <= 0:
                    break
                if length < RECORD_HEADER_LENGTH or length > block - consumed:
                    raise ValueError(f"corrupt ring record at {index}: length {length}")
                consumed += (length + 7) & -8  # align8, inline: this loop runs once per completion
                record_type = i32[index // 4 + 1]
                if record_type == PADDING:
                    continue
                records += 1
                handler(record_type, buffer, index + RECORD_HEADER_LENGTH, length - RECORD_HEADER_LENGTH)
        finally:
            if consumed:
                buffer[head_index:head_index + consumed] = self._zeros[:consumed]
                if not _TSO:
                    _fence()
                ring.i64[ring.head_index] = head + consumed
        return records


class Doorbell:
    """This client's side of its submit ring's doorbell (the int32 at trailer + 640): after a quiet spell the
    daemon's intake thread stores 1 there and sleeps on it (a shared futex); a client that finds it so after
    publishing stores 0 and wakes the thread (``FUTEX_WAKE``), so its request is served at once instead of when the
    daemon's bounded sleep ends. While the daemon polls, ringing costs a fence and a load (the fence is a system
    call on weakly ordered machines, :meth:`ring`)."""

    def __init__(self, ring: RingView, address: int) -> None:
        """``address``: where the ring starts in this process's memory (the mapping's address plus its offset)."""
        self._i32 = ring.i32
        self._index = (ring.capacity + SUBMIT_DOORBELL_OFFSET) // 4
        self._address = address + ring.capacity + SUBMIT_DOORBELL_OFFSET
        self.woken = 0
        """How many times ringing woke a sleeping daemon thread."""
        self._kernel_fence = not _TSO and _futex_usable()

    def ring(self) -> int:
        """Call after publishing a record; returns how many sleeping daemon threads it woke (0 or 1)."""
        # a full fence, store then load, on x86-64 too: the record's store must be visible before the doorbell is
        # loaded, as the daemon stores the doorbell, fences, then looks at the ring once more; else both miss the
        # other's store and the request waits out the daemon's bounded sleep (100 ms). On x86-64 an uncontended lock
        # is one (its read-modify-write is a locked instruction: ~0.3 us). Elsewhere it is only acquire then release
        # (on arm64 a later load may pass an earlier store), so the kernel's atomic exchange stands in, as for the
        # completion doorbell's mark: a system call per ring (~3 us through ctypes on the loaded x86-64 test VM)
        # against a 100 ms stall of the first request after a pause
        if self._kernel_fence:
            _kernel_fence()
        else:
            with _fence_lock:
                pass
        if self._i32[self._index] == 0:
            return 0
        self._i32[self._index] = 0
        woken = _futex_wake(self._address)
        self.woken += woken
        return woken

    def is_marked(self) -> bool:
        """True while the daemon has marked this doorbell (it may sleep on it)."""
        return self._i32[self._index] == DOORBELL_ASLEEP


class CompletionDoorbell:
    """This client's side of its completion ring's doorbell (the int32 at trailer + 640; PROTOCOL.md 3.7): a waiter
    that found nothing for a while marks it (:meth:`arm`), looks at the ring once more, and sleeps on it
    (:meth:`sleep`, a shared futex); the daemon, after committing a record there, finds it marked, stores 0 and wakes
    the sleeper. Every sleep is bounded by its caller: a daemon that never rings (an older one) is still served.

    One thread at a time arms, sleeps and disarms (the client's poll lock); :meth:`wake` may come from any thread.
    """

    def __init__(self, ring: RingView, address: int) -> None:
        """``address``: where the ring starts in this process's memory (the mapping's address plus its offset)."""
        self._i32 = ring.i32
        self._index = (ring.capacity + COMPLETION_DOORBELL_OFFSET) // 4
        self.address = address + ring.capacity + COMPLETION_DOORBELL_OFFSET
        self._timeout = _Timespec()
        self.usable = _futex_usable()
        """False where futex(2) is unknown, refused or fails: waiters then poll with bounded sleeps instead."""

    def arm(self) -> bool:
        """Mark the word asleep, with a full barrier after the store; False (and :attr:`usable` cleared) when the
        kernel refused, in which case the caller must not sleep on it.

        Why the kernel stores it: the daemon commits a record, fences, then loads the word; this side stores the word,
        then loads the ring's tail. Unless each side fences between its store and its load, both can miss the
        other's store (the waiter sleeps on a record the daemon did not ring for, for its whole bound). Python has no
        fence, and ctypes no atomic operation; FUTEX_WAKE_OP's operation on its second word is an atomic exchange
        in the kernel (x86-64: ``xchg``, a locked instruction; arm64: an exclusive pair and ``dmb ish``), a full
        barrier on either, and it wakes nobody here. One system call, before a sleep that costs another.
        """
        if not self.usable:
            return False
        if _store_one(self.address) < 0:
            self.usable = False
            return False
        return True

    def sleep(self, timeout_ns: int) -> None:
        """Sleep while the word stays marked: until the daemon rings, :meth:`wake`, a signal, or ``timeout_ns``; at
        once when the daemon rang already (it cleared the word). The GIL is released meanwhile. A FUTEX_WAIT that
        fails otherwise (it did not sleep, and would not next time) clears :attr:`usable`."""
        timeout = self._timeout
        timeout.tv_sec, timeout.tv_nsec = divmod(max(1, timeout_ns), 1_000_000_000)
        if _syscall()(ctypes.c_long(_SYS_FUTEX), ctypes.c_void_p(self.address), ctypes.c_long(_FUTEX_WAIT),
                      ctypes.c_long(DOORBELL_ASLEEP), ctypes.byref(timeout)) < 0 \
                and ctypes.get_errno() not in _FUTEX_WAIT_ENDINGS:
            self.usable = False

    def disarm(self) -> None:
        """Clear the mark after a sleep, so that the daemon does not ring for a waiter that polls again."""
        self._i32[self._index] = 0

    def wake(self) -> None:
        """Clear the mark and wake the thread asleep on it (the client closes, or found its daemon gone: that thread
        must not sleep on). Clearing the mark first also ends a sleep that has not begun yet: FUTEX_WAIT finds the
        word changed. The sleeper tells this from a ring by the client's state, not by the word."""
        self._i32[self._index] = 0
        _futex_wake(self.address)

    def is_marked(self) -> bool:
        """True while a waiter has marked the word (it may be asleep on it)."""
        return self._i32[self._index] == DOORBELL_ASLEEP


class RingWriter:
    """A plain single producer for tests that play the daemon's part on a completion ring (same layout and
    ordering as :class:`SubmitRingWriter`)."""

    def __init__(self, ring: RingView) -> None:
        self._writer = SubmitRingWriter(ring)

    def write(self, record_type: int, body: bytes) -> bool:
        """Write one record; False when the ring is full."""
        index = self._writer.try_claim(record_type, len(body))
        if index < 0:
            return False
        self._writer.buffer[index:index + len(body)] = body
        self._writer.commit(index)
        return True
