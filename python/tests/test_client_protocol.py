"""The client's side of the protocol against a daemon played by this test (in this process, over a real Unix socket
and real shared memory): what a real daemon cannot be made to do on cue. Everything else runs against real daemons
in test_client.py.

The played daemon answers HELLO with a WELCOME and a rings file, OKs control requests, and takes records off the
submit ring, copying bytes itself (the addresses are this process's) and completing each record; it can hold
completions back, fail entries, stop its heartbeat or hang up.
"""

from __future__ import annotations

import support  # puts python/ on the path

import ctypes
import mmap
import os
import shutil
import socket
import struct
import tempfile
import threading
import time
import unittest
from unittest import mock

import xferd
from xferd import errors, rings
from xferd import protocol as p
from xferd.rings import TRAILER_LENGTH, RingReader, RingView, RingWriter, SubmitRingWriter

# the memory that requests of tests which may end before the played daemon took them name, never freed: the played
# daemon copies when its thread gets to a record, and a copy into freed memory corrupts this process's heap
KEPT: list[bytearray] = []

# for the tests of a waiter asleep on the completion doorbell: where futex(2) is unusable waiters poll instead
needs_futex = unittest.skipUnless(rings._futex_usable(), "futex(2) is unusable here: waiters never sleep on the "
                                                         "completion doorbell")


class PlayedDaemon:
    def __init__(self, submit_capacity: int = 1 << 16, completion_capacity: int = 1 << 16, max_in_flight: int = 64,
                 max_batch: int = 4096, parent: str = "/dev/shm") -> None:
        self.directory = tempfile.mkdtemp(prefix="xfpy-played-", dir=parent)
        self.cnc = mmap.mmap(-1, 4096)
        with open(os.path.join(self.directory, p.CNC_FILE), "wb") as f:
            f.write(bytes(4096))
        self._cnc_file = open(os.path.join(self.directory, p.CNC_FILE), "r+b")
        self.cnc = mmap.mmap(self._cnc_file.fileno(), 4096)
        struct.pack_into("<iiiiiiqqqq", self.cnc, 0, 0, 2, 0, 0, 0, 0, os.getpid(), self.now_ms(), 3000,
                         self.now_ms())
        struct.pack_into("<i", self.cnc, 0, p.CNC_MAGIC)
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(os.path.join(self.directory, p.SOCKET_FILE))
        self.server.listen(4)
        self.c, self.s = completion_capacity + TRAILER_LENGTH, submit_capacity + TRAILER_LENGTH
        self.max_in_flight, self.max_batch = max_in_flight, max_batch
        self.hold = threading.Event()        # set: completions are held back
        self.fail_entries: set[int] = set()  # target addresses whose entries fail with TARGET_RANGE_NOT_REGISTERED
        self.records: list[tuple[int, int]] = []  # (type, entry count) of every record taken
        self.notify_lengths: list[int] = []  # the notify length of every record taken
        self.max_seen_in_flight = 0
        self.heartbeat = True
        self.stop = threading.Event()
        self.serving = threading.Event()
        self.threads = [threading.Thread(target=self._accept, daemon=True),
                        threading.Thread(target=self._beat, daemon=True)]
        for thread in self.threads:
            thread.start()

    @staticmethod
    def now_ms() -> int:
        return time.time_ns() // 1_000_000

    def _beat(self) -> None:
        while not self.stop.is_set():
            if self.heartbeat:
                struct.pack_into("<q", self.cnc, 48, self.now_ms())
            time.sleep(0.02)

    def _start(self, target, *args) -> None:
        """Start a thread that close() joins."""
        thread = threading.Thread(target=target, args=args, daemon=True)
        self.threads.append(thread)
        thread.start()

    def _accept(self) -> None:
        self.server.settimeout(0.2)
        while not self.stop.is_set():
            try:
                connection, _ = self.server.accept()
            except (socket.timeout, OSError):
                continue
            self.connection = connection
            self._start(self._serve, connection)

    def _serve(self, connection: socket.socket) -> None:
        hello = connection.recv(4096)
        name = p.read_string(hello, 16)
        fd = os.memfd_create("rings")
        os.ftruncate(fd, self.c + self.s)
        rings = mmap.mmap(fd, self.c + self.s)
        completions = RingWriter(RingView(rings, 0, self.c))
        submits = RingReader(RingView(rings, self.c, self.s))
        body = struct.pack("<iiqqiiqiiii", 0, self.max_in_flight, 0, 1, self.c, 256, 1 << 30, self.s,
                           self.max_batch, 0, 0) + struct.pack("<i", len(name) + 10) + f"host:1234/{name}".encode()
        socket.send_fds(connection, [struct.pack("<ii", 8 + len(body), p.WELCOME) + body], [fd])
        os.close(fd)
        self._start(self._data_plane, submits, completions)
        connection.settimeout(0.2)
        self.serving.set()
        while not self.stop.is_set():
            try:
                frame = connection.recv(4096)
            except socket.timeout:
                continue
            except OSError:
                return
            if not frame:
                return
            correlation = struct.unpack_from("<q", frame, 8)[0]
            connection.sendall(struct.pack("<iiqq", 24, p.OK, correlation, 1))

    def _data_plane(self, submits: RingReader, completions: RingWriter) -> None:
        pending: list[bytes] = []
        in_flight = 0

        def take(record_type: int, buffer, offset: int, length: int) -> None:
            nonlocal in_flight
            if record_type == p.SUBMIT:
                (_r, opcode, _t, request, segment, local, target, size, _tr, _ts, notify, _z) = \
                    struct.unpack_from("<iiqqqqqqqqii", buffer, offset)
                entries = [(local, target, size)]
            else:
                request, opcode, count, segment, _tr, _ts, notify, _z = struct.unpack_from("<qiiqqqii", buffer,
                                                                                          offset)
                at = offset + 48 + p.align8(notify)
                entries = [struct.unpack_from("<qqq", buffer, at + 24 * i) for i in range(count)]
            self.notify_lengths.append(notify)
            self.records.append((record_type, len(entries)))
            in_flight += 1
            self.max_seen_in_flight = max(self.max_seen_in_flight, in_flight)
            status = errors.TransferStatus.OK
            for local, target, size in entries:
                if opcode not in (p.READ, p.WRITE):
                    status = errors.TransferStatus.INVALID_OPCODE
                    break
                if target in self.fail_entries:
                    status = errors.TransferStatus.TARGET_RANGE_NOT_REGISTERED
                    break
                if segment != 1:
                    status = errors.TransferStatus.UNKNOWN_SEGMENT
                    break
                source, destination = (local, target) if opcode == p.WRITE else (target, local)
                ctypes.memmove(destination, source, size)
            total = sum(e[2] for e in entries) if status == 0 else 0
            pending.append(p.encode_completion(request, status, total))

        while not self.stop.is_set():
            submits.read(take)
            if not self.hold.is_set():
                while pending:
                    while not completions.write(p.COMPLETION, pending[0]):
                        if self.stop.is_set():  # the client's ring stays full: it is gone
                            return
                        time.sleep(0.001)
                    pending.pop(0)
                    in_flight -= 1
            time.sleep(0.0002)

    def hang_up(self) -> None:
        self.serving.wait(10)
        self.connection.shutdown(socket.SHUT_RDWR)
        self.connection.close()

    def close(self) -> None:
        self.stop.set()
        self.server.close()
        for thread in list(self.threads):  # the data plane's too: no copy runs once close() returned
            thread.join(5)
        import shutil
        shutil.rmtree(self.directory, ignore_errors=True)


