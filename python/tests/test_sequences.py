"""vLLM's and SGLang's call sequences, with engine processes as the inference servers run them.

vLLM (MooncakeConnector, TP=2): two prefill and two decode engine processes, each ``initialize(ip,
"P2PHANDSHAKE", "tcp", "")``, ``get_rpc_port()``, ``batch_register_memory`` of per-layer KV buffers; decode's
``host:port`` and layer addresses reach prefill out of band; prefill rank r pushes blocks to decode rank r with
``batch_transfer_sync_write`` from 10 threads (adjacent blocks merged into one descriptor); decode verifies every
byte. First on one daemon, then between two "hosts" (network namespaces, one daemon each).

SGLang: deduplicated registration, ``batch_transfer_sync`` and ``transfer_sync_write`` from 4 workers,
``send_probe``, and a decode engine restarted and reached again.
"""

from __future__ import annotations

import support

import json
import os
import random
import select
import subprocess
import sys
import unittest

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "engine_worker.py")
LAYERS = 4
BLOCK = 16 * 1024
BLOCKS = 64


class EngineProcess:
    """One engine_worker.py process (optionally inside a network namespace), driven line by line."""

    def __init__(self, directory: str, namespace: str | None = None) -> None:
        command = [sys.executable, WORKER]
        if namespace is not None:
            command = ["ip", "netns", "exec", namespace] + command
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True,
                                        env=dict(os.environ, XFERD_DIR=directory, MC_TRANSFER_TIMEOUT="10",
                                                 PYTHONPATH=support.PYTHON_DIR))

    def call(self, op: str, timeout: float = 120, **arguments) -> dict:
        self.process.stdin.write(json.dumps({"op": op, **arguments}) + "\n")
        self.process.stdin.flush()
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        if not ready:
            raise AssertionError(f"{op}: no answer within {timeout} s")
        line = self.process.stdout.readline()
        if not line:
            raise AssertionError(f"{op}: worker died: {self.process.stderr.read()[-4000:]}")
        answer = json.loads(line)
        if "error" in answer:
            raise AssertionError(f"{op}: {answer['error']}")
        return answer

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(30)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            stream.close()


