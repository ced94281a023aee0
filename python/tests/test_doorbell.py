"""A quiet daemon's intake thread sleeps in futex_waitv on its clients' submit-ring doorbells; the Python client's
next request wakes it (FUTEX_WAKE reports the thread it woke). Whether the daemon sleeps is read from the kernel
(/proc/PID/task/*/syscall), not guessed from timing."""

from __future__ import annotations

import support

import os
import time
import unittest

from xferd.protocol import WRITE

FUTEX_WAITV = 449
ATTEMPTS = 20


def threads_in(pid: int, syscall: int) -> int:
    """How many threads of ``pid`` are blocked in system call ``syscall`` now."""
    count = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/syscall") as f:
                count += f.read().split(" ", 1)[0] == str(syscall)
        except OSError:
            pass  # the thread ended meanwhile
    return count


class DoorbellTest(support.DaemonTestCase):
    def await_asleep(self, client) -> None:
        """Bounded wait until the daemon's intake thread sleeps with this client's doorbell marked."""
        deadline = time.monotonic() + 60
        while not (client._doorbell.is_marked() and threads_in(self.daemon.process.pid, FUTEX_WAITV) == 1):
            self.assertLess(time.monotonic(), deadline, "the daemon's intake thread never slept on the doorbell")
            time.sleep(0.05)

    def test_a_request_wakes_the_sleeping_daemon(self) -> None:
        with self.daemon.connect("doorbell") as client:
            memory = client.allocate_memory(8192)
            client.register_memory(memory.address, 8192)
            segment = client.segment_handle
            for attempt in range(ATTEMPTS):  # the daemon's own bounded wake-up may come between look and submit
                self.await_asleep(client)
                data = bytes([attempt + 1]) * 4096
                memory.view[0:4096] = data
                client.transfer_sync(WRITE, segment, memory.address, memory.address + 4096, 4096)
                self.assertEqual(data, bytes(memory.view[4096:8192]))
                if client._doorbell.woken:
                    break
            self.assertGreater(client._doorbell.woken, 0, f"no request woke the daemon in {ATTEMPTS} tries")


if __name__ == "__main__":
    unittest.main()
