"""The client refuses a listener on xferd.sock whose uid does not own the daemon directory (nor is root)."""

from __future__ import annotations

import os
import tempfile
import unittest

import support  # noqa: F401  (puts python/ on the path)

from xferd.control import _verify_daemon_identity
from xferd.errors import XferError


class DaemonIdentityTest(unittest.TestCase):
    def setUp(self) -> None:
        self._directory = tempfile.TemporaryDirectory()
        self.path = os.path.join(self._directory.name, "xferd.sock")
        self.owner = os.stat(self._directory.name).st_uid

    def tearDown(self) -> None:
        self._directory.cleanup()

    def test_accepts_the_directory_owner(self) -> None:
        _verify_daemon_identity(self.path, self.owner)

    def test_accepts_root(self) -> None:
        _verify_daemon_identity(self.path, 0)

    def test_refuses_another_uid_naming_both(self) -> None:
        other = self.owner + 4242
        with self.assertRaises(XferError) as raised:
            _verify_daemon_identity(self.path, other)
        self.assertIn(f"runs as uid {other}", str(raised.exception))
        self.assertIn(f"belongs to uid {self.owner}", str(raised.exception))


if __name__ == "__main__":
    unittest.main()
