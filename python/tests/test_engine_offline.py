"""mooncake.engine.TransferEngine without a daemon: argument types, return codes, timeouts, notify encoding, and the
CUDA binding's failure when there is no usable CUDA."""

from __future__ import annotations

import support  # noqa: F401  (puts python/ on the path)

import os
import tempfile
import unittest
from unittest import mock

import xferd
from mooncake import engine as mc
from mooncake.engine import TransferEngine, TransferNotify, TransferOpcode
from xferd.cuda import CudaRuntime
from xferd.errors import CudaUnavailableError


class ArgumentTypesTest(unittest.TestCase):
    """Wrong types raise TypeError before anything else happens, as pybind11's conversions do."""

    def setUp(self) -> None:
        self.engine = TransferEngine()

    def test_addresses_and_lengths_must_be_unsigned_integers(self) -> None:
        for bad in ("0x1000", 1.0, None, -1, 1 << 64, [1]):
            with self.subTest(bad=bad), self.assertRaises(TypeError):
                self.engine.transfer_sync_write("127.0.0.1:15000", bad, 0, 8)
            with self.subTest(length=bad), self.assertRaises(TypeError):
                self.engine.transfer_sync_read("127.0.0.1:15000", 0, 0, bad)

    def test_batches_must_be_sequences_of_integers(self) -> None:
        for bad in (5, "abc", b"abc", [1.5], [None], [-3]):
            with self.subTest(bad=bad), self.assertRaises(TypeError):
                self.engine.batch_transfer_sync_write("127.0.0.1:15000", bad, [0], [8])
        with self.assertRaises(TypeError):
            self.engine.batch_register_memory([1], "8")
        with self.assertRaises(TypeError):
            self.engine.get_batch_transfer_status(7)

    def test_session_opcode_and_notify_types(self) -> None:
        with self.assertRaises(TypeError):
            self.engine.transfer_sync_write(15000, 0, 0, 8)
        with self.assertRaises(TypeError):
            self.engine.transfer_sync("127.0.0.1:15000", 0, 0, 8, "write")
        with self.assertRaises(TypeError):
            self.engine.transfer_sync("127.0.0.1:15000", 0, 0, 8, TransferOpcode.Write, notify="hello")
        with self.assertRaises(TypeError):
            self.engine.initialize("127.0.0.1", "P2PHANDSHAKE", 1, "")

    def test_numpy_style_integers_are_accepted_through_index(self) -> None:
        class Index:
            def __index__(self) -> int:
                return 4096

        with self.assertLogs("mooncake.xferd", "ERROR"):
            self.assertEqual(-1, self.engine.transfer_sync_write("127.0.0.1:15000", Index(), Index(), Index()),
                             "accepted, then -1 because the engine is not initialized")


class ReturnCodesTest(unittest.TestCase):
    def test_calls_before_initialize_fail_with_a_log_line(self) -> None:
        engine = TransferEngine()
        with self.assertLogs("mooncake.xferd", "ERROR") as logs:
            self.assertEqual(-1, engine.transfer_sync_write("127.0.0.1:15000", 0, 0, 8))
            self.assertEqual(0, engine.batch_transfer_async_write("127.0.0.1:15000", [0], [0], [8]))
            self.assertEqual(0, engine.transfer_submit_write("127.0.0.1:15000", 0, 0, 8))
            self.assertEqual(-1, engine.register_memory(4096, 8))
            self.assertEqual(0, engine.allocate_managed_buffer(4096))
        self.assertIn("before initialize", logs.output[0])
        self.assertEqual(-1, engine.get_rpc_port())
        self.assertEqual([], engine.get_notifies())

    def test_initialize_without_a_daemon_fails_naming_the_directory(self) -> None:
        with tempfile.TemporaryDirectory() as empty, mock.patch.dict(os.environ, {"XFERD_DIR": empty}):
            with self.assertLogs("mooncake.xferd", "ERROR") as logs:
                self.assertEqual(-1, TransferEngine().initialize("127.0.0.1", "P2PHANDSHAKE", "tcp", ""))
        self.assertIn(empty, logs.output[0])
        self.assertIn("DaemonGoneError", logs.output[0])

    def test_a_protocol_xferd_does_not_serve_is_refused(self) -> None:
        with self.assertLogs("mooncake.xferd", "ERROR") as logs:
            self.assertEqual(-1, TransferEngine().initialize("127.0.0.1", "P2PHANDSHAKE", "nvlink", ""))
        self.assertIn("nvlink", logs.output[0])


