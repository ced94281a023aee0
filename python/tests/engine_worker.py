"""An inference-engine process for the sequence tests: one ``mooncake.engine.TransferEngine``, driven by JSON lines
on stdin, answering JSON lines on stdout (the out-of-band channel vLLM and SGLang use ZMQ for).

KV memory is anonymous ``mmap`` per layer, as torch CPU tensors are; block ``b`` of layer ``l`` written by seed
``s`` holds :func:`block_bytes`. Commands (``op``):

* ``init`` host, protocol -> rc, port, session
* ``layers`` count, bytes, seed (fill, or null for zeros), dedup (SGLang: register deduplicated (ptr, len) pairs,
  including repeated aux entries) -> rc, addresses, duplicate_rc (what registering an already registered pair gives)
* ``push`` session, remote (layer addresses), block, requests ([[src blocks], [dst blocks]]...), threads, api
  (``batch_transfer_sync_write`` (vLLM) or ``batch_transfer_sync``/``transfer_sync_write`` (SGLang)) -> rc, failures
* ``verify`` seed, block, pairs ([src block, dst block]...) -> ok, bad
* ``probe`` session -> rc
* ``first`` session -> address (``get_first_buffer_address``)
* ``exit``
"""

from __future__ import annotations

import json
import mmap
import os
import random
import sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mooncake.engine import TransferEngine, TransferOpcode  # noqa: E402
from xferd.memory import address_of  # noqa: E402


def block_bytes(seed: int, layer: int, block: int, length: int) -> bytes:
    """The content of one KV block as its prefill wrote it."""
    return random.Random(seed * 1_000_003 + layer * 10_007 + block).randbytes(length)


def merge_runs(src: list[int], dst: list[int]) -> list[tuple[int, int, int]]:
    """(src block, dst block, count) runs of adjacent blocks, as vLLM merges them into one descriptor."""
    runs: list[tuple[int, int, int]] = []
    for s, d in zip(src, dst):
        if runs and runs[-1][0] + runs[-1][2] == s and runs[-1][1] + runs[-1][2] == d:
            runs[-1] = (runs[-1][0], runs[-1][1], runs[-1][2] + 1)
        else:
            runs.append((s, d, 1))
    return runs


class Worker:
    def __init__(self) -> None:
        self.engine = TransferEngine()
        self.layers: list[mmap.mmap] = []
        self.addresses: list[int] = []
        self.layer_bytes = 0

    def init(self, host: str, protocol: str = "tcp") -> dict:
        rc = self.engine.initialize(host, "P2PHANDSHAKE", protocol, "")
        port = self.engine.get_rpc_port() if rc == 0 else -1
        return {"rc": rc, "port": port, "session": f"{host}:{port}"}

    def layers_(self, count: int, bytes_: int, seed: int | None, block: int, dedup: bool = False) -> dict:
        self.layer_bytes = bytes_
        for layer in range(count):
            memory = mmap.mmap(-1, bytes_)
            if seed is not None:
                for b in range(bytes_ // block):
                    memory[b * block:(b + 1) * block] = block_bytes(seed, layer, b, block)
            self.layers.append(memory)
            self.addresses.append(address_of(memory))
        pairs = [(a, bytes_) for a in self.addresses]
        duplicate_rc = None
        if dedup:
            pairs = pairs + pairs[:1]  # aux buffers that alias a KV buffer, as SGLang's lists can
            pairs = list(dict.fromkeys(pairs))  # SGLang's dedup before batch_register_memory
        rc = self.engine.batch_register_memory([a for a, _ in pairs], [n for _, n in pairs])
        if dedup and rc == 0:
            duplicate_rc = self.engine.register_memory(*pairs[0])
        return {"rc": rc, "addresses": self.addresses, "duplicate_rc": duplicate_rc}

    def push(self, session: str, remote: list[int], block: int, requests: list, threads: int,
             api: str = "batch_transfer_sync_write") -> dict:
        def send(request: list) -> int:
            src_blocks, dst_blocks = request
            local, peer, lengths = [], [], []
            for layer, (mine, theirs) in enumerate(zip(self.addresses, remote)):
                for s, d, n in merge_runs(src_blocks, dst_blocks):
                    local.append(mine + s * block)
                    peer.append(theirs + d * block)
                    lengths.append(n * block)
            if api == "batch_transfer_sync":
                return self.engine.batch_transfer_sync(session, local, peer, lengths, TransferOpcode.Write)
            if api == "transfer_sync_write":
                return min(self.engine.transfer_sync_write(session, a, b, n) for a, b, n in zip(local, peer, lengths))
            return self.engine.batch_transfer_sync_write(session, local, peer, lengths)

        with ThreadPoolExecutor(threads) as pool:
            results = list(pool.map(send, requests))
        return {"rc": min(results) if results else 0, "failures": sum(1 for r in results if r != 0)}

    def verify(self, seed: int, block: int, pairs: list) -> dict:
        bad = []
        for layer, memory in enumerate(self.layers):
            for src, dst in pairs:
                if memory[dst * block:(dst + 1) * block] != block_bytes(seed, layer, src, block):
                    bad.append([layer, src, dst])
        return {"ok": not bad, "bad": bad[:10]}

    def probe(self, session: str) -> dict:
        return {"rc": self.engine.send_probe(session)}

    def first(self, session: str) -> dict:
        return {"address": self.engine.get_first_buffer_address(session)}


def main() -> None:
    worker = Worker()
    handlers = {"init": worker.init, "layers": worker.layers_, "push": worker.push, "verify": worker.verify,
                "probe": worker.probe, "first": worker.first}
    for line in sys.stdin:
        command = json.loads(line)
        op = command.pop("op")
        if op == "exit":
            break
        if "bytes" in command:
            command["bytes_"] = command.pop("bytes")
        try:
            answer = handlers[op](**command)
        except Exception as ex:  # noqa: BLE001 - reported to the test
            answer = {"error": f"{type(ex).__name__}: {ex}"}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
