"""vLLM's and SGLang's call sequences, with engine processes as the inference servers run them.

vLLM (MooncakeConnector, TP=2): two prefill and two decode engine processes, each ``initialize(ip,
"P2PHANDSHAKE", "tcp", "")``, ``get_rpc_port()``, ``batch_register_memory`` of per-layer KV buffers; decode's
``host:port`` and layer addresses reach prefill out of band; prefill rank r pushes blocks to decode rank r with
``batch_transfer_sync_write`` from 10 threads (adjacent blocks merged into one descriptor); decode verifies every
byte. First on one daemon, then on two "hosts" (network namespaces, one daemon each) that both run a prefill and a
decode instance (2 + 2 engine processes each), each prefill pushing to the other host's decode, both ways at once.

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
import time
import unittest

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "engine_worker.py")
LAYERS = 4
BLOCK = 16 * 1024
BLOCKS = 64
PROBES_AFTER_A_KILL = 200


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
        """Send one command and wait for its answer."""
        self.send(op, **arguments)
        return self.receive(op, timeout)

    def send(self, op: str, **arguments) -> None:
        """Send one command without waiting, so that several engines work at once; :meth:`receive` answers."""
        self.process.stdin.write(json.dumps({"op": op, **arguments}) + "\n")
        self.process.stdin.flush()

    def receive(self, op: str, timeout: float = 120) -> dict:
        """The answer to the command sent last (``op`` names it in failures)."""
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
    """Two hosts, each serving both roles, as a P/D deployment whose hosts run prefill and decode instances alike.

    Each namespace runs one daemon, a prefill instance (2 engine processes, TP=2) and a decode instance (2 engine
    processes). Host A's prefill rank r pushes to host B's decode rank r and host B's prefill rank r to host A's
    decode rank r, all four at once, 10 threads each, so blocks cross the veth pair in both directions together
    and each daemon both sends and receives. Every decode engine then checks every byte it was sent.
    """

    HOSTS = ("a", "b")

    def start_engines(self, daemon: support.Daemon, host: str, namespace: str, count: int) -> list:
        """``count`` engine processes on one host, started and initialized in parallel: (engine, init answer)."""
        engines = []
        for _ in range(count):
            engine = EngineProcess(daemon.directory, namespace)
            self.addCleanup(engine.kill)
            engine.send("init", host=host, protocol="tcp")
            engines.append(engine)
        started = []
        for engine in engines:
            answer = engine.receive("init")
            self.assertEqual(0, answer["rc"], "initialize")
            self.assertGreater(answer["port"], 0, "get_rpc_port")
            started.append((engine, answer))
        return started

    def test_prefill_and_decode_on_both_hosts_push_across_the_veth_both_ways(self) -> None:
        reason = support.namespaces_unavailable()
        if reason:
            support.skip_or_fail(self, f"network namespaces not available: {reason}")
        namespaces = support.NetworkNamespaces()
        self.addCleanup(namespaces.close)
        token = support.cluster_token_file()
        self.addCleanup(os.unlink, token)
        address = {"a": namespaces.address_a, "b": namespaces.address_b}
        namespace = {"a": namespaces.a, "b": namespaces.b}
        other = {"a": "b", "b": "a"}
        daemons = {}
        for host in self.HOSTS:
            daemons[host] = support.Daemon("--cluster-token-file", token, rpc_host=address[host],
                                           namespace=namespace[host])
            self.addCleanup(daemons[host].stop)

        decodes, prefills, seeds = {}, {}, {}
        for h, host in enumerate(self.HOSTS):
            engines = self.start_engines(daemons[host], address[host], namespace[host], 4)
            self.assertEqual(4, len({info["port"] for _, info in engines}), "every engine on a host has its own port")
            decodes[host], prefills[host] = engines[:2], engines[2:]
            seeds[host] = [100 + 10 * h + rank for rank in range(2)]
            for rank in range(2):
                decode, prefill = decodes[host][rank][0], prefills[host][rank][0]
                decode.send("layers", count=LAYERS, bytes=BLOCK * BLOCKS, seed=None, block=BLOCK)
                prefill.send("layers", count=LAYERS, bytes=BLOCK * BLOCKS, seed=seeds[host][rank], block=BLOCK)
                registered = decode.receive("layers")
                if registered["rc"] != 0:
                    self.fail("host memory by address refused: REGISTER_PROCESS_MEMORY missing?")
                decode.layer_addresses = registered["addresses"]
                self.assertEqual(0, prefill.receive("layers")["rc"])

        plans = {}
        for h, host in enumerate(self.HOSTS):  # decode's host:port and layer addresses reach the other host's prefill
            for rank in range(2):
                decode, decode_info = decodes[other[host]][rank]
                prefill = prefills[host][rank][0]
                self.assertEqual(min(decode.layer_addresses), prefill.call("first", session=decode_info["session"])[
                    "address"], "get_first_buffer_address of an engine on the other host")
                plans[host, rank] = requests_for(10 * h + rank)
        for host in self.HOSTS:  # all four prefill ranks push at once: both directions of the veth carry blocks
            for rank in range(2):
                decode, decode_info = decodes[other[host]][rank]
                prefills[host][rank][0].send("push", session=decode_info["session"], remote=decode.layer_addresses,
                                             block=BLOCK, requests=plans[host, rank][0], threads=10)
        for host in self.HOSTS:
            for rank in range(2):
                self.assertEqual({"rc": 0, "failures": 0}, prefills[host][rank][0].receive("push"),
                                 f"prefill {host}{rank} -> decode {other[host]}{rank}")
        for host in self.HOSTS:
            for rank in range(2):
                verified = decodes[other[host]][rank][0].call("verify", seed=seeds[host][rank], block=BLOCK,
                                                               pairs=plans[host, rank][1])
                self.assertTrue(verified["ok"], f"decode {other[host]}{rank}: bad blocks {verified['bad']}")


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
        # the daemon drops the dead engine's segment once it sees its socket close; a probe sent before that may
        # still find it, so ask (boundedly) until it is gone
        probes = [prefill.call("probe", session=decode_info["session"], timeout=60)["rc"]]
        while probes[-1] == 0 and len(probes) < PROBES_AFTER_A_KILL:
            time.sleep(0.05)
            probes.append(prefill.call("probe", session=decode_info["session"], timeout=60)["rc"])
        self.assertEqual(-1, probes[-1], f"the dead engine still answered after {len(probes)} probes")
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
