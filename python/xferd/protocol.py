"""Wire layouts of xferd protocol version 2 (``ringbuffer/PROTOCOL.md``): control frames, ring records, cnc.dat.

Everything is little-endian. Control frames are ``int32 length (header included), int32 type, body``; strings are
an ``int32`` length then UTF-8 bytes. Encoders return ``bytes``; decoders take a whole frame and raise
:class:`MalformedFrame` when it is shorter than its layout.
"""

from __future__ import annotations

import dataclasses
import struct

PROTOCOL_VERSION = 2
CNC_LAYOUT_VERSION = 2

# ---------------------------------------------------------------- files in the daemon directory
SOCKET_FILE = "xferd.sock"
CNC_FILE = "cnc.dat"
CNC_MAGIC = 0x44524658
CNC_MAGIC_OFFSET = 0
CNC_VERSION_OFFSET = 4
CNC_PID_OFFSET = 24
CNC_START_TIME_OFFSET = 32
CNC_LIVENESS_TIMEOUT_OFFSET = 40
CNC_HEARTBEAT_OFFSET = 48
CNC_HEADER_LENGTH = 128

# ---------------------------------------------------------------- control frames
FRAME_HEADER_LENGTH = 8
MAX_FRAME_LENGTH = 4096
MAX_STRING_LENGTH = 1024

HELLO = 1
REGISTER_MEMORY = 2
UNREGISTER_MEMORY = 3
OPEN_SEGMENT = 4
REGISTER_GPU_MEMORY = 5
REGISTER_PROCESS_MEMORY = 6
FIRST_BUFFER = 7
REGISTER_FILE = 8
WELCOME = 101
OK = 102
ERROR = 103

HELLO_FLAG_LISTEN = 1

REGISTER_FILE_SYNC = 1
"""REGISTER_FILE flag: every WRITE to the region ends with an fdatasync before it completes."""
REGISTER_FILE_BUFFERED = 2
"""REGISTER_FILE flag: use the page cache even where O_DIRECT would work."""
FILE_ADDRESS_BASE = 1 << 62
"""Where clients number file regions: above every canonical user-space address, so no memory overlaps them."""

IPC_HANDLE_LENGTH = 64
PCI_BUS_ID_LENGTH = 16

# ---------------------------------------------------------------- ring records
SUBMIT = 1
SUBMIT_BATCH = 3
COMPLETION = 1
NOTIFICATION = 2
PADDING = -1

READ = 0
WRITE = 1

SUBMIT_LENGTH = 80
SUBMIT_BATCH_HEADER_LENGTH = 48
BATCH_ENTRY_LENGTH = 24
COMPLETION_LENGTH = 40
NOTIFICATION_HEADER_LENGTH = 16

_HEADER = struct.Struct("<ii")
_SUBMIT = struct.Struct("<iiqqqqqqqqii")
_BATCH_HEADER = struct.Struct("<qiiqqqii")
_COMPLETION = struct.Struct("<qiiqqq")
_NOTIFICATION = struct.Struct("<qii")


class MalformedFrame(ValueError):
    """A frame or record is shorter than, or inconsistent with, its layout."""


def align8(value: int) -> int:
    """``value`` rounded up to a multiple of 8."""
    return (value + 7) & ~7


# ---------------------------------------------------------------- frame helpers

def _frame(frame_type: int, body: bytes) -> bytes:
    length = FRAME_HEADER_LENGTH + len(body)
    if length > MAX_FRAME_LENGTH:
        raise ValueError(f"control frame of {length} bytes exceeds {MAX_FRAME_LENGTH}")
    return _HEADER.pack(length, frame_type) + body


def _string(value: str) -> bytes:
    raw = value.encode("utf-8")
    if len(raw) > MAX_STRING_LENGTH:
        raise ValueError(f"string of {len(raw)} bytes exceeds {MAX_STRING_LENGTH}: {value[:40]!r}...")
    return struct.pack("<i", len(raw)) + raw


