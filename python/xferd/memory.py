"""Memory the daemon can reach: memfd-backed buffers mapped in this process.

A :class:`SharedBuffer` is a memfd, sized, sealed against shrinking (``F_SEAL_SHRINK``: the daemon refuses
memory that could vanish under its copies) and mapped ``MAP_SHARED`` here; registering it passes the fd to the
daemon, which maps the same pages (zero copies on either side). Any other host memory of this process (a numpy
array, a torch CPU tensor, a ``bytearray``) can be registered too, by address: the daemon then reaches it with
``process_vm_readv/writev`` (see :meth:`xferd.Client.register_process_memory`).
"""

from __future__ import annotations

import ctypes
import fcntl
import mmap
import os


class SharedBuffer:
    """A memfd of ``length`` bytes mapped read-write in this process at :attr:`address`.

    Use :attr:`view` (a writable ``memoryview``) or :meth:`write`/:meth:`read` to fill and check it.
    """

    def __init__(self, length: int, name: str = "xferd") -> None:
        if length <= 0:
            raise ValueError(f"length must be positive: {length}")
        self.fd = os.memfd_create(name, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        try:
            os.ftruncate(self.fd, length)
            # the daemon maps only memory that cannot shrink under its copies (a SIGBUS), and checks the seal
            fcntl.fcntl(self.fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK)
            self._map = mmap.mmap(self.fd, length, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        except OSError:
            os.close(self.fd)
            raise
        self.length = length
        self._anchor = ctypes.c_char.from_buffer(self._map)
        self.address = ctypes.addressof(self._anchor)
        self.view = memoryview(self._map)
        self.closed = False

    def contains(self, address: int, length: int) -> bool:
        """True when ``[address, address + length)`` lies inside this buffer."""
        return self.address <= address and address + length <= self.address + self.length

    def write(self, offset: int, data: bytes) -> None:
        """Copy ``data`` into the buffer at ``offset``."""
        self.view[offset:offset + len(data)] = data

    def read(self, offset: int, length: int) -> bytes:
        """A copy of ``length`` bytes at ``offset``."""
        return bytes(self.view[offset:offset + length])

    def close(self) -> None:
        """Unmap and close the memfd (unregister its ranges first).

        :raises BufferError: while a view of the memory is still alive (a slice of :attr:`view`, a ``memoryview``
            or array over it): nothing is closed then; release it and call again.
        """
        if self.closed:
            return
        self.view.release()
        self._anchor = None
        self._map.close()
        self.closed = True
        os.close(self.fd)

    def __repr__(self) -> str:
        return f"SharedBuffer(address={self.address:#x}, length={self.length}, fd={self.fd})"


def address_of(buffer) -> int:
    """The address of a writable buffer object's first byte (``bytearray``, ``mmap``, ``array``...)."""
    return ctypes.addressof(ctypes.c_char.from_buffer(buffer))


def copy_to_address(address: int, data: bytes) -> None:
    """Copy ``data`` to raw memory at ``address`` (this process's own; nothing checks it)."""
    ctypes.memmove(address, data, len(data))


def copy_from_address(address: int, length: int) -> bytes:
    """A copy of ``length`` bytes of raw memory at ``address``."""
    return ctypes.string_at(address, length)
