"""The ring writer and reader against the Agrona layout, on memory this test maps (no daemon)."""

from __future__ import annotations

import support  # puts python/ on the path
import ctypes
import mmap
import os
import random
import struct
import threading
import time
import unittest
from unittest import mock

from xferd import protocol as p
from xferd import rings
from xferd.rings import (COMPLETION_DOORBELL_OFFSET, HEAD_CACHE_OFFSET, HEAD_OFFSET, TAIL_OFFSET, TRAILER_LENGTH,
                         CompletionDoorbell, Doorbell, RingReader, RingView, RingWriter, SubmitRingWriter,
                         _futex_wake)


def ring_buffer(capacity: int) -> bytearray:
    return bytearray(capacity + TRAILER_LENGTH)


def trailer_long(buffer, capacity: int, offset: int) -> int:
    return struct.unpack_from("<q", buffer, capacity + offset)[0]


class Collector:
    def __init__(self) -> None:
        self.records: list[tuple[int, bytes]] = []

    def __call__(self, record_type: int, buffer, offset: int, length: int) -> None:
        self.records.append((record_type, bytes(buffer[offset:offset + length])))


class SubmitRingWriterTest(unittest.TestCase):
    def test_a_record_is_header_then_body_and_the_tail_moves_by_its_aligned_length(self) -> None:
        buffer = ring_buffer(1024)
        writer = SubmitRingWriter(RingView(buffer, 0, len(buffer)))
        index = writer.try_claim(7, 13)
        self.assertEqual(8, index)
        self.assertEqual((-21, 7), struct.unpack_from("<ii", buffer, 0), "claimed: negative length, type")
        writer.buffer[index:index + 13] = b"x" * 13
        writer.commit(index)
        self.assertEqual((21, 7), struct.unpack_from("<ii", buffer, 0))
        self.assertEqual(24, trailer_long(buffer, 1024, TAIL_OFFSET))
        self.assertEqual(b"x" * 13, bytes(buffer[8:21]))

    def test_the_next_record_header_is_zeroed_ahead_so_a_consumer_stops_there(self) -> None:
        buffer = ring_buffer(256)
        buffer[:] = b"\xff" * len(buffer)
        struct.pack_into("<qqq", buffer, 256 + TAIL_OFFSET, 0, 0, 0)
        struct.pack_into("<q", buffer, 256 + HEAD_CACHE_OFFSET, 0)
        struct.pack_into("<q", buffer, 256 + HEAD_OFFSET, 0)
        writer = SubmitRingWriter(RingView(buffer, 0, len(buffer)))
        index = writer.try_claim(1, 8)
        writer.commit(index)
        self.assertEqual(0, struct.unpack_from("<q", buffer, 16)[0])

    def test_a_full_ring_refuses_until_the_consumer_moves_head(self) -> None:
        capacity = 256
        buffer = ring_buffer(capacity)
        view = RingView(buffer, 0, len(buffer))
        writer, reader = SubmitRingWriter(view), RingReader(view)
        written = 0
        while (index := writer.try_claim(1, 24)) >= 0:
            writer.commit(index)
            written += 1
        self.assertEqual(7, written, "32-byte records, one 8-byte header always kept free")
        collector = Collector()
        self.assertEqual(7, reader.read(collector))
        self.assertGreaterEqual(writer.try_claim(1, 24), 0)

    def test_a_record_that_does_not_fit_before_the_end_is_preceded_by_padding(self) -> None:
        capacity = 1024
        buffer = ring_buffer(capacity)
        view = RingView(buffer, 0, len(buffer))
        writer, reader = SubmitRingWriter(view), RingReader(view)
        for _ in range(28):  # 28 x 32 = 896 bytes, 128 left before the end
            writer.commit(writer.try_claim(1, 24))
        reader.read(Collector())
        index = writer.try_claim(2, 124)  # a 136-byte record
        self.assertEqual(8, index, "written at the start of the data area")
        self.assertEqual((128, p.PADDING), struct.unpack_from("<ii", buffer, 896))
        self.assertEqual(896 + 128 + 136, trailer_long(buffer, capacity, TAIL_OFFSET))
        writer.buffer[index:index + 124] = bytes(range(124))
        writer.commit(index)
        collector = Collector()
        self.assertEqual(0, reader.read(collector), "the first read consumes the padding up to the end")
        self.assertEqual(1, reader.read(collector))
        self.assertEqual([(2, bytes(range(124)))], collector.records)

    def test_a_claim_interrupted_at_the_paddings_fence_leaves_the_ring_as_it_was(self) -> None:
        """An exception (a signal handler's) at the fence between the padding's type and its length, on a weakly
        ordered machine: nothing was claimed (tail and open claim unchanged), and the next claim, from the same
        tail, pads and writes as if nothing happened (a tail moved before the padding was published stalled the
        consumer there for good)."""
        capacity = 1024
        buffer = ring_buffer(capacity)
        view = RingView(buffer, 0, len(buffer))
        writer, reader = SubmitRingWriter(view), RingReader(view)
        for _ in range(28):  # 28 x 32 = 896 bytes, 128 left before the end
            writer.commit(writer.try_claim(1, 24))
        reader.read(Collector())
        with mock.patch.object(rings, "_TSO", False), \
                mock.patch.object(rings, "_fence", side_effect=[KeyboardInterrupt("signal handler"), None, None]):
            with self.assertRaises(KeyboardInterrupt):
                writer.try_claim(2, 124)
            self.assertEqual(896, trailer_long(buffer, capacity, TAIL_OFFSET))
            self.assertEqual(-1, writer.open_claim)
            self.assertEqual(0, reader.read(Collector()), "the consumer took something of the interrupted claim")
            index = writer.try_claim(2, 124)
            self.assertEqual(index - 8, writer.open_claim)
            writer.buffer[index:index + 124] = bytes(range(124))
            writer.commit(index)
        self.assertEqual(-1, writer.open_claim)
        collector = Collector()
        reader.read(collector)
        reader.read(collector)
        self.assertEqual([(2, bytes(range(124)))], collector.records)

    def test_bodies_beyond_an_eighth_of_the_capacity_are_refused(self) -> None:
        buffer = ring_buffer(1024)
        writer = SubmitRingWriter(RingView(buffer, 0, len(buffer)))
        self.assertEqual(128, writer.max_message_length)
        with self.assertRaises(ValueError):
            writer.try_claim(1, 129)

    def test_a_ring_must_be_a_power_of_two_plus_the_trailer(self) -> None:
        with self.assertRaises(ValueError):
            RingView(bytearray(1000 + TRAILER_LENGTH), 0, 1000 + TRAILER_LENGTH)


