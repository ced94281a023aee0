"""The few CUDA runtime and driver calls GPU registration needs, through ``ctypes`` (no compiler, no torch).

``libcudart`` exports a device allocation's IPC handle (``cudaIpcGetMemHandle``), says which device a pointer
lives on (``cudaPointerGetAttributes``) and that device's PCI bus id; ``libcuda``'s ``cuMemGetAddressRange`` finds
the allocation a pointer lies in, so a range inside a caching allocator's block (a torch tensor's ``data_ptr()``)
registers with the block's handle and its offset in the block. A process without them gets
:class:`~xferd.errors.CudaUnavailableError` naming what the loader or the runtime said.

Library names tried, in order: ``$XFERD_CUDART`` (a path), ``libcudart.so``, ``libcudart.so.13``,
``libcudart.so.12``, ``libcudart.so.11.0``, and what ``ctypes.util.find_library("cudart")`` finds.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import dataclasses
import os
import threading

from .errors import CudaUnavailableError, XferError

CUDA_MEMORY_TYPE_DEVICE = 2
CUDA_MEMORY_TYPE_MANAGED = 3


class _PointerAttributes(ctypes.Structure):
    # cudaPointerAttributes since CUDA 11: type, device, devicePointer, hostPointer
    _fields_ = [("type", ctypes.c_int), ("device", ctypes.c_int), ("devicePointer", ctypes.c_void_p),
                ("hostPointer", ctypes.c_void_p)]


@dataclasses.dataclass(frozen=True)
class GpuExport:
    """What REGISTER_GPU_MEMORY needs of a device range."""

    device: int
    allocation_base: int
    allocation_size: int
    ipc_handle: bytes
    pci_bus_id: str


class CudaRuntime:
    """Lazily loaded libcudart (+ libcuda for address ranges). One per process: :func:`runtime`."""

    def __init__(self, names: list[str] | None = None) -> None:
        self._names = names
        self._cudart = None
        self._cuda = None
        self._reason: str | None = None
        self._lock = threading.Lock()

    def _candidates(self) -> list[str]:
        if self._names is not None:
            return list(self._names)
        names = []
        if os.environ.get("XFERD_CUDART"):
            names.append(os.environ["XFERD_CUDART"])
        names += ["libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"]
        found = ctypes.util.find_library("cudart")
        if found:
            names.append(found)
        return names

    def _load(self):
        with self._lock:
            if self._cudart is not None or self._reason is not None:
                return self._cudart
            errors = []
            for name in self._candidates():
                try:
                    self._cudart = ctypes.CDLL(name)
                    break
                except OSError as ex:
                    errors.append(f"{name}: {ex}")
            if self._cudart is None:
                self._reason = "libcudart not loadable (" + "; ".join(errors) + ")"
                return None
            lib = self._cudart
            lib.cudaGetErrorString.restype = ctypes.c_char_p
            lib.cudaGetErrorString.argtypes = [ctypes.c_int]
            lib.cudaPointerGetAttributes.argtypes = [ctypes.POINTER(_PointerAttributes), ctypes.c_void_p]
            lib.cudaIpcGetMemHandle.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
            lib.cudaDeviceGetPCIBusId.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
            lib.cudaGetDevice.argtypes = [ctypes.POINTER(ctypes.c_int)]
            lib.cudaSetDevice.argtypes = [ctypes.c_int]
            count = ctypes.c_int()
            status = lib.cudaGetDeviceCount(ctypes.byref(count))
            if status != 0 or count.value == 0:
                self._reason = (f"cudaGetDeviceCount: {self._error(status)}" if status
                                else "no CUDA device visible")
                self._cudart = None
                return None
            for name in ("libcuda.so.1", "libcuda.so"):
                try:
                    self._cuda = ctypes.CDLL(name)
                    self._cuda.cuMemGetAddressRange_v2.argtypes = [
                        ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_size_t), ctypes.c_uint64]
                    break
                except (OSError, AttributeError):
                    self._cuda = None
            return self._cudart

    def availability(self) -> str | None:
        """None when CUDA is usable here, else the reason it is not."""
        self._load()
        return self._reason

    def _require(self):
        lib = self._load()
        if lib is None:
            raise CudaUnavailableError(f"CUDA is not available in this process: {self._reason}")
        return lib

    def _error(self, status: int) -> str:
        lib = self._cudart
        text = lib.cudaGetErrorString(status) if lib is not None else None
        return f"{text.decode() if text else 'cudaError'} ({status})"

    def _check(self, status: int, call: str) -> None:
        if status != 0:
            raise XferError(f"{call} failed: {self._error(status)}")

    def device_of(self, pointer: int) -> int | None:
        """The device ordinal of device (or managed) memory at ``pointer``; None for host memory."""
        lib = self._require()
        attributes = _PointerAttributes()
        status = lib.cudaPointerGetAttributes(ctypes.byref(attributes), ctypes.c_void_p(pointer))
        if status != 0:
            lib.cudaGetLastError()  # an unregistered host pointer leaves a sticky-free error behind on old runtimes
            return None
        if attributes.type in (CUDA_MEMORY_TYPE_DEVICE, CUDA_MEMORY_TYPE_MANAGED):
            return attributes.device
        return None

    def export(self, pointer: int, length: int) -> GpuExport:
        """Export the allocation that holds ``[pointer, pointer + length)`` for the daemon to open.

        :raises CudaUnavailableError: without a usable runtime.
        :raises XferError: when the pointer is not device memory or the range leaves its allocation.
        """
        lib = self._require()
        device = self.device_of(pointer)
        if device is None:
            raise XferError(f"{pointer:#x} is not device memory (cudaPointerGetAttributes)")
        current = ctypes.c_int()
        self._check(lib.cudaGetDevice(ctypes.byref(current)), "cudaGetDevice")
        if current.value != device:
            self._check(lib.cudaSetDevice(device), "cudaSetDevice")
        try:
            base, size = self._allocation_of(pointer)
            if pointer + length > base + size:
                raise XferError(f"range {pointer:#x}+{length} ends beyond its allocation {base:#x}+{size}")
            handle = ctypes.create_string_buffer(64)
            self._check(lib.cudaIpcGetMemHandle(handle, ctypes.c_void_p(base)), "cudaIpcGetMemHandle")
            bus = ctypes.create_string_buffer(32)
            self._check(lib.cudaDeviceGetPCIBusId(bus, 32, device), "cudaDeviceGetPCIBusId")
            return GpuExport(device, base, size, handle.raw[:64], bus.value.decode("ascii"))
        finally:
            if current.value != device:
                lib.cudaSetDevice(current.value)

    def _allocation_of(self, pointer: int) -> tuple[int, int]:
        if self._cuda is None:
            # without the driver library the pointer is taken for its allocation's base (as cudaMalloc returns it)
            return pointer, 1 << 62
        base = ctypes.c_uint64()
        size = ctypes.c_size_t()
        status = self._cuda.cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), pointer)
        if status != 0:
            raise XferError(f"cuMemGetAddressRange({pointer:#x}) failed: CUresult {status}")
        return base.value, size.value


_runtime = CudaRuntime()


def runtime() -> CudaRuntime:
    """The process-wide CUDA runtime binding."""
    return _runtime
