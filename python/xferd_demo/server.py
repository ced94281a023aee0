"""OpenAI-compatible stand-ins for a vLLM prefill and a vLLM decode instance (V1 ``MooncakeConnector`` flow).

Prefill (``kv_producer``): ``POST /v1/completions`` with ``kv_transfer_params.do_remote_decode`` computes the
prompt's KV blocks (the pattern of :func:`xferd_demo.kv.expected_block`), keeps them, and answers one token with
``kv_transfer_params`` naming its side channel (``remote_host``, ``remote_port``) and the request
(``remote_request_id``), as vLLM does. Its side channel (``POST /kv/send``, vLLM's ZMQ ``MooncakeAgentMetadata``
message) receives the decode engine's session, its per-layer base addresses and block ids, pushes the blocks with
``batch_transfer_sync_write`` and answers ``trans_done``.

Decode (``kv_consumer``): a request with ``kv_transfer_params.do_remote_prefill`` gets local blocks (zeroed), asks
the prefill side channel to push the prompt's blocks into them, checks every byte, then answers (streamed SSE or
not). A wrong byte fails the request with HTTP 500 and an OpenAI error body before any token is sent.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import logging
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from mooncake.engine import TransferEngine
from xferd_demo.kv import BlockPool, KvCache, KvShape, contiguous_runs, prompt_tokens

logger = logging.getLogger("xferd_demo")

MAX_BODY = 8 << 20
PENDING_TTL_S = 120.0
VOCABULARY = ("the", "cache", "moved", "every", "byte", "arrived", "intact", "and", "decode", "went", "on")


class DemoError(Exception):
    """A request that cannot be served: ``status`` is the HTTP status, the message goes into the error body."""

    def __init__(self, status: int, message: str, kind: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind


@dataclass
class PendingSend:
    """Prefill blocks kept for a decode instance to ask for."""

    tokens: bytes
    blocks: list[int]
    expires: float


@dataclass
class Instance:
    """One stand-in vLLM instance: its role, its engine, its KV cache and its pending sends."""

    role: str
    host: str
    engine: TransferEngine
    cache: KvCache
    pool: BlockPool
    model: str
    corrupt_next: bool = False
    side_port: int = 0
    pending: dict[str, PendingSend] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def create(cls, role: str, host: str, shape: KvShape, num_blocks: int, model: str) -> "Instance":
        """Initialize the engine and register the KV cache exactly as vLLM's MooncakeConnectorWorker does."""
        engine = TransferEngine()
        if engine.initialize(host, "P2PHANDSHAKE", "tcp", "") != 0:
            raise RuntimeError("Mooncake Transfer Engine initialization failed (is the xferd daemon running, "
                               "XFERD_DIR set?)")
        cache = KvCache(shape, num_blocks)
        if engine.batch_register_memory(cache.base_addresses, [cache.tensor_bytes] * shape.tensors) != 0:
            raise RuntimeError("Mooncake batch memory registration failed.")
        logger.info("%s: engine %s:%d, %d buffers of %d bytes registered", role, host, engine.get_rpc_port(),
                    shape.tensors, cache.tensor_bytes)
        return cls(role, host, engine, cache, BlockPool(num_blocks), model)

    # ---------------------------------------------------------------- prefill

    def prefill(self, request_id: str, prompt: str) -> tuple[dict[str, Any], float]:
        """Compute and keep the prompt's KV; the ``kv_transfer_params`` of the answer and the time it took."""
        started = time.perf_counter()
        tokens = prompt_tokens(prompt)
        blocks = self._allocate(self.cache.shape.blocks_for(len(tokens)))
        self.cache.fill(tokens, blocks)
        with self.lock:
            corrupt, self.corrupt_next = self.corrupt_next, False
            self._expire_locked()
            self.pending[request_id] = PendingSend(tokens, blocks, time.monotonic() + PENDING_TTL_S)
        if corrupt:
            self.cache.corrupt_one_byte(blocks)
            logger.warning("prefill: request %s: one KV byte corrupted on purpose (--corrupt-first)", request_id)
        elapsed = time.perf_counter() - started
        return {"do_remote_prefill": True, "do_remote_decode": False, "remote_engine_id": f"prefill-{self.host}",
                "remote_block_ids": blocks, "remote_host": self.host, "remote_port": self.side_port,
                "remote_request_id": request_id, "prefill_s": elapsed}, elapsed

    def send_kv(self, meta: dict[str, Any]) -> dict[str, Any]:
        """Push the asked-for requests' blocks to the decode engine (vLLM's ``send_kv_to_decode``)."""
        session = f"{_string(meta, 'remote_hostname')}:{_integer(meta, 'remote_port')}"
        request_ids = meta.get("request_ids")
        block_ids = meta.get("block_ids")
        bases = meta.get("kv_caches_base_addr")
        if not (isinstance(request_ids, list) and isinstance(block_ids, list) and isinstance(bases, list)) \
                or len(request_ids) != len(block_ids) or len(bases) != self.cache.shape.tensors:
            raise DemoError(400, "request_ids, block_ids and kv_caches_base_addr do not match this model")
        with self.lock:
            sends = [self.pending.pop(str(r), None) for r in request_ids]
        try:
            missing = [r for r, s in zip(request_ids, sends) if s is None]
            if missing:
                raise DemoError(404, f"requests {missing} are not waiting to be sent (expired or unknown)")
            sources: list[int] = []
            targets: list[int] = []
            lengths: list[int] = []
            block = self.cache.shape.block_bytes
            for send, remote in zip(sends, block_ids):
                if not isinstance(remote, list) or len(remote) != len(send.blocks):
                    raise DemoError(400, f"{len(send.blocks)} blocks to send, {len(remote)} block ids given")
                for local_base, remote_base in zip(self.cache.base_addresses, bases):
                    for local_first, remote_first, count in contiguous_runs(send.blocks, remote):
                        sources.append(local_base + local_first * block)
                        targets.append(int(remote_base) + int(remote_first) * block)
                        lengths.append(count * block)
            started = time.perf_counter()
            if self.engine.batch_transfer_sync_write(session, sources, targets, lengths) != 0:
                raise DemoError(502, f"batch_transfer_sync_write to {session} failed (see the prefill log)",
                                "kv_transfer_error")
            return {"status": "trans_done", "bytes": sum(lengths), "entries": len(lengths),
                    "transfer_s": time.perf_counter() - started}
        finally:
            for send in sends:
                if send is not None:
                    self.pool.release(send.blocks)

    # ---------------------------------------------------------------- decode

    def receive(self, prompt: str, params: dict[str, Any]) -> dict[str, Any]:
        """Get the prompt's KV from the prefill instance named in ``params`` and verify every byte."""
        tokens = prompt_tokens(prompt)
        blocks = self._allocate(self.cache.shape.blocks_for(len(tokens)))
        try:
            self.cache.clear(blocks)
            started = time.perf_counter()
            answer = _post_json(_string(params, "remote_host"), _integer(params, "remote_port"), "/kv/send", {
                "remote_hostname": self.host, "remote_port": self.engine.get_rpc_port(),
                "request_ids": [_string(params, "remote_request_id")],
                "kv_caches_base_addr": self.cache.base_addresses, "block_ids": [blocks]})
            elapsed = time.perf_counter() - started
            if answer.get("status") != "trans_done":
                raise DemoError(502, f"prefill could not send the KV: {answer}", "kv_transfer_error")
            checked = time.perf_counter()
            mismatch = self.cache.first_mismatch(tokens, blocks)
            if mismatch is not None:
                raise DemoError(500, f"KV verification failed: {mismatch}", "kv_verification_error")
            return {"kv_bytes": int(answer.get("bytes", 0)), "transfer_s": elapsed,
                    "prefill_transfer_s": answer.get("transfer_s"), "verify_s": time.perf_counter() - checked,
                    "prefill_s": params.get("prefill_s"), "blocks": len(blocks), "verified": True}
        finally:
            self.pool.release(blocks)

    def _allocate(self, count: int) -> list[int]:
        try:
            return self.pool.allocate(count)
        except MemoryError as ex:
            raise DemoError(503, str(ex), "server_busy") from None

    def _expire_locked(self) -> None:
        now = time.monotonic()
        for request_id in [r for r, s in self.pending.items() if s.expires < now]:
            self.pool.release(self.pending.pop(request_id).blocks)
            logger.warning("prefill: request %s expired before decode asked for its KV", request_id)


