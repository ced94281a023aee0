#!/usr/bin/env python3
"""Python client figures next to the Java client's, in one run, against one daemon.

    python3 python/bench.py [--dir D] [--duration 5] [--skip-java] [--netns [--skip-local]]
    python3 python/bench.py --round-trips 3 [--duration 3]

Starts its own daemon (``--rpc-address 127.0.0.1:0``, a private directory under /dev/shm) unless ``--dir`` names
a running one, then measures, each from Python and (``bin/xferd bench``) from Java, with the same parameters:

1. caller CPU of one 4,096-descriptor batch: from the call to the last record written (``Client.submit``), and the
   same through ``mooncake.engine``'s ``batch_transfer_async_write`` (the sync call minus the wait);
2. 64 B local round trips (batch 1, window 1): submit -> completion, p50/p90/p99 (Python through ``Client`` and
   through ``TransferEngine.transfer_sync_write``); ``--round-trips N`` measures only these, Python and Java
   alternating N times so that both see the same load, and prints each pair's ratio and the median;
3. 1 MiB blocks in batches of 32, 4 batches in flight: GB/s.

``--netns`` (root) adds two "hosts": network namespaces joined by a veth pair (``python/tests/support.py``'s, names
``xfpy-<pid>-...``), a daemon in each with one cluster token made for the run, a Python process in B that registers
the target buffer, then 1 MiB write batches (32 per batch, 4 in flight) from a Python process in A and from
``bin/xferd bench`` in A into that buffer, and the ratio. Namespaces, processes, daemon directories and the token
file are removed on exit, Ctrl-C and SIGTERM included. ``--skip-local`` runs only that.

Figures depend on the machine and its load: quote them with the machine and the Java baseline of the same run.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "tests"))

import xferd  # noqa: E402
from xferd.protocol import WRITE  # noqa: E402

MIB = 1 << 20


def percentiles(samples_ns: list[int]) -> str:
    ordered = sorted(samples_ns)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] / 1e3

    return f"p50 {at(0.5):.1f}  p90 {at(0.9):.1f}  p99 {at(0.99):.1f} us ({len(ordered)} samples)"


def pair(directory: str, size: int) -> tuple[xferd.Client, xferd.Client, xferd.SharedBuffer, xferd.SharedBuffer, int]:
    source, target = xferd.Client(directory), xferd.Client(directory)
    local, remote = source.allocate_memory(size), target.allocate_memory(size)
    source.register_memory(local.address, size, "cpu:0")
    target.register_memory(remote.address, size, "cpu:0")
    return source, target, local, remote, source.open_segment(target.segment_name.rsplit("/", 1)[1])


def submit_cost(directory: str) -> None:
    block, count = 4096, 4096
    source, target, local, remote, handle = pair(directory, block * count)
    locals_ = [local.address + i * block for i in range(count)]
    targets = [remote.address + i * block for i in range(count)]
    lengths = [block] * count
    wall, cpu = [], []
    for _ in range(50):
        w, c = time.perf_counter_ns(), time.thread_time_ns()
        transfer = source.submit(WRITE, handle, locals_, targets, lengths)
        cpu.append(time.thread_time_ns() - c)
        wall.append(time.perf_counter_ns() - w)
        source.wait(transfer, 60)
    parts = -(-count // min(source.max_batch_entries, count))
    print(f"python: submit of one {count}-descriptor batch ({parts} record(s)): call -> last record written, "
          f"wall {percentiles(wall)}; CPU p50 {sorted(cpu)[len(cpu) // 2] / 1e3:.1f} us")
    source.close()
    target.close()


def engine_submit_cost(directory: str) -> None:
    os.environ["XFERD_DIR"] = directory
    from mooncake.engine import TransferEngine
    import mmap
    prefill, decode = TransferEngine(), TransferEngine()
    if prefill.initialize("127.0.0.1", "P2PHANDSHAKE", "tcp", "") != 0 or \
            decode.initialize("127.0.0.1", "P2PHANDSHAKE", "tcp", "") != 0:
        print("engine: not measured (the daemon gives engines no port)")
        return
    block, count = 4096, 4096
    local, remote = mmap.mmap(-1, block * count), mmap.mmap(-1, block * count)
    la, ra = xferd.memory.address_of(local), xferd.memory.address_of(remote)
    if prefill.register_memory(la, block * count) != 0 or decode.register_memory(ra, block * count) != 0:
        print("engine: not measured (process memory registration refused)")
        return
    session = f"127.0.0.1:{decode.get_rpc_port()}"
    locals_ = [la + i * block for i in range(count)]
    targets = [ra + i * block for i in range(count)]
    lengths = [block] * count
    wall = []
    for _ in range(50):
        w = time.perf_counter_ns()
        batch = prefill.batch_transfer_async_write(session, locals_, targets, lengths)
        wall.append(time.perf_counter_ns() - w)
        assert prefill.get_batch_transfer_status([batch]) == 0
    print(f"python: mooncake.engine batch_transfer_async_write of {count} descriptors (argument checks + submit), "
          f"wall {percentiles(wall)}")
    prefill.close()
    decode.close()


def load() -> str:
    """The load averages as /proc/loadavg says (1, 5, 15 minutes)."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def round_trips(directory: str, seconds: float) -> float:
    """64 B writes, one at a time, through ``Client.transfer_sync``; returns the p50 in microseconds."""
    source, target, local, remote, handle = pair(directory, 4096)
    for _ in range(2000):
        source.transfer_sync(WRITE, handle, local.address, remote.address, 64)
    samples = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        start = time.perf_counter_ns()
        source.transfer_sync(WRITE, handle, local.address, remote.address, 64)
        samples.append(time.perf_counter_ns() - start)
    print(f"python: 64 B write round trip (Client.transfer_sync), {percentiles(samples)}, load {load()}")
    source.close()
    target.close()
    return sorted(samples)[len(samples) // 2] / 1e3


def engine_round_trips(directory: str, seconds: float) -> None:
    """64 B writes, one at a time, through ``TransferEngine.transfer_sync_write`` (argument checks, session lookup)."""
    os.environ["XFERD_DIR"] = directory
    from mooncake.engine import TransferEngine
    prefill, decode = TransferEngine(), TransferEngine()
    try:
        if prefill.initialize("127.0.0.1", "P2PHANDSHAKE", "tcp", "") != 0 or \
                decode.initialize("127.0.0.1", "P2PHANDSHAKE", "tcp", "") != 0:
            print("engine: round trip not measured (the daemon gives engines no port)")
            return
        local, remote = prefill.allocate_managed_buffer(4096), decode.allocate_managed_buffer(4096)
        session = f"127.0.0.1:{decode.get_rpc_port()}"
        for _ in range(2000):
            prefill.transfer_sync_write(session, local, remote, 64)
        samples = []
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            start = time.perf_counter_ns()
            if prefill.transfer_sync_write(session, local, remote, 64) != 0:
                raise RuntimeError("transfer_sync_write failed")
            samples.append(time.perf_counter_ns() - start)
        print(f"python: 64 B write round trip (TransferEngine.transfer_sync_write), {percentiles(samples)}, "
              f"load {load()}")
    finally:
        prefill.close()
        decode.close()


def java_round_trips(directory: str, seconds: float, launcher: str) -> float | None:
    """``xferd bench`` 64 B round trips (batch 1, window 1) against the same daemon; the p50 in microseconds."""
    result = subprocess.run([launcher, "bench", "--dir", directory, "--duration", f"{max(1, round(seconds))}s",
                             "--block-size", "64", "--batch-size", "1", "--window", "1"],
                            capture_output=True, text=True, timeout=600)
    match = re.search(r"latency per request.*?p50 ([0-9.]+)", result.stdout)
    lines = [line for line in result.stdout.splitlines() if line.startswith("latency")]
    print(f"java:   64 B round trip: {lines[0] if lines else result.stdout[-300:] + result.stderr[-300:]}, "
          f"load {load()}")
    return float(match.group(1)) if match else None


def alternating_round_trips(directory: str, seconds: float, launcher: str, rounds: int) -> None:
    """Python and Java 64 B round trips, alternating ``rounds`` times, so both see the same load; the ratio of
    each pair and their median."""
    ratios = []
    for _ in range(rounds):
        python_p50 = round_trips(directory, seconds)
        java_p50 = java_round_trips(directory, seconds, launcher)
        if java_p50:
            ratios.append(python_p50 / java_p50)
            print(f"ratio:  python p50 / java p50 = {ratios[-1]:.2f}")
    if ratios:
        ratios.sort()
        print(f"ratio:  median of {len(ratios)} pairs {ratios[len(ratios) // 2]:.2f} "
              f"(each: {', '.join(f'{r:.2f}' for r in ratios)})")


def write_batches(source: xferd.Client, handle: int, local: int, remote: int, seconds: float,
                  batch: int = 32, window: int = 4, block: int = MIB) -> float:
    """Write 1 MiB blocks from ``local`` to ``remote`` (each ``block * batch * window`` bytes) in batches of
    ``batch``, ``window`` batches in flight, for ``seconds``; the GB/s of bytes reported complete."""
    offsets = [[w * batch * block + i * block for i in range(batch)] for w in range(window)]
    in_flight = []
    moved = 0
    start = time.perf_counter()
    end = start + seconds
    w = 0
    while time.perf_counter() < end:
        while len(in_flight) < window:
            o = offsets[w % window]
            in_flight.append(source.submit(WRITE, handle, [local + x for x in o], [remote + x for x in o],
                                           [block] * batch))
            w += 1
        moved += source.wait(in_flight.pop(0), 60)
    for transfer in in_flight:
        moved += source.wait(transfer, 60)
    return moved / (time.perf_counter() - start) / 1e9


def throughput(directory: str, seconds: float) -> None:
    block, batch, window = MIB, 32, 4
    source, target, local, remote, handle = pair(directory, block * batch * window)
    gbs = write_batches(source, handle, local.address, remote.address, seconds, batch, window, block)
    print(f"python: write {gbs:.3f} GB/s (1 MiB blocks, batches of {batch}, {window} in flight)")
    source.close()
    target.close()


def java_bench(directory: str, seconds: float, launcher: str) -> None:
    runs = [("64 B round trip", ["--block-size", "64", "--batch-size", "1", "--window", "1"]),
            ("1 MiB batches", ["--block-size", "1MiB", "--batch-size", "32", "--window", "4"])]
    for label, arguments in runs:
        result = subprocess.run([launcher, "bench", "--dir", directory, "--duration", f"{int(seconds)}s", *arguments],
                                capture_output=True, text=True, timeout=600)
        lines = [line for line in result.stdout.splitlines() if line.startswith(("write:", "latency"))]
        print(f"java:   {label}: " + " | ".join(lines) if lines else f"java: {label}: {result.stdout[-500:]}"
              f"{result.stderr[-500:]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", help="a running daemon's directory (default: start one)")
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--skip-java", action="store_true")
    parser.add_argument("--netns", action="store_true",
                        help="also measure 1 MiB write batches between two network namespaces (root)")
    parser.add_argument("--skip-local", action="store_true", help="with --netns: only the namespace figures")
    parser.add_argument("--round-trips", type=int, default=0, metavar="N",
                        help="only the 64 B round trip: Python and Java alternating N times, and their ratios")
    parser.add_argument("--daemon-idle", choices=("backoff", "yielding", "busy-spin"),
                        help="the started daemon's --idle (default: the daemon's own, backoff)")
    parser.add_argument("--xferd", default=os.path.join(os.path.dirname(HERE), "bin", "xferd"),
                        help="the launcher whose `bench` is the Java baseline (default: this checkout's bin/xferd)")
    options = parser.parse_args()
    if options.netns:
        import bench_netns
        bench_netns.install_signal_exit()
    if options.skip_local:
        return bench_netns.run(options.duration, options.xferd, options.skip_java) if options.netns else 0
    daemon = None
    directory = options.dir
    if directory is None:
        import support
        daemon = support.Daemon(*(["--idle", options.daemon_idle] if options.daemon_idle else []))
        directory = daemon.directory
    try:
        print(f"bench: daemon in {directory} (idle {options.daemon_idle or 'default'}), {os.cpu_count()} CPUs, "
              f"load {load()}")
        if options.round_trips:
            alternating_round_trips(directory, options.duration, options.xferd, options.round_trips)
            return 0
        submit_cost(directory)
        engine_submit_cost(directory)
        round_trips(directory, options.duration)
        engine_round_trips(directory, options.duration)
        throughput(directory, options.duration)
        if not options.skip_java:
            java_bench(directory, options.duration, options.xferd)
    finally:
        if daemon is not None:
            daemon.stop()
    if options.netns:
        return bench_netns.run(options.duration, options.xferd, options.skip_java)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit("bench: interrupted (what it started is gone)")