def read_string(frame: bytes | memoryview, body_offset: int) -> str:
    """Decode the string at ``body_offset`` of a frame's body."""
    at = FRAME_HEADER_LENGTH + body_offset
    if at + 4 > len(frame):
        raise MalformedFrame(f"string length at body offset {body_offset} beyond frame of {len(frame)} bytes")
    (length,) = struct.unpack_from("<i", frame, at)
    if length < 0 or length > MAX_STRING_LENGTH or at + 4 + length > len(frame):
        raise MalformedFrame(f"string of {length} bytes at body offset {body_offset} in a frame of {len(frame)}")
    return bytes(frame[at + 4:at + 4 + length]).decode("utf-8", errors="replace")


def frame_header(frame: bytes | memoryview) -> tuple[int, int]:
    """``(length, type)`` of a frame whose first 8 bytes are present; the length is checked against the limits."""
    length, frame_type = _HEADER.unpack_from(frame, 0)
    if length < FRAME_HEADER_LENGTH or length > MAX_FRAME_LENGTH:
        raise MalformedFrame(f"frame length {length} outside [{FRAME_HEADER_LENGTH}, {MAX_FRAME_LENGTH}]")
    return length, frame_type


def _body(frame: bytes | memoryview, fmt: struct.Struct, name: str) -> tuple:
    if len(frame) < FRAME_HEADER_LENGTH + fmt.size:
        raise MalformedFrame(f"{name} of {len(frame)} bytes, needs at least {FRAME_HEADER_LENGTH + fmt.size}")
    return fmt.unpack_from(frame, FRAME_HEADER_LENGTH)


# ---------------------------------------------------------------- client -> daemon

def encode_hello(pid: int, segment_name: str, flags: int = 0, version: int = PROTOCOL_VERSION) -> bytes:
    """HELLO: 0 version, 4 pid, 8 flags, 12 reserved, 16 segment name."""
    return _frame(HELLO, struct.pack("<iiii", version, pid, flags, 0) + _string(segment_name))


def encode_register_memory(correlation_id: int, address: int, length: int, fd_offset: int, location: str) -> bytes:
    """REGISTER_MEMORY (the memfd travels as SCM_RIGHTS): 0 id, 8 address, 16 length, 24 offset in fd, 32 location."""
    return _frame(REGISTER_MEMORY, struct.pack("<qqqq", correlation_id, address, length, fd_offset)
                  + _string(location))


def encode_register_process_memory(correlation_id: int, address: int, length: int, location: str) -> bytes:
    """REGISTER_PROCESS_MEMORY (no fd; the daemon uses process_vm_readv/writev): 0 id, 8 address, 16 length,
    24 location."""
    return _frame(REGISTER_PROCESS_MEMORY, struct.pack("<qqq", correlation_id, address, length) + _string(location))


def encode_register_file(correlation_id: int, address: int, length: int, file_offset: int, flags: int) -> bytes:
    """REGISTER_FILE (the open file travels as SCM_RIGHTS): 0 id, 8 address, 16 length, 24 offset in the file,
    32 flags, 36 reserved."""
    return _frame(REGISTER_FILE, struct.pack("<qqqqii", correlation_id, address, length, file_offset, flags, 0))


def encode_register_gpu_memory(correlation_id: int, device_pointer: int, length: int, allocation_offset: int,
                               ipc_handle: bytes, pci_bus_id: str, location: str) -> bytes:
    """REGISTER_GPU_MEMORY: 0 id, 8 pointer, 16 length, 24 offset in allocation, 32 IPC handle (64 bytes),
    96 PCI bus id (16 bytes ASCII, NUL padded), 112 location; nothing after it."""
    if len(ipc_handle) != IPC_HANDLE_LENGTH:
        raise ValueError(f"a CUDA IPC handle is {IPC_HANDLE_LENGTH} bytes, not {len(ipc_handle)}")
    pci = pci_bus_id.encode("ascii")
    if len(pci) > PCI_BUS_ID_LENGTH:
        raise ValueError(f"PCI bus id longer than {PCI_BUS_ID_LENGTH}: {pci_bus_id}")
    body = struct.pack("<qqqq", correlation_id, device_pointer, length, allocation_offset) + bytes(ipc_handle) \
        + pci.ljust(PCI_BUS_ID_LENGTH, b"\0") + _string(location)
    return _frame(REGISTER_GPU_MEMORY, body)


