"""No completion's wake-up is lost: specifications of the moments where a waiter's event may be cleared, skipped or
overwritten between a look and a store (the client's lock-free hand-shakes, which rely on the GIL). Each moment is
staged deterministically: a stand-in runs the other thread's step exactly where it could land.
"""

from __future__ import annotations

import support  # puts python/ on the path

import importlib
import sys
import threading
import unittest
from unittest import mock

import xferd
from test_client_protocol import PlayedDaemon
from xferd import errors
from xferd.client import Wake


class EventCompletedWhileCleared(threading.Event):
    """An event whose ``clear`` first runs ``completion`` (a drain storing the status and setting this event), as a
    drain on another thread may, right after the dozer looked and saw the transfer not done."""

    def __init__(self, completion) -> None:
        super().__init__()
        self.completion = completion

    def clear(self) -> None:
        completion, self.completion = self.completion, None
        if completion is not None:
            completion()
        super().clear()


class WakeUpTest(unittest.TestCase):
    def played(self) -> xferd.Client:
        daemon = PlayedDaemon()
        self.addCleanup(daemon.close)
        client = xferd.Client(daemon.directory, "wake-ups", control_timeout_s=5)
        self.addCleanup(client.close)
        return client

    def test_a_completion_that_lands_between_a_dozers_look_and_its_clear_leaves_the_event_set(self) -> None:
        """Two waiters share the transfer's event: the second may be about to wait on it, and must not sleep to the
        net because the first cleared the completion's wake."""
        client = self.played()
        transfer = xferd.Transfer(xferd.WRITE, 1, 64, 1)

        def completion() -> None:
            transfer.status = errors.TransferStatus.OK
            event.set()

        event = EventCompletedWhileCleared(completion)
        transfer._event = event
        client._watching = False  # nobody watches: the dozer does not sleep, it goes straight to its clear
        client._doze(event, transfer.done, 0, None)
        self.assertTrue(transfer.done())
        self.assertTrue(event.is_set(), "the completion's wake was erased")

    def test_a_watcher_that_leaves_wakes_a_dozer_whose_completion_wake_was_cut_short(self) -> None:
        """A drain (or a daemon-gone pass) stored the first dozer's status and was interrupted before its set: the
        hand-off wakes it too, as well as the next dozer, which takes the watch."""
        client = self.played()
        done_unwoken, watch_next, waits_behind = threading.Event(), threading.Event(), threading.Event()
        client._dozing[object()] = (done_unwoken, lambda: True)
        client._dozing[object()] = (watch_next, lambda: False)
        client._dozing[object()] = (waits_behind, lambda: False)
        client._hand_off()
        self.assertTrue(done_unwoken.is_set(), "a done dozer sleeps on to the net")
        self.assertTrue(watch_next.is_set(), "nobody takes the watch")
        self.assertFalse(waits_behind.is_set(), "one dozer takes the watch, the others doze on")

    def test_a_daemon_gone_pass_cut_short_before_its_wake_is_finished_with_the_wake(self) -> None:
        """The pass stored the reason and was interrupted before it woke the doorbell's watcher: the pass that
        finishes it wakes the watcher."""
        client = self.played()
        client._gone = "found gone"  # the interrupted pass's first store
        with mock.patch.object(client._completion_doorbell, "wake") as wake:
            client._finish_failing()
        wake.assert_called_once_with()

    def test_a_lock_free_daemon_gone_pass_overtaken_by_a_close_after_its_look_still_finishes(self) -> None:
        """The pass (no lock held) saw the client open; a close() on another thread lands before its wake and unmaps
        the doorbell: the pass's wake finds the mapping released and the pass still ends quietly (close() woke the
        doorbell itself)."""
        client = self.played()
        client._gone = "found gone"
        doorbell = client._completion_doorbell

        def close_lands_first() -> None:
            del doorbell.wake  # close() and the pass's own wake use the real one
            client.close()
            doorbell.wake()

        doorbell.wake = close_lands_first
        client._finish_failing()
        self.assertTrue(client._closed)

    def test_a_split_batch_failed_while_its_last_part_is_recorded_keeps_the_failure_a_waiter_saw(self) -> None:
        """A lock-free daemon-gone pass (:meth:`Client._finish_failing`) fails the transfer while the drain works
        out its outcome from the parts: the drain must not overwrite DAEMON_GONE with OK afterwards."""
        transfer = xferd.Transfer(xferd.WRITE, 2, 128, 2)

        class StatusFailingOnCompare(int):
            """Part 0's OK status; comparing it is where the other thread's pass runs."""

            def __ne__(self, other: object) -> bool:
                transfer._fail(errors.TransferStatus.DAEMON_GONE)
                return int(self) != other

        transfer._part_done(0, StatusFailingOnCompare(errors.TransferStatus.OK), 64)
        transfer._part_done(1, errors.TransferStatus.OK, 64)
        self.assertEqual(errors.TransferStatus.DAEMON_GONE, transfer.status)
        self.assertEqual(0, transfer.bytes_transferred)


class WakeTest(unittest.TestCase):
    """:class:`xferd.client.Wake`, the waiters' event: every step one C call, so an interruption never leaves a lock
    held that a later ``set()`` would block on."""

    def test_a_set_before_the_wait_makes_it_return_at_once_and_stays_set(self) -> None:
        wake = Wake()
        wake.set()
        self.assertTrue(wake.wait(0))
        self.assertTrue(wake.is_set(), "the wait took the wake-up from the other waiters")

    def test_a_wait_that_times_out_changes_nothing(self) -> None:
        wake = Wake()
        self.assertFalse(wake.wait(0.01))
        self.assertFalse(wake.is_set())
        wake.set()
        self.assertTrue(wake.wait(0))

    def test_one_set_wakes_every_waiter(self) -> None:
        wake, woken = Wake(), []
        waiters = [threading.Thread(target=lambda: woken.append(wake.wait(10))) for _ in range(2)]
        for waiter in waiters:
            waiter.start()
        wake.set()
        for waiter in waiters:
            waiter.join(15)
        self.assertEqual([True, True], woken)

    def test_a_wait_interrupted_between_its_acquire_and_its_release_leaves_set_working(self) -> None:
        wake = Wake()
        wake.set()
        wake._lock.acquire()  # the interrupted waiter's acquire; its release never runs (the wake-up is lost)
        wake.set()  # must neither block nor raise
        self.assertTrue(wake.is_set())
        self.assertTrue(wake.wait(0))

    def test_clear_unsets_it_without_blocking(self) -> None:
        wake = Wake()
        wake.set()
        wake.clear()
        wake.clear()
        self.assertFalse(wake.is_set())


class GilTest(unittest.TestCase):
    def test_importing_on_an_interpreter_running_without_the_gil_warns_that_the_client_needs_it(self) -> None:
        with mock.patch.object(sys, "_is_gil_enabled", lambda: False, create=True), \
                self.assertWarnsRegex(RuntimeWarning, "without the GIL"):
            importlib.reload(xferd)

    def test_importing_with_the_gil_is_quiet(self) -> None:
        with mock.patch.object(sys, "_is_gil_enabled", lambda: True, create=True), \
                mock.patch("warnings.warn") as warn:
            importlib.reload(xferd)
        warn.assert_not_called()


if __name__ == "__main__":
    unittest.main()
