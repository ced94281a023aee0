"""Status codes and typed exceptions of the xferd protocol.

Two families mirror the two kinds of failure the daemon reports:

* a transfer ends with a :class:`TransferStatus` in its completion record; a failed one raises a subclass of
  :class:`TransferFailedError` (``TargetRangeNotRegisteredError``, ``TransportError``, ...);
* a control request (register, open segment, ...) is answered ERROR with a :class:`ControlErrorCode`; it raises a
  subclass of :class:`ControlError` (``OverlappingRegionError``, ``UnknownSegmentControlError``, ...).

:class:`DaemonGoneError` is raised by the library itself when the daemon went away (end of file on the control
socket, or a stale heartbeat in ``cnc.dat``).
"""

from __future__ import annotations

import enum


class TransferStatus(enum.IntEnum):
    """Status of a completion record (stable protocol values; 11 is raised by client libraries only; 13: process
    memory registered by address could not be read or written, e.g. its owner unmapped it; 14: the access policy
    refuses the submitter the target segment)."""

    OK = 0
    UNKNOWN_SEGMENT = 1
    LOCAL_RANGE_NOT_REGISTERED = 2
    TARGET_RANGE_NOT_REGISTERED = 3
    INVALID_LENGTH = 4
    INVALID_OPCODE = 5
    TARGET_GONE = 6
    SHUTTING_DOWN = 7
    INVALID_NOTIFY = 8
    TRANSPORT_ERROR = 9
    TIMEOUT = 10
    DAEMON_GONE = 11
    UNSUPPORTED_MEMORY = 12
    MEMORY_FAULT = 13
    ACCESS_DENIED = 14
    STORAGE_NO_SPACE = 15
    STORAGE_IO_ERROR = 16
    STORAGE_TRUNCATED = 17
    STORAGE_PERMISSION = 18
    STORAGE_OUT_OF_RANGE = 19

    @classmethod
    def describe(cls, value: int) -> str:
        """The status's name, or ``UNKNOWN_STATUS(n)`` for a value this library does not know."""
        try:
            return cls(value).name
        except ValueError:
            return f"UNKNOWN_STATUS({value})"


class ControlErrorCode(enum.IntEnum):
    """Error code of the control channel's ERROR answer."""

    PROTOCOL_VERSION_MISMATCH = 1
    MALFORMED_MESSAGE = 2
    MISSING_FD = 3
    OVERLAPPING_REGION = 4
    NOT_REGISTERED = 5
    UNKNOWN_SEGMENT = 6
    DUPLICATE_SEGMENT_NAME = 7
    TOO_MANY_CLIENTS = 8
    MAP_FAILED = 9
    INVALID_ARGUMENT = 10
    NOT_CONNECTED = 11
    CUDA_UNAVAILABLE = 12
    LIMIT_REACHED = 13
    ACCESS_DENIED = 14
    MEMORY_NOT_SEALED = 15
    BEYOND_END_OF_FILE = 16

    @classmethod
    def describe(cls, value: int) -> str:
        """The code's name, or ``ERROR(n)`` for a value this library does not know."""
        try:
            return cls(value).name
        except ValueError:
            return f"ERROR({value})"


class XferError(Exception):
    """Base of every error this package raises."""


class DaemonGoneError(XferError):
    """The daemon went away: its control socket reached end of file or its heartbeat is stale.

    Every transfer still pending fails with :attr:`TransferStatus.DAEMON_GONE`; connect again once a daemon runs.
    """

    status = TransferStatus.DAEMON_GONE


class ClientBusyError(XferError):
    """:meth:`xferd.Client.close` could not take one of the client's locks: the thread calling it holds it (a signal
    handler that interrupted its own thread inside the client: writing a record, a control request), or another
    thread held it past close()'s bound. Nothing was closed: call ``close()`` again once the interrupted call has
    returned (a ``with`` block's exit or a ``finally`` does)."""


class CudaUnavailableError(XferError):
    """This process has no usable CUDA runtime (libcudart missing, no driver, no device)."""


class ControlError(XferError):
    """The daemon answered a control request with ERROR."""

    code: int = 0

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{ControlErrorCode.describe(code)}: {message}")
        self.code = code
        self.message = message

    @property
    def code_name(self) -> str:
        """The error code's protocol name."""
        return ControlErrorCode.describe(self.code)

    @staticmethod
    def of(code: int, message: str) -> "ControlError":
        """The typed exception for an ERROR answer's code."""
        return _CONTROL_ERRORS.get(code, ControlError)(code, message)


class TransferFailedError(XferError):
    """A transfer ended with a status other than OK; nothing is known to have arrived."""

    def __init__(self, status: int, detail: str = "") -> None:
        text = TransferStatus.describe(status)
        super().__init__(f"{text}: {detail}" if detail else text)
        self.status = status
        self.detail = detail

    @property
    def status_name(self) -> str:
        """The status's protocol name."""
        return TransferStatus.describe(self.status)

    @staticmethod
    def of(status: int, detail: str = "") -> "TransferFailedError":
        """The typed exception for a completion status."""
        return _TRANSFER_ERRORS.get(status, TransferFailedError)(status, detail)


def _subclass(base: type, name: str) -> type:
    return type(name, (base,), {"__doc__": f"{base.__name__} for status/code {name}."})


