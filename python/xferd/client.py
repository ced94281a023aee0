"""The client of the local xferd daemon: the Python counterpart of the Java ``ipc-client``.

::

    with xferd.connect("/dev/shm/xferd", "prefill-0") as client:
        kv = client.allocate_memory(1 << 30)                 # a memfd the daemon maps: zero copies
        client.register_memory(kv.address, kv.length, "cpu:0")
        decode = client.open_segment("decode-0")             # or "host:port/decode-0", or a session "host:port"
        client.batch_transfer_sync(xferd.WRITE, decode, [kv.address], [peer_address], [kv.length])

Requests go into this client's own submit ring (a one-to-one ring in the rings file the daemon passed with
WELCOME); a batch of any size is one or a few SUBMIT_BATCH records, each answered by one completion. Every method is
thread-safe: submissions are serialised by a lock held only while a record is written; completions are read by
whichever waiting thread gets the poll lock and handed to the waiters' events. A waiting thread spins briefly, then
sleeps (releasing the GIL): the one holding the poll lock on the completion ring's doorbell, which the daemon rings
when it commits a record there, the others on their transfers' events.
"""

from __future__ import annotations

import _thread
import array
import collections
import contextlib
import ctypes
import mmap
import operator
import os
import struct
import threading
import time
from typing import Callable, Iterable, Sequence

from . import protocol as p
from .cnc import CncFile
from .control import ControlChannel
from .cuda import runtime as cuda_runtime
from .errors import (ClientBusyError, ControlError, DaemonGoneError, TransferFailedError, TransferStatus,
                     TransferTimeoutError, XferError)
from .memory import SharedBuffer
from .protocol import Notification
from .rings import _TSO, RECORD_HEADER_LENGTH, CompletionDoorbell, Doorbell, RingView, SubmitRingWriter, _fence

DEFAULT_DIRECTORY = "/dev/shm/xferd"
# Waiting for a completion: first spin on the completion ring's next length word (two plain loads per iteration:
# no lock, no syscall, no allocation), then sleep, releasing the GIL: on the transfer's event for about a millisecond
# (a completion that close is not worth a futex wake-up of the daemon's thread), then on the completion doorbell.
_SPINS_SMALL = 1_000         # iterations (~180 ns of CPU each on the 2 vCPU test VM: ~180 us) for a transfer of up to
_SPINS_LARGE = 100           # _SMALL_BYTES, ~18 us for a larger one: it takes milliseconds, and the GIL is better left
#                              to other threads
_FILE_GUARD = 1 << 20        # file regions are numbered this far apart (rounded length plus one guard step)
_SMALL_BYTES = 1 << 20
_MIN_SLEEP_S = 20e-6         # then sleep on the transfer's event, 20 us doubling to
_MAX_SLEEP_S = 1e-3          # 1 ms: waiters that do not hold the poll lock look again at least every millisecond
_PARK_PHASE_S = 1e-3         # the event sleeps asked for before the poll lock's holder sleeps on the doorbell
_DOORBELL_SLEEP_NS = 1_000_000  # the longest one sleep on the doorbell until the daemon rang it (an older one never
#                                 does), then as long as the liveness check's interval: the ring ends the sleep when
#                                 a record arrives, and a daemon gone (it cannot ring) is noticed as soon as before
_LIVENESS_CHECK_NS = 20_000_000
_RINGING_DAEMON_SLEEP_NS = _LIVENESS_CHECK_NS
# how long close() waits for the submit and state locks: every holder keeps them for microseconds and never blocks
# meanwhile, so only a holder that is close()'s own thread (interrupted by a signal handler that closes) holds on
_CLOSE_LOCK_WAIT_S = 1.0


class Wake:
    """A waiting thread's wake-up: :class:`threading.Event`'s ``set``, ``clear``, ``is_set`` and ``wait`` on one raw
    lock, held while the wake-up is not set.

    Not a :class:`threading.Event`: that is a ``Condition`` whose lock is taken and let go in Python frames, so an
    exception from a signal handler landing between the two leaves it held, and every later ``set()`` (a drain's, on
    any thread) then blocks for good. Here every step is one C call: an exception between two of them loses at most
    a wake-up, which the sleeper's timeout (never longer than the liveness interval) makes up for; ``set`` never
    blocks.
    """

    __slots__ = ("_lock",)

    def __init__(self) -> None:
        self._lock = _thread.allocate_lock()
        self._lock.acquire()

    def is_set(self) -> bool:
        """True once set and not cleared since."""
        return not self._lock.locked()

    def set(self) -> None:
        """Wake every thread waiting, and those that wait later until cleared."""
        try:
            self._lock.release()
        except RuntimeError:  # set already
            pass

    def clear(self) -> None:
        """Unset it (no effect while a waiter is passing the wake-up on)."""
        self._lock.acquire(False)

    def wait(self, timeout: float | None = None) -> bool:
        """Sleep until set or ``timeout`` seconds passed (GIL released); True when set."""
        if not self._lock.acquire(True, -1 if timeout is None else timeout):
            return False
        try:  # it stays set for the other waiters
            self._lock.release()
        except RuntimeError:  # a set() came in between
            pass
        return True


class Transfer:
    """One submitted batch (one or more ring records, one status). Returned by :meth:`Client.submit`.

    Its state changes under its client's state lock (a one-record transfer's completion excepted, see
    :meth:`Client._drain`); a waiting thread's event is made only when it goes to sleep.

    Recording a completion is idempotent, so that a drain interrupted by an exception (a signal handler's) before it
    let go of the record can record it again: each part's outcome is one store, and the transfer's outcome is
    worked out again from the parts until it is stored.
    """

    __slots__ = ("opcode", "entries", "total_bytes", "_parts", "_bytes", "_event", "status")

    def __init__(self, opcode: int, entries: int, total_bytes: int, parts: int) -> None:
        self.opcode = opcode
        self.entries = entries
        self.total_bytes = total_bytes
        # per record of a split batch: None until its completion, then (status, bytes moved)
        self._parts: list[tuple[int, int] | None] | None = [None] * parts if parts > 1 else None
        self._bytes = 0
        self._event: Wake | None = None
        #: None while pending, then the status of the lowest-index failed entry, or 0 (OK)
        self.status: int | None = None

    def _part_done(self, part: int, status: int, transferred: int) -> Wake | None:
        """Record one part's completion (state lock held); returns the event to set once the transfer is done.
        Recording a part again changes nothing, and finishes the transfer if an interruption kept the first time
        from it."""
        if self.status is None:
            parts = self._parts
            if parts is None:
                self._bytes = transferred
                self.status = status  # after _bytes: a waiter that sees the status sees the bytes
            else:
                if parts[part] is None:
                    parts[part] = (status, transferred)
                if None not in parts:
                    outcome = next((s for s, _ in parts if s != TransferStatus.OK), TransferStatus.OK)
                    moved = sum(b for _, b in parts)
                    # looked at again with no call before the stores: a lock-free _fail (_finish_failing) that ran
                    # in the calls above stays the outcome a waiter may have seen
                    if self.status is None:
                        self._bytes = moved
                        self.status = outcome
        return self._event if self.status is not None else None

    def _parts_left(self) -> int:
        """Records of this transfer not completed yet (the not yet submitted included)."""
        if self._parts is None:
            return 0 if self.status is not None else 1
        return self._parts.count(None)

    def _fail(self, status: int) -> Wake | None:
        """Fail it unless it is done (state lock held); returns the event to set."""
        if self.status is None:
            self.status = status
        return self._event

    def done(self) -> bool:
        """True once the outcome is known (without polling)."""
        return self.status is not None

    @property
    def bytes_transferred(self) -> int:
        """Bytes moved: the sum of the lengths when OK."""
        return self._bytes if self.status == TransferStatus.OK else 0

    def raise_for_status(self) -> None:
        """Raise the typed :class:`~xferd.errors.TransferFailedError` of a failed transfer."""
        if self.status is not None and self.status != TransferStatus.OK:
            raise TransferFailedError.of(self.status, f"{self.entries} entr{'y' if self.entries == 1 else 'ies'}, "
                                                      f"{self.total_bytes} bytes")


