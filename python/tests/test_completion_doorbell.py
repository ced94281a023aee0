"""A waiting Python client sleeps in the kernel on its completion ring's doorbell, and the daemon that commits the
completion wakes it (ringbuffer/PROTOCOL.md 3.7). The daemon is stopped (SIGSTOP) while the client submits, so the
waiter is asleep before the completion exists, read from the kernel (``/proc/self/task/TID/syscall``: a shared
FUTEX_WAIT on the word, and the word marked); its sleeps there last an hour, so only the daemon's wake can end the wait
within the test's bounded join. Mirrors the Java client's CompletionDoorbellTest."""

from __future__ import annotations

import support

import contextlib
import os
import signal
import threading
import time
import unittest
from typing import Iterator

import xferd
from xferd.protocol import WRITE

LENGTH = 4096
HOUR_NS = 3600 * 10**9
WAIT_S = 60


class CompletionDoorbellTest(support.DaemonTestCase):
    daemon_args = ("--liveness-timeout-ms", "120000")  # a daemon stopped on purpose must not count as gone

    def setUp(self) -> None:
        self.client = self.daemon.connect(f"py-doorbell-{self._testMethodName[-20:]}")
        # a sleep still ends at its wait's deadline: the waits take an hour
        self.client._doorbell_sleep_ns = self.client._ringing_daemon_sleep_ns = HOUR_NS

    def tearDown(self) -> None:
        self.continue_daemon()  # a daemon left stopped would outlive the test
        closer = threading.Thread(target=self.client.close, daemon=True)  # close wakes a waiter left asleep
        closer.start()
        closer.join(WAIT_S)

    def continue_daemon(self) -> None:
        os.killpg(self.daemon.process.pid, signal.SIGCONT)

    @contextlib.contextmanager
    def daemon_stopped(self) -> Iterator[None]:
        os.killpg(self.daemon.process.pid, signal.SIGSTOP)
        try:
            deadline = time.monotonic() + WAIT_S
            while not support.all_threads_stopped(self.daemon.process.pid):
                self.assertLess(time.monotonic(), deadline, "the daemon did not stop")
                time.sleep(0.01)
            yield
        finally:
            self.continue_daemon()

    def registered_memory(self, length: int) -> xferd.SharedBuffer:
        memory = self.client.allocate_memory(length)
        self.client.register_memory(memory.address, length)
        return memory

    def start_waiter(self, transfer: xferd.Transfer, moved: list[int]) -> threading.Thread:
        waiter = threading.Thread(target=lambda: moved.append(self.client.wait(transfer, 3600)), daemon=True)
        waiter.start()
        return waiter

    def asleep_on_the_doorbell(self, waiters: list[threading.Thread]) -> int:
        """How many of ``waiters`` are blocked in the kernel on the completion doorbell now (it is marked)."""
        doorbell = self.client._completion_doorbell
        asleep = sum(support.asleep_on_futex(waiter.native_id, doorbell.address) for waiter in waiters)
        return asleep if doorbell.is_marked() else 0

    def await_one_asleep(self, waiters: list[threading.Thread]) -> None:
        """Bounded wait until one of ``waiters`` sleeps on the doorbell; never more than one does."""
        deadline = time.monotonic() + WAIT_S
        while (asleep := self.asleep_on_the_doorbell(waiters)) != 1:
            self.assertEqual(0, asleep, "more than one thread asleep on the completion doorbell")
            self.assertTrue(all(w.is_alive() for w in waiters), "a waiter ended while the daemon was stopped")
            self.assertLess(time.monotonic(), deadline, "no waiter slept on the completion doorbell")
            time.sleep(0.01)

    def test_the_daemon_wakes_a_waiter_asleep_on_the_completion_doorbell(self) -> None:
        memory = self.registered_memory(2 * LENGTH)
        for seed in range(1, 4):
            data = bytes([seed]) * LENGTH
            memory.view[:LENGTH] = data
            moved: list[int] = []
            with self.daemon_stopped():
                transfer = self.client.submit(WRITE, self.client.segment_handle, [memory.address],
                                              [memory.address + LENGTH], [LENGTH])
                waiter = self.start_waiter(transfer, moved)
                self.await_one_asleep([waiter])
            waiter.join(WAIT_S)
            self.assertEqual([LENGTH], moved, f"round {seed}: the daemon's completion did not wake the waiter")
            self.assertEqual(data, bytes(memory.view[LENGTH:2 * LENGTH]))
            self.assertFalse(self.client._completion_doorbell.is_marked(), "the mark is cleared when the wait ends")
            self.assertTrue(self.client._daemon_rings, "the client knows its daemon rings: its sleeps may be longer")

    def test_several_waiting_threads_each_get_their_completion(self) -> None:
        threads = 4
        memory = self.registered_memory(2 * LENGTH * threads)
        moved: list[int] = []
        waiters = []
        with self.daemon_stopped():
            for t in range(threads):
                source = memory.address + 2 * LENGTH * t
                memory.view[2 * LENGTH * t:2 * LENGTH * t + LENGTH] = bytes([t + 1]) * LENGTH
                transfer = self.client.submit(WRITE, self.client.segment_handle, [source], [source + LENGTH],
                                              [LENGTH])
                waiters.append(self.start_waiter(transfer, moved))
            self.await_one_asleep(waiters)
        for waiter in waiters:
            waiter.join(WAIT_S)
        self.assertEqual([LENGTH] * threads, moved)
        for t in range(threads):
            at = 2 * LENGTH * t + LENGTH
            self.assertEqual(bytes([t + 1]) * LENGTH, bytes(memory.view[at:at + LENGTH]))


if __name__ == "__main__":
    unittest.main()
