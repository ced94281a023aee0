"""The demo stand-ins' KV cache (``xferd_demo.kv``): geometry, the prefill pattern, byte-exact verification, block
allocation and run grouping (no daemon)."""

from __future__ import annotations

import support  # noqa: F401  (puts python/ on the path)
import unittest

from xferd_demo.kv import BlockPool, KvCache, KvShape, contiguous_runs, expected_block, prompt_tokens


class KvShapeTest(unittest.TestCase):
    def test_qwen25_7b_block_is_16_kib_per_tensor_and_896_kib_over_all_layers(self) -> None:
        shape = KvShape()
        self.assertEqual(16 * 4 * 128 * 2, shape.block_bytes)
        self.assertEqual(56, shape.tensors)
        self.assertEqual(917504, shape.block_bytes * shape.tensors)
        self.assertEqual((1, 1, 2), (shape.blocks_for(1), shape.blocks_for(16), shape.blocks_for(17)))


class KvCacheTest(unittest.TestCase):
    def setUp(self) -> None:
        self.shape = KvShape(layers=2)
        self.cache = KvCache(self.shape, 6)
        self.tokens = prompt_tokens("a prompt of more than sixteen bytes, three blocks")

    def test_filled_blocks_verify_and_zeroed_ones_do_not(self) -> None:
        blocks = [4, 1, 2, 5][:self.shape.blocks_for(len(self.tokens))]
        self.cache.fill(self.tokens, blocks)
        self.assertIsNone(self.cache.first_mismatch(self.tokens, blocks))
        self.cache.clear(blocks[1:2])
        self.assertIn("block 1 (local block 1) byte 0", self.cache.first_mismatch(self.tokens, blocks))

    def test_one_flipped_byte_is_reported_where_it_is(self) -> None:
        blocks = [0, 1, 2, 3]
        self.cache.fill(self.tokens, blocks)
        self.cache.corrupt_one_byte(blocks)
        mismatch = self.cache.first_mismatch(self.tokens, blocks)
        self.assertRegex(mismatch, r"^layer 1 V block 2 \(local block 2\) byte 5461: expected 0x[0-9a-f]{2}, "
                                   r"found 0x[0-9a-f]{2}$")

    def test_another_prompt_or_block_order_does_not_verify(self) -> None:
        self.cache.fill(self.tokens, [0, 1, 2, 3])
        self.assertIsNotNone(self.cache.first_mismatch(prompt_tokens("another prompt" * 4), [0, 1, 2, 3]))
        self.assertIsNotNone(self.cache.first_mismatch(self.tokens, [1, 0, 2, 3]))

    def test_pattern_depends_on_tensor_block_and_prefix(self) -> None:
        length = self.shape.block_bytes
        patterns = {expected_block(b"x" * 16, 0, 0, length), expected_block(b"x" * 16, 1, 0, length),
                    expected_block(b"x" * 16, 0, 1, length), expected_block(b"y" * 16, 0, 0, length)}
        self.assertEqual(4, len(patterns))

    def test_base_addresses_are_distinct_tensor_buffers(self) -> None:
        self.assertEqual(self.shape.tensors, len(set(self.cache.base_addresses)))
        self.assertEqual(6 * self.shape.block_bytes, self.cache.tensor_bytes)


class BlockPoolTest(unittest.TestCase):
    def test_allocates_lowest_first_refuses_beyond_capacity_and_takes_blocks_back(self) -> None:
        pool = BlockPool(4)
        self.assertEqual([0, 1, 2], pool.allocate(3))
        with self.assertRaises(MemoryError):
            pool.allocate(2)
        pool.release([1, 0])
        self.assertEqual(3, pool.free)
        self.assertEqual([0, 1, 3], pool.allocate(3))


class ContiguousRunsTest(unittest.TestCase):
    def test_runs_break_where_either_side_is_not_consecutive(self) -> None:
        self.assertEqual([(0, 10, 2), (5, 12, 1), (6, 20, 2)],
                         list(contiguous_runs([0, 1, 5, 6, 7], [10, 11, 12, 20, 21])))
        self.assertEqual([], list(contiguous_runs([], [])))


if __name__ == "__main__":
    unittest.main()
