"""A client process that registers its own heap memory with REGISTER_PROCESS_MEMORY, then forks and exits while
the forked child keeps the control socket open (what Python's multiprocessing with the fork start method does).

Usage: fork_holder.py SOCKET_PATH SEGMENT_NAME SIZE
Prints "READY <address>" once registered, then "CHILD <pid>" and exits; the child sleeps holding the socket until
it is killed (or 120 s pass). Protocol version 2 frames (ringbuffer/PROTOCOL.md), little-endian.
"""
import ctypes
import os
import socket
import struct
import sys
import time

HELLO, REGISTER_PROCESS_MEMORY, WELCOME, OK = 1, 6, 101, 102


def send_frame(sock: socket.socket, frame_type: int, body: bytes) -> None:
    sock.sendall(struct.pack("<ii", 8 + len(body), frame_type) + body)


def receive_frame(sock: socket.socket) -> tuple[int, bytes]:
    data, fds = b"", []
    while len(data) < 8 or len(data) < struct.unpack_from("<i", data)[0]:
        chunk, ancillary, _, _ = sock.recvmsg(4096, socket.CMSG_SPACE(4 * 4))
        if not chunk:
            raise SystemExit("daemon closed the connection")
        data += chunk
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.extend(struct.unpack(f"<{len(payload) // 4}i", payload[: len(payload) - len(payload) % 4]))
    for fd in fds:
        os.close(fd)
    length, frame_type = struct.unpack_from("<ii", data)
    return frame_type, data[8:length]


def string(text: str) -> bytes:
    encoded = text.encode()
    return struct.pack("<i", len(encoded)) + encoded


def main() -> None:
    path, name, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    send_frame(sock, HELLO, struct.pack("<iiii", 2, os.getpid(), 0, 0) + string(name))
    frame_type, body = receive_frame(sock)
    if frame_type != WELCOME:
        raise SystemExit(f"no WELCOME: type {frame_type} {body!r}")
    memory = ctypes.create_string_buffer(size)
    address = ctypes.addressof(memory)
    send_frame(sock, REGISTER_PROCESS_MEMORY, struct.pack("<qqq", 1, address, size) + string("cpu:0"))
    frame_type, body = receive_frame(sock)
    if frame_type != OK:
        raise SystemExit(f"registration refused: type {frame_type} {body!r}")
    print(f"READY {address}", flush=True)
    child = os.fork()
    if child == 0:
        time.sleep(120)
        os._exit(0)
    print(f"CHILD {child}", flush=True)
    os._exit(0)


if __name__ == "__main__":
    main()
