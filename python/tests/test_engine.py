"""mooncake.engine.TransferEngine against a real daemon: two engines in this process, each with its own port."""

from __future__ import annotations

import support

import mmap
import os
import random
import threading
import time
import unittest
from unittest import mock

from mooncake import engine as mc
from mooncake.engine import TransferEngine, TransferNotify, TransferOpcode
from xferd.memory import address_of

MIB = 1 << 20


class EngineTest(support.DaemonTestCase):
    def setUp(self) -> None:
        patcher = mock.patch.dict(os.environ, {"XFERD_DIR": self.daemon.directory, "MC_TRANSFER_TIMEOUT": "10"})
        patcher.start()
        self.addCleanup(patcher.stop)
        self.prefill = self._engine()
        self.decode = self._engine()
        self.session = f"127.0.0.1:{self.decode.get_rpc_port()}"
        self.local = mmap.mmap(-1, 8 * MIB)   # anonymous memory, as a torch CPU tensor
        self.remote = mmap.mmap(-1, 8 * MIB)
        self.local_address = address_of(self.local)
        self.remote_address = address_of(self.remote)
        if self.prefill.register_memory(self.local_address, 8 * MIB) != 0:
            self.fail("daemon refused host memory by address: REGISTER_PROCESS_MEMORY (branch engine) missing?")
        self.assertEqual(0, self.decode.register_memory(self.remote_address, 8 * MIB, "cpu:0"))

    def _engine(self) -> TransferEngine:
        engine = TransferEngine()
        rc = engine.initialize("127.0.0.1", "P2PHANDSHAKE", "tcp", "")
        if rc != 0 or engine.get_rpc_port() <= 0:
            engine.close()
            self.fail("daemon gives engines no RPC port: per-segment ports (branch engine) missing")
        self.addCleanup(engine.close)
        return engine

    def fill(self, offset: int, seed: int, length: int) -> bytes:
        data = random.Random(seed).randbytes(length)
        self.local[offset:offset + length] = data
        return data

    def test_every_engine_has_its_own_listening_port(self) -> None:
        ports = {self.prefill.get_rpc_port(), self.decode.get_rpc_port()}
        self.assertEqual(2, len(ports))
        import socket
        for port in ports:
            with socket.create_connection(("127.0.0.1", port), timeout=5):
                pass

    def test_sync_write_and_read(self) -> None:
        data = self.fill(0, 1, MIB)
        self.assertEqual(0, self.prefill.transfer_sync_write(self.session, self.local_address, self.remote_address,
                                                             MIB))
        self.assertEqual(data, self.remote[:MIB])
        self.remote[2 * MIB:2 * MIB + 4096] = b"r" * 4096
        self.assertEqual(0, self.prefill.transfer_sync_read(self.session, self.local_address + MIB,
                                                            self.remote_address + 2 * MIB, 4096))
        self.assertEqual(b"r" * 4096, self.local[MIB:MIB + 4096])

    def test_each_call_is_one_flow_with_a_trace_id_of_its_own(self) -> None:
        client = self.prefill._client
        assert client is not None
        with mock.patch.object(client, "submit", wraps=client.submit) as submit:
            for _ in range(2):
                self.assertEqual(0, self.prefill.batch_transfer_sync_write(
                    self.session, [self.local_address, self.local_address + 4096],
                    [self.remote_address, self.remote_address + 4096], [4096, 4096]))
        traces = [call.kwargs["trace_id"] for call in submit.call_args_list]
        self.assertEqual(2, len(traces))
        self.assertNotIn(0, traces, "trace id 0 would make every request of the process one flow")
        self.assertNotEqual(traces[0], traces[1])

    def test_a_batch_of_4096_descriptors(self) -> None:
        block, count = 1024, 4096
        data = self.fill(0, 2, block * count)
        targets = list(range(count))
        random.Random(3).shuffle(targets)
        rc = self.prefill.batch_transfer_sync_write(
            self.session, [self.local_address + i * block for i in range(count)],
            [self.remote_address + t * block for t in targets], [block] * count)
        self.assertEqual(0, rc)
        for i in range(0, count, 61):
            self.assertEqual(data[i * block:(i + 1) * block], self.remote[targets[i] * block:(targets[i] + 1) * block])

    def test_async_batches_and_single_submits(self) -> None:
        self.fill(0, 4, 64 * 1024)
        ids = [self.prefill.batch_transfer_async_write(self.session, [self.local_address + i * 4096],
                                                       [self.remote_address + i * 4096], [4096]) for i in range(8)]
        self.assertNotIn(0, ids)
        self.assertEqual(0, self.prefill.get_batch_transfer_status(ids))
        batch = self.prefill.transfer_submit_write(self.session, self.local_address + 8 * 4096,
                                                   self.remote_address + 8 * 4096, 4096)
        self.assertNotEqual(0, batch)
        deadline = time.monotonic() + 10
        status = 0
        while status == 0 and time.monotonic() < deadline:
            status = self.prefill.transfer_check_status(batch)
        self.assertEqual(1, status)
        self.assertEqual(self.local[:9 * 4096], self.remote[:9 * 4096])
        read = self.prefill.batch_transfer_async_read(self.session, [self.local_address + MIB],
                                                      [self.remote_address], [4096])
        self.assertEqual(0, self.prefill.get_batch_transfer_status([read]))

    def test_notifications_carry_name_and_message(self) -> None:
        self.fill(0, 5, 4096)
        notify = TransferNotify("req-7", "kv ready")
        self.assertEqual(0, self.prefill.transfer_sync(self.session, self.local_address, self.remote_address, 4096,
                                                       TransferOpcode.Write, notify))
        self.assertEqual(0, self.prefill.batch_transfer_sync(self.session, [self.local_address],
                                                             [self.remote_address], [64], TransferOpcode.Write,
                                                             TransferNotify("req-8", "")))
        received: list[TransferNotify] = []
        deadline = time.monotonic() + 10
        while len(received) < 2 and time.monotonic() < deadline:
            received += self.decode.get_notifies()
            time.sleep(0.01)
        self.assertEqual([notify, TransferNotify("req-8", "")], received)

    def test_typed_failures_are_return_codes_with_the_status_in_the_log(self) -> None:
        cases = [
            ("TARGET_RANGE_NOT_REGISTERED", lambda: self.prefill.transfer_sync_write(
                self.session, self.local_address, self.remote_address + 8 * MIB - 16, 64)),
            ("LOCAL_RANGE_NOT_REGISTERED", lambda: self.prefill.transfer_sync_write(
                self.session, self.local_address + 8 * MIB, self.remote_address, 64)),
            ("127.0.0.1:1", lambda: self.prefill.transfer_sync_write("127.0.0.1:1", self.local_address,
                                                                   self.remote_address, 64)),
            ("malformed session", lambda: self.prefill.transfer_sync_write("127.0.0.1", self.local_address,
                                                                         self.remote_address, 64)),
            ("malformed session", lambda: self.prefill.transfer_sync_write("127.0.0.1:99999", self.local_address,
                                                                         self.remote_address, 64)),
            ("INVALID_LENGTH", lambda: self.prefill.transfer_sync_write(self.session, self.local_address,
                                                                      self.remote_address, 0)),
            ("different size", lambda: self.prefill.batch_transfer_sync_write(self.session, [self.local_address],
                                                                            [], [64])),
        ]
        for expected, call in cases:
            with self.subTest(expected=expected), self.assertLogs("mooncake.xferd", "ERROR") as logs:
                started = time.monotonic()
                self.assertEqual(-1, call())
                self.assertLess(time.monotonic() - started, 15)
            self.assertIn(expected, "\n".join(logs.output))
        with self.assertLogs("mooncake.xferd", "ERROR"):
            self.assertEqual(0, self.prefill.batch_transfer_async_write("127.0.0.1:1", [self.local_address],
                                                                        [self.remote_address], [64]))
        with self.assertRaises(TypeError):
            self.prefill.transfer_sync_write(self.session, self.local_address, self.remote_address, -64)
        self.assertEqual(0, self.prefill.transfer_sync_write(self.session, self.local_address, self.remote_address,
                                                             64), "the daemon keeps serving after bad input")

    def test_registration_return_codes(self) -> None:
        extra = mmap.mmap(-1, MIB)
        address = address_of(extra)
        with self.assertLogs("mooncake.xferd", "ERROR"):
            self.assertEqual(-1, self.prefill.register_memory(self.local_address + 4096, 4096), "overlap")
            self.assertEqual(-1, self.prefill.unregister_memory(address), "never registered")
        self.assertEqual(0, self.prefill.batch_register_memory([address, address + MIB // 2], [MIB // 2, MIB // 2]))
        self.assertEqual(0, self.prefill.batch_unregister_memory([address, address + MIB // 2]))
        with self.assertLogs("mooncake.xferd", "ERROR"):
            self.assertEqual(-1, self.prefill.batch_register_memory([address, self.local_address], [4096, 4096]))
        self.assertEqual(0, self.prefill.register_memory(address, 4096), "the failed batch was rolled back")
        self.assertEqual(0, self.prefill.unregister_memory(address))

    def test_managed_buffers(self) -> None:
        buffer = self.decode.allocate_managed_buffer(MIB)
        self.assertNotEqual(0, buffer)
        self.assertEqual(0, self.decode.write_bytes_to_buffer(buffer, b"managed!", 8))
        self.assertEqual(0, self.prefill.transfer_sync_read(self.session, self.local_address, buffer, 8))
        self.assertEqual(b"managed!", self.local[:8])
        self.assertEqual(b"managed!", self.decode.read_bytes_from_buffer(buffer, 8))
        self.assertEqual(0, self.decode.free_managed_buffer(buffer, MIB))
        with self.assertLogs("mooncake.xferd", "ERROR"):
            self.assertEqual(-1, self.prefill.transfer_sync_read(self.session, self.local_address, buffer, 8))

    def test_first_buffer_address_of_a_peer_and_of_itself(self) -> None:
        own = f"127.0.0.1:{self.prefill.get_rpc_port()}"
        self.assertEqual(self.remote_address, self.prefill.get_first_buffer_address(self.session), "a peer's")
        self.assertEqual(self.remote_address, self.decode.get_first_buffer_address(self.session), "its own")
        self.assertEqual(self.local_address, self.decode.get_first_buffer_address(own))
        buffer = self.decode.allocate_managed_buffer(MIB)
        self.assertEqual(min(buffer, self.remote_address), self.prefill.get_first_buffer_address(self.session),
                         "the descriptor lists buffers by address; the answer is fresh, not cached")
        self.assertEqual(0, self.decode.unregister_memory(self.remote_address))
        self.assertEqual(buffer, self.prefill.get_first_buffer_address(self.session))
        self.assertEqual(0, self.decode.free_managed_buffer(buffer, MIB))
        self.assertEqual(0, self.prefill.get_first_buffer_address(self.session), "nothing registered: 0")
        with self.assertLogs("mooncake.xferd", "ERROR"):
            self.assertEqual(0, self.prefill.get_first_buffer_address("127.0.0.1:1"))
            self.assertEqual(0, self.prefill.get_first_buffer_address("no-port"))

    def test_ten_threads_of_batch_transfer_sync_write(self) -> None:
        block, per_thread = 8192, 32
        data = self.fill(0, 6, block * per_thread * 10)
        results: list[int] = []

        def push(t: int) -> None:
            base = t * per_thread * block
            for _ in range(5):
                results.append(self.prefill.batch_transfer_sync_write(
                    self.session, [self.local_address + base + i * block for i in range(per_thread)],
                    [self.remote_address + base + i * block for i in range(per_thread)], [block] * per_thread))

        threads = [threading.Thread(target=push, args=(t,)) for t in range(10)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        self.assertEqual([0] * 50, results)
        self.assertEqual(data, self.remote[:len(data)])

    def assert_daemon_serves(self) -> None:
        """The daemon is alive and moves bytes, for this engine and for one that connects now."""
        self.assertIsNone(self.daemon.process.poll(), "the daemon exited")
        data = self.fill(0, 99, 4096)
        self.assertEqual(0, self.prefill.transfer_sync_write(self.session, self.local_address, self.remote_address,
                                                             4096))
        self.assertEqual(data, self.remote[:4096])
        newcomer = self._engine()
        buffer = newcomer.allocate_managed_buffer(4096)
        self.assertEqual(0, newcomer.transfer_sync_read(self.session, buffer, self.remote_address, 4096))
        self.assertEqual(data, newcomer.read_bytes_from_buffer(buffer, 4096))

    def test_bad_input_wrong_types_raise_type_error_as_pybind11_does(self) -> None:
        session, local, remote = self.session, self.local_address, self.remote_address
        calls = {
            "session not a str": lambda: self.prefill.transfer_sync_write(int(session.rsplit(":")[1]), local, remote,
                                                                          64),
            "address a str": lambda: self.prefill.transfer_sync_write(session, hex(local), remote, 64),
            "address a float": lambda: self.prefill.transfer_sync_read(session, local, float(remote), 64),
            "length None": lambda: self.prefill.transfer_sync_write(session, local, remote, None),
            "length negative": lambda: self.prefill.transfer_sync_write(session, local, remote, -64),
            "length beyond 64 bits": lambda: self.prefill.transfer_sync_write(session, local, remote, 1 << 64),
            "lengths a str": lambda: self.prefill.batch_transfer_sync_write(session, [local], [remote], "64"),
            "a negative length in a batch": lambda: self.prefill.batch_transfer_sync_write(
                session, [local, local + 64], [remote, remote + 64], [64, -64]),
            "a float in a batch": lambda: self.prefill.batch_transfer_async_read(session, [local], [remote], [64.0]),
            "buffers an int": lambda: self.prefill.batch_transfer_sync_read(session, local, [remote], [64]),
            "opcode a str": lambda: self.prefill.batch_transfer_sync(session, [local], [remote], [64], "write"),
            "notify a str": lambda: self.prefill.transfer_sync(session, local, remote, 64, TransferOpcode.Write,
                                                               "done"),
            "batch ids a str": lambda: self.prefill.get_batch_transfer_status("1"),
            "register a str": lambda: self.prefill.register_memory(str(local), 64),
            "unregister None": lambda: self.prefill.unregister_memory(None),
            "probe an int": lambda: self.prefill.send_probe(1234),
            "first buffer of None": lambda: self.prefill.get_first_buffer_address(None),
            "bytes an int": lambda: self.prefill.write_bytes_to_buffer(local, 1234, 4),
        }
        for what, call in calls.items():
            with self.subTest(what), self.assertRaises(TypeError):
                call()
        self.assert_daemon_serves()

    def test_bad_input_lengths_of_zero_fail_with_a_return_code(self) -> None:
        session, local, remote = self.session, self.local_address, self.remote_address
        calls = {
            "transfer_sync_write": lambda: self.prefill.transfer_sync_write(session, local, remote, 0),
            "transfer_sync_read": lambda: self.prefill.transfer_sync_read(session, local, remote, 0),
            "transfer_sync": lambda: self.prefill.transfer_sync(session, local, remote, 0, TransferOpcode.Write,
                                                                TransferNotify("n", "m")),
            "batch_transfer_sync_write": lambda: self.prefill.batch_transfer_sync_write(
                session, [local, local + 64], [remote, remote + 64], [64, 0]),
            "register_memory": lambda: self.prefill.register_memory(local + 8 * MIB, 0),
        }
        for what, call in calls.items():
            with self.subTest(what), self.assertLogs("mooncake.xferd", "ERROR") as logs:
                self.assertEqual(-1, call())
            self.assertRegex("\n".join(logs.output), "INVALID_LENGTH|capacity 0|INVALID_REQUEST|length")
        with self.assertLogs("mooncake.xferd", "ERROR"):
            self.assertEqual(0, self.prefill.batch_transfer_async_write(session, [local], [remote], [0]), "batch id")
            self.assertEqual(0, self.prefill.transfer_submit_write(session, local, remote, 0))
        self.assertEqual(0, self.prefill.allocate_managed_buffer(0))
        self.assert_daemon_serves()

    def test_bad_input_malformed_and_unknown_sessions_fail_fast(self) -> None:
        gone = self._engine()
        gone_session = f"127.0.0.1:{gone.get_rpc_port()}"
        gone.close()
        malformed = ["", "127.0.0.1", "127.0.0.1:", ":15000", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:port",
                     "a:1:2", "127.0.0.1:1/x", " 127.0.0.1:1", "[::1:1"]
        unknown = ["127.0.0.1:1", gone_session]
        local, remote = self.local_address, self.remote_address
        for session in malformed + unknown:
            expected = "malformed session" if session in malformed else "cannot open session"
            with self.subTest(session=session), self.assertLogs("mooncake.xferd", "ERROR") as logs:
                started = time.monotonic()
                self.assertEqual(-1, self.prefill.transfer_sync_write(session, local, remote, 64))
                self.assertEqual(-1, self.prefill.batch_transfer_sync_read(session, [local], [remote], [64]))
                self.assertEqual(0, self.prefill.batch_transfer_async_write(session, [local], [remote], [64]))
                self.assertEqual(0, self.prefill.transfer_submit_write(session, local, remote, 64))
                self.assertEqual(-1, self.prefill.send_probe(session))
                self.assertEqual(0, self.prefill.get_first_buffer_address(session))
                self.assertLess(time.monotonic() - started, 10, "a bad session fails fast, it does not wait")
            self.assertIn(expected, "\n".join(logs.output))
        self.assert_daemon_serves()

    def test_send_probe(self) -> None:
        self.assertEqual(0, self.prefill.send_probe(self.session))
        with self.assertLogs("mooncake.xferd", "ERROR"):
            self.assertEqual(-1, self.prefill.send_probe("127.0.0.1:1"))
            self.assertEqual(-1, self.prefill.send_probe("no-port"))


class ProtocolCheckTest(support.DaemonTestCase):
    def test_rdma_is_refused_by_a_tcp_daemon_when_the_daemon_says_what_it_serves(self) -> None:
        with mock.patch.dict(os.environ, {"XFERD_DIR": self.daemon.directory}):
            engine = TransferEngine()
            mc._transport_unknown_logged = False
            with self.assertLogs("mooncake.xferd", "WARNING") as logs:
                rc = engine.initialize("127.0.0.1", "P2PHANDSHAKE", "rdma", "")
            engine.close()
        text = "\n".join(logs.output)
        if "no RPC port" in text:
            self.fail("daemon gives engines no RPC port: per-segment ports (branch engine) missing")
        if "does not report its transport" in text:
            self.fail("this daemon does not report its transport in WELCOME (proposed: offset 52)")
        self.assertEqual(-1, rc)
        self.assertIn("serves tcp", text)



class EngineDaemonDeathTest(unittest.TestCase):
    def test_calls_return_minus_one_within_the_timeout_when_the_daemon_is_killed_mid_transfer(self) -> None:
        daemon = support.Daemon()
        self.addCleanup(daemon.stop)
        with mock.patch.dict(os.environ, {"XFERD_DIR": daemon.directory, "MC_TRANSFER_TIMEOUT": "30"}):
            prefill, decode = TransferEngine(), TransferEngine()
            self.addCleanup(prefill.close)
            self.addCleanup(decode.close)
            if prefill.initialize("127.0.0.1", "P2PHANDSHAKE", "tcp", "") != 0 or \
                    decode.initialize("127.0.0.1", "P2PHANDSHAKE", "tcp", "") != 0:
                self.fail("daemon gives engines no RPC port: per-segment ports (branch engine) missing")
        size = 64 * MIB
        local, remote = prefill.allocate_managed_buffer(size), decode.allocate_managed_buffer(size)
        self.assertNotEqual(0, local)
        self.assertNotEqual(0, remote)
        session = f"127.0.0.1:{decode.get_rpc_port()}"
        results: list[tuple[int, float]] = []

        def push() -> None:
            for _ in range(10_000):
                rc = prefill.batch_transfer_sync_write(session, [local + i * MIB for i in range(64)],
                                                       [remote + i * MIB for i in range(64)], [MIB] * 64)
                if rc != 0:
                    results.append((rc, time.monotonic()))
                    return

        with self.assertLogs("mooncake.xferd", "ERROR") as logs:
            pusher = threading.Thread(target=push)
            pusher.start()
            time.sleep(1.0)
            daemon.kill()
            killed = time.monotonic()
            pusher.join(30)
        self.assertFalse(pusher.is_alive(), "a call outlived the daemon by 30 s")
        self.assertEqual(-1, results[0][0])
        self.assertLess(results[0][1] - killed, 5.0)
        self.assertIn("DAEMON_GONE", "\n".join(logs.output))
        with self.assertLogs("mooncake.xferd", "ERROR"):
            self.assertEqual(-1, prefill.transfer_sync_write(session, local, remote, 64))
            self.assertEqual(0, prefill.batch_transfer_async_write(session, [local], [remote], [64]))


if __name__ == "__main__":
    unittest.main()