# One class per protocol value, named after it, so callers can catch exactly the failure they handle.
UnknownSegmentError = _subclass(TransferFailedError, "UnknownSegmentError")
LocalRangeNotRegisteredError = _subclass(TransferFailedError, "LocalRangeNotRegisteredError")
TargetRangeNotRegisteredError = _subclass(TransferFailedError, "TargetRangeNotRegisteredError")
InvalidLengthError = _subclass(TransferFailedError, "InvalidLengthError")
InvalidOpcodeError = _subclass(TransferFailedError, "InvalidOpcodeError")
TargetGoneError = _subclass(TransferFailedError, "TargetGoneError")
ShuttingDownError = _subclass(TransferFailedError, "ShuttingDownError")
InvalidNotifyError = _subclass(TransferFailedError, "InvalidNotifyError")
TransportError = _subclass(TransferFailedError, "TransportError")
TransferTimeoutError = _subclass(TransferFailedError, "TransferTimeoutError")
TransferDaemonGoneError = type("TransferDaemonGoneError", (TransferFailedError, DaemonGoneError),
                               {"__doc__": "A transfer failed because the daemon went away (DAEMON_GONE)."})
UnsupportedMemoryError = _subclass(TransferFailedError, "UnsupportedMemoryError")
MemoryFaultError = _subclass(TransferFailedError, "MemoryFaultError")
AccessDeniedError = _subclass(TransferFailedError, "AccessDeniedError")
StorageNoSpaceError = _subclass(TransferFailedError, "StorageNoSpaceError")
StorageIoError = _subclass(TransferFailedError, "StorageIoError")
StorageTruncatedError = _subclass(TransferFailedError, "StorageTruncatedError")
StoragePermissionError = _subclass(TransferFailedError, "StoragePermissionError")
StorageOutOfRangeError = _subclass(TransferFailedError, "StorageOutOfRangeError")

_TRANSFER_ERRORS: dict[int, type] = {
    TransferStatus.UNKNOWN_SEGMENT: UnknownSegmentError,
    TransferStatus.LOCAL_RANGE_NOT_REGISTERED: LocalRangeNotRegisteredError,
    TransferStatus.TARGET_RANGE_NOT_REGISTERED: TargetRangeNotRegisteredError,
    TransferStatus.INVALID_LENGTH: InvalidLengthError,
    TransferStatus.INVALID_OPCODE: InvalidOpcodeError,
    TransferStatus.TARGET_GONE: TargetGoneError,
    TransferStatus.SHUTTING_DOWN: ShuttingDownError,
    TransferStatus.INVALID_NOTIFY: InvalidNotifyError,
    TransferStatus.TRANSPORT_ERROR: TransportError,
    TransferStatus.TIMEOUT: TransferTimeoutError,
    TransferStatus.DAEMON_GONE: TransferDaemonGoneError,
    TransferStatus.UNSUPPORTED_MEMORY: UnsupportedMemoryError,
    TransferStatus.MEMORY_FAULT: MemoryFaultError,
    TransferStatus.ACCESS_DENIED: AccessDeniedError,
    TransferStatus.STORAGE_NO_SPACE: StorageNoSpaceError,
    TransferStatus.STORAGE_IO_ERROR: StorageIoError,
    TransferStatus.STORAGE_TRUNCATED: StorageTruncatedError,
    TransferStatus.STORAGE_PERMISSION: StoragePermissionError,
    TransferStatus.STORAGE_OUT_OF_RANGE: StorageOutOfRangeError,
}

ProtocolVersionMismatchError = _subclass(ControlError, "ProtocolVersionMismatchError")
MalformedMessageError = _subclass(ControlError, "MalformedMessageError")
MissingFdError = _subclass(ControlError, "MissingFdError")
OverlappingRegionError = _subclass(ControlError, "OverlappingRegionError")
NotRegisteredError = _subclass(ControlError, "NotRegisteredError")
UnknownSegmentControlError = _subclass(ControlError, "UnknownSegmentControlError")
DuplicateSegmentNameError = _subclass(ControlError, "DuplicateSegmentNameError")
TooManyClientsError = _subclass(ControlError, "TooManyClientsError")
MapFailedError = _subclass(ControlError, "MapFailedError")
InvalidArgumentError = _subclass(ControlError, "InvalidArgumentError")
NotConnectedError = _subclass(ControlError, "NotConnectedError")
DaemonCudaUnavailableError = _subclass(ControlError, "DaemonCudaUnavailableError")
LimitReachedError = _subclass(ControlError, "LimitReachedError")
AccessDeniedControlError = _subclass(ControlError, "AccessDeniedControlError")
MemoryNotSealedError = _subclass(ControlError, "MemoryNotSealedError")
BeyondEndOfFileError = _subclass(ControlError, "BeyondEndOfFileError")

_CONTROL_ERRORS: dict[int, type] = {
    ControlErrorCode.PROTOCOL_VERSION_MISMATCH: ProtocolVersionMismatchError,
    ControlErrorCode.MALFORMED_MESSAGE: MalformedMessageError,
    ControlErrorCode.MISSING_FD: MissingFdError,
    ControlErrorCode.OVERLAPPING_REGION: OverlappingRegionError,
    ControlErrorCode.NOT_REGISTERED: NotRegisteredError,
    ControlErrorCode.UNKNOWN_SEGMENT: UnknownSegmentControlError,
    ControlErrorCode.DUPLICATE_SEGMENT_NAME: DuplicateSegmentNameError,
    ControlErrorCode.TOO_MANY_CLIENTS: TooManyClientsError,
    ControlErrorCode.MAP_FAILED: MapFailedError,
    ControlErrorCode.INVALID_ARGUMENT: InvalidArgumentError,
    ControlErrorCode.NOT_CONNECTED: NotConnectedError,
    ControlErrorCode.CUDA_UNAVAILABLE: DaemonCudaUnavailableError,
    ControlErrorCode.LIMIT_REACHED: LimitReachedError,
    ControlErrorCode.ACCESS_DENIED: AccessDeniedControlError,
    ControlErrorCode.MEMORY_NOT_SEALED: MemoryNotSealedError,
    ControlErrorCode.BEYOND_END_OF_FILE: BeyondEndOfFileError,
}