def requests_for(seed: int) -> tuple[list, list]:
    """16 requests of 4 blocks into distinct destination slots of 4 adjacent blocks; every other request reads 4
    adjacent source blocks (one merged descriptor per layer), the others scattered ones."""
    rng = random.Random(seed)
    slots = list(range(BLOCKS // 4))
    rng.shuffle(slots)
    requests, pairs = [], []
    for r, slot in enumerate(slots):
        if r % 2 == 0:
            start = rng.randrange(0, BLOCKS - 3)
            sources = [start, start + 1, start + 2, start + 3]
        else:
            sources = rng.sample(range(BLOCKS), 4)
        destinations = [4 * slot + i for i in range(4)]
        requests.append([sources, destinations])
        pairs += [[s, d] for s, d in zip(sources, destinations)]
    return requests, pairs


class SequenceBase(unittest.TestCase):
    def start(self, directory: str, host: str, namespace: str | None = None) -> tuple[EngineProcess, dict]:
        engine = EngineProcess(directory, namespace)
        self.addCleanup(engine.kill)
        answer = engine.call("init", host=host, protocol="tcp")
        if answer["rc"] != 0 or answer["port"] <= 0:
            self.fail(f"engine could not initialize (rc {answer['rc']}, port {answer['port']}): per-segment RPC "
                          f"ports (branch engine) missing in this daemon?")
        return engine, answer

    def vllm_sequence(self, prefill_daemon: support.Daemon, decode_daemon: support.Daemon, prefill_host: str,
                      decode_host: str, prefill_namespace: str | None = None,
                      decode_namespace: str | None = None) -> None:
        decodes = [self.start(decode_daemon.directory, decode_host, decode_namespace) for _ in range(2)]
        prefills = [self.start(prefill_daemon.directory, prefill_host, prefill_namespace) for _ in range(2)]
        ports = {d[1]["port"] for d in decodes} | {p[1]["port"] for p in prefills}
        if prefill_daemon is decode_daemon:
            self.assertEqual(4, len(ports), "every engine on a host has its own port")
        for rank, ((decode, _), (prefill, _)) in enumerate(zip(decodes, prefills)):
            registered = decode.call("layers", count=LAYERS, bytes=BLOCK * BLOCKS, seed=None, block=BLOCK)
            if registered["rc"] != 0:
                self.fail("host memory by address refused: REGISTER_PROCESS_MEMORY (branch engine) missing?")
            self.assertEqual(0, prefill.call("layers", count=LAYERS, bytes=BLOCK * BLOCKS, seed=100 + rank,
                                             block=BLOCK)["rc"])
            decode.layer_addresses = registered["addresses"]
            self.assertEqual(min(registered["addresses"]), prefill.call("first", session=decodes[rank][1]["session"])[
                "address"], "get_first_buffer_address of the peer engine, from its descriptor")
        for rank, ((decode, decode_info), (prefill, _)) in enumerate(zip(decodes, prefills)):
            requests, pairs = requests_for(rank)
            pushed = prefill.call("push", session=decode_info["session"], remote=decode.layer_addresses,
                                  block=BLOCK, requests=requests, threads=10)
            self.assertEqual({"rc": 0, "failures": 0}, pushed)
            verified = decode.call("verify", seed=100 + rank, block=BLOCK, pairs=pairs)
            self.assertTrue(verified["ok"], verified["bad"])


class VllmOneHostTest(SequenceBase):
    def test_two_prefill_and_two_decode_engines_on_one_daemon(self) -> None:
        daemon = support.Daemon()
        self.addCleanup(daemon.stop)
        self.vllm_sequence(daemon, daemon, "127.0.0.1", "127.0.0.1")


class VllmTwoHostsTest(SequenceBase):
    def test_prefill_host_pushes_to_decode_host_over_the_network(self) -> None:
        reason = support.namespaces_unavailable()
        if reason:
            support.skip_or_fail(self, f"network namespaces not available: {reason}")
        namespaces = support.NetworkNamespaces()
        self.addCleanup(namespaces.close)
        token = support.cluster_token_file()
        self.addCleanup(os.unlink, token)
        prefill_daemon = support.Daemon("--cluster-token-file", token, rpc_host=namespaces.address_a,
                                        namespace=namespaces.a)
        self.addCleanup(prefill_daemon.stop)
        decode_daemon = support.Daemon("--cluster-token-file", token, rpc_host=namespaces.address_b,
                                       namespace=namespaces.b)
        self.addCleanup(decode_daemon.stop)
        self.vllm_sequence(prefill_daemon, decode_daemon, namespaces.address_a, namespaces.address_b,
                           namespaces.a, namespaces.b)


class SglangTest(SequenceBase):
    def test_dedup_registration_batch_sync_probe_and_a_restarted_peer(self) -> None:
        daemon = support.Daemon()
        self.addCleanup(daemon.stop)
        decode, decode_info = self.start(daemon.directory, "127.0.0.1")
        prefill, _ = self.start(daemon.directory, "127.0.0.1")
        registered = decode.call("layers", count=LAYERS, bytes=BLOCK * BLOCKS, seed=None, block=BLOCK, dedup=True)
        if registered["rc"] != 0:
            self.fail("host memory by address refused: REGISTER_PROCESS_MEMORY (branch engine) missing?")
        self.assertEqual(-1, registered["duplicate_rc"], "a double registration fails, which is why SGLang dedups")
        self.assertEqual(0, prefill.call("layers", count=LAYERS, bytes=BLOCK * BLOCKS, seed=7, block=BLOCK,
                                         dedup=True)["rc"])
        self.assertEqual(0, prefill.call("probe", session=decode_info["session"])["rc"])
        requests, pairs = requests_for(11)
        half = len(requests) // 2
        for api, chunk in (("batch_transfer_sync", requests[:half]), ("transfer_sync_write", requests[half:])):
            pushed = prefill.call("push", session=decode_info["session"], remote=registered["addresses"],
                                  block=BLOCK, requests=chunk, threads=4, api=api)
            self.assertEqual({"rc": 0, "failures": 0}, pushed, api)
        self.assertTrue(decode.call("verify", seed=7, block=BLOCK, pairs=pairs)["ok"])

        decode.kill()  # the decode server restarts: a new process, a new port
        self.assertEqual(-1, prefill.call("probe", session=decode_info["session"], timeout=60)["rc"])
        failed = prefill.call("push", session=decode_info["session"], remote=registered["addresses"], block=BLOCK,
                              requests=requests[:1], threads=1, api="batch_transfer_sync")
        self.assertEqual(-1, failed["rc"], "the old session fails (SGLang blacklists it) and does not hang")
        restarted, restarted_info = self.start(daemon.directory, "127.0.0.1")
        again = restarted.call("layers", count=LAYERS, bytes=BLOCK * BLOCKS, seed=None, block=BLOCK, dedup=True)
        self.assertEqual(0, again["rc"])
        self.assertEqual(0, prefill.call("probe", session=restarted_info["session"])["rc"])
        pushed = prefill.call("push", session=restarted_info["session"], remote=again["addresses"], block=BLOCK,
                              requests=requests, threads=4, api="batch_transfer_sync")
        self.assertEqual({"rc": 0, "failures": 0}, pushed)
        self.assertTrue(restarted.call("verify", seed=7, block=BLOCK, pairs=pairs)["ok"])


if __name__ == "__main__":
    unittest.main()