def encode_unregister_memory(correlation_id: int, address: int) -> bytes:
    """UNREGISTER_MEMORY: 0 id, 8 address (start of a registered range)."""
    return _frame(UNREGISTER_MEMORY, struct.pack("<qq", correlation_id, address))


def encode_first_buffer(correlation_id: int, segment_handle: int) -> bytes:
    """FIRST_BUFFER: the owner address of the first buffer of a segment's descriptor (OK's value, 0 when none)."""
    return _frame(FIRST_BUFFER, struct.pack("<qq", correlation_id, segment_handle))


def encode_open_segment(correlation_id: int, name: str) -> bytes:
    """OPEN_SEGMENT: 0 id, 8 name (``name``, ``host:port/name`` or a per-segment ``host:port``)."""
    return _frame(OPEN_SEGMENT, struct.pack("<q", correlation_id) + _string(name))


# ---------------------------------------------------------------- daemon -> client

@dataclasses.dataclass(frozen=True)
class Welcome:
    """The daemon's answer to HELLO; the rings file travels with it as SCM_RIGHTS."""

    client_slot: int
    max_in_flight: int
    segment_handle: int
    completion_ring_length: int
    max_notify_length: int
    max_request_length: int
    submit_ring_length: int
    max_batch_entries: int
    rpc_port: int
    transport_code: int
    segment_name: str


_WELCOME = struct.Struct("<iiqqiiqiiii")


def decode_welcome(frame: bytes | memoryview) -> Welcome:
    """WELCOME: 0 slot, 4 max in flight, 8 reserved, 16 own segment handle, 24 completion ring length C,
    28 max notify, 32 max request length, 40 submit ring length S, 44 max batch entries, 48 segment RPC port,
    52 reserved (see :attr:`Welcome.transport_code`), 56 full segment name."""
    (slot, max_in_flight, _reserved, handle, completion_length, max_notify, max_request, submit_length,
     max_batch, port, transport) = _body(frame, _WELCOME, "WELCOME")
    return Welcome(slot, max_in_flight, handle, completion_length, max_notify, max_request, submit_length,
                   max_batch, port, transport, read_string(frame, 56))


def decode_ok(frame: bytes | memoryview) -> tuple[int, int]:
    """OK: ``(correlation id, value)``."""
    return _body(frame, struct.Struct("<qq"), "OK")


def decode_error(frame: bytes | memoryview) -> tuple[int, int, str]:
    """ERROR: ``(correlation id, code, message)``."""
    correlation_id, code = _body(frame, struct.Struct("<qi"), "ERROR")
    return correlation_id, code, read_string(frame, 12)


# ---------------------------------------------------------------- ring records (bodies, after the 8-byte header)

def pack_submit(buffer, offset: int, request_id: int, opcode: int, segment: int, local_address: int,
                target_address: int, length: int, trace_id: int, submit_nanos: int, notify: bytes = b"") -> None:
    """Write a SUBMIT body (80 bytes + notify) at ``offset``: reserved fields 0 and 8 are written as zero."""
    _SUBMIT.pack_into(buffer, offset, 0, opcode, 0, request_id, segment, local_address, target_address, length,
                      trace_id, submit_nanos, len(notify), 0)
    if notify:
        buffer[offset + SUBMIT_LENGTH:offset + SUBMIT_LENGTH + len(notify)] = notify


def submit_length(notify_length: int) -> int:
    """Body length of a SUBMIT record."""
    return SUBMIT_LENGTH + notify_length


