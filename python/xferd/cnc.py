"""The daemon's command-and-control file, ``<dir>/cnc.dat``: header, heartbeat and counters (layout version 2).

Only the header matters to a client: the heartbeat (epoch ms at offset 48, written by the daemon at least every
quarter of the liveness timeout and every 250 ms) and the liveness timeout (offset 40) tell whether the daemon is
still alive, whatever process now holds its pid.
"""

from __future__ import annotations

import mmap
import os
import struct
import time

from . import protocol as p
from .errors import DaemonGoneError, XferError


HUNG_FACTOR = 5


def _process_exists(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class CncFile:
    """A read-only mapping of ``cnc.dat``'s header."""

    def __init__(self, path: str) -> None:
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError as ex:
            raise DaemonGoneError(f"no xferd daemon: {path} does not exist") from ex
        try:
            size = os.fstat(fd).st_size
            if size < p.CNC_HEADER_LENGTH:
                raise XferError(f"{path} is {size} bytes, shorter than its {p.CNC_HEADER_LENGTH}-byte header")
            self._map = mmap.mmap(fd, p.CNC_HEADER_LENGTH, mmap.MAP_SHARED, mmap.PROT_READ)
        finally:
            os.close(fd)
        self._i64 = memoryview(self._map).cast("q")
        magic, version = struct.unpack_from("<ii", self._map, 0)
        if magic != p.CNC_MAGIC:
            self.close()
            raise XferError(f"{path} is not ready or not an xferd file (magic {magic:#x})")
        if version != p.CNC_LAYOUT_VERSION:
            self.close()
            raise XferError(f"{path} has layout version {version}; this library speaks {p.CNC_LAYOUT_VERSION} "
                            f"(a daemon of another xferd release)")
        self.path = path

    @property
    def daemon_pid(self) -> int:
        """The daemon's process id."""
        return self._i64[p.CNC_PID_OFFSET // 8]

    @property
    def liveness_timeout_ms(self) -> int:
        """How old the heartbeat may get before the daemon counts as gone."""
        return self._i64[p.CNC_LIVENESS_TIMEOUT_OFFSET // 8]

    @property
    def heartbeat_ms(self) -> int:
        """The daemon's last heartbeat, epoch ms (one aligned 8-byte load)."""
        return self._i64[p.CNC_HEARTBEAT_OFFSET // 8]

    def heartbeat_age_ms(self, now_ms: int | None = None) -> int:
        """Milliseconds since the last heartbeat."""
        return (time.time_ns() // 1_000_000 if now_ms is None else now_ms) - self.heartbeat_ms

    def stale_reason(self, now_ms: int | None = None, daemon_pid: int | None = None) -> str | None:
        """Why the daemon counts as gone, or None while it may still be alive.

        A heartbeat older than the liveness timeout means gone when the daemon's process no longer exists; while it
        exists (a starved or stopped daemon on a loaded host: its socket is still open, or end of file would have
        told) it counts as gone only past :data:`HUNG_FACTOR` times the timeout, so a busy machine does not fail
        every transfer at once, and a hung daemon still cannot make anyone wait forever.
        """
        age = self.heartbeat_age_ms(now_ms)
        timeout = self.liveness_timeout_ms
        if age <= timeout:
            return None
        pid = self.daemon_pid if daemon_pid is None else daemon_pid
        if not _process_exists(pid):
            return f"daemon heartbeat is {age} ms old (liveness timeout {timeout} ms) and its process {pid} is gone"
        if age > HUNG_FACTOR * timeout:
            return f"daemon heartbeat is {age} ms old: its process {pid} exists but is hung (over {HUNG_FACTOR} x " \
                   f"the {timeout} ms liveness timeout)"
        return None

    def close(self) -> None:
        """Unmap."""
        self._i64.release()
        self._map.close()