class RingReaderTest(unittest.TestCase):
    def test_consumed_bytes_are_zeroed_and_head_advances(self) -> None:
        capacity = 1024
        buffer = ring_buffer(capacity)
        view = RingView(buffer, 0, len(buffer))
        RingWriter(view).write(p.COMPLETION, p.encode_completion(5, 0, 64))
        collector = Collector()
        self.assertEqual(1, RingReader(view).read(collector))
        self.assertEqual(5, p.decode_completion(collector.records[0][1], 0, 40).request_id)
        self.assertEqual(bytes(capacity), bytes(buffer[:capacity]))
        self.assertEqual(48, trailer_long(buffer, capacity, HEAD_OFFSET))

    def test_a_record_still_being_written_stops_the_reader(self) -> None:
        buffer = ring_buffer(1024)
        view = RingView(buffer, 0, len(buffer))
        writer = SubmitRingWriter(view)
        index = writer.try_claim(1, 16)
        collector = Collector()
        self.assertEqual(0, RingReader(view).read(collector))
        writer.commit(index)
        self.assertEqual(1, RingReader(view).read(collector))

    def test_a_seeded_stream_of_records_crosses_the_end_many_times_intact(self) -> None:
        rng = random.Random(20261201)
        capacity = 4096
        buffer = ring_buffer(capacity)
        view = RingView(buffer, 0, len(buffer))
        writer, reader = SubmitRingWriter(view), RingReader(view)
        sent: list[tuple[int, bytes]] = []
        collector = Collector()
        for n in range(20_000):
            body = rng.randbytes(rng.randrange(0, writer.max_message_length + 1))
            record_type = rng.randrange(1, 5)
            while (index := writer.try_claim(record_type, len(body))) < 0:
                reader.read(collector, rng.randrange(1, 4))
            writer.buffer[index:index + len(body)] = body
            writer.commit(index)
            sent.append((record_type, body))
            if rng.random() < 0.3:
                reader.read(collector)
        reader.read(collector)
        self.assertEqual(len(sent), len(collector.records))
        self.assertEqual(sent, collector.records)
        self.assertGreater(trailer_long(buffer, capacity, TAIL_OFFSET), 50 * capacity)

    def test_writer_and_reader_in_two_processes_over_one_shared_mapping(self) -> None:
        capacity = 1 << 14
        length = capacity + TRAILER_LENGTH
        fd = os.memfd_create("ring-test")
        os.ftruncate(fd, length)
        shared = mmap.mmap(fd, length)
        count = 5000
        pid = os.fork()
        if pid == 0:  # child: the producer
            status = 1
            try:
                writer = SubmitRingWriter(RingView(shared, 0, length))
                for i in range(count):
                    body = struct.pack("<q", i) * (1 + i % 9)
                    while (index := writer.try_claim(1, len(body))) < 0:
                        os.sched_yield()
                    writer.buffer[index:index + len(body)] = body
                    writer.commit(index)
                status = 0
            finally:
                os._exit(status)
        view = RingView(shared, 0, length)
        reader = RingReader(view)
        collector = Collector()
        for _ in range(2_000_000):
            if len(collector.records) == count:
                break
            if reader.read(collector) == 0:
                os.sched_yield()
        _, status = os.waitpid(pid, 0)
        self.assertEqual(0, status)
        self.assertEqual(count, len(collector.records))
        for i, (_type, body) in enumerate(collector.records):
            self.assertEqual(struct.pack("<q", i) * (1 + i % 9), body)
        view.release()
        shared.close()
        os.close(fd)