class Client:
    """A connection to the daemon serving ``directory``, as segment ``segment_name``.

    :param listen: ask the daemon for this segment's own RPC port (Mooncake's ``get_rpc_port``), so peers can
        name it ``host:port``; :attr:`rpc_port` then holds it.
    :param control_timeout_s: how long a control request (register, open segment...) may wait for its answer, and
        a submission for ring space.
    :raises DaemonGoneError: when no daemon serves the directory.
    :raises ControlError: when the daemon refuses (name taken, daemon full, protocol version).
    """

    def __init__(self, directory: str = DEFAULT_DIRECTORY, segment_name: str | None = None, *,
                 listen: bool = False, control_timeout_s: float = 10.0) -> None:
        self.directory = directory
        self._control_timeout_s = control_timeout_s
        self._control_lock = threading.Lock()
        self._control_owner = 0  # the thread in a control request (close() from a handler on it must not wait)
        self._submit_lock = threading.Lock()
        # the poll lock: the one thread that reads the completion ring holds it, taken only without waiting. Not a
        # threading.Lock, whose acquire(False) hands its answer back to the calling bytecode, where a signal handler
        # may raise before it is stored: the lock would stay held by nobody and the ring never be read again. It is
        # this dict's one entry, the taker's token (one atomic ``setdefault``): a taker whose answer was lost still
        # finds its token there and lets go (:meth:`_poll`); letting go is ``del``, no call, so nothing interrupts it
        self._poll_holder: dict[int, object] = {}
        self._state_lock = threading.Lock()
        # request id -> its Transfer (a one-record transfer) or (Transfer, part); its size is the records in flight
        self._pending: dict[int, Transfer | tuple[Transfer, int]] = {}
        self._next_request_id = 1
        self._next_correlation_id = 1
        self._notifications: collections.deque[Notification] = collections.deque()
        self._shared: list[SharedBuffer] = []
        self._gone: str | None = None
        self._closed = False
        self._disconnected = False  # close() went through to the end of failing what was pending
        self._unmap_pending = False  # closed, the rings still mapped: whoever lets go of the poll lock unmaps them
        self._next_liveness_ns = 0
        self._ptracer_set = False
        self._next_file_address = p.FILE_ADDRESS_BASE
        # the request id and shape (single, entries, notify length) of the last record claimed: what
        # _void_open_claim writes into a claim an exception left unpublished
        self._claim_request_id = 0
        self._claim_shape = _ONE_REQUEST
        name = segment_name or f"py-{os.getpid()}-{id(self) & 0xffffff:x}"
        self._cnc = CncFile(os.path.join(directory, p.CNC_FILE))
        try:
            self._channel = ControlChannel(os.path.join(directory, p.SOCKET_FILE), control_timeout_s)
        except BaseException:
            self._cnc.close()
            raise
        try:
            self._welcome(name, p.HELLO_FLAG_LISTEN if listen else 0)
        except BaseException:
            self._channel.close()
            self._cnc.close()
            raise

    def _welcome(self, name: str, flags: int) -> None:
        self._channel.send(p.encode_hello(os.getpid(), name, flags))
        frame, fds = self._channel.receive()
        try:
            _length, frame_type = p.frame_header(frame)
            if frame_type == p.ERROR:
                _cid, code, message = p.decode_error(frame)
                raise ControlError.of(code, message)
            if frame_type != p.WELCOME:
                raise XferError(f"daemon answered HELLO with frame type {frame_type}")
            welcome = p.decode_welcome(frame)
            if not fds:
                raise XferError("daemon's WELCOME carried no rings file")
            rings_length = welcome.completion_ring_length + welcome.submit_ring_length
            if os.fstat(fds[0]).st_size < rings_length:
                raise XferError(f"rings file of {os.fstat(fds[0]).st_size} bytes, WELCOME says {rings_length}")
            self._rings = mmap.mmap(fds[0], rings_length, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        finally:
            for fd in fds:
                os.close(fd)
        self.welcome = welcome
        self._completion_view = RingView(self._rings, 0, welcome.completion_ring_length)
        self._submit_view = RingView(self._rings, welcome.completion_ring_length, welcome.submit_ring_length)
        self._zeros = memoryview(bytes(self._completion_view.capacity))
        self._writer = SubmitRingWriter(self._submit_view)
        anchor = ctypes.c_char.from_buffer(self._rings)  # the mapping's address; the export ends with the anchor
        self._doorbell = Doorbell(self._submit_view, ctypes.addressof(anchor) + welcome.completion_ring_length)
        self._completion_doorbell = CompletionDoorbell(self._completion_view, ctypes.addressof(anchor))
        del anchor
        self._doorbell_sleep_ns = _DOORBELL_SLEEP_NS
        self._ringing_daemon_sleep_ns = _RINGING_DAEMON_SLEEP_NS
        self._daemon_rings = False  # set once the daemon rang the completion doorbell (PROTOCOL.md 3.7)
        # a waiter holds the poll lock to sleep on the completion doorbell: it drains when the daemon rings, so the
        # other waiters sleep on their events until it sets them (_doze); those, oldest first, and what ends each
        self._watching = False
        self._dozing: dict[object, tuple[Wake, Callable[[], bool]]] = {}
        # where the completion ring's head is going: stored before the ring is zeroed, so that a drain interrupted
        # between zeroing and moving head has its advance finished by the next one (:meth:`_drain`)
        self._head_to = self._completion_view.i64[self._completion_view.head_index]
        self._max_in_flight = max(1, welcome.max_in_flight)
        self._daemon_pid = self._channel.peer_pid()

    # ---------------------------------------------------------------- facts from WELCOME

    @property
    def segment_name(self) -> str:
        """This client's full segment name (``host:port/name``)."""
        return self.welcome.segment_name

    @property
    def segment_handle(self) -> int:
        """The handle of this client's own segment (for loop-back transfers)."""
        return self.welcome.segment_handle

    @property
    def rpc_port(self) -> int:
        """This segment's own RPC port (0 unless connected with ``listen=True``)."""
        return self.welcome.rpc_port

    @property
    def max_in_flight(self) -> int:
        """Ring records this client may have outstanding (a batch record counts once)."""
        return self._max_in_flight

    @property
    def max_batch_entries(self) -> int:
        """Entries one SUBMIT_BATCH record may carry (larger batches become several records)."""
        return self.welcome.max_batch_entries

    @property
    def max_request_length(self) -> int:
        """The longest single request (entry) the daemon accepts."""
        return self.welcome.max_request_length

    @property
    def max_notify_length(self) -> int:
        """The longest notify message."""
        return self.welcome.max_notify_length

    @property
    def _in_flight(self) -> int:
        """Ring records submitted and not yet answered."""
        return len(self._pending)

    # ---------------------------------------------------------------- control requests

    def _request(self, build, fd: int = -1) -> int:
        with self._control_lock:
            self._control_owner = threading.get_ident()
            try:
                self._ensure_open()
                correlation_id = self._next_correlation_id
                self._next_correlation_id += 1
                try:
                    self._channel.send(build(correlation_id), fd)
                    frame, fds = self._channel.receive()
                except DaemonGoneError as ex:
                    self._mark_gone(str(ex))
                    raise
            finally:
                self._control_owner = 0
            for extra in fds:
                os.close(extra)
        _length, frame_type = p.frame_header(frame)
        if frame_type == p.ERROR:
            answered, code, message = p.decode_error(frame)
            raise ControlError.of(code, message)
        if frame_type != p.OK:
            raise XferError(f"daemon answered with frame type {frame_type}")
        answered, value = p.decode_ok(frame)
        if answered != correlation_id:
            raise XferError(f"daemon answered request {answered}, not {correlation_id}")
        return value

    def allocate_memory(self, length: int) -> SharedBuffer:
        """A memfd of ``length`` bytes mapped here, which the daemon can map too. Not registered yet."""
        self._ensure_open()
        buffer = SharedBuffer(length, f"xferd-{self.welcome.segment_name[-40:]}")
        with self._state_lock:
            self._shared.append(buffer)
        return buffer

    def free_memory(self, buffer: SharedBuffer) -> None:
        """Unmap memory from :meth:`allocate_memory` (unregister its ranges first)."""
        with self._state_lock:
            if buffer in self._shared:
                self._shared.remove(buffer)
        buffer.close()

    def shared_buffer_of(self, address: int, length: int) -> SharedBuffer | None:
        """The buffer from :meth:`allocate_memory` that holds the range, if any."""
        with self._state_lock:
            return next((b for b in self._shared if b.contains(address, length)), None)

    def register_memory(self, address: int, length: int, location: str = "cpu:0") -> None:
        """Register ``[address, address + length)`` so requests (this client's, and other clients' as a target)
        may use it. Memory from :meth:`allocate_memory` goes by its memfd (zero copy); a ``cuda:N`` location, or
        ``*`` on a device pointer, goes through CUDA IPC (:meth:`register_gpu_memory`); any other host memory goes
        by address (:meth:`register_process_memory`).

        :raises ControlError: (typed) when the daemon refuses, e.g. ``OverlappingRegionError``.
        """
        shared = self.shared_buffer_of(address, length)
        if shared is not None:
            self._request(lambda cid: p.encode_register_memory(cid, address, length, address - shared.address,
                                                               location), shared.fd)
            return
        if location.startswith("cuda"):
            self.register_gpu_memory(address, length, location)
            return
        if location == "*" and cuda_runtime().availability() is None and cuda_runtime().device_of(address) is not None:
            self.register_gpu_memory(address, length, None)
            return
        self.register_process_memory(address, length, location)

    def register_process_memory(self, address: int, length: int, location: str = "*") -> None:
        """Register ordinary memory of this process (heap, anonymous, a numpy array, a torch CPU tensor): the daemon
        copies with ``process_vm_readv/writev`` (no shared mapping: every byte crosses the kernel; the daemon needs
        the same uid or CAP_SYS_PTRACE). Under Yama ``ptrace_scope`` 1 this process first names the daemon as its
        ptracer (``prctl(PR_SET_PTRACER, daemon pid)``). Keep the memory alive until it is unregistered."""
        self._allow_daemon_to_reach_memory()
        self._request(lambda cid: p.encode_register_process_memory(cid, address, length, location))

    def register_file(self, file: "str | os.PathLike[str] | int", offset: int, length: int, flags: int = 0,
                      read_only: bool = False) -> int:
        """Register ``length`` bytes of a file or block device from ``offset`` as a storage region of this segment,
        and return the address that names its first byte: requests use it as they use a memory address (memory to
        file, file to memory, and peers' requests to this segment). The file is opened here with this process's
        permissions (or ``file`` is a descriptor this process holds, which stays the caller's); the daemon gets the
        open descriptor over the control socket (SCM_RIGHTS) and never opens a path. A WRITE completes once its
        bytes are in the file. See docs/storage.md.

        :param flags: :data:`xferd.protocol.REGISTER_FILE_SYNC` (fdatasync before each WRITE completes),
            :data:`xferd.protocol.REGISTER_FILE_BUFFERED` (keep the page cache even where O_DIRECT works).
        :param read_only: open the path read-only; WRITEs into the region then fail with ``StoragePermissionError``.
        :raises ControlError: (typed) e.g. ``InvalidArgumentError`` for a range outside the file.
        """
        if offset < 0 or length <= 0:
            raise ValueError(f"bad file range: offset {offset} length {length}")
        with self._state_lock:
            address = self._next_file_address
            self._next_file_address += ((length + _FILE_GUARD - 1) // _FILE_GUARD + 1) * _FILE_GUARD
        if isinstance(file, int):
            self._request(lambda cid: p.encode_register_file(cid, address, length, offset, flags), file)
            return address
        fd = os.open(file, (os.O_RDONLY if read_only else os.O_RDWR) | os.O_CLOEXEC)
        try:
            self._request(lambda cid: p.encode_register_file(cid, address, length, offset, flags), fd)
        finally:
            os.close(fd)
        return address

    def _allow_daemon_to_reach_memory(self) -> None:
        if self._ptracer_set:
            return
        try:
            with open("/proc/sys/kernel/yama/ptrace_scope") as f:
                scope = int(f.read().strip() or 0)
        except (OSError, ValueError):
            scope = 0
        if scope == 1:
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(0x59616D61, ctypes.c_ulong(self._channel.peer_pid()), 0, 0, 0) != 0:  # PR_SET_PTRACER
                raise XferError(f"prctl(PR_SET_PTRACER) failed: {os.strerror(ctypes.get_errno())}")
        self._ptracer_set = True

    def register_gpu_memory(self, pointer: int, length: int, location: str | None = None) -> None:
        """Register device memory through a CUDA IPC handle of the allocation holding it (a range inside a caching
        allocator's block works: its offset in the block travels with it).

        :param location: ``cuda:N``; by default the device the pointer lives on.
        :raises CudaUnavailableError: when this process has no usable CUDA runtime (nothing is sent).
        """
        export = cuda_runtime().export(pointer, length)
        where = location if location and location != "*" else f"cuda:{export.device}"
        self._request(lambda cid: p.encode_register_gpu_memory(
            cid, pointer, length, pointer - export.allocation_base, export.ipc_handle, export.pci_bus_id, where))

    def unregister_memory(self, address: int) -> None:
        """Unregister the range starting at ``address``; returns once no transfer touches it any more."""
        self._request(lambda cid: p.encode_unregister_memory(cid, address))

    def open_segment(self, name: str) -> int:
        """The handle of a segment: ``name`` on this daemon, ``host:port/name`` elsewhere, or ``host:port`` (an
        engine's own RPC port, Mooncake's session id). A fresh lookup every call."""
        return self._request(lambda cid: p.encode_open_segment(cid, name))

    def first_buffer_address(self, segment: int) -> int:
        """The owner address of the first buffer the segment's descriptor lists (its lowest-addressed registered
        range; for another daemon's segment, as its descriptor said when it was opened), 0 when it has none.

        :param segment: :attr:`segment_handle` or a handle from :meth:`open_segment`.
        :raises ControlError: ``UnknownSegmentControlError`` for a handle that names nothing.
        """
        return self._request(lambda cid: p.encode_first_buffer(cid, _int64(segment)))

    # ---------------------------------------------------------------- transfers

    def _entries_per_record(self, notify_length: int) -> int:
        room = self._writer.max_message_length - p.SUBMIT_BATCH_HEADER_LENGTH - p.align8(notify_length)
        per_record = room // p.BATCH_ENTRY_LENGTH
        if self.welcome.max_batch_entries > 0:
            per_record = min(per_record, self.welcome.max_batch_entries)
        if per_record < 1:
            raise XferError(f"the submit ring ({self._writer.capacity} bytes) cannot hold a batch record")
        return per_record

    def submit(self, opcode: int, segment: int, local_addresses: Sequence[int], target_addresses: Sequence[int],
               lengths: Sequence[int], notify: bytes = b"", trace_id: int = 0,
               total_bytes: int | None = None) -> Transfer:
        """Submit a batch of requests to one target segment and return at once.

        All entries are packed in one go (``array``), so a batch of thousands of descriptors costs the caller well
        under a millisecond; a batch longer than one record carries becomes several records, and one status: that of
        the lowest-index failed entry. A ``notify`` (WRITE only) is delivered to the target's owner once every entry
        landed, never if one failed (a batch split over several records sends its last record after the others
        completed, with the notify only if they all succeeded). A READ's notify is dropped: the daemon ignores it
        (PROTOCOL.md), so a split READ does not wait for its earlier parts.

        :param total_bytes: the sum of ``lengths`` when the caller knows it already (saves summing them again).
        :raises ValueError: when the three sequences differ in length or are empty, or notify is too long.
        :raises DaemonGoneError: when the daemon is gone.
        :raises XferError: when no ring space or in-flight slot frees up within the control timeout. For a later part
            of a split batch, its earlier parts are in flight: ``error.transfer`` completes once they are answered,
            as below.
        :raises TransferTimeoutError: when the earlier parts of a split batch with a notify do not complete within
            the control timeout: the last part and the notify are not sent. Its earlier parts may still be in flight:
            the transfer (``error.transfer``) completes once they are all answered, with the lowest failed entry's
            status if one failed, else TIMEOUT, so ``wait(error.transfer)`` says when their memory is free.
        """
        # everything is checked before a record is claimed: a claimed record must be completed
        if len(local_addresses) == 1 and type(local_addresses) in (tuple, list) and not notify:
            if len(target_addresses) != 1 or len(lengths) != 1:
                raise ValueError(f"batch of 1 local, {len(target_addresses)} target addresses and {len(lengths)} "
                                 f"lengths")
            return self._submit_one(opcode, segment, local_addresses[0], target_addresses[0], lengths[0], trace_id)
        opcode, segment, trace_id = _int64(opcode), _int64(segment), _int64(trace_id)
        locals_, targets, lengths_ = _int64s(local_addresses), _int64s(target_addresses), _int64s(lengths)
        count = len(locals_)
        if count == 0 or count != len(targets) or count != len(lengths_):
            raise ValueError(f"batch of {count} local, {len(targets)} target addresses and {len(lengths_)} lengths")
        notify = bytes(notify)
        if len(notify) > self.welcome.max_notify_length:
            raise ValueError(f"notify of {len(notify)} bytes; the daemon takes at most {self.welcome.max_notify_length}")
        if opcode == p.READ:
            notify = b""  # ignored by the daemon (PROTOCOL.md): a split READ need not wait for its earlier parts
        per_record = self._entries_per_record(len(notify))
        parts = [(start, min(count, start + per_record)) for start in range(0, count, per_record)]
        if total_bytes is None:  # a list's ints exist already: summing them is 5x cheaper than an array's
            total_bytes = sum(lengths) if type(lengths) in (list, tuple) else sum(lengths_)
        transfer = Transfer(opcode, count, total_bytes, len(parts))
        deadline = time.monotonic_ns() + int(self._control_timeout_s * 1e9)
        for part, (start, end) in enumerate(parts):
            last = part == len(parts) - 1
            if last and notify and len(parts) > 1:
                if not self._await(transfer, lambda: transfer._parts_left() == 1 or transfer.status is not None,
                                   deadline):
                    # the notify would tell the peer "ready" before the earlier parts' bytes landed: not sent.
                    # The unsent part counts as TIMEOUT, so the transfer completes once the earlier parts are answered
                    self._count_unsent(transfer, part)
                    error = TransferTimeoutError(TransferStatus.TIMEOUT, f"the first {len(parts) - 1} parts of a "
                                                 f"batch with a notify did not complete within "
                                                 f"{self._control_timeout_s} s; its last part and the notify were "
                                                 f"not sent")
                    error.transfer = transfer  # done once its earlier parts are answered: their memory is free then
                    raise error
                if transfer.done():
                    return transfer
                if any(s != TransferStatus.OK for s, _ in transfer._parts[:-1]):
                    notify = b""  # an earlier part failed: the last goes without the notify, the peer is not told
            try:
                self._write_record(transfer, part, opcode, segment,
                                   (locals_[start:end], targets[start:end], lengths_[start:end]), end - start,
                                   notify if last else b"", trace_id, deadline)
            except XferError as error:
                if part > 0:  # its earlier parts are in flight: the transfer says when they are answered
                    self._count_unsent(transfer, part)
                    error.transfer = transfer
                raise
        return transfer

    def _count_unsent(self, transfer: Transfer, first: int) -> None:
        """Record the parts of a split batch from ``first`` on, which were not sent, as TIMEOUT: the transfer then
        completes once its sent parts are answered, with the lowest failed entry's status, else TIMEOUT."""
        with self._state_lock:
            events = [transfer._part_done(part, TransferStatus.TIMEOUT, 0)
                      for part in range(first, len(transfer._parts))]
        _set_all(events)

    def submit_one(self, opcode: int, segment: int, local_address: int, target_address: int, length: int,
                   trace_id: int = 0) -> Transfer:
        """Submit one range (a SUBMIT record) and return at once: the single-request path of :meth:`submit`."""
        return self._submit_one(opcode, segment, local_address, target_address, length, trace_id)

    def _submit_one(self, opcode: int, segment: int, local_address: int, target_address: int, length: int,
                    trace_id: int = 0) -> Transfer:
        """One plain request (the 64-byte round trip's path): the record's header and body are one ``pack_into``
        straight into the claimed ring space, which also checks every field; a field that is not an int64 voids
        the record (the daemon answers it INVALID_OPCODE) and raises the precise TypeError or OverflowError."""
        transfer = Transfer(opcode, 1, length, 1)
        with self._submit_lock:
            if self._gone is not None or self._closed:
                self._check_gone()
            writer = self._writer
            if writer.open_claim >= 0:
                self._void_open_claim()
            pending = self._pending
            if len(pending) < self._max_in_flight:
                request_id = self._next_request_id
                self._next_request_id = request_id + 1
                self._claim_request_id = request_id  # what _void_open_claim writes, should this claim be cut short
                self._claim_shape = _ONE_REQUEST
                # registered before the claim: a record counts against max_in_flight from the moment it is written
                # (PROTOCOL.md 7), a void of it too; under the submit lock: see _mark_gone
                pending[request_id] = transfer
                try:
                    try:
                        index = writer.claim(p.SUBMIT, _SUBMIT_RECORD_LENGTH)
                    except BaseException:
                        if writer.open_claim < 0:  # cut short before it took the space: nothing answers the request
                            pending.pop(request_id, None)
                        raise  # (or after: the void answers it)
                    if index < 0:
                        pending.pop(request_id, None)  # the ring is full
                    else:
                        _SUBMIT_RECORD.pack_into(writer.buffer, index, -_SUBMIT_RECORD_LENGTH, p.SUBMIT, 0, opcode,
                                                 0, request_id, segment, local_address, target_address, length,
                                                 trace_id, _monotonic_ns(), 0, 0)
                        writer.publish(index, _SUBMIT_RECORD_LENGTH)
                        self._doorbell.ring()
                        return transfer
                except BaseException:
                    if writer.open_claim >= 0:
                        self._void_open_claim()
                        for value in (opcode, segment, local_address, target_address, length, trace_id):
                            _int64(value)  # the precise TypeError or OverflowError
                    raise
        # ring full or at the in-flight limit: the general path waits for room
        for value in (opcode, segment, local_address, target_address, length, trace_id):
            _int64(value)
        deadline = time.monotonic_ns() + int(self._control_timeout_s * 1e9)
        self._write_record(transfer, 0, opcode, segment, (_int64s((local_address,)), _int64s((target_address,)),
                                                          _int64s((length,))), 1, b"", trace_id, deadline)
        return transfer

    def _write_record(self, transfer: Transfer, part: int, opcode: int, segment: int,
                      entries: tuple[memoryview, memoryview, memoryview], count: int, notify: bytes, trace_id: int, deadline_ns: int) -> None:
        single = count == 1
        body_length = p.submit_length(len(notify)) if single else p.batch_length(count, len(notify))
        record_type = p.SUBMIT if single else p.SUBMIT_BATCH
        sleep_s = 0.0
        while True:
            with self._submit_lock:
                self._check_gone()
                writer = self._writer
                if writer.open_claim >= 0:
                    self._void_open_claim()
                if self._in_flight < self._max_in_flight:
                    request_id = self._next_request_id
                    self._next_request_id = request_id + 1
                    self._claim_request_id = request_id
                    self._claim_shape = (single, count, len(notify))
                    pending = self._pending
                    pending[request_id] = (transfer, part)  # before the claim, as in _submit_one
                    try:
                        try:
                            index = writer.try_claim(record_type, body_length)
                        except BaseException:
                            if writer.open_claim < 0:
                                pending.pop(request_id, None)
                            raise
                        if index < 0:
                            pending.pop(request_id, None)
                        else:
                            self._publish(index, request_id, transfer, part, single, opcode, segment, entries, count,
                                          notify, trace_id)
                            return
                    except BaseException:
                        self._void_open_claim()
                        raise
            if self._poll() == 0:
                now = time.monotonic_ns()
                self._check_liveness(now)
                if now > deadline_ns:
                    raise XferError(f"could not submit within {self._control_timeout_s} s: submit ring full or "
                                    f"{self._in_flight} records in flight (max {self._max_in_flight})")
                sleep_s = min(max(sleep_s * 2, _MIN_SLEEP_S), _MAX_SLEEP_S)
                time.sleep(sleep_s)

    def _publish(self, index: int, request_id: int, transfer: Transfer, part: int, single: bool, opcode: int,
                 segment: int, entries: tuple[memoryview, memoryview, memoryview], count: int, notify: bytes,
                 trace_id: int) -> None:
        """Write and publish the record claimed at body ``index`` (submit lock held); the caller voids it if this
        raises (:meth:`_void_open_claim`)."""
        ring = self._writer.buffer
        now = time.monotonic_ns()
        locals_, targets, lengths = entries
        if single:
            p.pack_submit(ring, index, request_id, opcode, segment, locals_[0], targets[0], lengths[0], trace_id,
                          now, notify)
        else:
            # the three columns go straight into the record's 24-byte entries, interleaved by strided copies
            at = p.pack_batch_header(ring, index, request_id, opcode, count, segment, trace_id, now, notify) // 8
            words = self._submit_view.i64
            words[at:at + 3 * count:3] = locals_
            words[at + 1:at + 3 * count:3] = targets
            words[at + 2:at + 3 * count:3] = lengths
        self._writer.commit(index)
        self._doorbell.ring()

    def _void_open_claim(self) -> None:
        """Void and publish the record the last submission claimed and did not publish (submit lock held): an
        exception, even KeyboardInterrupt from a signal handler, anywhere between the claim and the publish, even
        before the claim's index was stored, leaves it to this (or, cut short here too, to the next submission).
        Nothing is waited for; the daemon answers it INVALID_OPCODE, which fails its request if it was
        registered."""
        writer = self._writer
        record_index = writer.open_claim
        if record_index < 0:
            return
        single, count, notify_length = self._claim_shape
        body_length = p.submit_length(notify_length) if single else p.batch_length(count, notify_length)
        _SUBMIT_HEADER.pack_into(writer.buffer, record_index, -(body_length + _RECORD_HEADER),
                                 p.SUBMIT if single else p.SUBMIT_BATCH)
        self._void(record_index + _RECORD_HEADER, self._claim_request_id, single, count, notify_length)
        writer.publish(record_index, body_length + _RECORD_HEADER)
        self._doorbell.ring()

    def _void(self, index: int, request_id: int, single: bool, count: int, notify_length: int) -> None:
        """Turn a claimed record that could not be written (an exception, even KeyboardInterrupt) into a
        well-framed request the daemon refuses with INVALID_OPCODE, so the ring never stalls on it and its
        completion still comes back. Nothing here can fail: every value is a small int."""
        ring = self._writer.buffer
        length = p.submit_length(notify_length) if single else p.batch_length(count, notify_length)
        ring[index:index + length] = bytes(length)
        if single:  # SUBMIT: 4 opcode, 16 request id, 72 notify length
            struct.pack_into("<i", ring, index + 4, _VOID_OPCODE)
            struct.pack_into("<q", ring, index + 16, request_id)
            struct.pack_into("<i", ring, index + 72, notify_length)
        else:  # SUBMIT_BATCH: 0 request id, 8 opcode, 12 entry count, 40 notify length
            struct.pack_into("<qii", ring, index, request_id, _VOID_OPCODE, count)
            struct.pack_into("<i", ring, index + 40, notify_length)

    def wait(self, transfer: Transfer, timeout_s: float | None = None) -> int:
        """Wait for a transfer's outcome.

        :returns: the bytes transferred.
        :raises TransferFailedError: (typed by status) when it failed; ``TransferDaemonGoneError`` when the daemon
            went away meanwhile.
        :raises TransferTimeoutError: when ``timeout_s`` passes first (the transfer stays in flight).
        """
        if transfer.status is None:
            deadline = None if timeout_s is None else time.monotonic_ns() + int(timeout_s * 1e9)
            if not self._await(transfer, None, deadline):
                raise TransferTimeoutError(TransferStatus.TIMEOUT, f"no completion within {timeout_s} s")
        if transfer.status:
            transfer.raise_for_status()
        return transfer._bytes

    def _await(self, transfer: Transfer, predicate: Callable[[], bool] | None, deadline_ns: int | None) -> bool:
        """Wait until ``predicate()`` (by default: until the transfer is done); False when the deadline passed first.

        First spin (:meth:`_spin`: ~180 us for a transfer of up to 1 MiB, whose completion is likely that close;
        ~18 us for larger ones), then sleep on the transfer's event, releasing the GIL, 20 us doubling, for about a
        millisecond in all, waking early when another thread's poll delivers it; then the thread that gets the poll
        lock sleeps on the completion doorbell (:meth:`_sleep_on_doorbell`) until the daemon rings, at most
        :data:`_DOORBELL_SLEEP_NS` (:data:`_RINGING_DAEMON_SLEEP_NS` once the daemon rang it) and never past the
        deadline, while the others sleep on their events until the watcher's drain sets them
        (:meth:`_doze`; at most :data:`_MAX_SLEEP_S` at a time while nobody watches the doorbell). Each sleeper polls
        when it wakes; a watcher that leaves hands the doorbell on to a dozing waiter.
        """
        if (transfer.status is not None if predicate is None else predicate()) or \
                self._spin(transfer, predicate, _SPINS_SMALL if transfer.total_bytes <= _SMALL_BYTES else _SPINS_LARGE):
            return True
        try:
            return self._park(transfer, predicate, deadline_ns)
        finally:
            if self._dozing and not self._watching:
                self._hand_off()

    def _park(self, transfer: Transfer, predicate: Callable[[], bool] | None, deadline_ns: int | None) -> bool:
        """:meth:`_await` after its spin."""
        done = transfer.done if predicate is None else predicate
        sleep_s = parked_s = 0.0
        while not done():
            worked = self._poll()
            if done():
                return True
            now = time.monotonic_ns()
            self._check_liveness(now)
            if deadline_ns is not None and now > deadline_ns:
                return done()
            if worked:
                continue
            if parked_s >= _PARK_PHASE_S:
                limit_ns = self._ringing_daemon_sleep_ns if self._daemon_rings else self._doorbell_sleep_ns
                if deadline_ns is not None:
                    limit_ns = min(limit_ns, deadline_ns - now)
                if self._sleep_on_doorbell(done, limit_ns):
                    continue
            sleep_s = min(max(sleep_s * 2, _MIN_SLEEP_S), _MAX_SLEEP_S)
            if deadline_ns is not None:
                sleep_s = max(0.0, min(sleep_s, (deadline_ns - now) / 1e9))
            parked_s += sleep_s
            event = transfer._event
            if event is None:
                with self._state_lock:
                    if transfer._event is None:
                        transfer._event = Wake()
                    event = transfer._event
                if done():
                    return True
            if predicate is None and self._watching:
                self._doze(event, done, now, deadline_ns)
            else:
                event.wait(sleep_s)
        return True

    def _doze(self, event: Wake, done: Callable[[], bool], now_ns: int, deadline_ns: int | None) -> None:
        """Sleep on a transfer's event while another thread watches the completion doorbell: until that thread's
        drain completes the transfer and sets the event, until a watcher that leaves hands the doorbell on
        (:meth:`_hand_off`), or for the liveness interval at most (a net: neither is missed), never past the deadline.
        The waiter is listed before it looks at the watcher once more, and a watcher unlists itself before it looks
        at the list, so one of them sees the other: none dozes with nobody watching."""
        timeout_ns = _LIVENESS_CHECK_NS if deadline_ns is None else min(_LIVENESS_CHECK_NS, deadline_ns - now_ns)
        dozing, token = self._dozing, object()  # one entry per dozing thread (two may wait on one transfer)
        try:
            dozing[token] = (event, done)
            if self._watching and not done():
                event.wait(max(0, timeout_ns) / 1e9)
        finally:
            dozing.pop(token, None)
        if not done():
            event.clear()  # a hand-off's wake, or the net's; the completion sets it after the status, seen above
            if done():  # ... or between that look and the clear: set again, for another waiter on this event
                event.set()

    def _hand_off(self) -> None:
        """Wake the longest dozing waiter whose transfer is not done: nobody watches the doorbell any more, and it
        takes the watch (it polls, and sleeps on the doorbell unless its transfer is done by then, in which case it
        hands off in turn). Also wake every dozer whose transfer is done: its completion's wake may never have come
        (a drain or a daemon-gone pass cut short by a signal handler between its store and the event's set)."""
        handed = False
        for event, done in list(self._dozing.values()):
            if done():
                event.set()
            elif not handed:
                event.set()
                handed = True

    def _sleep_on_doorbell(self, done: Callable[[], bool], limit_ns: int) -> bool:
        """Take the poll lock and sleep on the completion doorbell (PROTOCOL.md 3.7) for at most ``limit_ns``: mark
        the word, look at the ring once more, sleep; the mark is cleared however the sleep ends. Holding the poll
        lock makes this thread the word's only sleeper (the daemon wakes one) and keeps the ring mapped under it.

        :returns: False when it cannot sleep here (another thread holds the poll lock, futex is unusable, or the
            next record is claimed but not written yet, which no ring announces): the caller sleeps on its event
            instead.
        """
        if not self._completion_doorbell.usable:
            return False
        holder, token = self._poll_holder, object()
        try:
            if holder.setdefault(0, token) is not token:
                return False
            return self._sleep_holding_poll_lock(done, limit_ns)
        finally:
            if 0 in holder and holder[0] is token:  # no call: nothing can interrupt letting go
                self._watching = False
                del holder[0]
                if self._unmap_pending:
                    self._unmap_rings()

    def _sleep_holding_poll_lock(self, done: Callable[[], bool], limit_ns: int) -> bool:
        """:meth:`_sleep_on_doorbell` once it holds the poll lock."""
        doorbell = self._completion_doorbell
        if self._closed or self._drain() or done():
            return True
        if not doorbell.arm():
            return False
        self._watching = True  # cleared as the poll lock is let go (_sleep_on_doorbell)
        try:
            view = self._completion_view
            # close() and _mark_gone() set these before their wake, which may have found the word not marked yet
            if self._closed or self._gone is not None:
                return True
            head = view.i64[view.head_index]
            if view.i64[view.tail_index] != head:
                if view.i32[(head & (view.capacity - 1)) >> 2] > 0:
                    return True  # a record committed before the mark was visible: read it now
                # claimed and being written: the daemon's thread may need this core to finish it, and may stall
                # between claim and commit (it rings only once it commits): the caller sleeps on its event
                os.sched_yield()
                return False
            doorbell.sleep(limit_ns)  # a record committed after the mark rings: the daemon clears the word
            if not (self._daemon_rings or self._closed or self._gone is not None or doorbell.is_marked()):
                self._daemon_rings = True  # only the daemon, close() and _mark_gone() clear it
        finally:
            doorbell.disarm()
        return True

    def _spin(self, transfer: Transfer, predicate: Callable[[], bool] | None, spins: int) -> bool:
        """Watch the length word of the completion ring's next record for up to ``spins`` iterations, taking records
        as they are published (:meth:`_poll`, inlined); True once ``predicate()`` (by default: once the transfer is
        done). Each idle iteration is two loads from the mapped ring (native ``memoryview`` casts): no lock, no
        syscall, no allocation. The GIL stays held, which is why it is short."""
        view = self._completion_view
        i32, i64, head_at, mask = view.i32, view.i64, view.head_index, view.capacity - 1
        holder = self._poll_holder
        try:
            while spins:
                spins -= 1
                if i32[(i64[head_at] & mask) >> 2] > 0:  # a record (or the padding before the wrap) is published
                    token = object()
                    try:
                        if holder.setdefault(0, token) is token and not self._closed:
                            self._drain()
                    finally:
                        if 0 in holder and holder[0] is token:  # as in _poll
                            del holder[0]
                            if self._unmap_pending:
                                self._unmap_rings()
                    if transfer.status is not None if predicate is None else predicate():
                        return True
                elif transfer.status is not None:  # another waiter's poll delivered it
                    return True
        except ValueError:  # the client was closed meanwhile (its ring views are released): the caller sees why
            pass
        return False

    def transfer_sync(self, opcode: int, segment: int, local_address: int, target_address: int, length: int,
                      notify: bytes = b"", timeout_s: float | None = None) -> int:
        """Move one range and wait; returns the bytes moved or raises the typed failure."""
        if notify:
            return self.wait(self.submit(opcode, segment, (local_address,), (target_address,), (length,), notify),
                             timeout_s)
        return self.wait(self._submit_one(opcode, segment, local_address, target_address, length), timeout_s)

    def batch_transfer_sync(self, opcode: int, segment: int, local_addresses: Sequence[int],
                            target_addresses: Sequence[int], lengths: Sequence[int], notify: bytes = b"",
                            timeout_s: float | None = None) -> int:
        """Submit a batch and wait for it; returns the bytes moved or raises the typed failure."""
        return self.wait(self.submit(opcode, segment, local_addresses, target_addresses, lengths, notify), timeout_s)

    # ---------------------------------------------------------------- completions and notifications

    def poll(self) -> int:
        """Take the completions and notifications waiting on this client's ring; returns records taken (0 when
        another thread is polling)."""
        return self._poll()

    def _poll(self) -> int:
        """Take the poll lock unless another thread holds it, drain, let go; the rings of a client closed meanwhile
        are unmapped as it lets go (:meth:`close`)."""
        holder, token = self._poll_holder, object()
        try:
            if holder.setdefault(0, token) is not token or self._closed:
                return 0
            return self._drain()
        finally:
            if 0 in holder and holder[0] is token:  # no call between looking and letting go: nothing interrupts it
                del holder[0]
                if self._unmap_pending:
                    self._unmap_rings()

    def _drain(self) -> int:
        """Take the completion ring's published records (poll lock held), up to its wrap: each record's length word
        is one load (acquire), the rest of its head one ``unpack_from``; then the records are zeroed and head
        advances in one store. Returns the records taken.

        Exception-safe (a signal handler may raise on this thread at any call, even KeyboardInterrupt): a record
        counts as taken (``consumed``) only once what it says is recorded, and its request leaves the pending map
        only after that, so a drain interrupted midway leaves the record to the next drain, which records it again
        (recording is idempotent: :meth:`Transfer._part_done`); the head's advance is noted before the ring is
        zeroed, and the next drain finishes one an interruption cut short. A one-record transfer is completed
        without a lock: its status is looked at and stored with no call in between, where no other thread (nor a
        signal handler) can run, so it is stored once, by this drain or by :meth:`_fail_pending`."""
        view = self._completion_view
        i32, i64, ring, head_at, capacity = view.i32, view.i64, view.bytes, view.head_index, view.capacity
        pending = self._pending
        head = i64[head_at]
        if self._head_to != head:
            head = self._finish_head_advance(head)
        head_index = head & (capacity - 1)
        block = capacity - head_index
        consumed = records = 0
        try:
            while consumed < block and records < 4096:
                index = head_index + consumed
                length = i32[index >> 2]
                if length <= 0:
                    break
                if length < _RECORD_HEADER or length > block - consumed:
                    raise ValueError(f"corrupt ring record at {index}: length {length}")
                record_type, request_id, status, _reserved, transferred = _RECORD_HEAD.unpack_from(ring, index + 4)
                if record_type == _COMPLETION_TYPE:
                    if length < _COMPLETION_RECORD_LENGTH:
                        consumed += (length + 7) & -8  # skipped: the next drain goes on after it
                        raise p.MalformedFrame(f"COMPLETION of {length - _RECORD_HEADER} bytes, needs "
                                               f"{_COMPLETION_RECORD_LENGTH - _RECORD_HEADER}")
                    entry = pending.get(request_id)
                    if entry is not None:
                        if entry.__class__ is Transfer:
                            if entry.status is None:
                                entry._bytes = transferred
                                entry.status = status  # after _bytes: a waiter that sees the status sees the bytes
                            event = entry._event
                        else:
                            with self._state_lock:
                                event = entry[0]._part_done(entry[1], status, transferred)
                        if event is not None:
                            event.set()
                        pending.pop(request_id, None)  # (or _fail_pending took it meanwhile)
                    records += 1
                elif record_type != _PADDING:
                    if record_type == p.NOTIFICATION:
                        notification = p.decode_notification(ring, index + _RECORD_HEADER, length - _RECORD_HEADER)
                        # appended (no call: no signal handler runs between these two lines) then counted taken
                        self._notifications += (notification,)
                    records += 1
                consumed += (length + 7) & -8
        finally:
            if consumed:
                self._head_to = head + consumed  # first: the next drain finishes an advance cut short
                ring[head_index:head_index + consumed] = self._zeros[:consumed]
                if not _TSO:
                    _fence()
                i64[head_at] = head + consumed
        return records

    def _finish_head_advance(self, head: int) -> int:
        """Finish the head's advance to :attr:`_head_to` that an exception interrupted (poll lock held): those
        records were recorded; zero them (again) and move head past them. Returns the new head."""
        view = self._completion_view
        to = self._head_to
        if to > head:
            at = head & (view.capacity - 1)
            view.bytes[at:at + to - head] = self._zeros[:to - head]
            if not _TSO:
                _fence()
            view.i64[view.head_index] = to
            return to
        self._head_to = head
        return head

    def get_notifies(self) -> list[Notification]:
        """The notifications received since the last call (polls first)."""
        self._poll()
        taken = []
        while self._notifications:
            taken.append(self._notifications.popleft())
        return taken

    # ---------------------------------------------------------------- liveness

    def _check_liveness(self, now_ns: int) -> None:
        if self._gone is not None or self._closed:
            if self._pending:
                self._finish_failing()
            return
        if now_ns < self._next_liveness_ns:
            return
        self._next_liveness_ns = now_ns + _LIVENESS_CHECK_NS
        try:
            reason = self._cnc.stale_reason(daemon_pid=self._daemon_pid)
        except ValueError:  # its mapping was released: close() unmapped it meanwhile, after failing every transfer
            if not self._closed:
                raise
            return
        # not ``if lock.acquire(blocking=False)``: a signal handler's exception landing as acquire returns True would
        # leave the lock held for good; ``with`` takes it where nothing interrupts (at worst this waits for another
        # thread's control request that took it since the look)
        if reason is None and not self._control_lock.locked():
            with self._control_lock:
                self._control_owner = threading.get_ident()
                try:
                    if self._channel.peer_closed():
                        reason = "daemon closed the control connection"
                finally:
                    self._control_owner = 0
        if reason is not None:
            self._mark_gone(reason)

    def is_daemon_gone(self) -> bool:
        """True when the daemon is known to be gone (checks now)."""
        self._next_liveness_ns = 0
        self._check_liveness(time.monotonic_ns())
        return self._gone is not None

    def _mark_gone(self, reason: str) -> None:
        # the submit lock orders this after any submission that saw no failure yet (it registers its request
        # under that lock), so no request is registered after the pending map was emptied here
        with self._submit_lock, self._state_lock:
            events = self._fail_pending(reason)
        _set_all(events)

    def _finish_failing(self) -> None:
        """Fail what a pass of :meth:`_fail_pending` cut short by an exception (a signal handler's) left pending, or
        what a close() in progress has not failed yet, taking no lock: the pass in progress may be this very thread's
        (a signal handler's call inside it) and holds them. Safe without them: once the client is gone or closed no
        request is registered any more (submissions look under the submit lock, which the pass that set it held);
        each entry is failed by a store that only a transfer still pending takes (:meth:`Transfer._fail`, no call
        between its look and its store) and removed by one atomic ``pop``; a split batch whose last part a drain
        records meanwhile keeps DAEMON_GONE (:meth:`Transfer._part_done` looks again right before it stores)."""
        _set_all(self._fail_pending(self._gone or "client closed"))

    def _fail_pending(self, reason: str) -> list[Wake | None]:
        """Mark the daemon gone and fail every pending transfer (submit and state locks held, or see
        :meth:`_finish_failing`); returns the events to set once the locks are let go. Each transfer is failed before it leaves the pending map, so a pass cut
        short by an exception leaves the rest there; calling it again finishes them (:meth:`_check_liveness`)."""
        if self._gone is None:
            self._gone = reason
        events = []
        pending = self._pending
        for request_id, entry in list(pending.items()):  # a drain meanwhile records what it reads first (idempotent)
            transfer = entry if entry.__class__ is Transfer else entry[0]
            events.append(transfer._fail(TransferStatus.DAEMON_GONE))
            pending.pop(request_id, None)
        # every pass wakes, a pass finishing one cut short too (it may have been cut short before this wake)
        if not self._closed:  # (close() sets it under the submit lock, before it unmaps the rings)
            # a lock-free pass (_finish_failing) is not ordered against a close() on another thread, which may unmap
            # the doorbell after that look: its released memoryview raises ValueError, and close() woke it already
            with contextlib.suppress(ValueError):
                self._completion_doorbell.wake()  # a waiter asleep on the doorbell, or about to be, sees it now
        return events

    def _check_gone(self) -> None:
        if self._closed:
            raise XferError("client is closed")
        if self._gone is not None:
            raise DaemonGoneError(self._gone)

    def _ensure_open(self) -> None:
        self._check_gone()

    # ---------------------------------------------------------------- lifecycle

    def close(self) -> None:
        """Disconnect: the daemon frees everything this client registered; memory from :meth:`allocate_memory` is
        unmapped. Pending transfers fail with DAEMON_GONE; a wait asleep on the completion doorbell is woken.

        A signal handler may call it, with one limit. The handler runs on the main thread between two bytecodes,
        so it may find that thread waiting (close() then completes and the wait raises the DAEMON_GONE failure) or
        inside one of the client's short critical sections (writing a record, a control request), holding a lock
        close() needs: close() then raises :class:`~xferd.errors.ClientBusyError` instead of waiting for its own
        thread (at once inside a control request, after at most :data:`_CLOSE_LOCK_WAIT_S` otherwise) and changes
        nothing; the error surfaces from the interrupted call, and a later close() completes. Simplest in a handler:
        raise, and close in ``finally`` or a ``with`` block.

        It may be called again, and completes what an earlier call left: the mappings are released one by one even
        when one fails, and memory from :meth:`allocate_memory` that the caller still exports (a ``memoryview`` of
        it) raises ``BufferError`` and stays mapped until a later close().

        :raises ClientBusyError: when it cannot take the client's control, submit or state lock (nothing closed).
        :raises BufferError: when a buffer from :meth:`allocate_memory` is still exported (all else is released).
        """
        if not self._disconnected:
            self._disconnect()
        self._release_mappings()

    def _disconnect(self) -> None:
        """close()'s first part, under the control, submit and state locks: mark the client closed, wake a waiter
        asleep on the completion doorbell, close the control socket and fail every pending transfer."""
        locks = self._take_close_locks()
        events: list[Wake | None] = []
        try:
            if self._disconnected:
                return
            self._closed = True
            # a waiter asleep on the completion doorbell holds the poll lock (close() never waits for it: its holder
            # may be this very thread, in a handler): wake it; one that took the lock but has not marked the word
            # yet sees _closed after marking, and does not sleep
            self._completion_doorbell.wake()
            self._channel.close()
            events = self._fail_pending("client closed")
            self._unmap_pending = True  # after the wakes, which use the mapping
            self._disconnected = True  # last: a close() cut short by an exception is done again by the next
        finally:
            for lock in reversed(locks):
                lock.release()
        _set_all(events)

    def _release_mappings(self) -> None:
        """close()'s second part, which a later close() repeats until it is done: unmap the memory from
        :meth:`allocate_memory`, ``cnc.dat`` and the rings (unless a call holding the poll lock, which unmaps them as
        it lets go). Each is released even when another raises; a buffer still exported stays listed."""
        failure: BufferError | None = None
        try:
            for buffer in list(self._shared):
                try:
                    buffer.close()
                except BufferError as ex:  # the caller still exports its memory: the next close() tries again
                    failure = failure or ex
                    continue
                with contextlib.suppress(ValueError):  # free_memory() took it meanwhile
                    self._shared.remove(buffer)
        finally:
            try:
                self._cnc.close()
            finally:
                self._unmap_rings()
        if failure is not None:
            raise failure

    def _take_close_locks(self) -> list[threading.Lock]:
        """The control, submit and state locks, in the client's lock order, each within a bound (a control request
        ends within the control timeout; the others are held for microseconds).

        :raises ClientBusyError: holding none of them, when this thread is inside a control request or a lock is
            not had within its bound.
        """
        if self._control_owner == threading.get_ident():
            raise ClientBusyError("close() called by the thread that is inside a control request of this client (from "
                                  "a signal handler?): nothing was closed; close once that request returned")
        taken: list[threading.Lock] = []
        try:
            for lock, bound_s, what in ((self._control_lock, self._control_timeout_s + _CLOSE_LOCK_WAIT_S, "control"),
                                        (self._submit_lock, _CLOSE_LOCK_WAIT_S, "submit"),
                                        (self._state_lock, _CLOSE_LOCK_WAIT_S, "state")):
                if not lock.acquire(timeout=bound_s):
                    raise ClientBusyError(f"close() did not get the client's {what} lock within {bound_s} s: this "
                                          f"thread holds it (close() from a signal handler?) or another kept it; "
                                          f"nothing was closed, close again once the interrupted call returned")
                taken.append(lock)
        except BaseException:
            for lock in reversed(taken):
                lock.release()
            raise
        return taken

    def _unmap_rings(self) -> None:
        """Unmap the rings of a closed client unless another call holds the poll lock (the ring views under it);
        that call unmaps them as it lets go (:meth:`_poll`). Every holder looks once it let go, so the last one
        finds the lock free."""
        holder, token = self._poll_holder, object()
        try:
            if holder.setdefault(0, token) is not token or not self._unmap_pending:
                return
            self._completion_view.release()
            self._submit_view.release()
            self._rings.close()
            self._unmap_pending = False  # only once done: a close() after a BufferError here tries again
        finally:
            if 0 in holder and holder[0] is token:
                del holder[0]

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_VOID_OPCODE = 0x7fff  # neither READ nor WRITE: the daemon answers INVALID_OPCODE
_RECORD_HEADER = RECORD_HEADER_LENGTH
# a whole SUBMIT record, header (negative length, type) and body (reserved, opcode, reserved, request id, segment,
# local, target, length, trace id, submit nanos, notify length, reserved): one pack_into per request
_SUBMIT_RECORD = struct.Struct("<ii" + "iiqqqqqqqqii")
_SUBMIT_HEADER = struct.Struct("<ii")
_SUBMIT_RECORD_LENGTH = _SUBMIT_RECORD.size
_ONE_REQUEST = (True, 1, 0)  # the shape (single, entries, notify length) of a plain SUBMIT
_monotonic_ns = time.monotonic_ns
_COMPLETION_TYPE = p.COMPLETION
_PADDING = p.PADDING
_COMPLETION_RECORD_LENGTH = RECORD_HEADER_LENGTH + p.COMPLETION_LENGTH
# what follows a record's length word: its type and, for a COMPLETION, request id, status, reserved, bytes moved
# (read for every record: the ring's trailer lies beyond the data area, so 32 bytes are always there)
_RECORD_HEAD = struct.Struct("<i" + "qiiq")


def _set_all(events: Iterable[Wake | None]) -> None:
    """Set the events of transfers that were failed under a lock, once it is let go."""
    for event in events:
        if event is not None:
            event.set()


def _int64(value) -> int:
    """An int64 field's value, checked before a record is claimed (TypeError/OverflowError otherwise)."""
    number = operator.index(value)
    if not -(1 << 63) <= number < 1 << 63:
        raise OverflowError(f"{number} does not fit a signed 64-bit field")
    return number


def _int64s(values) -> memoryview:
    """A native int64 view of a sequence of integers: arrays of 8-byte items are taken as they are (no copy), anything
    else is converted in one C call: ``struct.pack`` converts a list of ints twice as fast as ``array('q', list)``,
    whose per-item conversion parses a format string. TypeError/OverflowError for what is not an int64."""
    if isinstance(values, memoryview) and values.itemsize == 8 and values.ndim == 1 and values.format in "qQlL":
        return values.cast("B").cast("q")
    if isinstance(values, array.array) and values.itemsize == 8:
        return memoryview(values).cast("B").cast("q")
    try:
        return memoryview(struct.pack(f"={len(values)}q", *values)).cast("q")
    except struct.error:  # array's conversion raises the precise TypeError or OverflowError
        return memoryview(array.array("q", values)).cast("B").cast("q")


def connect(directory: str | None = None, segment_name: str | None = None, *, listen: bool = False,
            control_timeout_s: float = 10.0) -> Client:
    """Connect to the daemon serving ``directory`` (default ``$XFERD_DIR`` or ``/dev/shm/xferd``)."""
    return Client(directory or os.environ.get("XFERD_DIR", DEFAULT_DIRECTORY), segment_name, listen=listen,
                  control_timeout_s=control_timeout_s)
