"""An exception raised by a signal handler (KeyboardInterrupt, a handler that raises) lands on the main thread at
any call. These specifications inject one, deterministically, at each point of the client's completion drain and
submit path where a record is taken off a ring or a map and not yet recorded, or a claim made and not yet published:
the interrupted call raises, and nothing is lost, stalled or counted twice afterwards.

They run against the daemon played by ``test_client_protocol`` (this process, a real Unix socket and real shared
memory), which can hold completions back; the completions a test needs at a given moment it writes into the client's
completion ring itself.
"""

from __future__ import annotations

import support  # puts python/ on the path

import functools
import os
import time
import unittest
from typing import Callable
from unittest import mock

import xferd
from test_client_protocol import KEPT, PlayedDaemon
from xferd import errors
from xferd import protocol as p
from xferd.rings import RingView, RingWriter


class Interrupting:
    """Stands in for ``real``: the ``at``-th call (1-based) raises KeyboardInterrupt, ``before`` or after calling
    ``real``; every other call is ``real``'s."""

    def __init__(self, real: Callable, at: int = 1, before: bool = True) -> None:
        self.real, self.at, self.before, self.calls = real, at, before, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        if self.calls == self.at and self.before:
            raise KeyboardInterrupt(f"signal handler, before call {self.calls}")
        result = self.real(*args, **kwargs)
        if self.calls == self.at:
            raise KeyboardInterrupt(f"signal handler, after call {self.calls}")
        return result

    def __get__(self, instance, owner=None):
        """Bound as the method it stands in for, when it stands in on a class."""
        return self if instance is None else functools.partial(self, instance)