def batch_length(entry_count: int, notify_length: int) -> int:
    """Body length of a SUBMIT_BATCH record: 48 + align8(M) + 24 N."""
    return SUBMIT_BATCH_HEADER_LENGTH + align8(notify_length) + BATCH_ENTRY_LENGTH * entry_count


def pack_batch_header(buffer, offset: int, request_id: int, opcode: int, entry_count: int, segment: int,
                      trace_id: int, submit_nanos: int, notify: bytes = b"") -> int:
    """Write a SUBMIT_BATCH header and its zero-padded notify at ``offset``; returns the entries' offset."""
    _BATCH_HEADER.pack_into(buffer, offset, request_id, opcode, entry_count, segment, trace_id, submit_nanos,
                            len(notify), 0)
    at = offset + SUBMIT_BATCH_HEADER_LENGTH
    padded = align8(len(notify))
    if padded:
        buffer[at:at + padded] = bytes(notify) + bytes(padded - len(notify))
    return at + padded


@dataclasses.dataclass(frozen=True)
class Completion:
    """The end of one request or batch."""

    request_id: int
    status: int
    bytes_transferred: int
    intake_nanos: int
    complete_nanos: int


def decode_completion(buffer, offset: int, length: int) -> Completion:
    """Decode a COMPLETION body of ``length`` bytes at ``offset``."""
    if length < COMPLETION_LENGTH:
        raise MalformedFrame(f"COMPLETION of {length} bytes, needs {COMPLETION_LENGTH}")
    request_id, status, _reserved, transferred, intake, complete = _COMPLETION.unpack_from(buffer, offset)
    return Completion(request_id, status, transferred, intake, complete)


_COMPLETION_HEAD = struct.Struct("<qiiq")


def unpack_completion(buffer, offset: int, length: int) -> tuple[int, int, int]:
    """``(request id, status, bytes transferred)`` of a COMPLETION body: the waiting path's decoder (no object)."""
    if length < COMPLETION_LENGTH:
        raise MalformedFrame(f"COMPLETION of {length} bytes, needs {COMPLETION_LENGTH}")
    request_id, status, _reserved, transferred = _COMPLETION_HEAD.unpack_from(buffer, offset)
    return request_id, status, transferred


def encode_completion(request_id: int, status: int, transferred: int, intake: int = 0, complete: int = 0) -> bytes:
    """A COMPLETION body (for tests that play the daemon)."""
    return _COMPLETION.pack(request_id, status, 0, transferred, intake, complete)


@dataclasses.dataclass(frozen=True)
class Notification:
    """A message a WRITE's initiator attached for this segment's owner, delivered after the bytes landed."""

    source: str
    message: bytes
    trace_id: int = 0


def decode_notification(buffer, offset: int, length: int) -> Notification:
    """Decode a NOTIFICATION body: 0 trace id, 8 source name length S, 12 message length N, 16 name, 16+S message."""
    if length < NOTIFICATION_HEADER_LENGTH:
        raise MalformedFrame(f"NOTIFICATION of {length} bytes")
    trace_id, name_length, message_length = _NOTIFICATION.unpack_from(buffer, offset)
    if name_length < 0 or message_length < 0 or NOTIFICATION_HEADER_LENGTH + name_length + message_length > length:
        raise MalformedFrame(f"NOTIFICATION lengths {name_length}+{message_length} beyond its {length} bytes")
    at = offset + NOTIFICATION_HEADER_LENGTH
    name = bytes(buffer[at:at + name_length]).decode("utf-8", errors="replace")
    message = bytes(buffer[at + name_length:at + name_length + message_length])
    return Notification(name, message, trace_id)


def encode_notification(source: str, message: bytes, trace_id: int = 0) -> bytes:
    """A NOTIFICATION body (for tests that play the daemon)."""
    raw = source.encode("utf-8")
    return _NOTIFICATION.pack(trace_id, len(raw), len(message)) + raw + message