class SubmitDoorbellFenceTest(unittest.TestCase):
    """Ringing the submit ring's doorbell fences the record's store before the doorbell's load: a lock round trip on
    x86-64 (a locked instruction), the kernel's atomic exchange where a lock is only acquire then release."""

    def ring_once(self) -> int:
        """Ring a doorbell the daemon has not marked; returns what the kernel fence's word holds afterwards."""
        ring = ring_buffer(1024)
        view = RingView(ring, 0, len(ring))
        self.addCleanup(view.release)
        rings._FENCE_WORD.value = 0
        self.assertEqual(0, Doorbell(view, 0).ring())
        return rings._FENCE_WORD.value

    def test_on_a_weakly_ordered_machine_the_fence_is_the_kernels(self) -> None:
        if not rings._futex_usable():
            self.skipTest("futex(2) is unknown or unusable on this machine")
        with mock.patch.object(rings, "_TSO", False):
            self.assertEqual(1, self.ring_once(), "no full barrier from the kernel before the doorbell's load")

    def test_on_x86_64_ringing_an_unmarked_doorbell_makes_no_system_call(self) -> None:
        with mock.patch.object(rings, "_TSO", True):
            self.assertEqual(0, self.ring_once())


class ReleaseFenceTest(unittest.TestCase):
    """Publishing a record fences its body's stores before its length's: the kernel's barrier where stores may be
    reordered (a lock round trip need not be one on arm64), nothing on x86-64."""

    def publish_one(self) -> int:
        """Claim, write and publish a record; returns what the kernel fence's word holds afterwards."""
        ring = ring_buffer(1024)
        view = RingView(ring, 0, len(ring))
        self.addCleanup(view.release)
        writer = SubmitRingWriter(view)
        index = writer.try_claim(7, 8)
        writer.buffer[index:index + 8] = b"body!!!!"
        rings._FENCE_WORD.value = 0
        writer.commit(index)
        self.assertEqual(16, view.i32[0], "the record was not published")
        return rings._FENCE_WORD.value

    def test_on_a_weakly_ordered_machine_a_record_is_published_after_the_kernels_barrier(self) -> None:
        if not rings._futex_usable():
            self.skipTest("futex(2) is unknown or unusable on this machine")
        with mock.patch.object(rings, "_TSO", False):
            self.assertEqual(1, self.publish_one(), "no full barrier from the kernel before the length's store")

    def test_on_x86_64_publishing_makes_no_system_call(self) -> None:
        with mock.patch.object(rings, "_TSO", True):
            self.assertEqual(0, self.publish_one())


