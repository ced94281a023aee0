"""``mooncake.engine.TransferEngine`` on xferd: vLLM's and SGLang's Mooncake connectors, unmodified, move KV cache
through the local xferd daemon.

Every call behaves as Mooncake's pybind11 binding does: failures are return codes (0 success, negative failure;
async batch ids are 0 on failure) with a log line naming xferd's typed status, and only wrong argument types raise
(``TypeError``, as pybind11's overload resolution does). A session is ``"host:port"`` where ``port`` is the remote
engine's :meth:`TransferEngine.get_rpc_port`: the daemon listens on a port per engine and serves exactly that
engine's registered memory there, so several engines per host (TP ranks, prefill and decode) differ only by port.

Environment: ``XFERD_DIR`` (the daemon directory, default ``/dev/shm/xferd``); ``MC_TRANSFER_TIMEOUT`` (seconds,
default 30, at least 5), which bounds a synchronous transfer or :meth:`TransferEngine.get_batch_transfer_status` to
``MC_TRANSFER_TIMEOUT + total bytes / 1 GB/s``, as Mooncake does.
"""

from __future__ import annotations

import ctypes
import enum
import itertools
import logging
import operator
import os
import re
import struct
import threading
import time
from typing import Any, Sequence

import xferd
from xferd.errors import (ControlError, CudaUnavailableError, DaemonGoneError, TransferFailedError, TransferStatus,
                          XferError)

logger = logging.getLogger("mooncake.xferd")

P2PHANDSHAKE = "P2PHANDSHAKE"
_DEFAULT_TIMEOUT_S = 30
_MIN_TIMEOUT_S = 5
_NANOS_PER_BYTE = 1.0  # Mooncake's allowance: 1 GB/s on top of the fixed timeout
_TRANSPORTS = {1: "tcp", 2: "rdma"}
_TRANSPORT_FALLBACK_FLAG = 0x100
_STATUS_DROPS_SEGMENT = {TransferStatus.UNKNOWN_SEGMENT, TransferStatus.TARGET_GONE, TransferStatus.TRANSPORT_ERROR}
_SESSION = re.compile(r"^(?:\[(?P<v6>[0-9A-Fa-f:.%\w]+)\]|(?P<host>[^\s:/\[\]]+)):(?P<port>\d{1,5})$")
_engine_numbers = itertools.count()
_transport_unknown_logged = False


class TransferOpcode(enum.IntEnum):
    """Direction of a transfer: READ brings peer memory here, WRITE sends local memory there."""

    Read = 0
    Write = 1
    READ = 0
    WRITE = 1


class TransferNotify:
    """A notification: ``name`` and ``msg``, delivered to the target engine's :meth:`TransferEngine.get_notifies`
    once the WRITE it travels with has landed."""

    __slots__ = ("name", "msg")

    def __init__(self, name: str = "", msg: str = "") -> None:
        self.name = _text(name, "name")
        self.msg = _text(msg, "msg")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TransferNotify) and (self.name, self.msg) == (other.name, other.msg)

    def __hash__(self) -> int:
        return hash((self.name, self.msg))

    def __repr__(self) -> str:
        return f"TransferNotify(name={self.name!r}, msg={self.msg!r})"


# ---------------------------------------------------------------- argument conversion, as pybind11 would