class InterruptionTest(unittest.TestCase):
    def played(self, **kwargs) -> tuple[PlayedDaemon, xferd.Client]:
        daemon = PlayedDaemon(**kwargs)
        self.addCleanup(daemon.close)
        client = xferd.Client(daemon.directory, "interrupted", control_timeout_s=5)
        self.addCleanup(client.close)
        return daemon, client

    def memory(self, length: int) -> int:
        """The address of ``length`` bytes that stay alive as long as this process (the played daemon may copy
        after the test ended)."""
        buffer = bytearray(os.urandom(length))
        KEPT.append(buffer)
        return xferd.memory.address_of(buffer)

    def completion_writer(self, daemon: PlayedDaemon, client: xferd.Client) -> RingWriter:
        """A producer on ``client``'s completion ring, playing the daemon's part while the played daemon holds its
        own completions back."""
        view = RingView(client._rings, 0, daemon.c)
        self.addCleanup(view.release)  # before the client's close unmaps the rings (cleanups run last-in first)
        return RingWriter(view)

    def split_batch(self, daemon: PlayedDaemon, client: xferd.Client, parts: int) -> tuple[xferd.Transfer, list[int]]:
        """A write of ``parts`` records of 10 entries each, whose completions the played daemon holds; and the
        request ids of its records, in order."""
        daemon.hold.set()
        address = self.memory(2 * 640 * parts)
        count = 10 * parts
        transfer = client.submit(p.WRITE, 1, [address + 64 * i for i in range(count)],
                                 [address + 640 * parts + 64 * i for i in range(count)], [64] * count)
        request_ids = sorted(client._pending)
        self.assertEqual(parts, len(request_ids))
        return transfer, request_ids

    def assert_poll_interrupted(self, client: xferd.Client) -> None:
        with self.assertRaises(KeyboardInterrupt):
            client.poll()

    # ---------------------------------------------------------------- the completion drain

    def test_a_split_batch_part_interrupted_before_it_is_recorded_is_recorded_by_the_next_drain(self) -> None:
        """The window of the issue: the drain had taken the part's request off the pending map and not recorded it
        yet. The next drain must record it: the transfer completes (it waited to its timeout before)."""
        daemon, client = self.played(max_batch=10)
        transfer, request_ids = self.split_batch(daemon, client, 2)
        completions = self.completion_writer(daemon, client)
        for request_id in request_ids:
            self.assertTrue(completions.write(p.COMPLETION, p.encode_completion(request_id, 0, 640)))
        with mock.patch.object(xferd.Transfer, "_part_done", Interrupting(xferd.Transfer._part_done)):
            self.assert_poll_interrupted(client)
        self.assertEqual(1280, client.wait(transfer, 5))
        self.assertEqual(0, client._in_flight)

    def test_a_split_batch_part_interrupted_after_it_is_recorded_is_not_counted_twice(self) -> None:
        """The drain recorded part 0 and was interrupted before it let go of the record: the next drain reads it
        again. The transfer is not done until part 1 completes too (a part counted twice would end it early,
        reporting bytes that never arrived)."""
        daemon, client = self.played(max_batch=10)
        transfer, (first, second) = self.split_batch(daemon, client, 2)
        completions = self.completion_writer(daemon, client)
        self.assertTrue(completions.write(p.COMPLETION, p.encode_completion(first, 0, 640)))
        with mock.patch.object(xferd.Transfer, "_part_done",
                               Interrupting(xferd.Transfer._part_done, before=False)) as recorded:
            self.assert_poll_interrupted(client)
            self.assertEqual(1, client.poll(), "the interrupted record is read again")
            self.assertEqual(2, recorded.calls)
        self.assertFalse(transfer.done(), "part 0 was counted twice: the transfer ended before part 1 completed")
        self.assertTrue(completions.write(p.COMPLETION, p.encode_completion(second, 0, 640)))
        self.assertEqual(1280, client.wait(transfer, 5))

    def test_a_one_record_transfer_whose_waiter_wake_up_is_interrupted_still_completes_and_wakes(self) -> None:
        """The drain stored the status and was interrupted setting the waiter's event: the next drain sets it."""
        daemon, client = self.played()
        daemon.hold.set()
        address = self.memory(128)
        transfer = client.submit_one(p.WRITE, 1, address, address + 64, 64)
        (request_id,) = client._pending
        with client._state_lock:
            transfer._event = event = mock.Mock()
        event.set.side_effect = [KeyboardInterrupt("signal handler"), None]
        self.assertTrue(self.completion_writer(daemon, client).write(p.COMPLETION,
                                                                     p.encode_completion(request_id, 0, 64)))
        self.assert_poll_interrupted(client)
        self.assertEqual(1, client.poll())
        self.assertEqual(2, event.set.call_count, "the waiter's event was never set")
        self.assertEqual(64, client.wait(transfer, 5))
        self.assertEqual(0, client._in_flight)

    def test_a_notification_interrupted_while_it_is_read_is_delivered_once(self) -> None:
        """The drain was interrupted reading a NOTIFICATION record: the next drain delivers it (it was lost), once."""
        daemon, client = self.played()
        completions = self.completion_writer(daemon, client)
        self.assertTrue(completions.write(p.NOTIFICATION, p.encode_notification("peer", b"kv ready", 7)))
        with mock.patch.object(p, "decode_notification", Interrupting(p.decode_notification)):
            self.assert_poll_interrupted(client)
        self.assertEqual([p.Notification("peer", b"kv ready", 7)], client.get_notifies())
        self.assertEqual([], client.get_notifies())

    def test_a_drain_interrupted_between_zeroing_and_moving_head_is_finished_by_the_next(self) -> None:
        """Interrupted after the ring was zeroed and before head moved (at the fence of a weakly ordered machine):
        the next drain moves head on, so the ring keeps flowing (it stalled for good: zeroed records at head)."""
        daemon, client = self.played()
        address = self.memory(128)
        daemon.hold.set()
        transfer = client.submit_one(p.WRITE, 1, address, address + 64, 64)
        daemon.hold.clear()
        view = client._completion_view
        deadline = time.monotonic() + 30
        while view.i32[(view.head() & (view.capacity - 1)) >> 2] <= 0:
            self.assertLess(time.monotonic(), deadline, "the played daemon never completed the transfer")
            time.sleep(0.001)
        with mock.patch.object(xferd.client, "_TSO", False), \
                mock.patch.object(xferd.client, "_fence", Interrupting(lambda: None)):
            self.assert_poll_interrupted(client)
            self.assertEqual(64, client.wait(transfer, 5))
            self.assertEqual(0, client.poll())
            self.assertEqual(0, view.i64[view.tail_index] - view.head(), "head never caught up with the records")
            self.assertEqual(64, client.transfer_sync(p.WRITE, 1, address, address + 64, 64, timeout_s=5))

    def test_a_poll_interrupted_as_it_takes_the_poll_lock_lets_go_of_it(self) -> None:
        """Interrupted as the poll lock was taken, before the taker stored the answer: it still lets go, so later
        polls read the ring (with a threading.Lock's acquire(False) the lock stayed held by nobody, and every wait
        ran to its timeout)."""
        daemon, client = self.played()
        address = self.memory(128)

        class Holder(dict):
            """The poll lock's slot, whose first taking is interrupted once it took."""
            takes = 0

            def setdefault(self, key, value):
                taken = super().setdefault(key, value)
                Holder.takes += 1
                if Holder.takes == 1:
                    raise KeyboardInterrupt("signal handler, as the poll lock was taken")
                return taken

        client._poll_holder = Holder()
        self.assert_poll_interrupted(client)
        self.assertEqual({}, dict(client._poll_holder), "the poll lock stayed taken")
        self.assertEqual(64, client.transfer_sync(p.WRITE, 1, address, address + 64, 64, timeout_s=5))

    # ---------------------------------------------------------------- the submit path

    def assert_ring_flows(self, daemon: PlayedDaemon, client: xferd.Client, address: int) -> None:
        """A request after the interruption completes, and every record the played daemon took was answered."""
        daemon.hold.clear()
        self.assertEqual(64, client.transfer_sync(p.WRITE, 1, address, address + 64, 64, timeout_s=5))
        deadline = time.monotonic() + 5
        while client._in_flight and time.monotonic() < deadline:
            client.poll()
        self.assertEqual(0, client._in_flight, "a request stayed in flight: its record was never answered")

    def test_a_single_request_interrupted_after_its_claim_is_voided_not_left_to_stall_the_ring(self) -> None:
        """Interrupted as the claim returned (its index lost): the claimed record is voided, so the daemon answers
        it and reads on (it waited for that record's length for good before)."""
        daemon, client = self.played()
        address = self.memory(128)
        writer = client._writer
        with mock.patch.object(writer, "claim", Interrupting(writer.claim, before=False)):
            with self.assertRaises(KeyboardInterrupt):
                client.submit_one(p.WRITE, 1, address, address + 64, 64)
        self.assert_ring_flows(daemon, client, address)
        self.assertEqual([(p.SUBMIT, 1), (p.SUBMIT, 1)], daemon.records)

    def test_a_batch_record_interrupted_after_its_claim_is_voided_not_left_to_stall_the_ring(self) -> None:
        daemon, client = self.played()
        address = self.memory(256)
        writer = client._writer
        with mock.patch.object(writer, "try_claim", Interrupting(writer.try_claim, before=False)):
            with self.assertRaises(KeyboardInterrupt):
                client.submit(p.WRITE, 1, [address, address + 8], [address + 64, address + 72], [8, 8])
        self.assert_ring_flows(daemon, client, address)
        self.assertEqual([(p.SUBMIT_BATCH, 2), (p.SUBMIT, 1)], daemon.records)

    def test_a_record_interrupted_while_published_is_published_or_voided_once(self) -> None:
        """Interrupted at the fence before the length's store (a weakly ordered machine): voided, published once."""
        daemon, client = self.played()
        address = self.memory(256)
        with mock.patch.object(xferd.rings, "_TSO", False), \
                mock.patch.object(xferd.rings, "_fence", Interrupting(lambda: None)):
            with self.assertRaises(KeyboardInterrupt):
                client.submit(p.WRITE, 1, [address, address + 8], [address + 64, address + 72], [8, 8])
            self.assert_ring_flows(daemon, client, address)
        self.assertEqual([(p.SUBMIT_BATCH, 2), (p.SUBMIT, 1)], daemon.records)

    def test_a_void_interrupted_too_is_finished_by_the_next_submission(self) -> None:
        """A second interruption, inside the void of the first: the next submission voids the record first."""
        daemon, client = self.played()
        address = self.memory(128)
        writer = client._writer
        with mock.patch.object(writer, "claim", Interrupting(writer.claim, before=False)), \
                mock.patch.object(client, "_void", Interrupting(client._void)):
            with self.assertRaises(KeyboardInterrupt):
                client.submit_one(p.WRITE, 1, address, address + 64, 64)
        self.assertGreaterEqual(writer.open_claim, 0)
        self.assert_ring_flows(daemon, client, address)
        self.assertEqual(-1, writer.open_claim)
        self.assertEqual([(p.SUBMIT, 1), (p.SUBMIT, 1)], daemon.records)

    def test_a_request_voided_after_it_was_registered_fails_with_invalid_opcode_and_frees_its_place(self) -> None:
        """Interrupted while its record was written (after the request was registered): the void is answered
        INVALID_OPCODE, which fails that request; nothing stays in flight."""
        daemon, client = self.played()
        address = self.memory(128)
        with mock.patch.object(xferd.client, "_monotonic_ns", Interrupting(time.monotonic_ns)):
            with self.assertRaises(KeyboardInterrupt):
                client.submit_one(p.WRITE, 1, address, address + 64, 64)
        [voided] = client._pending.values()  # registered, voided, not answered yet: nobody polled
        self.assert_ring_flows(daemon, client, address)
        self.assertEqual(errors.TransferStatus.INVALID_OPCODE, voided.status)

    def test_a_request_counts_in_flight_from_before_its_claim_so_its_void_does_too(self) -> None:
        """PROTOCOL.md 7 counts a record from the moment it is written: a claim cut short and voided later must
        not be published while the client sits at max_in_flight without it."""
        daemon, client = self.played()
        address = self.memory(256)
        writer = client._writer
        seen: list[int] = []

        def counting(real: Callable) -> Callable:
            def claim(*args) -> int:
                seen.append(client._in_flight)
                return real(*args)
            return claim

        with mock.patch.object(writer, "claim", counting(writer.claim)), \
                mock.patch.object(writer, "try_claim", counting(writer.try_claim)):
            client.wait(client.submit_one(p.WRITE, 1, address, address + 64, 64), 5)
            client.wait(client.submit(p.WRITE, 1, [address, address + 8], [address + 64, address + 72], [8, 8]), 5)
        self.assertEqual([1, 1], seen)
        self.assertEqual(0, client._in_flight)

    def test_a_claim_that_took_nothing_leaves_nothing_in_flight(self) -> None:
        """The ring full (-1), or an interruption before the claim took the space: the request registered for it
        leaves the pending map again."""
        daemon, client = self.played()
        address = self.memory(256)
        writer = client._writer
        with mock.patch.object(writer, "claim", Interrupting(writer.claim)):
            with self.assertRaises(KeyboardInterrupt):
                client.submit_one(p.WRITE, 1, address, address + 64, 64)
        self.assertEqual(0, client._in_flight)
        with mock.patch.object(writer, "try_claim", Interrupting(writer.try_claim)):
            with self.assertRaises(KeyboardInterrupt):
                client.submit(p.WRITE, 1, [address, address + 8], [address + 64, address + 72], [8, 8])
        self.assertEqual(0, client._in_flight)
        full = iter([-1])  # the first claim finds the ring full, the next ones are real
        with mock.patch.object(writer, "claim", lambda *args: next(full, None) or writer.__class__.claim(writer, *args)):
            self.assertEqual(64, client.wait(client.submit_one(p.WRITE, 1, address, address + 64, 64), 5))
        self.assertEqual(0, client._in_flight)
        self.assertEqual(-1, writer.open_claim)
        self.assert_ring_flows(daemon, client, address)

    # ---------------------------------------------------------------- failing what is pending

    def test_a_daemon_gone_pass_interrupted_midway_is_finished_by_a_waiter(self) -> None:
        """The pass that fails every pending transfer once the daemon is found gone was interrupted after the first:
        the others must still fail with DAEMON_GONE (a waiter waited to its timeout before)."""
        daemon, client = self.played()
        daemon.hold.set()
        address = self.memory(128)
        transfers = [client.submit_one(p.WRITE, 1, address, address + 64, 64) for _ in range(3)]
        with mock.patch.object(xferd.Transfer, "_fail", Interrupting(xferd.Transfer._fail, at=2)):
            with self.assertRaises(KeyboardInterrupt):
                client._mark_gone("found gone")
        for transfer in transfers:
            with self.assertRaises(errors.TransferDaemonGoneError):
                client.wait(transfer, 5)
        self.assertEqual(0, client._in_flight)

    def test_a_close_interrupted_while_it_fails_what_is_pending_is_finished_by_the_next_close(self) -> None:
        daemon, client = self.played()
        daemon.hold.set()
        address = self.memory(128)
        transfers = [client.submit_one(p.WRITE, 1, address, address + 64, 64) for _ in range(3)]
        with mock.patch.object(xferd.Transfer, "_fail", Interrupting(xferd.Transfer._fail, at=2)):
            with self.assertRaises(KeyboardInterrupt):
                client.close()
        client.close()
        self.assertEqual([errors.TransferStatus.DAEMON_GONE] * 3, [t.status for t in transfers])
        self.assertTrue(client._rings.closed)


if __name__ == "__main__":
    unittest.main()
