"""Storage regions from Python: a file registered with ``register_file`` (path or descriptor), memory written into
it and read back, every byte checked against the file itself; a file truncated under its region fails typed."""

from __future__ import annotations

import support

import os
import random
import tempfile
import unittest

from xferd import errors
from xferd import protocol as p
from xferd.protocol import READ, WRITE

MIB = 1 << 20


def pattern(seed: int, length: int) -> bytes:
    return random.Random(seed).randbytes(length)


class StorageTest(support.DaemonTestCase):
    def setUp(self) -> None:
        self.owner = self.daemon.connect()
        self.user = self.daemon.connect()
        self.addCleanup(self.owner.close)
        self.addCleanup(self.user.close)
        self.memory = self.user.allocate_memory(4 * MIB)
        self.user.register_memory(self.memory.address, self.memory.length, "cpu:0")
        self.handle = self.user.open_segment(self.owner.segment_name.rsplit("/", 1)[1])
        directory = tempfile.TemporaryDirectory(prefix="xfpy-storage-")
        self.addCleanup(directory.cleanup)
        self.path = os.path.join(directory.name, "kv.bin")
        with open(self.path, "wb") as f:
            f.truncate(4 * MIB)

    def test_memory_to_a_file_and_back_every_byte(self) -> None:
        address = self.owner.register_file(self.path, 0, 4 * MIB, p.REGISTER_FILE_SYNC)
        data = pattern(1, 3 * MIB)
        self.memory.write(0, data)
        self.user.transfer_sync(WRITE, self.handle, self.memory.address, address + 4096, len(data), timeout_s=60)
        with open(self.path, "rb") as f:
            f.seek(4096)
            self.assertEqual(data, f.read(len(data)))
        self.memory.write(0, bytes(len(data)))
        self.user.transfer_sync(READ, self.handle, self.memory.address + 5, address + 4096 + 7, len(data) - 7,
                                timeout_s=60)
        self.assertEqual(data[7:], self.memory.read(5, len(data) - 7))

    def test_a_descriptor_registers_and_stays_the_callers(self) -> None:
        fd = os.open(self.path, os.O_RDWR)
        self.addCleanup(os.close, fd)
        address = self.owner.register_file(fd, MIB, MIB)
        self.memory.write(0, pattern(2, MIB))
        self.user.transfer_sync(WRITE, self.handle, self.memory.address, address, MIB, timeout_s=60)
        self.assertEqual(pattern(2, MIB), os.pread(fd, MIB, MIB))

    def test_a_file_truncated_under_its_region_fails_typed_and_nothing_is_regrown(self) -> None:
        address = self.owner.register_file(self.path, 0, 4 * MIB)
        os.truncate(self.path, MIB)
        with self.assertRaises(errors.StorageTruncatedError):
            self.user.transfer_sync(READ, self.handle, self.memory.address, address, 4096, timeout_s=60)
        with self.assertRaises(errors.StorageTruncatedError):
            self.user.transfer_sync(WRITE, self.handle, self.memory.address, address + 2 * MIB, 4096, timeout_s=60)
        self.assertEqual(MIB, os.path.getsize(self.path))

    def test_a_range_outside_the_file_is_refused_at_registration(self) -> None:
        with self.assertRaises(errors.InvalidArgumentError):
            self.owner.register_file(self.path, 3 * MIB, 2 * MIB)


if __name__ == "__main__":
    unittest.main()
