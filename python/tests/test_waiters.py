"""Several threads waiting on one client: one watches the completion doorbell (it holds the poll lock and drains when
the daemon rings), the others doze on their transfers' events until that drain sets them, and a watcher that leaves
hands the watch on. Against the daemon played by ``test_client_protocol``, which never rings the doorbell: these
tests ring it themselves, as the daemon does after committing a record (clear the word, FUTEX_WAKE), after writing
the completions they choose into the client's ring. Every sleep's bound (doorbell and dozing net) is an hour, so only
a ring, a drain or a hand-off ends one within the tests' bounded waits.
"""

from __future__ import annotations

import support  # puts python/ on the path

import os
import random
import threading
import time
import unittest
from unittest import mock

import xferd
from test_client_protocol import KEPT, PlayedDaemon, needs_futex
from xferd import protocol as p
from xferd.rings import RingView, RingWriter

HOUR_NS = 3600 * 10**9


def voluntary_switches(tid: int) -> int:
    """How many times thread ``tid`` of this process has gone to sleep (its voluntary context switches)."""
    with open(f"/proc/self/task/{tid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("voluntary_ctxt_switches"))


@needs_futex
class WaitersTest(unittest.TestCase):
    def setUp(self) -> None:
        self.daemon = PlayedDaemon()
        self.addCleanup(self.daemon.close)
        self.client = xferd.Client(self.daemon.directory, "waiters", control_timeout_s=5)
        self.addCleanup(self.client.close)
        self.client._doorbell_sleep_ns = self.client._ringing_daemon_sleep_ns = HOUR_NS
        patch = mock.patch.object(xferd.client, "_LIVENESS_CHECK_NS", HOUR_NS)  # the dozing net
        patch.start()
        self.addCleanup(patch.stop)
        view = RingView(self.client._rings, 0, self.daemon.c)
        self.addCleanup(view.release)  # before the client's close unmaps the rings (cleanups run last-in first)
        self.completions = RingWriter(view)
        memory = bytearray(os.urandom(4096))
        KEPT.append(memory)
        self.address = xferd.memory.address_of(memory)
        self.daemon.hold.set()

    def waiter(self, index: int) -> tuple[xferd.Transfer, threading.Thread, list[object]]:
        """A held 64-byte write, and a started thread waiting for it whose list gets the wait's outcome."""
        transfer = self.client.submit_one(p.WRITE, 1, self.address + 128 * index, self.address + 128 * index + 64, 64)
        outcome: list[object] = []

        def wait() -> None:
            try:
                outcome.append(self.client.wait(transfer, 600))
            except BaseException as ex:  # noqa: BLE001 - the test looks at it
                outcome.append(ex)

        thread = threading.Thread(target=wait, daemon=True)
        thread.start()
        return transfer, thread, outcome

    def watching(self, thread: threading.Thread) -> bool:
        """Whether ``thread`` is asleep on the completion doorbell."""
        return support.asleep_on_futex(thread.native_id, self.client._completion_doorbell.address)

    def dozing(self, transfer: xferd.Transfer) -> bool:
        """Whether a waiter of ``transfer`` is listed as dozing on its event."""
        event = transfer._event
        return event is not None and any(dozer is event for dozer, _ in list(self.client._dozing.values()))

    def one_watches_one_dozes(self, first, second) -> tuple[tuple, tuple]:
        """Bounded wait until one of two waiters watches the doorbell and the other dozes: (watcher, dozer)."""
        deadline = time.monotonic() + 60
        while True:
            for watcher, dozer in ((first, second), (second, first)):
                if self.watching(watcher[1]) and self.dozing(dozer[0]):
                    return watcher, dozer
            self.assertLess(time.monotonic(), deadline, "the waiters never settled: one watching, one dozing")
            time.sleep(0.01)

    def complete_and_ring(self, transfer: xferd.Transfer) -> None:
        """Write ``transfer``'s completion into the client's ring and ring the doorbell, as the daemon does."""
        (request_id,) = [rid for rid, entry in self.client._pending.items() if entry is transfer]
        self.assertTrue(self.completions.write(p.COMPLETION, p.encode_completion(request_id, 0, 64)))
        self.client._completion_doorbell.wake()

    def test_a_dozing_waiter_sleeps_until_woken_not_every_millisecond(self) -> None:
        """While another thread watches the doorbell, a dozing waiter does not wake (it woke every millisecond)."""
        watcher, dozer = self.one_watches_one_dozes(self.waiter(0), self.waiter(1))
        before = voluntary_switches(dozer[1].native_id)
        time.sleep(0.5)
        self.assertTrue(self.dozing(dozer[0]) and self.watching(watcher[1]))
        self.assertLess(voluntary_switches(dozer[1].native_id) - before, 10, "the dozing waiter woke in 0.5 s")

    def test_the_watchers_drain_wakes_a_dozing_waiter_whose_transfer_completed(self) -> None:
        watcher, dozer = self.one_watches_one_dozes(self.waiter(0), self.waiter(1))
        self.complete_and_ring(dozer[0])
        dozer[1].join(60)
        self.assertEqual([64], dozer[2])
        self.assertTrue(watcher[1].is_alive())
        deadline = time.monotonic() + 60
        while not self.watching(watcher[1]):  # and the watcher, its own transfer pending, goes back to the doorbell
            self.assertLess(time.monotonic(), deadline, "the watcher never slept on the doorbell again")
            time.sleep(0.01)

    def test_a_watcher_that_leaves_hands_the_watch_to_a_dozing_waiter(self) -> None:
        """The watcher's transfer completes and its wait returns: the dozing waiter is woken to watch in its place
        (else it would doze to its net, an hour here, with nobody to drain for it)."""
        watcher, dozer = self.one_watches_one_dozes(self.waiter(0), self.waiter(1))
        self.complete_and_ring(watcher[0])
        watcher[1].join(60)
        self.assertEqual([64], watcher[2])
        deadline = time.monotonic() + 60
        while not self.watching(dozer[1]):
            self.assertLess(time.monotonic(), deadline, "the dozing waiter never took the watch")
            time.sleep(0.01)
        self.complete_and_ring(dozer[0])
        dozer[1].join(60)
        self.assertEqual([64], dozer[2])

    def test_many_waiters_each_get_their_own_completion(self) -> None:
        """Eight waiters, completed one at a time in a shuffled order, each ring a wake: every wait returns its own
        transfer's outcome (no wake lost in a hand-off)."""
        waiters = [self.waiter(i) for i in range(8)]
        deadline = time.monotonic() + 60
        while sum(self.dozing(t) for t, _, _ in waiters) < 7:
            self.assertLess(time.monotonic(), deadline, "the waiters never settled")
            time.sleep(0.01)
        order = list(range(8))
        random.Random(8).shuffle(order)
        for i in order:
            self.complete_and_ring(waiters[i][0])
            waiters[i][1].join(60)
            self.assertEqual([64], waiters[i][2], f"waiter {i}")


if __name__ == "__main__":
    unittest.main()
