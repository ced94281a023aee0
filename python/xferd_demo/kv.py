"""The stand-ins' KV cache: per-layer K and V buffers of a model's shape, a block allocator, and the deterministic
contents a prompt's blocks must hold."""

from __future__ import annotations

import ctypes
import hashlib
import mmap
import threading
from dataclasses import dataclass
from typing import Iterator


@dataclass(frozen=True)
class KvShape:
    """The KV cache geometry of one model (vLLM's layout: per layer a K and a V tensor of
    ``[num_blocks, block_tokens, kv_heads, head_dim]``). The defaults are Qwen2.5-7B's, in bf16."""

    layers: int = 28
    kv_heads: int = 4
    head_dim: int = 128
    dtype_bytes: int = 2
    block_tokens: int = 16

    @property
    def block_bytes(self) -> int:
        """Bytes of one block in one K or V tensor (vLLM's ``block_len``)."""
        return self.block_tokens * self.kv_heads * self.head_dim * self.dtype_bytes

    @property
    def tensors(self) -> int:
        """Registered buffers: a K and a V tensor per layer."""
        return 2 * self.layers

    def blocks_for(self, tokens: int) -> int:
        """Blocks that hold ``tokens`` tokens."""
        return (tokens + self.block_tokens - 1) // self.block_tokens


def prompt_tokens(prompt: str) -> bytes:
    """The stand-ins' tokenizer: one token per UTF-8 byte of the prompt (deterministic, no vocabulary needed)."""
    return prompt.encode("utf-8")


def expected_block(tokens: bytes, tensor: int, block: int, length: int) -> bytes:
    """What block ``block`` of K/V tensor ``tensor`` holds after prefill of ``tokens``: SHAKE-128 of the tokens up
    to the end of that block (as a real KV block depends on its prefix), the tensor and the block index, so a
    block that lands in the wrong place, the wrong layer or at a shifted offset is caught as surely as a flipped
    byte."""
    seed = hashlib.sha256(tokens).digest() + tensor.to_bytes(4, "little") + block.to_bytes(4, "little")
    return hashlib.shake_128(seed).digest(length)


class KvCache:
    """``shape.tensors`` buffers of ``num_blocks`` blocks each, in anonymous memory of this process (as a CPU
    tensor would be): registered with the engine by address, so the daemon copies with process_vm_readv/writev."""

    def __init__(self, shape: KvShape, num_blocks: int) -> None:
        if num_blocks <= 0:
            raise ValueError(f"num_blocks must be positive, got {num_blocks}")
        self.shape = shape
        self.num_blocks = num_blocks
        self.tensor_bytes = shape.block_bytes * num_blocks
        self._maps = [mmap.mmap(-1, self.tensor_bytes) for _ in range(shape.tensors)]
        self._views = [memoryview(m) for m in self._maps]
        self.base_addresses = [ctypes.addressof(ctypes.c_char.from_buffer(m)) for m in self._maps]

    @property
    def total_bytes(self) -> int:
        """Bytes registered: every tensor, every block."""
        return self.tensor_bytes * self.shape.tensors

    def block_view(self, tensor: int, block: int) -> memoryview:
        """The bytes of one block of one tensor."""
        start = block * self.shape.block_bytes
        return self._views[tensor][start:start + self.shape.block_bytes]

    def fill(self, tokens: bytes, blocks: list[int]) -> None:
        """Write the prefill pattern of ``tokens`` into ``blocks`` (the i-th block of the prompt into blocks[i])."""
        length = self.shape.block_bytes
        for tensor in range(self.shape.tensors):
            for index, block in enumerate(blocks):
                self.block_view(tensor, block)[:] = expected_block(prefix_of(tokens, index, self.shape), tensor,
                                                                   index, length)

    def clear(self, blocks: list[int]) -> None:
        """Zero ``blocks`` in every tensor, so that nothing left from an earlier request can pass for new KV."""
        zeros = bytes(self.shape.block_bytes)
        for tensor in range(self.shape.tensors):
            for block in blocks:
                self.block_view(tensor, block)[:] = zeros

    def first_mismatch(self, tokens: bytes, blocks: list[int]) -> str | None:
        """``None`` when every byte of ``blocks`` holds the prefill pattern of ``tokens``; else where the first
        wrong byte is (tensor, block, offset, expected and found values)."""
        length = self.shape.block_bytes
        for tensor in range(self.shape.tensors):
            for index, block in enumerate(blocks):
                expected = expected_block(prefix_of(tokens, index, self.shape), tensor, index, length)
                found = self.block_view(tensor, block)
                if found != expected:
                    offset = next(i for i in range(length) if found[i] != expected[i])
                    kind = "K" if tensor % 2 == 0 else "V"
                    return (f"layer {tensor // 2} {kind} block {index} (local block {block}) byte {offset}: "
                            f"expected {expected[offset]:#04x}, found {found[offset]:#04x}")
        return None

    def corrupt_one_byte(self, blocks: list[int]) -> None:
        """Flip one byte in the middle of the prompt's KV (a fault injection for the demo's own test)."""
        tensor = self.shape.tensors // 2 + 1
        view = self.block_view(tensor, blocks[len(blocks) // 2])
        view[len(view) // 3] ^= 0xFF


def prefix_of(tokens: bytes, block_index: int, shape: KvShape) -> bytes:
    """The tokens up to the end of block ``block_index``."""
    return tokens[:(block_index + 1) * shape.block_tokens]


class BlockPool:
    """A free list of block ids; thread-safe. Allocation fails rather than waits when the pool is exhausted."""

    def __init__(self, num_blocks: int) -> None:
        self._free = list(range(num_blocks - 1, -1, -1))
        self._lock = threading.Lock()

    def allocate(self, count: int) -> list[int]:
        """``count`` free blocks, lowest ids first.

        :raises MemoryError: when fewer than ``count`` are free.
        """
        with self._lock:
            if count > len(self._free):
                raise MemoryError(f"KV cache full: {count} blocks wanted, {len(self._free)} free")
            taken = [self._free.pop() for _ in range(count)]
        return taken

    def release(self, blocks: list[int]) -> None:
        """Give ``blocks`` back."""
        with self._lock:
            self._free.extend(sorted(blocks, reverse=True))

    @property
    def free(self) -> int:
        """Blocks free now."""
        with self._lock:
            return len(self._free)


def contiguous_runs(local: list[int], remote: list[int]) -> Iterator[tuple[int, int, int]]:
    """``(local first, remote first, count)`` for each run of blocks consecutive on both sides (vLLM groups the
    same way, so one transfer entry covers a run)."""
    start = 0
    for i in range(1, len(local) + 1):
        if i == len(local) or local[i] != local[i - 1] + 1 or remote[i] != remote[i - 1] + 1:
            yield local[start], remote[start], i - start
            start = i