class TimeoutTest(unittest.TestCase):
    def test_mc_transfer_timeout_is_read_as_mooncake_reads_it(self) -> None:
        cases = {None: 30, "40": 40, "2": 5, "abc": 5, "12s": 12, "-7": 5}
        for raw, expected in cases.items():
            environment = {} if raw is None else {"MC_TRANSFER_TIMEOUT": raw}
            with self.subTest(raw=raw), mock.patch.dict(os.environ, environment, clear=False):
                if raw is None:
                    os.environ.pop("MC_TRANSFER_TIMEOUT", None)
                self.assertEqual(expected, TransferEngine()._timeout_s)


class SessionsAndNotifiesTest(unittest.TestCase):
    def test_session_syntax(self) -> None:
        for good in ("127.0.0.1:15001", "decode-host:1", "[fe80::1]:17000", "[::1]:65535"):
            self.assertIsNotNone(mc._SESSION.match(good), good)
        for bad in ("127.0.0.1", "127.0.0.1:", ":15000", "127.0.0.1:port", "a:1:2", "h:123456", "h/x:1", "h: 1"):
            self.assertIsNone(mc._SESSION.match(bad), bad)

    def test_host_of_a_local_hostname(self) -> None:
        self.assertEqual("10.0.0.1", mc._host_of("10.0.0.1"))
        self.assertEqual("10.0.0.1", mc._host_of("10.0.0.1:12345"))
        self.assertEqual("[::1]", mc._host_of("[::1]:12345"))

    def test_a_notify_travels_as_name_nul_message(self) -> None:
        notify = TransferNotify("req-17", "done:3")
        wire = mc._encode_notify(notify)
        self.assertEqual(b"req-17\0done:3", wire)
        self.assertEqual(notify, mc._decode_notify(xferd.Notification("h:1/a", wire)))
        self.assertEqual(TransferNotify("h:1/a", "plain"), mc._decode_notify(xferd.Notification("h:1/a", b"plain")))

    def test_opcodes_and_classes_as_in_mooncake(self) -> None:
        self.assertEqual(0, TransferOpcode.Read)
        self.assertEqual(1, TransferOpcode.Write)
        self.assertIs(TransferEngine.TransferOpcode, TransferOpcode)
        notify = TransferNotify(name="n", msg="m")
        self.assertEqual(("n", "m"), (notify.name, notify.msg))

    def test_bytes_helpers_copy_local_memory(self) -> None:
        engine = TransferEngine()
        target = bytearray(16)
        address = xferd.memory.address_of(target)
        self.assertEqual(0, engine.write_bytes_to_buffer(address, b"0123456789", 10))
        self.assertEqual(b"0123456789", engine.read_bytes_from_buffer(address, 10))
        with self.assertLogs("mooncake.xferd", "ERROR"):
            self.assertEqual(-1, engine.write_bytes_to_buffer(address, b"short", 10))


class CudaBindingTest(unittest.TestCase):
    """No GPU here: what a process without a usable CUDA gets. The GPU path itself is not exercised here."""

    def test_a_missing_libcudart_is_a_clear_cuda_unavailable_error(self) -> None:
        cuda = CudaRuntime(names=["libcudart-not-here.so.99"])
        self.assertIn("libcudart-not-here.so.99", cuda.availability())
        with self.assertRaises(CudaUnavailableError) as raised:
            cuda.export(0x7f0000000000, 4096)
        self.assertIn("libcudart not loadable", str(raised.exception))

    def test_the_default_binding_says_why_cuda_is_unusable_or_works(self) -> None:
        reason = xferd.cuda.runtime().availability()
        if reason is not None:
            self.assertTrue(reason.startswith(("libcudart not loadable", "cudaGetDeviceCount", "no CUDA device")),
                            reason)


if __name__ == "__main__":
    unittest.main()