def _text(value: Any, what: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8")
    raise TypeError(f"{what}: expected str, got {type(value).__name__}")


_UINT64_LIMIT = 1 << 64


def _unsigned(value: Any, what: str) -> int:
    """An address or a size: an int (or anything with ``__index__``, e.g. numpy integers) in [0, 2**64)."""
    if type(value) is int and 0 <= value < _UINT64_LIMIT:  # the common case, in two checks
        return value
    if isinstance(value, float):
        raise TypeError(f"{what}: expected an integer, got float {value!r}")
    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError(f"{what}: expected an integer, got {type(value).__name__}") from None
    if number < 0 or number >= 1 << 64:
        raise TypeError(f"{what}: {number} does not fit an unsigned 64-bit integer")
    return number


def _unsigned_list(values: Any, what: str) -> memoryview:
    """A list of addresses or sizes as a native uint64 view, converted in one C call (``struct.pack``: twice as fast
    as ``array('Q', list)``, whose per-item conversion parses a format string)."""
    if isinstance(values, (str, bytes, bytearray, memoryview)) or not hasattr(values, "__len__") \
            or not hasattr(values, "__iter__"):
        raise TypeError(f"{what}: expected a list of integers, got {type(values).__name__}")
    try:
        return memoryview(struct.pack(f"={len(values)}Q", *values)).cast("Q")
    except (struct.error, TypeError) as ex:
        raise TypeError(f"{what}: expected unsigned 64-bit integers ({ex})") from None


def _opcode(value: Any) -> int:
    if isinstance(value, TransferOpcode):
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and value in (0, 1):
        return value
    raise TypeError(f"opcode: expected TransferOpcode, got {value!r}")


def _timeout_from_environment() -> int:
    raw = os.environ.get("MC_TRANSFER_TIMEOUT")
    if raw is None:
        return _DEFAULT_TIMEOUT_S
    match = re.match(r"\s*[+-]?\d+", raw)  # C atoi: leading digits, 0 when none
    return max(_MIN_TIMEOUT_S, int(match.group()) if match else 0)


def _encode_notify(notify: TransferNotify) -> bytes:
    # the daemon carries one message; Mooncake's (name, msg) pair travels as name NUL msg
    return notify.name.encode("utf-8") + b"\0" + notify.msg.encode("utf-8")


def _decode_notify(notification: xferd.Notification) -> TransferNotify:
    name, nul, message = notification.message.partition(b"\0")
    if not nul:
        return TransferNotify(notification.source, notification.message.decode("utf-8", errors="replace"))
    return TransferNotify(name.decode("utf-8", errors="replace"), message.decode("utf-8", errors="replace"))


class _AsyncBatch:
    __slots__ = ("transfer", "deadline_ns", "session")

    def __init__(self, transfer: xferd.Transfer, deadline_ns: int, session: str) -> None:
        self.transfer = transfer
        self.deadline_ns = deadline_ns
        self.session = session


class TransferEngine:
    """Mooncake's Python ``TransferEngine``, served by the local xferd daemon. Construct, then :meth:`initialize`."""

    TransferOpcode = TransferOpcode

    def __init__(self) -> None:
        self._client: xferd.Client | None = None
        self._lock = threading.Lock()
        self._segments: dict[str, int] = {}
        self._batches: dict[int, _AsyncBatch] = {}
        self._batch_ids = itertools.count(1)
        # each call's requests are one flow to the daemon (one prompt's blocks, as vLLM and SGLang call it): a trace id
        # per call lets the daemon coalesce them and put a short prompt before a long one on a shared connection,
        # where trace id 0 would make every request of this process one flow. The pid keeps them apart in a journal
        self._trace_ids = itertools.count((os.getpid() & 0x7FFF_FFFF) << 32 | 1)
        self._managed: dict[int, xferd.SharedBuffer] = {}
        self._hostname = ""
        self._timeout_s = _timeout_from_environment()

    # ---------------------------------------------------------------- setup

    def initialize(self, local_hostname: str, metadata_server: str, protocol: str, device_name: str) -> int:
        """Connect this engine to the local daemon and give it its own RPC port (:meth:`get_rpc_port`).

        ``protocol`` (``"tcp"`` or ``"rdma"``) must be what the daemon serves; ``metadata_server`` and
        ``device_name`` are the daemon's business (its configuration), accepted and logged.
        """
        return self.initialize_ext(local_hostname, metadata_server, protocol, device_name, "")

    def initialize_ext(self, local_hostname: str, metadata_server: str, protocol: str, device_name: str,
                       metadata_type: str) -> int:
        """:meth:`initialize` with Mooncake's explicit metadata backend type (accepted; the daemon's own
        configuration decides)."""
        hostname = _text(local_hostname, "local_hostname")
        metadata = _text(metadata_server, "metadata_server")
        wanted = _text(protocol, "protocol").strip().lower()
        devices = _text(device_name, "device_name") if device_name is not None else ""
        _text(metadata_type, "metadata_type")
        with self._lock:
            if self._client is not None:
                logger.error("xferd: initialize called twice on one TransferEngine")
                return -1
            if wanted not in ("tcp", "rdma"):
                logger.error("xferd: protocol %r is not served by xferd (tcp or rdma)", protocol)
                return -1
            directory = os.environ.get("XFERD_DIR", xferd.DEFAULT_DIRECTORY)
            name = f"mooncake-{os.getpid()}-{next(_engine_numbers)}"
            try:
                client = xferd.Client(directory, name, listen=True)
            except (XferError, OSError) as ex:
                logger.error("xferd: cannot connect to the xferd daemon in %s: %s (%s)", directory, ex,
                             type(ex).__name__)
                return -1
            if client.rpc_port <= 0:
                logger.error("xferd: the daemon in %s gave this engine no RPC port (does it speak protocol 2 with "
                             "per-segment ports?)", directory)
                client.close()
                return -1
            if not self._protocol_matches(client, wanted, directory):
                client.close()
                return -1
            if metadata != P2PHANDSHAKE:
                logger.info("xferd: metadata server %r: the daemon's own metadata configuration is used", metadata)
            if devices:
                logger.info("xferd: device_name %r: the daemon's own NIC configuration is used", devices)
            self._client = client
            self._hostname = _host_of(hostname)
            logger.info("xferd: engine %s:%d initialized on %s (segment %s)", self._hostname, client.rpc_port,
                        directory, client.segment_name)
            return 0

    @staticmethod
    def _protocol_matches(client: xferd.Client, wanted: str, directory: str) -> bool:
        code = client.welcome.transport_code
        serving = _TRANSPORTS.get(code & 0xff)
        if serving is None:
            global _transport_unknown_logged
            if not _transport_unknown_logged:  # once per process, not once per engine
                _transport_unknown_logged = True
                logger.warning("xferd: the daemon in %s does not report its transport; protocol %r not checked",
                               directory, wanted)
            return True
        if serving == wanted or (code & _TRANSPORT_FALLBACK_FLAG and wanted == "rdma"):
            return True
        logger.error("xferd: protocol %r requested but the daemon in %s serves %s; start the daemon with "
                     "--protocol %s (or protocol_fallback) or ask for %r", wanted, directory, serving, wanted, serving)
        return False

    def get_rpc_port(self) -> int:
        """This engine's own port: peers name it ``"<host>:<port>"``. It listens for the engine's whole life."""
        client = self._client
        return client.rpc_port if client is not None else -1

    # ---------------------------------------------------------------- helpers

    def _live_client(self, call: str) -> xferd.Client | None:
        client = self._client
        if client is None:
            logger.error("xferd: %s before initialize", call)
        return client

    def _segment(self, client: xferd.Client, session: str, call: str, fresh: bool = False) -> int | None:
        if not fresh:
            handle = self._segments.get(session)  # one dict lookup: atomic under the GIL, and only valid names enter
            if handle is not None:
                return handle
        if not _SESSION.match(session) or not 0 < int(session.rsplit(":", 1)[1]) < 65536:
            logger.error("xferd: %s: malformed session %r (expected \"host:port\")", call, session)
            return None
        try:
            handle = client.open_segment(session)
        except (XferError, OSError) as ex:
            logger.error("xferd: %s: cannot open session %s: %s", call, session, ex)
            return None
        with self._lock:
            self._segments[session] = handle
        return handle

    def _forget(self, session: str, status: int | None) -> None:
        if status is None or status in _STATUS_DROPS_SEGMENT:
            with self._lock:
                self._segments.pop(session, None)

    def _submit(self, call: str, target: Any, buffers: Any, peers: Any, lengths: Any, opcode: int,
                notify: TransferNotify | None) -> tuple[xferd.Transfer | None, str, int]:
        session = _text(target, "target_hostname")
        local = _unsigned_list(buffers, "buffers")
        remote = _unsigned_list(peers, "peer_buffer_addresses")
        sizes = _unsigned_list(lengths, "lengths")
        client = self._live_client(call)
        if client is None:
            return None, session, 0
        if not (len(local) == len(remote) == len(sizes)):
            logger.error("xferd: %s: buffers, peer_buffer_addresses and lengths have different size (%d, %d, %d)",
                         call, len(local), len(remote), len(sizes))
            return None, session, 0
        if 0 in sizes:
            logger.error("xferd: %s to %s: a length is 0 (INVALID_LENGTH)", call, session)
            return None, session, 0
        handle = self._segment(client, session, call)
        if handle is None:
            return None, session, 0
        message = b"" if notify is None else _encode_notify(notify)
        try:  # a list's ints exist already: summing them is 5x cheaper than the array's
            total = sum(lengths) if type(lengths) in (list, tuple) else sum(sizes)
        except TypeError:  # numpy integers and other __index__ objects
            total = sum(sizes)
        try:
            return client.submit(opcode, handle, local, remote, sizes, message, trace_id=next(self._trace_ids),
                                 total_bytes=total), session, total
        except (XferError, ValueError, OverflowError) as ex:
            logger.error("xferd: %s to %s failed to submit: %s", call, session, ex)
            if isinstance(ex, DaemonGoneError):
                self._forget(session, None)
            return None, session, total

    def _wait(self, call: str, transfer: xferd.Transfer, session: str, deadline_ns: int) -> int:
        client = self._client
        try:
            client.wait(transfer, max(0.0, (deadline_ns - time.monotonic_ns()) / 1e9))
            return 0
        except TransferFailedError as ex:
            logger.error("xferd: %s to %s failed: %s (%d entries, %d bytes)", call, session, ex.status_name,
                         transfer.entries, transfer.total_bytes)
            self._forget(session, ex.status)
            return -1
        except XferError as ex:
            logger.error("xferd: %s to %s failed: %s", call, session, ex)
            return -1

    def _deadline(self, total_bytes: int) -> int:
        return time.monotonic_ns() + int(self._timeout_s * 1e9 + total_bytes * _NANOS_PER_BYTE)

    def _sync(self, call: str, target: Any, buffers: Any, peers: Any, lengths: Any, opcode: int,
              notify: TransferNotify | None = None) -> int:
        if notify is not None and not isinstance(notify, TransferNotify):
            raise TypeError(f"notify: expected TransferNotify or None, got {type(notify).__name__}")
        if isinstance(buffers, (list, tuple)) and not buffers and isinstance(lengths, (list, tuple)) and not lengths:
            _text(target, "target_hostname")
            return 0 if self._live_client(call) is not None else -1
        transfer, session, total = self._submit(call, target, buffers, peers, lengths, opcode, notify)
        if transfer is None:
            return -1
        return self._wait(call, transfer, session, self._deadline(total))

    def _sync_one(self, call: str, target: Any, buffer: Any, peer: Any, length: Any, opcode: int,
                  notify: TransferNotify | None = None) -> int:
        """One range: the single-request path (scalars checked one by one, one SUBMIT record, no arrays)."""
        if notify is not None:
            return self._sync(call, target, [buffer], [peer], [length], opcode, notify)
        session = target if type(target) is str else _text(target, "target_hostname")
        local = _unsigned(buffer, "buffer")
        remote = _unsigned(peer, "peer_buffer_address")
        size = _unsigned(length, "length")
        client = self._client
        if client is None:
            self._live_client(call)  # logs it
            return -1
        if size == 0:
            logger.error("xferd: %s to %s: a length is 0 (INVALID_LENGTH)", call, session)
            return -1
        handle = self._segment(client, session, call)
        if handle is None:
            return -1
        try:
            transfer = client.submit_one(opcode, handle, local, remote, size)
        except (XferError, ValueError, OverflowError) as ex:
            logger.error("xferd: %s to %s failed to submit: %s", call, session, ex)
            if isinstance(ex, DaemonGoneError):
                self._forget(session, None)
            return -1
        return self._wait(call, transfer, session, self._deadline(size))

    # ---------------------------------------------------------------- synchronous transfers (GIL released while waiting)

    def transfer_sync_write(self, target_hostname: str, buffer: int, peer_buffer_address: int, length: int,
                            transport_hint: str = "") -> int:
        """Write ``length`` bytes at local ``buffer`` to ``peer_buffer_address`` of the engine ``target_hostname``."""
        return self._sync_one("transfer_sync_write", target_hostname, buffer, peer_buffer_address, length,
                              TransferOpcode.Write)

    def transfer_sync_read(self, target_hostname: str, buffer: int, peer_buffer_address: int, length: int,
                           transport_hint: str = "") -> int:
        """Read ``length`` bytes at ``peer_buffer_address`` of ``target_hostname`` into local ``buffer``."""
        return self._sync_one("transfer_sync_read", target_hostname, buffer, peer_buffer_address, length,
                              TransferOpcode.Read)

    def transfer_sync(self, target_hostname: str, buffer: int, peer_buffer_address: int, length: int,
                      opcode: TransferOpcode, notify: TransferNotify | None = None, transport_hint: str = "") -> int:
        """One range in direction ``opcode``; a WRITE may carry a :class:`TransferNotify`."""
        if notify is not None and not isinstance(notify, TransferNotify):
            raise TypeError(f"notify: expected TransferNotify or None, got {type(notify).__name__}")
        return self._sync_one("transfer_sync", target_hostname, buffer, peer_buffer_address, length,
                              _opcode(opcode), notify)

    def batch_transfer_sync_write(self, target_hostname: str, buffers: Sequence[int],
                                  peer_buffer_addresses: Sequence[int], lengths: Sequence[int],
                                  transport_hint: str = "") -> int:
        """Write every ``(buffers[i], peer_buffer_addresses[i], lengths[i])`` and wait: 0 only if all arrived."""
        return self._sync("batch_transfer_sync_write", target_hostname, buffers, peer_buffer_addresses, lengths,
                          TransferOpcode.Write)

    def batch_transfer_sync_read(self, target_hostname: str, buffers: Sequence[int],
                                 peer_buffer_addresses: Sequence[int], lengths: Sequence[int],
                                 transport_hint: str = "") -> int:
        """Read every range and wait: 0 only if all arrived."""
        return self._sync("batch_transfer_sync_read", target_hostname, buffers, peer_buffer_addresses, lengths,
                          TransferOpcode.Read)

    def batch_transfer_sync(self, target_hostname: str, buffers: Sequence[int], peer_buffer_addresses: Sequence[int],
                            lengths: Sequence[int], opcode: TransferOpcode, notify: TransferNotify | None = None,
                            transport_hint: str = "") -> int:
        """A batch in direction ``opcode``; a WRITE may carry a notify, delivered once every entry landed."""
        return self._sync("batch_transfer_sync", target_hostname, buffers, peer_buffer_addresses, lengths,
                          _opcode(opcode), notify)

    # ---------------------------------------------------------------- asynchronous transfers

    def _async(self, call: str, target: Any, buffers: Any, peers: Any, lengths: Any, opcode: int) -> int:
        transfer, session, total = self._submit(call, target, buffers, peers, lengths, opcode, None)
        if transfer is None:
            return 0
        batch_id = next(self._batch_ids)
        with self._lock:
            self._batches[batch_id] = _AsyncBatch(transfer, self._deadline(total), session)
        return batch_id

    def batch_transfer_async_write(self, target_hostname: str, buffers: Sequence[int],
                                   peer_buffer_addresses: Sequence[int], lengths: Sequence[int],
                                   transport_hint: str = "") -> int:
        """Submit a WRITE batch; returns its batch id (0 on failure)."""
        return self._async("batch_transfer_async_write", target_hostname, buffers, peer_buffer_addresses, lengths,
                           TransferOpcode.Write)

    def batch_transfer_async_read(self, target_hostname: str, buffers: Sequence[int],
                                  peer_buffer_addresses: Sequence[int], lengths: Sequence[int],
                                  transport_hint: str = "") -> int:
        """Submit a READ batch; returns its batch id (0 on failure)."""
        return self._async("batch_transfer_async_read", target_hostname, buffers, peer_buffer_addresses, lengths,
                           TransferOpcode.Read)

    def batch_transfer_async(self, target_hostname: str, buffers: Sequence[int], peer_buffer_addresses: Sequence[int],
                             lengths: Sequence[int], opcode: TransferOpcode, transport_hint: str = "") -> int:
        """Submit a batch in direction ``opcode``; returns its batch id (0 on failure)."""
        return self._async("batch_transfer_async", target_hostname, buffers, peer_buffer_addresses, lengths,
                           _opcode(opcode))

    def transfer_submit_write(self, target_hostname: str, buffer: int, peer_buffer_address: int, length: int,
                              transport_hint: str = "") -> int:
        """Submit one WRITE; returns its batch id (0 on failure); see :meth:`transfer_check_status`."""
        return self._async("transfer_submit_write", target_hostname, [buffer], [peer_buffer_address], [length],
                           TransferOpcode.Write)

    def get_batch_transfer_status(self, batch_ids: Sequence[int]) -> int:
        """Wait until every batch finished: 0 when all completed, -1 when one failed or timed out."""
        ids = _unsigned_list(batch_ids, "batch_ids")
        client = self._live_client("get_batch_transfer_status")
        if client is None:
            return -1
        result = 0
        for batch_id in ids:
            with self._lock:
                batch = self._batches.get(batch_id)
            if batch is None:
                logger.error("xferd: get_batch_transfer_status: unknown batch id %d", batch_id)
                return -1
            code = self._wait("batch transfer", batch.transfer, batch.session, batch.deadline_ns)
            if code == 0 or batch.transfer.done():
                with self._lock:
                    self._batches.pop(batch_id, None)
            if code != 0:
                result = -1
                break
        return result

    def transfer_check_status(self, batch_id: int) -> int:
        """1 completed, 0 pending, -1 failed (or unknown id), -2 timed out (still pending past its deadline)."""
        batch_id = _unsigned(batch_id, "batch_id")
        client = self._live_client("transfer_check_status")
        if client is None:
            return -1
        with self._lock:
            batch = self._batches.get(batch_id)
        if batch is None:
            logger.error("xferd: transfer_check_status: unknown batch id %d", batch_id)
            return -1
        client.poll()
        if not batch.transfer.done():
            if not client.is_daemon_gone() and time.monotonic_ns() <= batch.deadline_ns:
                return 0
            if not batch.transfer.done():
                logger.error("xferd: batch %d to %s timed out", batch_id, batch.session)
                return -2
        with self._lock:
            self._batches.pop(batch_id, None)
        if batch.transfer.status == TransferStatus.OK:
            return 1
        logger.error("xferd: batch %d to %s failed: %s", batch_id, batch.session,
                     TransferStatus.describe(batch.transfer.status))
        self._forget(batch.session, batch.transfer.status)
        return -1

    # ---------------------------------------------------------------- notifications and probes

    def get_notifies(self) -> list[TransferNotify]:
        """Notifications that arrived with WRITEs into this engine's memory since the last call."""
        client = self._client
        if client is None:
            return []
        try:
            return [_decode_notify(n) for n in client.get_notifies()]
        except XferError as ex:
            logger.error("xferd: get_notifies: %s", ex)
            return []

    def send_probe(self, peer_server_name: str) -> int:
        """0 when the engine ``"host:port"`` is reachable now (a fresh descriptor fetch), -1 otherwise."""
        session = _text(peer_server_name, "peer_server_name")
        client = self._live_client("send_probe")
        if client is None:
            return -1
        return 0 if self._segment(client, session, "send_probe", fresh=True) is not None else -1

    # ---------------------------------------------------------------- memory

    def register_memory(self, buffer_addr: int, capacity: int, location: str = "*") -> int:
        """Register local memory: a managed buffer, any host memory of this process (numpy, torch CPU tensors) or a
        GPU pointer (``cuda:N`` or ``*``), so peers can read and write it."""
        address = _unsigned(buffer_addr, "buffer_addr")
        length = _unsigned(capacity, "capacity")
        where = _text(location, "location")
        client = self._live_client("register_memory")
        if client is None:
            return -1
        if length == 0:
            logger.error("xferd: register_memory(%#x): capacity 0", address)
            return -1
        try:
            client.register_memory(address, length, where)
        except (XferError, OSError) as ex:
            logger.error("xferd: register_memory(%#x, %d, %s) failed: %s", address, length, where, ex)
            return -1
        return 0

    def unregister_memory(self, buffer_addr: int) -> int:
        """Unregister the range starting at ``buffer_addr``; returns once no transfer uses it."""
        address = _unsigned(buffer_addr, "buffer_addr")
        client = self._live_client("unregister_memory")
        if client is None:
            return -1
        try:
            client.unregister_memory(address)
        except (XferError, OSError) as ex:
            logger.error("xferd: unregister_memory(%#x) failed: %s", address, ex)
            return -1
        return 0

    def batch_register_memory(self, buffer_addresses: Sequence[int], capacities: Sequence[int],
                              location: str = "*") -> int:
        """Register several ranges; all or none (a failure unregisters the ones this call registered)."""
        addresses = _unsigned_list(buffer_addresses, "buffer_addresses")
        lengths = _unsigned_list(capacities, "capacities")
        _text(location, "location")
        if len(addresses) != len(lengths):
            logger.error("xferd: batch_register_memory: %d addresses, %d capacities", len(addresses), len(lengths))
            return -1
        for index, (address, length) in enumerate(zip(addresses, lengths)):
            if self.register_memory(address, length, location) != 0:
                for done in addresses[:index]:
                    self.unregister_memory(done)
                return -1
        return 0

    def batch_unregister_memory(self, buffer_addresses: Sequence[int]) -> int:
        """Unregister several ranges; -1 when any of them failed (the others are still unregistered)."""
        result = 0
        for address in _unsigned_list(buffer_addresses, "buffer_addresses"):
            if self.unregister_memory(address) != 0:
                result = -1
        return result

    def allocate_managed_buffer(self, length: int) -> int:
        """Allocate and register ``length`` bytes of shared memory; returns its address (0 on failure)."""
        size = _unsigned(length, "length")
        client = self._live_client("allocate_managed_buffer")
        if client is None or size == 0:
            return 0
        try:
            buffer = client.allocate_memory(size)
        except (XferError, OSError) as ex:
            logger.error("xferd: allocate_managed_buffer(%d) failed: %s", size, ex)
            return 0
        try:
            client.register_memory(buffer.address, buffer.length, "cpu:0")
        except (XferError, OSError) as ex:
            logger.error("xferd: allocate_managed_buffer(%d): registration failed: %s", size, ex)
            client.free_memory(buffer)
            return 0
        with self._lock:
            self._managed[buffer.address] = buffer
        return buffer.address

    def free_managed_buffer(self, buffer_addr: int, length: int) -> int:
        """Unregister and free a buffer from :meth:`allocate_managed_buffer`."""
        address = _unsigned(buffer_addr, "buffer_addr")
        _unsigned(length, "length")
        with self._lock:
            buffer = self._managed.pop(address, None)
        client = self._client
        if buffer is None or client is None:
            logger.error("xferd: free_managed_buffer(%#x): not a managed buffer of this engine", address)
            return -1
        try:
            client.unregister_memory(address)
        except XferError as ex:
            logger.error("xferd: free_managed_buffer(%#x): %s", address, ex)
        client.free_memory(buffer)
        return 0

    def write_bytes_to_buffer(self, dest_address: int, src_ptr: bytes, length: int) -> int:
        """Copy ``length`` bytes of ``src_ptr`` to local memory at ``dest_address``."""
        address = _unsigned(dest_address, "dest_address")
        size = _unsigned(length, "length")
        if isinstance(src_ptr, str):
            src_ptr = src_ptr.encode("utf-8")
        if not isinstance(src_ptr, (bytes, bytearray, memoryview)):
            raise TypeError(f"src_ptr: expected bytes, got {type(src_ptr).__name__}")
        if size > len(src_ptr):
            logger.error("xferd: write_bytes_to_buffer: length %d exceeds the %d bytes given", size, len(src_ptr))
            return -1
        ctypes.memmove(address, bytes(src_ptr[:size]), size)
        return 0

    def read_bytes_from_buffer(self, source_address: int, length: int) -> bytes:
        """A copy of ``length`` bytes of local memory at ``source_address``."""
        return ctypes.string_at(_unsigned(source_address, "source_address"), _unsigned(length, "length"))

    def get_first_buffer_address(self, segment_name: str) -> int:
        """The first buffer of the engine ``"host:port"`` (this one's or a peer's, on this host or another), as its
        segment descriptor lists it: xferd's descriptors list buffers by address, so this is the lowest-addressed
        registered range (Mooncake's is the first registered; they agree when the engine registered one buffer, or
        in ascending order). Asks afresh every call; 0 when the segment has none or cannot be reached (logged)."""
        name = _text(segment_name, "segment_name")
        client = self._live_client("get_first_buffer_address")
        if client is None:
            return 0
        if name == f"{self._hostname}:{client.rpc_port}":
            handle: int | None = client.segment_handle
        else:
            handle = self._segment(client, name, "get_first_buffer_address", fresh=True)
        if handle is None:
            return 0
        try:
            return client.first_buffer_address(handle)
        except (XferError, OSError) as ex:
            logger.error("xferd: get_first_buffer_address(%r) failed: %s", name, ex)
            return 0

    def close(self) -> None:
        """Disconnect from the daemon (it frees every registration and closes this engine's port). Not in Mooncake's
        API: its engines live as long as the process; this one also disconnects when garbage collected."""
        with self._lock:
            client, self._client = self._client, None
            self._segments.clear()
            self._batches.clear()
            self._managed.clear()
        if client is not None:
            client.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # pragma: no cover - interpreter shutdown
            pass


def _host_of(local_hostname: str) -> str:
    """The host part of ``host``, ``host:port`` or ``[v6]:port``."""
    if local_hostname.startswith("["):
        return local_hostname[:local_hostname.find("]") + 1] if "]" in local_hostname else local_hostname
    if local_hostname.count(":") == 1:
        return local_hostname.split(":", 1)[0]
    return local_hostname
