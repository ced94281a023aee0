"""The control channel: one request frame out (with at most one fd as SCM_RIGHTS), one answer frame back.

The daemon never speaks unasked, so end of file on the socket means it is gone. Callers serialise requests (one
lock per client); :meth:`ControlChannel.peer_closed` checks for end of file without consuming anything.
"""

from __future__ import annotations

import errno
import os
import select
import socket
import struct

from . import protocol as p
from .errors import DaemonGoneError, XferError


class ControlChannel:
    """A connected Unix stream socket to ``<dir>/xferd.sock``."""

    def __init__(self, path: str, timeout_s: float) -> None:
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.settimeout(timeout_s)
        try:
            self._sock.connect(path)
        except (FileNotFoundError, ConnectionRefusedError) as ex:
            self._sock.close()
            raise DaemonGoneError(f"no xferd daemon listening on {path}: {ex.strerror}") from ex
        except OSError:
            self._sock.close()
            raise
        try:
            _verify_daemon_identity(path, self._peer_credentials()[1])
        except BaseException:
            self._sock.close()
            raise
        self.path = path
        self._closed = False

    def send(self, frame: bytes, fd: int = -1) -> None:
        """Send one frame; ``fd`` (when >= 0) travels with its first byte."""
        try:
            if fd >= 0:
                sent = socket.send_fds(self._sock, [frame], [fd])
                if sent < len(frame):
                    self._sock.sendall(frame[sent:])
            else:
                self._sock.sendall(frame)
        except (BrokenPipeError, ConnectionResetError) as ex:
            raise DaemonGoneError(f"daemon closed the control connection ({ex.strerror})") from ex
        except socket.timeout as ex:
            raise XferError(f"control request not accepted by the daemon within {self._sock.gettimeout()} s") from ex

    def receive(self) -> tuple[bytes, list[int]]:
        """Read one whole frame and the descriptors that came with it.

        :raises DaemonGoneError: at end of file.
        :raises XferError: when no answer comes within the timeout, or the frame is malformed.
        """
        data = bytearray()
        fds: list[int] = []
        need = p.FRAME_HEADER_LENGTH
        while len(data) < need:
            try:
                chunk, more_fds, _flags, _addr = socket.recv_fds(self._sock, need - len(data), 4)
            except socket.timeout as ex:
                self._close_all(fds)
                raise XferError(f"no answer from the daemon within {self._sock.gettimeout()} s") from ex
            except ConnectionResetError as ex:
                self._close_all(fds)
                raise DaemonGoneError("daemon reset the control connection") from ex
            fds.extend(more_fds)
            if not chunk:
                self._close_all(fds)
                raise DaemonGoneError("daemon closed the control connection")
            data += chunk
            if need == p.FRAME_HEADER_LENGTH and len(data) >= p.FRAME_HEADER_LENGTH:
                try:
                    need, _type = p.frame_header(data)
                except p.MalformedFrame as ex:
                    self._close_all(fds)
                    raise XferError(f"daemon sent a malformed frame: {ex}") from ex
        return bytes(data), fds

    def peer_pid(self) -> int:
        """The daemon's pid as the kernel says (SO_PEERCRED), not as any file claims."""
        return self._peer_credentials()[0]

    def _peer_credentials(self) -> tuple[int, int, int]:
        """(pid, uid, gid) of the listening process, from the kernel (SO_PEERCRED)."""
        raw = self._sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        pid, uid, gid = struct.unpack("3i", raw)
        return pid, uid, gid

    def peer_closed(self) -> bool:
        """True when the daemon closed the connection (end of file), without consuming any byte."""
        if self._closed:
            return True
        # poll first: a socket with a timeout would wait that long inside recv() even with MSG_DONTWAIT
        poller = select.poll()
        poller.register(self._sock.fileno(), select.POLLIN)
        if not poller.poll(0):
            return False
        try:
            return self._sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except (BlockingIOError, InterruptedError, socket.timeout):
            return False
        except OSError as ex:
            return ex.errno in (errno.ECONNRESET, errno.EBADF, errno.ENOTCONN)

    def close(self) -> None:
        """Close the socket; the daemon then frees everything this client registered."""
        if not self._closed:
            self._closed = True
            self._sock.close()

    @staticmethod
    def _close_all(fds: list[int]) -> None:
        for fd in fds:
            os.close(fd)


def _verify_daemon_identity(path: str, listener_uid: int) -> None:
    """Refuse a listener that is not the daemon before sending anything: its uid (SO_PEERCRED) must own the
    daemon directory, or be root. A group member who replaced ``xferd.sock`` with its own listener is caught here.

    :raises XferError: naming both uids.
    """
    directory = os.path.dirname(os.path.abspath(path))
    owner_uid = os.stat(directory).st_uid
    if listener_uid not in (owner_uid, 0):
        raise XferError(f"refusing {path}: the process listening on it runs as uid {listener_uid} but {directory} "
                        f"belongs to uid {owner_uid}; someone other than the daemon may have replaced the socket "
                        f"(nothing was sent)")