def _string(params: dict[str, Any], key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str) or not value:
        raise DemoError(400, f"kv_transfer_params.{key}: expected a string, got {value!r}")
    return value


def _integer(params: dict[str, Any], key: str) -> int:
    value = params.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 < value < 65536:
        raise DemoError(400, f"kv_transfer_params.{key}: expected a port, got {value!r}")
    return value


def _post_json(host: str, port: int, path: str, body: dict[str, Any]) -> dict[str, Any]:
    connection = http.client.HTTPConnection(host, port, timeout=120)
    try:
        connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        response = connection.getresponse()
        payload = response.read()
    except OSError as ex:
        raise DemoError(502, f"prefill side channel {host}:{port} unreachable: {ex}", "kv_transfer_error") from None
    finally:
        connection.close()
    try:
        answer = json.loads(payload)
    except ValueError:
        answer = {"error": payload[:200].decode("utf-8", "replace")}
    if response.status != 200:
        raise DemoError(502, f"prefill side channel answered {response.status}: {answer.get('error', answer)}",
                        "kv_transfer_error")
    return answer


def completion_tokens(prompt: str, count: int) -> list[str]:
    """The tokens a stand-in "generates" for ``prompt``: words picked by a hash of the prompt and position."""
    digest = hashlib.sha256(prompt.encode("utf-8")).digest()
    return [" " + VOCABULARY[(digest[i % len(digest)] + i) % len(VOCABULARY)] for i in range(count)]