class FutexCheckTest(unittest.TestCase):
    """futex(2) proves itself once per process (:func:`rings._futex_usable`), on a word of this process."""

    def test_a_thread_asking_while_another_checks_gets_the_answer_not_a_provisional_no(self) -> None:
        """The check's system calls let other threads run; one that builds its first client meanwhile must not
        read a "no" that was only the check's starting point (it would keep its doorbell unusable for good)."""
        if not rings._futex_usable():
            self.skipTest("futex(2) is unknown or unusable on this machine")
        store_one = rings._store_one
        meanwhile: list[bool] = []
        asked = threading.Event()

        def another_thread_asks_first(address: int) -> int:
            if not asked.is_set():  # once: the second thread's own check, if it runs one, makes the real calls
                asked.set()
                meanwhile.append(rings._futex_usable())
            return store_one(address)

        with mock.patch.object(rings, "_futex_checked", None), \
                mock.patch.object(rings, "_store_one", side_effect=another_thread_asks_first):
            self.assertTrue(rings._futex_usable())
        self.assertEqual([True], meanwhile)


class CompletionDoorbellWordTest(unittest.TestCase):
    """The client's side of the completion doorbell on a shared mapping of its own; this test plays the daemon, which
    rings by storing 0 in the word and waking one thread (PROTOCOL.md 3.7)."""

    HOUR_NS = 3600 * 10**9

    def setUp(self) -> None:
        capacity = 1024
        self.mapping = mmap.mmap(-1, capacity + TRAILER_LENGTH, mmap.MAP_SHARED)
        self.addCleanup(self.mapping.close)  # cleanups run when setUp skips, too; last-in first: the view goes first
        self.view = RingView(self.mapping, 0, len(self.mapping))
        self.addCleanup(self.view.release)
        anchor = ctypes.c_char.from_buffer(self.mapping)
        self.doorbell = CompletionDoorbell(self.view, ctypes.addressof(anchor))
        del anchor
        self.word_at = capacity + COMPLETION_DOORBELL_OFFSET
        if not self.doorbell.usable:
            self.skipTest("futex(2) is unknown or unusable on this machine")

    def word(self) -> int:
        return struct.unpack_from("<i", self.mapping, self.word_at)[0]

    def ring(self) -> None:
        struct.pack_into("<i", self.mapping, self.word_at, 0)
        _futex_wake(self.doorbell.address)

    def sleep_in_a_thread(self) -> threading.Thread:
        sleeper = threading.Thread(target=self.doorbell.sleep, args=(self.HOUR_NS,), daemon=True)
        sleeper.start()
        return sleeper

    def await_asleep(self, sleeper: threading.Thread) -> None:
        """Bounded wait until ``sleeper`` is blocked in the kernel on the doorbell's word."""
        deadline = time.monotonic() + 60
        while not support.asleep_on_futex(sleeper.native_id, self.doorbell.address):
            self.assertLess(time.monotonic(), deadline, "the thread never slept on the word")
            time.sleep(0.01)

    def test_arming_stores_the_mark_in_the_word_and_disarming_clears_it(self) -> None:
        self.assertTrue(self.doorbell.arm())
        self.assertEqual(1, self.word())
        self.assertTrue(self.doorbell.is_marked())
        self.doorbell.disarm()
        self.assertEqual(0, self.word())

    def test_a_ring_between_the_mark_and_the_sleep_is_not_missed(self) -> None:
        self.doorbell.arm()
        self.ring()  # the daemon committed a record after the waiter's last look at the ring
        sleeper = self.sleep_in_a_thread()
        sleeper.join(60)
        self.assertFalse(sleeper.is_alive(), "the sleep did not see the word cleared")

    def test_a_ring_wakes_the_thread_asleep_on_the_word(self) -> None:
        self.doorbell.arm()
        sleeper = self.sleep_in_a_thread()
        self.await_asleep(sleeper)
        self.ring()
        sleeper.join(60)
        self.assertFalse(sleeper.is_alive(), "the ring did not wake the sleeper")

    def test_wake_clears_the_mark_and_wakes_the_sleeper(self) -> None:
        self.doorbell.arm()
        sleeper = self.sleep_in_a_thread()
        self.await_asleep(sleeper)
        self.doorbell.wake()
        sleeper.join(60)
        self.assertFalse(sleeper.is_alive(), "wake() did not wake the sleeper")
        self.assertEqual(0, self.word())

    def test_a_sleep_ends_at_its_bound(self) -> None:
        self.doorbell.arm()
        sleeper = threading.Thread(target=self.doorbell.sleep, args=(1_000_000,), daemon=True)  # nobody rings
        sleeper.start()
        sleeper.join(60)
        self.assertFalse(sleeper.is_alive(), "a millisecond's sleep did not end")
        self.assertTrue(self.doorbell.is_marked(), "a sleep that timed out leaves the mark to its caller")

    def test_a_system_call_that_is_not_futex_leaves_the_doorbell_unusable(self) -> None:
        """Under futex's number another call (getpid here; i386's 202 is getegid32) neither stores the mark nor
        sleeps: a waiter must not rely on it, or its waits become a busy loop."""
        getpid = {"x86_64": 39, "aarch64": 172}.get(os.uname().machine)
        if getpid is None:
            self.skipTest(f"getpid's number is not known on {os.uname().machine}")
        with mock.patch.object(rings, "_SYS_FUTEX", getpid), \
                mock.patch.object(rings, "_futex_checked", None, create=True):
            doorbell = CompletionDoorbell(self.view, self.doorbell.address - self.word_at)
            self.assertFalse(doorbell.usable)
            self.assertFalse(doorbell.arm(), "an unusable doorbell is never armed")
        self.assertEqual(0, self.word())

    def test_a_wait_the_kernel_refuses_leaves_the_doorbell_unusable(self) -> None:
        """A FUTEX_WAIT that fails for another reason than the word, its bound or a signal (EFAULT here, as a seccomp
        filter's EPERM would) did not sleep and will not: the waiter polls instead."""
        self.doorbell.address = 8  # nothing is mapped at the first page
        self.doorbell.sleep(self.HOUR_NS)
        self.assertFalse(self.doorbell.usable)

    def test_a_sleep_ended_by_its_bound_or_by_the_word_keeps_the_doorbell_usable(self) -> None:
        self.doorbell.arm()
        self.doorbell.sleep(1_000)  # ETIMEDOUT
        self.doorbell.disarm()
        self.doorbell.sleep(self.HOUR_NS)  # EAGAIN: the word is not marked
        self.assertTrue(self.doorbell.usable)


if __name__ == "__main__":
    unittest.main()
