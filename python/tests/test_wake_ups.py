"""No completion's wake-up is lost: specifications of the moments where a waiter's event may be cleared, skipped or
overwritten between a look and a store (the client's lock-free hand-shakes, which rely on the GIL). Each moment is
staged deterministically: a stand-in runs the other thread's step exactly where it could land.
"""

from __future__ import annotations

import support  # puts python/ on the path

import threading
import unittest

import xferd
from test_client_protocol import PlayedDaemon
from xferd import errors


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


if __name__ == "__main__":
    unittest.main()
