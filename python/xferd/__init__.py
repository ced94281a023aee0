"""xferd: the Python client of the local xferd daemon (standard library and ctypes only).

The daemon owns the NICs and all registered memory of a host; a process connects over a Unix socket, shares memory
with it (memfd, its own address space, or CUDA IPC), writes transfer requests into its own shared-memory ring and
reads completions from another. Bytes move straight between registered memory: nothing passes through the client.

>>> import xferd
>>> client = xferd.connect()                       # $XFERD_DIR or /dev/shm/xferd
>>> buffer = client.allocate_memory(1 << 20)
>>> client.register_memory(buffer.address, buffer.length)

See :class:`xferd.Client` for the whole API and :mod:`xferd.errors` for the typed failures.
"""

import sys as _sys
import warnings as _warnings

if not getattr(_sys, "_is_gil_enabled", lambda: True)():
    _warnings.warn("xferd: this interpreter runs without the GIL; the client's lock-free completion and wake-up "
                   "steps need it (docs/python.md, 'The GIL is required'): run with PYTHON_GIL=1 or -X gil=1",
                   RuntimeWarning, stacklevel=2)

from .client import DEFAULT_DIRECTORY, Client, Transfer, connect
from .errors import (ClientBusyError, ControlError, ControlErrorCode, CudaUnavailableError, DaemonGoneError,
                     TransferFailedError, TransferStatus, XferError)
from .memory import SharedBuffer
from .protocol import READ, WRITE, Notification

__all__ = [
    "Client", "Transfer", "connect", "DEFAULT_DIRECTORY", "SharedBuffer", "Notification", "READ", "WRITE",
    "XferError", "DaemonGoneError", "ControlError", "ControlErrorCode", "TransferFailedError", "TransferStatus",
    "CudaUnavailableError", "ClientBusyError",
]
__version__ = "0.2.0"