class ClientProtocolTest(unittest.TestCase):
    def played(self, **kwargs) -> tuple[PlayedDaemon, xferd.Client]:
        daemon = PlayedDaemon(**kwargs)
        self.addCleanup(daemon.close)
        client = xferd.Client(daemon.directory, "played", control_timeout_s=5)
        self.addCleanup(client.close)
        return daemon, client

    def test_a_batch_bigger_than_a_record_is_split_and_completes_once_every_part_did(self) -> None:
        daemon, client = self.played(submit_capacity=1 << 14, max_batch=100)  # records of at most 2 KiB
        source, target = bytearray(os.urandom(64 * 1000)), bytearray(64 * 1000)
        sa, ta = xferd.memory.address_of(source), xferd.memory.address_of(target)
        per_record = min(100, (2048 - 48) // 24)
        transfer = client.submit(p.WRITE, 1, [sa + 64 * i for i in range(1000)], [ta + 64 * i for i in range(1000)],
                                 [64] * 1000)
        self.assertEqual(64 * 1000, client.wait(transfer, 10))
        self.assertEqual(source, target)
        self.assertEqual([(p.SUBMIT_BATCH, per_record)] * (1000 // per_record),
                         daemon.records[:1000 // per_record])
        self.assertEqual(1000, sum(count for _type, count in daemon.records))

    def test_a_split_batch_fails_with_its_lowest_failed_part_status(self) -> None:
        daemon, client = self.played(max_batch=10)
        source, target = bytearray(4096), bytearray(4096)
        sa, ta = xferd.memory.address_of(source), xferd.memory.address_of(target)
        daemon.fail_entries.add(ta + 64 * 25)
        transfer = client.submit(p.WRITE, 1, [sa + 64 * i for i in range(40)], [ta + 64 * i for i in range(40)],
                                 [64] * 40)
        with self.assertRaises(errors.TargetRangeNotRegisteredError):
            client.wait(transfer, 10)
        self.assertEqual(0, transfer.bytes_transferred)

    def test_a_split_batch_whose_first_part_failed_sends_its_last_part_without_the_notify(self) -> None:
        daemon, client = self.played(max_batch=10)
        source, target = bytearray(4096), bytearray(4096)
        KEPT.extend((source, target))
        sa, ta = xferd.memory.address_of(source), xferd.memory.address_of(target)
        daemon.fail_entries.add(ta)  # part 0's first entry
        transfer = client.submit(p.WRITE, 1, [sa + 64 * i for i in range(25)], [ta + 64 * i for i in range(25)],
                                 [64] * 25, notify=b"kv ready")
        with self.assertRaises(errors.TargetRangeNotRegisteredError):
            client.wait(transfer, 10)
        self.assertEqual([(p.SUBMIT_BATCH, 10), (p.SUBMIT_BATCH, 10), (p.SUBMIT_BATCH, 5)], daemon.records)
        self.assertEqual([0, 0, 0], daemon.notify_lengths, "the peer was told a failed batch is ready")

    def timing_out(self, **kwargs) -> tuple[PlayedDaemon, xferd.Client]:
        """A played daemon and a client whose submissions wait 0.2 s for a split batch's earlier parts; the
        handshake gets 5 s (the played daemon's thread may be slow to get the CPU on a loaded machine)."""
        daemon, client = self.played(**kwargs)
        client._control_timeout_s = 0.2
        return daemon, client

    def test_a_split_batch_whose_earlier_parts_time_out_raises_the_typed_timeout_and_sends_no_notify(self) -> None:
        daemon, client = self.timing_out(max_batch=10)
        daemon.hold.set()  # never answered while the submission waits: its deadline passes
        source, target = bytearray(4096), bytearray(4096)
        KEPT.extend((source, target))
        sa, ta = xferd.memory.address_of(source), xferd.memory.address_of(target)
        with self.assertRaises(errors.TransferTimeoutError) as raised:
            client.submit(p.WRITE, 1, [sa + 64 * i for i in range(25)], [ta + 64 * i for i in range(25)], [64] * 25,
                          notify=b"kv ready")
        transfer = raised.exception.transfer
        self.assertIsNone(transfer.status, "done before its earlier parts were answered")
        for _ in range(10_000):  # bounded: the played daemon takes the two parts written
            if len(daemon.records) == 2:
                break
            time.sleep(0.001)
        self.assertEqual([(p.SUBMIT_BATCH, 10), (p.SUBMIT_BATCH, 10)], daemon.records)
        self.assertEqual([0, 0], daemon.notify_lengths)
        daemon.hold.clear()
        with self.assertRaises(errors.TransferTimeoutError):
            client.wait(transfer, 10)
        self.assertEqual(errors.TransferStatus.TIMEOUT, transfer.status, "the wait timed out: the transfer never ended")
        self.assertEqual(0, transfer.bytes_transferred)
        self.assertEqual(0, client._in_flight)

    def test_a_timed_out_split_batch_whose_earlier_part_failed_ends_with_that_failure(self) -> None:
        daemon, client = self.timing_out(max_batch=10)
        daemon.hold.set()
        source, target = bytearray(4096), bytearray(4096)
        KEPT.extend((source, target))
        sa, ta = xferd.memory.address_of(source), xferd.memory.address_of(target)
        daemon.fail_entries.add(ta + 64 * 12)  # part 1's third entry
        with self.assertRaises(errors.TransferTimeoutError) as raised:
            client.submit(p.WRITE, 1, [sa + 64 * i for i in range(25)], [ta + 64 * i for i in range(25)], [64] * 25,
                          notify=b"kv ready")
        daemon.hold.clear()
        with self.assertRaises(errors.TargetRangeNotRegisteredError):
            client.wait(raised.exception.transfer, 10)

    def test_a_split_batch_whose_later_part_finds_no_in_flight_slot_raises_with_a_transfer_that_completes(
            self) -> None:
        daemon, client = self.timing_out(max_batch=10, max_in_flight=1)
        daemon.hold.set()  # part 0 stays in flight: part 1 finds no slot within the (shortened) control timeout
        source, target = bytearray(4096), bytearray(4096)
        KEPT.extend((source, target))
        sa, ta = xferd.memory.address_of(source), xferd.memory.address_of(target)
        with self.assertRaises(errors.XferError) as raised:
            client.submit(p.WRITE, 1, [sa + 64 * i for i in range(25)], [ta + 64 * i for i in range(25)], [64] * 25)
        transfer = raised.exception.transfer
        self.assertIsNone(transfer.status, "done before its first part was answered")
        daemon.hold.clear()
        with self.assertRaises(errors.TransferTimeoutError):
            client.wait(transfer, 10)
        self.assertEqual(errors.TransferStatus.TIMEOUT, transfer.status, "the wait timed out: the transfer never ended")
        self.assertEqual([(p.SUBMIT_BATCH, 10)], daemon.records)

    def test_a_split_read_drops_its_notify_and_does_not_wait_for_its_earlier_parts(self) -> None:
        daemon, client = self.timing_out(max_batch=10)
        daemon.hold.set()  # nothing is answered until submit returned: a wait for the earlier parts would time out
        source, target = bytearray(os.urandom(64 * 25)), bytearray(64 * 25)
        KEPT.extend((source, target))
        sa, ta = xferd.memory.address_of(source), xferd.memory.address_of(target)
        transfer = client.submit(p.READ, 1, [ta + 64 * i for i in range(25)], [sa + 64 * i for i in range(25)],
                                 [64] * 25, notify=b"ignored")
        daemon.hold.clear()
        self.assertEqual(64 * 25, client.wait(transfer, 10))
        self.assertEqual(source, target)
        self.assertEqual([(p.SUBMIT_BATCH, 10), (p.SUBMIT_BATCH, 10), (p.SUBMIT_BATCH, 5)], daemon.records)
        self.assertEqual([0, 0, 0], daemon.notify_lengths)

    def test_no_more_records_in_flight_than_welcome_allows_even_from_ten_threads(self) -> None:
        daemon, client = self.played(max_in_flight=3)
        memory = bytearray(64 * 10)
        address = xferd.memory.address_of(memory)
        errors_seen: list[BaseException] = []

        def work(t: int) -> None:
            try:
                for _ in range(20):
                    client.transfer_sync(p.WRITE, 1, address + 64 * t, address + 64 * t, 64, timeout_s=10)
            except BaseException as ex:  # noqa: BLE001
                errors_seen.append(ex)

        threads = [threading.Thread(target=work, args=(t,)) for t in range(10)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        self.assertEqual([], errors_seen)
        self.assertEqual(200, len(daemon.records))
        self.assertLessEqual(daemon.max_seen_in_flight, 3)

    def test_a_wait_times_out_while_the_daemon_holds_the_completion(self) -> None:
        daemon, client = self.played()
        memory = bytearray(128)
        KEPT.append(memory)  # the played daemon may copy after the test ended
        address = xferd.memory.address_of(memory)
        daemon.hold.set()
        transfer = client.submit(p.WRITE, 1, [address], [address + 64], [64])
        started = time.monotonic()
        with self.assertRaises(errors.TransferTimeoutError):
            client.wait(transfer, 0.3)
        self.assertLess(time.monotonic() - started, 2)
        daemon.hold.clear()
        self.assertEqual(64, client.wait(transfer, 10), "the late completion still lands")

    def test_end_of_file_on_the_socket_fails_pending_transfers_with_daemon_gone(self) -> None:
        daemon, client = self.played()
        memory = bytearray(128)
        KEPT.append(memory)  # the played daemon may copy after the test ended
        address = xferd.memory.address_of(memory)
        daemon.hold.set()
        transfer = client.submit(p.WRITE, 1, [address], [address + 64], [64])
        daemon.hang_up()
        started = time.monotonic()
        with self.assertRaises(errors.TransferDaemonGoneError):
            client.wait(transfer, 30)
        self.assertLess(time.monotonic() - started, 2)
        self.assertEqual(errors.TransferStatus.DAEMON_GONE, transfer.status)
        with self.assertRaises(errors.DaemonGoneError):
            client.submit(p.WRITE, 1, [address], [address + 64], [64])

    def test_a_heartbeat_stale_for_five_liveness_timeouts_fails_pending_transfers_with_daemon_gone(self) -> None:
        """The played daemon's process (this one) exists, so one timeout is not enough: a busy host is not a dead
        daemon; five are (a hung one)."""
        daemon, client = self.played()
        memory = bytearray(128)
        KEPT.append(memory)  # the played daemon may copy after the test ended
        address = xferd.memory.address_of(memory)
        daemon.hold.set()
        transfer = client.submit(p.WRITE, 1, [address], [address + 64], [64])
        daemon.heartbeat = False
        time.sleep(0.05)
        struct.pack_into("<q", daemon.cnc, 48, PlayedDaemon.now_ms() - 4_000)
        with self.assertRaises(errors.TransferTimeoutError):
            client.wait(transfer, 0.3)
        struct.pack_into("<q", daemon.cnc, 48, PlayedDaemon.now_ms() - 16_000)
        with self.assertRaises(errors.DaemonGoneError) as raised:
            client.wait(transfer, 30)
        self.assertIn("hung", str(client._gone))
        self.assertIsInstance(raised.exception, errors.TransferFailedError)

    def await_asleep_on_the_completion_doorbell(self, client: xferd.Client, waiter: threading.Thread) -> None:
        """Bounded wait until ``waiter`` is blocked in the kernel on ``client``'s completion doorbell, marked."""
        doorbell = client._completion_doorbell
        deadline = time.monotonic() + 60
        while not (support.asleep_on_futex(waiter.native_id, doorbell.address) and doorbell.is_marked()):
            self.assertTrue(waiter.is_alive(), "the waiter ended before it slept on the completion doorbell")
            self.assertLess(time.monotonic(), deadline, "the waiter never slept on the completion doorbell")
            time.sleep(0.01)

    @staticmethod
    def start_waiter(client: xferd.Client, transfer: xferd.Transfer,
                     timeout_s: float | None = None) -> tuple[threading.Thread, list[BaseException]]:
        """A thread waiting for ``transfer``, started, and the list that gets what its wait raised."""
        raised: list[BaseException] = []

        def wait() -> None:
            try:
                client.wait(transfer, timeout_s)
            except BaseException as ex:  # noqa: BLE001
                raised.append(ex)

        waiter = threading.Thread(target=wait, daemon=True)
        waiter.start()
        return waiter, raised

    def held_transfer(self, **kwargs) -> tuple[PlayedDaemon, xferd.Client, xferd.Transfer]:
        """A client whose doorbell sleeps last an hour (so only a wake or the wait's deadline ends one early) and a
        64-byte write the played daemon holds back."""
        daemon, client = self.played(**kwargs)
        client._doorbell_sleep_ns = client._ringing_daemon_sleep_ns = 3600 * 10**9
        memory = bytearray(128)
        KEPT.append(memory)  # the played daemon may copy after the test ended
        address = xferd.memory.address_of(memory)
        daemon.hold.set()
        return daemon, client, client.submit(p.WRITE, 1, [address], [address + 64], [64])

    @needs_futex
    def test_a_wait_asleep_on_the_completion_doorbell_ends_at_its_deadline(self) -> None:
        """Doorbell sleeps of an hour, a daemon that holds the completion: only the wait's own deadline bounds the
        sleep, so the wait raises its timeout within the bounded join."""
        _daemon, client, transfer = self.held_transfer()
        waiter, raised = self.start_waiter(client, transfer, 0.2)
        waiter.join(60)
        self.assertFalse(waiter.is_alive(), "the doorbell sleep outlasted the wait's deadline")
        self.assertEqual(1, len(raised))
        self.assertIsInstance(raised[0], errors.TransferTimeoutError)
        self.assertFalse(client._completion_doorbell.is_marked())

    @needs_futex
    def test_a_daemon_found_gone_just_before_the_doorbell_sleep_ends_it_at_once(self) -> None:
        """Another thread finds the daemon gone after the waiter marked the doorbell and before its FUTEX_WAIT: the
        wake clears the mark, so the sleep (an hour) does not begin, and the waiter does not take it for a ring."""
        _daemon, client, transfer = self.held_transfer()
        doorbell = client._completion_doorbell
        sleep = doorbell.sleep

        def found_gone_then_sleep(timeout_ns: int) -> None:
            client._mark_gone("found gone by another thread")
            sleep(timeout_ns)

        with mock.patch.object(doorbell, "sleep", side_effect=found_gone_then_sleep) as sleeps:
            waiter, raised = self.start_waiter(client, transfer)
            waiter.join(60)
        self.assertFalse(waiter.is_alive(), "the sleep began after the wake and lasted its bound")
        self.assertEqual(1, sleeps.call_count)
        self.assertEqual(1, len(raised))
        self.assertIsInstance(raised[0], errors.TransferDaemonGoneError)
        self.assertFalse(client._daemon_rings, "the wake of a daemon found gone is not a ring")
        self.assertFalse(doorbell.is_marked())

    @needs_futex
    def test_a_daemon_found_gone_just_before_the_doorbell_is_marked_ends_the_wait_at_once(self) -> None:
        """Another thread finds the daemon gone after the waiter's last look at its transfer and before it marks the
        doorbell: that wake found the word clear, and the mark is stored after it, so the waiter must see the
        daemon gone after marking, not sleep its bound (an hour)."""
        _daemon, client, transfer = self.held_transfer()
        doorbell = client._completion_doorbell
        arm = doorbell.arm

        def found_gone_then_arm() -> bool:
            client._mark_gone("found gone by another thread")
            return arm()

        with mock.patch.object(doorbell, "arm", side_effect=found_gone_then_arm) as arms:
            waiter, raised = self.start_waiter(client, transfer)
            waiter.join(60)
        self.assertFalse(waiter.is_alive(), "the waiter marked the doorbell after the wake and slept its bound")
        self.assertEqual(1, arms.call_count)
        self.assertEqual(1, len(raised))
        self.assertIsInstance(raised[0], errors.TransferDaemonGoneError)
        self.assertFalse(doorbell.is_marked())

    @needs_futex
    def test_a_record_claimed_but_not_written_sends_the_waiter_to_its_event_not_around_a_loop(self) -> None:
        """A daemon thread stalled between claiming a completion record and committing it never rings: the waiter
        that finds the claim (tail ahead of head, length word 0) sleeps on its event, as when futex is unusable,
        instead of going straight back to the doorbell (a busy loop for as long as the stall lasts)."""
        daemon, client, transfer = self.held_transfer()
        view = RingView(client._rings, 0, daemon.c)
        self.addCleanup(view.release)  # before the client's close unmaps the rings (cleanups run last-in first)
        self.assertGreaterEqual(SubmitRingWriter(view).try_claim(p.COMPLETION, p.COMPLETION_LENGTH), 0)
        results: list[bool] = []
        sleep_on_doorbell = client._sleep_on_doorbell

        def recorded(done, limit_ns: int) -> bool:
            results.append(sleep_on_doorbell(done, limit_ns))
            return results[-1]

        with mock.patch.object(client, "_sleep_on_doorbell", side_effect=recorded):
            with self.assertRaises(errors.TransferTimeoutError):
                client.wait(transfer, 0.2)
        self.assertTrue(results, "the wait never reached the doorbell")
        self.assertEqual(0, results.count(True), f"of {len(results)} visits to the doorbell, these went straight back "
                                                 f"to it without sleeping")
        self.assertFalse(client._completion_doorbell.is_marked())

    @needs_futex
    def test_a_daemon_that_never_rings_the_completion_doorbell_still_ends_a_sleeping_wait(self) -> None:
        """The played daemon never rings the completion doorbell, as a daemon older than it: the waiter's sleeps
        there are bounded, so the completion committed while it sleeps is still taken."""
        daemon, client = self.played()
        memory = bytearray(128)
        KEPT.append(memory)  # the played daemon may copy after the test ended
        address = xferd.memory.address_of(memory)
        memory[:64] = os.urandom(64)
        daemon.hold.set()
        transfer = client.submit(p.WRITE, 1, [address], [address + 64], [64])
        moved: list[int] = []
        waiter = threading.Thread(target=lambda: moved.append(client.wait(transfer, 60)), daemon=True)
        waiter.start()
        self.await_asleep_on_the_completion_doorbell(client, waiter)
        daemon.hold.clear()
        waiter.join(60)
        self.assertEqual([64], moved)
        self.assertEqual(memory[:64], memory[64:])
        self.assertFalse(client._completion_doorbell.is_marked(), "the mark is cleared when the wait ends")
        self.assertFalse(client._daemon_rings, "a daemon that never rang keeps the short sleeps")

    @needs_futex
    def test_close_ends_a_wait_asleep_on_the_completion_doorbell(self) -> None:
        """The waiter's sleep is an hour, so only close() waking it ends the wait within the bounded join."""
        _daemon, client, transfer = self.held_transfer()
        waiter, raised = self.start_waiter(client, transfer)
        self.await_asleep_on_the_completion_doorbell(client, waiter)
        closer = threading.Thread(target=client.close, daemon=True)  # a close that cannot wake it would hang here
        closer.start()
        closer.join(60)
        waiter.join(60)
        self.assertFalse(closer.is_alive(), "close() waits for the sleeper's poll lock")
        self.assertFalse(waiter.is_alive(), "the sleeping wait did not end")
        self.assertEqual(1, len(raised))
        self.assertIsInstance(raised[0], errors.TransferDaemonGoneError)

    @needs_futex
    def test_a_signal_handler_on_the_waiting_thread_closes_the_client(self) -> None:
        """``signal.signal(SIGTERM, lambda *_: client.close())`` while the main thread waits asleep on the completion
        doorbell: the handler runs on that thread, inside the wait, which holds the poll lock. close() must not wait
        for that lock: the wait ends with DAEMON_GONE and the rings are unmapped once it lets go. In a child process
        with a timeout, as a close that waits for its own thread never returns."""
        code = """if True:
            import os, signal, sys, threading, time
            sys.path.insert(0, sys.argv[1])
            import support, xferd
            from test_client_protocol import PlayedDaemon
            from xferd import errors, protocol as p

            daemon = PlayedDaemon(parent=sys.argv[2])
            try:
                client = xferd.Client(daemon.directory, "signalled", control_timeout_s=5)
                client._doorbell_sleep_ns = client._ringing_daemon_sleep_ns = 3600 * 10**9
                memory = bytearray(128)
                address = xferd.memory.address_of(memory)
                daemon.hold.set()
                transfer = client.submit(p.WRITE, 1, [address], [address + 64], [64])
                signal.signal(signal.SIGTERM, lambda *_: client.close())
                main = threading.main_thread()

                def kick() -> None:
                    deadline = time.monotonic() + 60
                    while not support.asleep_on_futex(main.native_id, client._completion_doorbell.address):
                        if time.monotonic() > deadline:
                            os._exit(3)  # never slept on the doorbell
                        time.sleep(0.01)
                    signal.pthread_kill(main.ident, signal.SIGTERM)

                threading.Thread(target=kick, daemon=True).start()
                try:
                    client.wait(transfer, 3600)
                    print("completed")
                except errors.TransferDaemonGoneError:
                    print("daemon gone")
                print("rings unmapped" if client._rings.closed else "rings mapped")
            finally:
                daemon.close()
        """
        parent = tempfile.mkdtemp(prefix="xfpy-signal-", dir="/dev/shm")
        self.addCleanup(shutil.rmtree, parent, ignore_errors=True)  # the played daemon's directory too, if killed
        result = support.run_python(code, os.path.dirname(os.path.abspath(__file__)), parent, timeout=120)
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertEqual(["daemon gone", "rings unmapped"], result.stdout.split("\n")[:2], result.stderr)

    def signal_handler_closes_inside(self, section: str) -> list[str]:
        """In a child process with a timeout (a close() that waits for its own thread never returns): the main thread
        calls the client, SIGTERM lands while it is inside ``section`` ("submit": writing a record, under the submit
        lock; "control": a control request's receive, under the control lock), and the handler calls close(). Returns
        the child's report: what the interrupted call raised, whether the client was left open, then whether a
        close() after it unmapped the rings."""
        code = """if True:
            import signal, sys
            sys.path.insert(0, sys.argv[1])
            from unittest import mock
            import support, xferd
            from test_client_protocol import PlayedDaemon
            from xferd import errors, protocol as p

            daemon = PlayedDaemon(parent=sys.argv[2])
            try:
                client = xferd.Client(daemon.directory, "signalled", control_timeout_s=5)
                memory = bytearray(128)
                address = xferd.memory.address_of(memory)
                signal.signal(signal.SIGTERM, lambda *_: client.close())
                target, name = (client._doorbell, "ring") if sys.argv[3] == "submit" else (client._channel, "receive")
                real = getattr(target, name)

                def signalled(*args):
                    signal.raise_signal(signal.SIGTERM)  # its handler runs on this thread, inside the lock's block
                    return real(*args)

                with mock.patch.object(target, name, side_effect=signalled):
                    try:
                        if sys.argv[3] == "submit":
                            client.transfer_sync(p.WRITE, 1, address, address + 64, 64, timeout_s=60)
                        else:
                            client.open_segment("played")
                        print("returned")
                    except errors.ClientBusyError:
                        print("client busy")
                print("closed" if client._closed else "open")
                client.close()
                print("rings unmapped" if client._rings.closed else "rings mapped")
            finally:
                daemon.close()
        """
        parent = tempfile.mkdtemp(prefix="xfpy-signal-", dir="/dev/shm")
        self.addCleanup(shutil.rmtree, parent, ignore_errors=True)  # the played daemon's directory too, if killed
        result = support.run_python(code, os.path.dirname(os.path.abspath(__file__)), parent, section, timeout=120)
        self.assertEqual(0, result.returncode, result.stderr)
        return result.stdout.split("\n")[:3]

    def test_a_signal_handler_closing_the_client_inside_a_submission_gets_a_typed_error_not_a_hang(self) -> None:
        """The handler interrupted the record's write, under the submit lock that close() needs: close() raises
        ClientBusyError (within its bound) rather than wait for its own thread; the client is left as it was, and
        the close() after the interrupted call completes."""
        self.assertEqual(["client busy", "open", "rings unmapped"], self.signal_handler_closes_inside("submit"))

    def test_a_signal_handler_closing_the_client_inside_a_control_request_gets_a_typed_error_not_a_hang(self) -> None:
        """The handler interrupted a control request's receive (up to the control timeout, under the control lock):
        close() raises ClientBusyError at once; the close() after it completes."""
        self.assertEqual(["client busy", "open", "rings unmapped"], self.signal_handler_closes_inside("control"))

    @needs_futex
    def test_a_daemon_found_gone_by_another_thread_ends_a_wait_asleep_on_the_completion_doorbell(self) -> None:
        """The waiter sleeps an hour on the doorbell; the daemon hangs up, which another thread notices: the
        waiter's transfer fails with DAEMON_GONE at once, not when its sleep ends."""
        daemon, client, transfer = self.held_transfer()
        waiter, raised = self.start_waiter(client, transfer)
        self.await_asleep_on_the_completion_doorbell(client, waiter)
        daemon.hang_up()
        deadline = time.monotonic() + 60
        while not client.is_daemon_gone():
            self.assertLess(time.monotonic(), deadline, "the hang-up was never noticed")
            time.sleep(0.01)
        waiter.join(60)
        self.assertFalse(waiter.is_alive(), "the sleeping wait did not end")
        self.assertEqual(1, len(raised))
        self.assertIsInstance(raised[0], errors.TransferDaemonGoneError)

    def test_a_client_closed_while_a_poll_holds_the_lock_is_unmapped_when_the_poll_lets_go(self) -> None:
        """close() never waits for the poll lock: whoever holds it unmaps the rings as it lets go. Here close() runs
        inside poll()'s drain (as a signal handler on the polling thread would), so only poll() can unmap."""
        _daemon, client = self.played()
        drain = client._drain

        def closed_meanwhile() -> int:
            client.close()
            self.assertFalse(client._rings.closed, "unmapped under the poll lock's holder")
            return drain()

        with mock.patch.object(client, "_drain", side_effect=closed_meanwhile):
            client.poll()
        self.assertTrue(client._rings.closed, "the poll let go of the lock and left the rings mapped")

    def test_a_client_closed_while_a_spinning_waiter_holds_the_lock_is_unmapped_when_it_lets_go(self) -> None:
        """The same for the waiter's spin, which drains inline when it sees a record published: close() runs inside
        that drain, and the spin unmaps the rings as it lets go; the wait raises the DAEMON_GONE failure."""
        daemon, client, transfer = self.held_transfer()
        view = client._completion_view
        daemon.hold.clear()
        deadline = time.monotonic() + 60
        while view.i32[(view.head() & (view.capacity - 1)) >> 2] <= 0:  # published: the spin's first look finds it
            self.assertLess(time.monotonic(), deadline, "the played daemon never completed the transfer")
            time.sleep(0.001)
        drained: list[str] = []

        def closed_meanwhile() -> int:
            drained.append("drain")
            client.close()
            return 0

        with mock.patch.object(client, "_drain", side_effect=closed_meanwhile), \
                mock.patch.object(client, "_poll", side_effect=AssertionError("not the spin's drain")):
            with self.assertRaises(errors.TransferDaemonGoneError):
                client.wait(transfer, 60)
        self.assertEqual(["drain"], drained)
        self.assertTrue(client._rings.closed, "the spin let go of the lock and left the rings mapped")

    def test_a_wait_whose_liveness_check_meets_a_close_raises_daemon_gone_not_a_value_error(self) -> None:
        """Another thread's close() unmaps cnc.dat between a waiter's look at the client's state and its look at the
        heartbeat: the wait raises the transfer's typed DAEMON_GONE failure, not the released mapping's ValueError."""
        _daemon, client, transfer = self.held_transfer()
        stale_reason = client._cnc.stale_reason

        def closed_meanwhile(**kwargs) -> str | None:
            client.close()
            return stale_reason(**kwargs)

        with mock.patch.object(client._cnc, "stale_reason", side_effect=closed_meanwhile) as looks:
            with self.assertRaises(errors.TransferDaemonGoneError):
                client.wait(transfer, 60)
        self.assertEqual(1, looks.call_count)

    def test_a_close_that_meets_a_buffer_still_in_use_releases_everything_else_and_can_be_called_again(self) -> None:
        """The caller still holds a slice of a buffer from allocate_memory: close() raises BufferError, yet the rings
        and cnc.dat are unmapped; once the slice is released, close() again unmaps the buffer."""
        _daemon, client = self.played()
        buffer = client.allocate_memory(4096)
        part = buffer.view[:8]
        with self.assertRaises(BufferError):
            client.close()
        self.assertTrue(client._rings.closed, "the rings stay mapped after a buffer's close failed")
        self.assertTrue(client._cnc._map.closed, "cnc.dat stays mapped after a buffer's close failed")
        self.assertFalse(buffer.closed)
        part.release()
        client.close()
        self.assertTrue(buffer.closed)
        self.assertTrue(buffer._map.closed, "the buffer's memory stays mapped: the second close() did nothing")

    def test_a_record_interrupted_while_written_is_voided_and_the_ring_keeps_flowing(self) -> None:
        from unittest import mock
        daemon, client = self.played()
        memory = bytearray(128)
        KEPT.append(memory)  # the played daemon may copy after the test ended
        address = xferd.memory.address_of(memory)
        with mock.patch.object(p, "pack_batch_header", side_effect=KeyboardInterrupt):
            with self.assertRaises(KeyboardInterrupt):
                client.submit(p.WRITE, 1, [address, address + 8], [address + 64, address + 72], [8, 8])
        # the single-request path packs its record in one call whose arguments include the clock: interrupt there
        with mock.patch.object(xferd.client, "_monotonic_ns", side_effect=KeyboardInterrupt):
            with self.assertRaises(KeyboardInterrupt):
                client.submit(p.WRITE, 1, [address], [address + 64], [8])
        memory[:8] = b"after!!!"
        self.assertEqual(8, client.transfer_sync(p.WRITE, 1, address, address + 64, 8, timeout_s=10))
        self.assertEqual(b"after!!!", bytes(memory[64:72]))
        self.assertEqual([(p.SUBMIT_BATCH, 2), (p.SUBMIT, 1), (p.SUBMIT, 1)], daemon.records)
        deadline = time.monotonic() + 5
        while client._in_flight and time.monotonic() < deadline:
            client.poll()
        self.assertEqual(0, client._in_flight, "the voided records were answered (INVALID_OPCODE) and released")


if __name__ == "__main__":
    unittest.main()
