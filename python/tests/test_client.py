"""The xferd client against a real daemon: registration, transfers, batches, notifications, typed failures,
threads, and a daemon that dies under a transfer."""

from __future__ import annotations

import support

import mmap
import os
import random
import threading
import time
import unittest

import xferd
from xferd import errors
from xferd.protocol import READ, WRITE

MIB = 1 << 20


def pattern(seed: int, length: int) -> bytes:
    return random.Random(seed).randbytes(length)


class RegistrationTest(support.DaemonTestCase):
    def test_welcome_gives_a_segment_name_limits_and_rings(self) -> None:
        with self.daemon.connect("welcome-0") as client:
            self.assertTrue(client.segment_name.endswith("/welcome-0"), client.segment_name)
            self.assertGreater(client.max_in_flight, 0)
            self.assertGreater(client.max_batch_entries, 0)
            self.assertEqual(0, client.rpc_port, "no port unless asked for")

    def test_a_second_client_with_the_same_name_is_refused_typed(self) -> None:
        with self.daemon.connect("same-name"):
            with self.assertRaises(errors.DuplicateSegmentNameError):
                self.daemon.connect("same-name")

    def test_register_unregister_and_the_typed_refusals(self) -> None:
        with self.daemon.connect() as client:
            buffer = client.allocate_memory(MIB)
            client.register_memory(buffer.address, buffer.length, "cpu:0")
            with self.assertRaises(errors.OverlappingRegionError):
                client.register_memory(buffer.address + 4096, 4096, "cpu:0")
            client.unregister_memory(buffer.address)
            with self.assertRaises(errors.NotRegisteredError):
                client.unregister_memory(buffer.address)
            client.register_memory(buffer.address, buffer.length, "cpu:0")  # free again after unregistering

    def test_opening_an_unknown_segment_is_a_typed_error(self) -> None:
        with self.daemon.connect() as client:
            with self.assertRaises(errors.UnknownSegmentControlError):
                client.open_segment("nobody-here")

    def test_first_buffer_address_by_handle(self) -> None:
        with self.daemon.connect() as owner, self.daemon.connect() as peer:
            self.assertEqual(0, peer.first_buffer_address(owner.segment_handle), "nothing registered yet")
            high, low = owner.allocate_memory(4096), owner.allocate_memory(4096)
            for buffer in (high, low):
                owner.register_memory(buffer.address, 4096, "cpu:0")
            handle = peer.open_segment(owner.segment_name.rsplit("/", 1)[1])
            self.assertEqual(min(high.address, low.address), peer.first_buffer_address(handle))
            self.assertEqual(min(high.address, low.address), owner.first_buffer_address(owner.segment_handle))
            with self.assertRaises(errors.UnknownSegmentControlError):
                peer.first_buffer_address(handle ^ 0x7fff0000)
            with self.assertRaises(errors.UnknownSegmentControlError):
                peer.first_buffer_address(-(1 << 63) | 4242)  # a remote handle this daemon never gave
            self.assertEqual(min(high.address, low.address), peer.first_buffer_address(handle), "still serving")

    def test_gpu_registration_without_cuda_fails_before_anything_is_sent(self) -> None:
        if xferd.cuda.runtime().availability() is None:
            self.skipTest("this host has a usable CUDA runtime: the GPU path is checked on GPU machines")
        with self.daemon.connect() as client:
            with self.assertRaises(errors.CudaUnavailableError):
                client.register_gpu_memory(0x7f0000000000, 4096, "cuda:0")
            buffer = client.allocate_memory(4096)
            client.register_memory(buffer.address, 4096, "cpu:0")  # the connection is still fine


