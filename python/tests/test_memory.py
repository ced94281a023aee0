"""Memory handed to the daemon cannot shrink under its copies (no daemon needed)."""

from __future__ import annotations

import support  # noqa: F401  (puts python/ on the path)
import fcntl
import os
import unittest

from xferd import errors
from xferd.memory import SharedBuffer


class SharedBufferSealTest(unittest.TestCase):
    """A :class:`SharedBuffer` is a memfd sealed with ``F_SEAL_SHRINK``, as the daemon requires."""

    def test_buffer_is_sealed_against_shrinking(self) -> None:
        buffer = SharedBuffer(64 * 1024, "seal-test")
        try:
            seals = fcntl.fcntl(buffer.fd, fcntl.F_GET_SEALS)
            self.assertTrue(seals & fcntl.F_SEAL_SHRINK, f"seals {seals:#x}")
            with self.assertRaises(PermissionError):
                os.ftruncate(buffer.fd, 4096)
            self.assertEqual(64 * 1024, os.fstat(buffer.fd).st_size)
            buffer.write(64 * 1024 - 3, b"end")
            self.assertEqual(b"end", buffer.read(64 * 1024 - 3, 3))
        finally:
            buffer.close()

    def test_refusals_of_unsafe_memory_have_their_own_errors(self) -> None:
        self.assertEqual("MEMORY_NOT_SEALED", errors.ControlErrorCode.describe(15))
        self.assertEqual("BEYOND_END_OF_FILE", errors.ControlErrorCode.describe(16))
        self.assertIsInstance(errors.ControlError.of(15, "not sealed"), errors.MemoryNotSealedError)
        self.assertIsInstance(errors.ControlError.of(16, "too short"), errors.BeyondEndOfFileError)


if __name__ == "__main__":
    unittest.main()
