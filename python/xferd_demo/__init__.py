"""Stand-in prefill and decode servers for ``xferd demo --disagg``.

Two small OpenAI-compatible HTTP servers (standard library only) that hold a KV cache of Qwen2.5-7B's shape in
ordinary process memory and move it the way vLLM's V1 ``MooncakeConnector`` does, through ``mooncake.engine``
served by xferd: ``initialize(host, "P2PHANDSHAKE", "tcp", "")``, ``get_rpc_port()``, ``batch_register_memory`` of
per-layer K and V buffers, and the prefill side pushing a prompt's blocks with ``batch_transfer_sync_write`` once the
decode side asks for them. No model runs: prefill fills the prompt's blocks with a pattern derived from the prompt,
and decode checks every byte before it answers.
"""

from xferd_demo.kv import BlockPool, KvCache, KvShape, expected_block

__all__ = ["BlockPool", "KvCache", "KvShape", "expected_block"]