class TransferTest(support.DaemonTestCase):
    def setUp(self) -> None:
        self.source = self.daemon.connect()
        self.target = self.daemon.connect()
        self.addCleanup(self.source.close)
        self.addCleanup(self.target.close)
        self.local = self.source.allocate_memory(8 * MIB)
        self.remote = self.target.allocate_memory(8 * MIB)
        self.source.register_memory(self.local.address, self.local.length, "cpu:0")
        self.target.register_memory(self.remote.address, self.remote.length, "cpu:0")
        self.handle = self.source.open_segment(self.target.segment_name.rsplit("/", 1)[1])

    def test_sync_write_then_read_back_every_byte(self) -> None:
        data = pattern(1, MIB)
        self.local.write(0, data)
        self.assertEqual(MIB, self.source.transfer_sync(WRITE, self.handle, self.local.address,
                                                        self.remote.address + MIB, MIB))
        self.assertEqual(data, self.remote.read(MIB, MIB))
        self.remote.write(3 * MIB, pattern(2, 4096))
        self.source.transfer_sync(READ, self.handle, self.local.address + 5 * MIB, self.remote.address + 3 * MIB,
                                  4096)
        self.assertEqual(pattern(2, 4096), self.local.read(5 * MIB, 4096))

    def test_a_batch_of_4096_descriptors_lands_intact(self) -> None:
        block = 2048
        count = 4096
        data = pattern(3, block * count)
        self.local.write(0, data)
        order = list(range(count))
        random.Random(4).shuffle(order)  # scattered targets: every descriptor counts
        locals_ = [self.local.address + i * block for i in range(count)]
        targets = [self.remote.address + order[i] * block for i in range(count)]
        transfer = self.source.submit(WRITE, self.handle, locals_, targets, [block] * count)
        self.assertEqual(block * count, self.source.wait(transfer, 30))
        for i in range(0, count, 97):
            self.assertEqual(data[i * block:(i + 1) * block], self.remote.read(order[i] * block, block), i)
        self.assertEqual(data[-block:], self.remote.read(order[-1] * block, block))

    def test_async_submit_then_wait(self) -> None:
        self.local.write(0, pattern(5, 64 * 1024))
        transfers = [self.source.submit(WRITE, self.handle, [self.local.address + i * 4096],
                                        [self.remote.address + i * 4096], [4096]) for i in range(16)]
        for transfer in transfers:
            self.source.wait(transfer, 30)
            self.assertEqual(xferd.TransferStatus.OK, transfer.status)
        self.assertEqual(pattern(5, 64 * 1024), self.remote.read(0, 64 * 1024))

    def test_failures_are_typed_by_status(self) -> None:
        cases = [
            (errors.UnknownSegmentError, 0x7fff_0000_dead, self.local.address, self.remote.address, 64),
            (errors.TargetRangeNotRegisteredError, self.handle, self.local.address,
             self.remote.address + self.remote.length - 32, 64),
            (errors.LocalRangeNotRegisteredError, self.handle, self.local.address + self.local.length, self.remote.address,
             64),
            (errors.InvalidLengthError, self.handle, self.local.address, self.remote.address, 0),
        ]
        for error, segment, local, target, length in cases:
            with self.subTest(error=error.__name__), self.assertRaises(error):
                self.source.transfer_sync(WRITE, segment, local, target, length, timeout_s=30)
        self.source.transfer_sync(WRITE, self.handle, self.local.address, self.remote.address, 64, timeout_s=30)

    def test_a_batch_fails_with_the_status_of_its_lowest_failed_entry_and_nothing_is_called_complete(self) -> None:
        outside = self.remote.address + self.remote.length
        transfer = self.source.submit(WRITE, self.handle, [self.local.address] * 3,
                                      [self.remote.address, outside, self.remote.address], [64, 64, 0])
        with self.assertRaises(errors.TargetRangeNotRegisteredError):
            self.source.wait(transfer, 30)
        self.assertEqual(0, transfer.bytes_transferred)

    def test_a_notify_arrives_after_the_bytes(self) -> None:
        self.local.write(0, b"kv-block")
        self.source.transfer_sync(WRITE, self.handle, self.local.address, self.remote.address, 8,
                                  notify=b"layer-3 done", timeout_s=30)
        deadline = time.monotonic() + 10
        notes: list[xferd.Notification] = []
        while not notes and time.monotonic() < deadline:
            notes = self.target.get_notifies()
            time.sleep(0.01)
        self.assertEqual([b"layer-3 done"], [n.message for n in notes])
        self.assertEqual(self.source.segment_name, notes[0].source)
        self.assertEqual(b"kv-block", self.remote.read(0, 8))

    def test_a_record_interrupted_while_written_is_refused_by_the_daemon_not_a_disconnect(self) -> None:
        from unittest import mock
        from xferd import protocol
        with mock.patch.object(protocol, "pack_batch_header", side_effect=KeyboardInterrupt):
            with self.assertRaises(KeyboardInterrupt):
                self.source.submit(WRITE, self.handle, [self.local.address] * 2, [self.remote.address] * 2, [8, 8])
        self.local.write(0, b"still ok")
        self.source.transfer_sync(WRITE, self.handle, self.local.address, self.remote.address, 8, timeout_s=30)
        self.assertEqual(b"still ok", self.remote.read(0, 8))

    def test_ten_threads_of_batches_on_one_client(self) -> None:
        block, per_thread, threads = 4096, 64, 10
        data = pattern(6, block * per_thread * threads)
        self.local.write(0, data)
        failures: list[BaseException] = []

        def push(t: int) -> None:
            try:
                for _round in range(5):
                    base = t * per_thread * block
                    self.source.batch_transfer_sync(
                        WRITE, self.handle, [self.local.address + base + i * block for i in range(per_thread)],
                        [self.remote.address + base + i * block for i in range(per_thread)], [block] * per_thread,
                        timeout_s=60)
            except BaseException as ex:  # noqa: BLE001 - reported below
                failures.append(ex)

        workers = [threading.Thread(target=push, args=(t,)) for t in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(120)
        self.assertEqual([], failures)
        self.assertEqual(data, self.remote.read(0, len(data)))

    def test_ordinary_process_memory_registers_by_address(self) -> None:
        anonymous = mmap.mmap(-1, MIB)  # what a numpy array or a torch CPU tensor is
        address = xferd.memory.address_of(anonymous)
        owner = self.daemon.connect()  # its own connection: a daemon without the frame type disconnects it
        self.addCleanup(owner.close)
        try:
            owner.register_process_memory(address, MIB, "cpu:0")
        except (errors.MalformedMessageError, errors.DaemonGoneError) as ex:
            self.fail(f"daemon has no REGISTER_PROCESS_MEMORY (branch engine): {ex}")
        handle = owner.open_segment(self.target.segment_name.rsplit("/", 1)[1])
        anonymous[:4096] = pattern(7, 4096)
        owner.transfer_sync(WRITE, handle, address, self.remote.address, 4096, timeout_s=30)
        self.assertEqual(pattern(7, 4096), self.remote.read(0, 4096))
        self.remote.write(8192, pattern(8, 4096))
        owner.transfer_sync(READ, handle, address + 4096, self.remote.address + 8192, 4096, timeout_s=30)
        self.assertEqual(pattern(8, 4096), anonymous[4096:8192])
        owner.unregister_memory(address)


class DaemonDeathTest(unittest.TestCase):
    def test_a_daemon_killed_under_transfers_fails_them_within_the_timeout(self) -> None:
        daemon = support.Daemon()
        try:
            client = daemon.connect()
            peer = daemon.connect()
            local = client.allocate_memory(64 * MIB)
            remote = peer.allocate_memory(64 * MIB)
            client.register_memory(local.address, local.length, "cpu:0")
            peer.register_memory(remote.address, remote.length, "cpu:0")
            handle = client.open_segment(peer.segment_name.rsplit("/", 1)[1])
            block = MIB
            outcome: dict[str, object] = {}

            def keep_writing() -> None:
                rounds = 0
                try:
                    while rounds < 1_000_000:
                        client.batch_transfer_sync(WRITE, handle, [local.address + i * block for i in range(64)],
                                                   [remote.address + i * block for i in range(64)], [block] * 64,
                                                   timeout_s=30)
                        rounds += 1
                        outcome["rounds"] = rounds
                except BaseException as ex:  # noqa: BLE001 - the outcome under test
                    outcome["error"] = ex
                    outcome["at"] = time.monotonic()

            writer = threading.Thread(target=keep_writing)
            writer.start()
            deadline = time.monotonic() + 30
            while outcome.get("rounds", 0) < 3 and time.monotonic() < deadline and "error" not in outcome:
                time.sleep(0.05)
            self.assertNotIn("error", outcome)
            daemon.kill()
            killed = time.monotonic()
            writer.join(30)
            self.assertFalse(writer.is_alive(), "a wait outlived the daemon by 30 s")
            self.assertIsInstance(outcome.get("error"), errors.DaemonGoneError)
            self.assertLess(outcome["at"] - killed, 5.0, "noticed by end of file on the socket, not a timeout")
            with self.assertRaises(errors.DaemonGoneError):
                client.submit(WRITE, handle, [local.address], [remote.address], [64])
            with self.assertRaises(errors.DaemonGoneError):
                client.open_segment("anyone")
            client.close()
            peer.close()
        finally:
            daemon.stop()

    def test_a_missing_daemon_is_daemon_gone(self) -> None:
        with self.assertRaises(errors.DaemonGoneError):
            xferd.Client("/dev/shm/no-xferd-daemon-here")


if __name__ == "__main__":
    unittest.main()


def _schedstat() -> tuple[int, int]:
    """(ns on a CPU, ns runnable but waiting for one) of the calling thread (/proc/thread-self/schedstat)."""
    with open("/proc/thread-self/schedstat") as f:
        on_cpu, waiting, _slices = (int(x) for x in f.read().split())
    return on_cpu, waiting


def _loop_rate(seconds: float) -> float:
    """Iterations per second of a pure-Python loop, counting only the time the kernel let it run or had it sleep:
    time spent runnable in the run queue (other processes on a loaded host, the daemon's copying) is left out, time
    blocked on the GIL (asleep, not in the run queue) is not. So the rate measures what other threads of this process
    take from it, not what the shared machine does."""
    count = 0
    x = 0.0
    _cpu, queued_before = _schedstat()
    start = time.perf_counter_ns()
    end = start + int(seconds * 1e9)
    while True:
        for _ in range(1000):
            x = x * 1.0000001 + 1.0
        count += 1000
        now = time.perf_counter_ns()
        if now >= end:
            _cpu, queued_after = _schedstat()
            return count / max(1e-9, (now - start - (queued_after - queued_before)) / 1e9)


class GilTest(support.DaemonTestCase):
    SIZE = 32 * MIB
    WINDOW_S = 0.5
    ROUNDS = 5
    ATTEMPTS = 3

    def test_four_threads_waiting_on_large_transfers_leave_a_fifth_at_least_80_percent_of_its_speed(self) -> None:
        """A pure-Python loop's rate (:func:`_loop_rate`: run-queue time left out) in windows where four threads of
        this process wait on 32 MiB transfers, alternating with windows where they are parked; medians compared."""
        source, target = self.daemon.connect(), self.daemon.connect()
        self.addCleanup(source.close)
        self.addCleanup(target.close)
        handle = source.open_segment(target.segment_name.rsplit("/", 1)[1])
        active, stop, seen = threading.Event(), threading.Event(), []
        transfers = [0]

        def load() -> None:
            local, remote = source.allocate_memory(self.SIZE), target.allocate_memory(self.SIZE)
            source.register_memory(local.address, self.SIZE, "cpu:0")
            target.register_memory(remote.address, self.SIZE, "cpu:0")
            try:
                while not stop.is_set():
                    if not active.wait(0.1):
                        continue
                    source.transfer_sync(WRITE, handle, local.address, remote.address, self.SIZE, timeout_s=60)
                    transfers[0] += 1
            except BaseException as ex:  # noqa: BLE001
                seen.append(ex)

        threads = [threading.Thread(target=load) for _ in range(4)]
        for thread in threads:
            thread.start()
        ratios: list[float] = []
        try:
            # A busy host can starve the solo windows of one measurement (the rate there is what moves, not the
            # rate while threads wait), so up to ATTEMPTS measurements are taken and the best one counts. A waiting
            # thread that holds the GIL takes most of the loop's time in every measurement, so this cannot hide it.
            for _attempt in range(self.ATTEMPTS):
                solo, loaded = [], []
                for _round in range(self.ROUNDS):
                    active.clear()
                    time.sleep(0.2)
                    solo.append(_loop_rate(self.WINDOW_S))
                    active.set()
                    time.sleep(0.2)
                    loaded.append(_loop_rate(self.WINDOW_S))
                solo_rate, loaded_rate = sorted(solo)[len(solo) // 2], sorted(loaded)[len(loaded) // 2]
                ratios.append(loaded_rate / solo_rate)
                print(f"\n  GIL: pure-Python loop, medians of {self.ROUNDS} windows: {loaded_rate:,.0f}/s while 4 "
                      f"threads of its process wait on {self.SIZE >> 20} MiB transfers ({transfers[0]} done so far), "
                      f"{solo_rate:,.0f}/s solo: {100 * ratios[-1]:.0f}%", flush=True)
                if ratios[-1] >= 0.8:
                    break
        finally:
            stop.set()
            active.set()
            for thread in threads:
                thread.join(60)
        self.assertEqual([], seen)
        self.assertGreater(transfers[0], 4 * self.ROUNDS, "the threads were waiting on transfers")
        self.assertGreaterEqual(max(ratios), 0.8, f"every measurement: {ratios}")
