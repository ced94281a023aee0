#!/usr/bin/env python3
"""Python's own cost per step of a 64 B round trip, less sensitive to load than the round trip itself.

    python3 python/bench_steps.py [--profile]

Starts a daemon (``support.Daemon``), then 20,000 times: ``Client.submit_one`` (call to record published), a bare
spin until the completion is in the ring (the daemon's part, not counted), ``Client.wait`` (completion taken, the
transfer done); then 20,000 ``Client.transfer_sync`` round trips. Prints p10/p50/p90 of each in microseconds.
``--profile`` adds 100,000 round trips under cProfile (its own cost dominates small functions: read it for counts
and relative weight, not for absolute times).
"""

from __future__ import annotations

import cProfile
import os
import pstats
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "tests"))

import support  # noqa: E402
import xferd  # noqa: E402
from xferd.protocol import WRITE  # noqa: E402


def quantile(samples: list[int], q: float) -> float:
    """The ``q`` quantile of nanosecond samples, in microseconds."""
    return sorted(samples)[int(q * len(samples))] / 1e3


def measure(directory: str, rounds: int, profile: bool) -> None:
    """Print each step's p10/p50/p90 over ``rounds`` round trips between two clients of the daemon in ``directory``."""
    source, target = xferd.Client(directory), xferd.Client(directory)
    local, remote = source.allocate_memory(4096), target.allocate_memory(4096)
    source.register_memory(local.address, 4096)
    target.register_memory(remote.address, 4096)
    handle = source.open_segment(target.segment_name.rsplit("/", 1)[1])
    view = source._completion_view
    i32, i64, head_at, mask = view.i32, view.i64, view.head_index, view.capacity - 1
    la, ra, clock = local.address, remote.address, time.perf_counter_ns
    for _ in range(3000):
        source.transfer_sync(WRITE, handle, la, ra, 64)
    submits, completions, trips = [], [], []
    for _ in range(rounds):
        start = clock()
        transfer = source.submit_one(WRITE, handle, la, ra, 64)
        submitted = clock()
        while i32[(i64[head_at] & mask) >> 2] <= 0:  # the daemon's part: until the completion is in the ring
            pass
        arrived = clock()
        source.wait(transfer)
        completions.append(clock() - arrived)
        submits.append(submitted - start)
    for _ in range(rounds):
        start = clock()
        source.transfer_sync(WRITE, handle, la, ra, 64)
        trips.append(clock() - start)
    for name, samples in (("submit", submits), ("completion", completions), ("round trip", trips)):
        print(f"{name:11s} p10 {quantile(samples, .1):6.2f}  p50 {quantile(samples, .5):6.2f}  "
              f"p90 {quantile(samples, .9):6.2f} us   load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if profile:
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(100_000):
            source.transfer_sync(WRITE, handle, la, ra, 64)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(15)
    source.close()
    target.close()


def main() -> int:
    daemon = support.Daemon()
    try:
        measure(daemon.directory, 20_000, "--profile" in sys.argv)
    finally:
        daemon.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