class Handler(BaseHTTPRequestHandler):
    """The OpenAI endpoints (``/health``, ``/v1/models``, ``/v1/completions``) and prefill's side channel."""

    protocol_version = "HTTP/1.1"
    server: "DemoServer"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        logger.debug("%s %s", self.address_string(), format % args)

    def do_GET(self) -> None:
        """``/health`` and ``/v1/models``."""
        if self.path == "/health":
            self._send_json(200, {"status": "ok", "role": self.server.instance.role})
        elif self.path == "/v1/models":
            self._send_json(200, {"object": "list", "data": [{"id": self.server.instance.model, "object": "model"}]})
        else:
            self._send_error(DemoError(404, f"no route {self.path}"))

    def do_POST(self) -> None:
        """``/v1/completions`` (both roles) and ``/kv/send`` (prefill's side channel)."""
        try:
            body = self._read_json()
            if self.path == "/kv/send" and self.server.instance.role == "prefill":
                self._send_json(200, self.server.instance.send_kv(body))
            elif self.path == "/v1/completions":
                self._complete(body)
            else:
                raise DemoError(404, f"no route {self.path}")
        except DemoError as ex:
            if ex.status >= 500:
                logger.error("%s %s: %s", self.server.instance.role, self.path, ex)
            self._send_error(ex)

    def _read_json(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self.close_connection = True
            raise DemoError(413, f"body of {length} bytes")
        try:
            body = json.loads(self.rfile.read(length))
        except ValueError:
            raise DemoError(400, "body is not JSON") from None
        if not isinstance(body, dict):
            raise DemoError(400, "body is not a JSON object")
        return body

    def _complete(self, body: dict[str, Any]) -> None:
        instance = self.server.instance
        prompt = body.get("prompt")
        if not isinstance(prompt, str) or not prompt:
            raise DemoError(400, "prompt: expected a non-empty string")
        max_tokens = body.get("max_tokens", 16)
        if not isinstance(max_tokens, int) or not 0 < max_tokens <= 4096:
            raise DemoError(400, "max_tokens: expected 1..4096")
        params = body.get("kv_transfer_params") if isinstance(body.get("kv_transfer_params"), dict) else {}
        request_id = self.headers.get("X-Request-Id") or uuid.uuid4().hex
        answer_params: dict[str, Any] | None = None
        timings: dict[str, Any] = {}
        if instance.role == "prefill":
            if params.get("do_remote_decode"):
                answer_params, elapsed = instance.prefill(request_id, prompt)
                timings = {"prefill_s": elapsed}
        elif params.get("do_remote_prefill"):
            timings = instance.receive(prompt, params)
        else:
            raise DemoError(400, "this decode stand-in computes no prompt itself: kv_transfer_params with "
                                 "do_remote_prefill expected (is the proxy in V1 mode?)")
        tokens = completion_tokens(prompt, max_tokens)
        completion_id = f"cmpl-{request_id}"
        if body.get("stream"):
            self._stream(completion_id, tokens, timings)
            return
        answer: dict[str, Any] = {"id": completion_id, "object": "text_completion", "created": int(time.time()),
                                  "model": instance.model,
                                  "choices": [{"index": 0, "text": "".join(tokens), "finish_reason": "length"}],
                                  "usage": {"prompt_tokens": len(prompt_tokens(prompt)),
                                            "completion_tokens": len(tokens),
                                            "total_tokens": len(prompt_tokens(prompt)) + len(tokens)},
                                  "xferd_demo": timings}
        if answer_params is not None:
            answer["kv_transfer_params"] = answer_params
        self._send_json(200, answer)

    def _stream(self, completion_id: str, tokens: list[str], timings: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        created = int(time.time())
        for index, token in enumerate(tokens):
            chunk: dict[str, Any] = {"id": completion_id, "object": "text_completion", "created": created,
                                     "model": self.server.instance.model,
                                     "choices": [{"index": 0, "text": token,
                                                  "finish_reason": "length" if index == len(tokens) - 1 else None}]}
            if index == 0:
                chunk["xferd_demo"] = timings
            self._chunk(f"data: {json.dumps(chunk)}\n\n".encode("utf-8"))
        self._chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode("ascii") + data + b"\r\n")
        self.wfile.flush()

    def _send_json(self, status: int, body: dict[str, Any]) -> None:
        payload = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _send_error(self, error: DemoError) -> None:
        self._send_json(error.status, {"error": {"message": str(error), "type": error.kind, "code": error.status}})


class DemoServer(ThreadingHTTPServer):
    """A ThreadingHTTPServer bound to one :class:`Instance`."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], instance: Instance) -> None:
        super().__init__(address, Handler)
        self.instance = instance
