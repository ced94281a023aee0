#!/usr/bin/env python3
"""What a waiting Python client costs and how late it wakes: one client library against another, alternated, against
one daemon.

    python3 perf/python-wait.py --baseline DIR [--baseline DIR2 ...] [--rounds 3] [--hold-s 1] [--duration 3]
                                [--waiters 8] [--resume-holds 10]

DIR is a ``python/`` directory holding another ``xferd`` package (e.g. main's:
``git archive main python/xferd | tar -x -C /tmp/base`` then ``--baseline /tmp/base/python``); the other side is this
tree's. Starts a daemon (``--rpc-address 127.0.0.1:0``, a private directory under /dev/shm, liveness 120 s so a daemon
stopped on purpose is not counted gone), then, each round, runs a fresh interpreter per library that measures:

1. **held**: the daemon is stopped (SIGSTOP) while a 4 KiB write is submitted and continued ``--hold-s`` later; the
   waiting process's CPU seconds (user + system, ``resource.getrusage``) and voluntary context switches (its
   wake-ups) over the wait, per held second (three holds); then 20 holds of 30 ms: from SIGCONT to the wait's
   return (the daemon's resumption, its copy, and how late the waiter wakes), p50 / p90;
2. **64 B round trips** (submit, wait; one at a time) for ``--duration`` s: p50 / p99;
3. **16 MiB local writes** (one at a time) for ``--duration`` s: p50 / p99 of the wait, a wait long enough to leave
   the spin and sleep: a waiter that polls wakes up to a poll interval after the completion;
4. **many waiters held**: as 1, with ``--waiters`` threads each waiting on its own held 4 KiB write (one of them
   watches the completion doorbell, the others sleep on their transfers' events): CPU seconds and wake-ups of the
   process per held second (two holds); then the time from SIGCONT until every wait returned, p50 and p90 of
   ``--resume-holds`` holds of 30 ms;
5. **the client's own CPU per request**, without the daemon's share or the machine's scheduling: ``submit_one`` of
   256 requests while the daemon is stopped (µs per request), and a poll taking 64 completions written into the
   ring by this process for requests it put in the pending map itself (µs per completion); medians of 20.

Figures swing with the machine's load (printed): compare the two libraries within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PYTHON_DIR = os.path.join(REPO, "python")
MIB = 1 << 20
sys.path.append(os.path.join(PYTHON_DIR, "tests"))  # last: the xferd measured is the one PYTHONPATH names


def percentile(samples_ns: list[int], q: float) -> float:
    """The ``q`` quantile of ``samples_ns``, in microseconds."""
    ordered = sorted(samples_ns)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] / 1e3


def held_wait(client, memory, hold_s: float) -> tuple[float, float, int]:
    """CPU seconds and voluntary context switches of this process while it waits ``hold_s`` for a held write, and the
    nanoseconds from the daemon's continuation (SIGCONT sent) to the wait's return."""
    from procfs import all_threads_stopped  # the tests' helper: no xferd import, so the library measured stays
    from xferd.protocol import WRITE
    pid = client._daemon_pid
    os.kill(pid, signal.SIGSTOP)
    try:
        deadline = time.monotonic() + 30
        while not all_threads_stopped(pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        transfer = client.submit(WRITE, client.segment_handle, [memory.address], [memory.address + 4096], [4096])
        continued = []

        def resume() -> None:
            continued.append(time.monotonic_ns())
            os.kill(pid, signal.SIGCONT)

        before = resource.getrusage(resource.RUSAGE_SELF)
        timer = threading.Timer(hold_s, resume)
        timer.start()
        client.wait(transfer, 60)
        returned = time.monotonic_ns()
        after = resource.getrusage(resource.RUSAGE_SELF)
        timer.join()
    finally:
        os.kill(pid, signal.SIGCONT)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return cpu, after.ru_nvcsw - before.ru_nvcsw, returned - continued[0]


def held_waits(client, memory, waiters: int, hold_s: float) -> tuple[float, float, int]:
    """As :func:`held_wait` with ``waiters`` threads, each waiting for its own held 4 KiB write; the nanoseconds from
    SIGCONT until the last wait returned."""
    from procfs import all_threads_stopped
    from xferd.protocol import WRITE
    pid = client._daemon_pid
    os.kill(pid, signal.SIGSTOP)
    try:
        deadline = time.monotonic() + 30
        while not all_threads_stopped(pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        transfers = [client.submit(WRITE, client.segment_handle, [memory.address + 8192 * i],
                                   [memory.address + 8192 * i + 4096], [4096]) for i in range(waiters)]
        errors: list[BaseException] = []

        def wait(transfer) -> None:
            try:
                client.wait(transfer, 60)
            except BaseException as ex:  # noqa: BLE001 - reported below
                errors.append(ex)

        threads = [threading.Thread(target=wait, args=(t,)) for t in transfers]
        for thread in threads:
            thread.start()
        time.sleep(0.05)  # every waiter past its spin and asleep before the measured span
        continued = []

        def resume() -> None:
            continued.append(time.monotonic_ns())
            os.kill(pid, signal.SIGCONT)

        before = resource.getrusage(resource.RUSAGE_SELF)
        timer = threading.Timer(hold_s, resume)
        timer.start()
        timer.join()
        for thread in threads:
            thread.join(60)
        returned = time.monotonic_ns()
        after = resource.getrusage(resource.RUSAGE_SELF)
        if errors:
            raise errors[0]
    finally:
        os.kill(pid, signal.SIGCONT)
    # CPU and wake-ups over the hold only (the span after SIGCONT is a few ms of the hold_s)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return cpu, after.ru_nvcsw - before.ru_nvcsw, returned - continued[0]


def client_costs(client, memory, rounds: int = 20) -> tuple[float, float]:
    """Microseconds of this process's CPU per ``submit_one`` (the daemon stopped, so the submissions only queue) and
    per completion taken by a poll (records written here, for requests entered in the pending map here): medians of
    ``rounds``."""
    from procfs import all_threads_stopped
    from xferd import Transfer
    from xferd.protocol import COMPLETION, WRITE, encode_completion
    from xferd.rings import RingView, RingWriter
    pid, submits, drains = client._daemon_pid, [], []
    count = min(256, client.max_in_flight - 1)
    for _ in range(rounds):
        os.kill(pid, signal.SIGSTOP)
        try:
            deadline = time.monotonic() + 30
            while not all_threads_stopped(pid) and time.monotonic() < deadline:
                time.sleep(0.01)
            started = time.process_time_ns()
            transfers = [client.submit_one(WRITE, client.segment_handle, memory.address, memory.address + 64, 64)
                         for _ in range(count)]
            submits.append((time.process_time_ns() - started) / count / 1e3)
        finally:
            os.kill(pid, signal.SIGCONT)
        for transfer in transfers:
            client.wait(transfer, 60)
    view = RingView(client._rings, 0, client.welcome.completion_ring_length)
    try:
        writer = RingWriter(view)
        for round_ in range(rounds):
            request_ids = [(1 << 40) + 64 * round_ + i for i in range(64)]
            for request_id in request_ids:
                client._pending[request_id] = Transfer(WRITE, 1, 64, 1)
                assert writer.write(COMPLETION, encode_completion(request_id, 0, 64))
            started = time.process_time_ns()
            taken = client.poll()
            drains.append((time.process_time_ns() - started) / max(1, taken) / 1e3)
    finally:
        view.release()
    return sorted(submits)[rounds // 2], sorted(drains)[rounds // 2]


def timed_waits(client, memory, length: int, seconds: float) -> list[int]:
    """Submit-to-completion times of one write of ``length`` bytes after another, for ``seconds``."""
    from xferd.protocol import WRITE
    samples = []
    handle, source, target = client.segment_handle, memory.address, memory.address + length
    end = time.monotonic_ns() + int(seconds * 1e9)
    while time.monotonic_ns() < end:
        started = time.monotonic_ns()
        client.transfer_sync(WRITE, handle, source, target, length, timeout_s=30)
        samples.append(time.monotonic_ns() - started)
    return samples


def child(directory: str, hold_s: float, seconds: float, waiters: int, resume_holds: int) -> None:
    """Measure with whatever ``xferd`` is first on the path; print one JSON line."""
    import xferd
    with xferd.Client(directory) as client:
        memory = client.allocate_memory(32 * MIB)
        client.register_memory(memory.address, memory.length, "cpu:0")
        held = [held_wait(client, memory, hold_s) for _ in range(3)]
        resumes = [held_wait(client, memory, 0.03)[2] for _ in range(20)]
        round_trips = timed_waits(client, memory, 64, seconds)
        large = timed_waits(client, memory, 16 * MIB, seconds)
        many = [held_waits(client, memory, waiters, hold_s) for _ in range(2)]
        many_resumes = [held_waits(client, memory, waiters, 0.03)[2] for _ in range(resume_holds)]
        submit_us, drain_us = client_costs(client, memory)
    print(json.dumps({
        "library": os.path.dirname(xferd.__file__),
        "held_cpu_per_s": [round(cpu / hold_s, 4) for cpu, _, _ in held],
        "held_wakeups_per_s": [round(switches / hold_s) for _, switches, _ in held],
        "resume_p50_us": percentile(resumes, 0.5), "resume_p90_us": percentile(resumes, 0.9),
        "rt64_p50_us": percentile(round_trips, 0.5), "rt64_p99_us": percentile(round_trips, 0.99),
        "rt64_samples": len(round_trips),
        "w16m_p50_us": percentile(large, 0.5), "w16m_p99_us": percentile(large, 0.99), "w16m_samples": len(large),
        "many_cpu_per_s": [round(cpu / hold_s, 4) for cpu, _, _ in many],
        "many_wakeups_per_s": [round(switches / hold_s) for _, switches, _ in many],
        "many_resume_p50_us": percentile(many_resumes, 0.5), "many_resume_p90_us": percentile(many_resumes, 0.9),
        "submit_us": round(submit_us, 3), "drain_us": round(drain_us, 3),
    }))


def load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", action="append", help="a python/ directory with another xferd package")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hold-s", type=float, default=1.0)
    parser.add_argument("--duration", type=float, default=3.0)
    parser.add_argument("--waiters", type=int, default=8, help="threads of the many-waiters case")
    parser.add_argument("--resume-holds", type=int, default=10, help="30 ms holds of the many-waiters case")
    parser.add_argument("--child", metavar="DIR", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        child(options.child, options.hold_s, options.duration, options.waiters, options.resume_holds)
        return 0
    if not options.baseline:
        parser.error("--baseline is required")
    import support
    daemon = support.Daemon("--liveness-timeout-ms", "120000")
    try:
        libraries = {f"baseline {i + 1}": os.path.abspath(path) for i, path in enumerate(options.baseline)}
        libraries["this tree"] = PYTHON_DIR
        print(f"load before: {load()}")
        for round_ in range(1, options.rounds + 1):
            for name, path in libraries.items():
                result = subprocess.run(
                    [sys.executable, os.path.abspath(__file__), "--child", daemon.directory, "--hold-s",
                     str(options.hold_s), "--duration", str(options.duration), "--waiters", str(options.waiters),
                     "--resume-holds", str(options.resume_holds)],
                    capture_output=True, text=True, timeout=600, env=dict(os.environ, PYTHONPATH=path))
                if result.returncode != 0:
                    raise SystemExit(f"{name} failed:\n{result.stderr}")
                figures = json.loads(result.stdout.strip().splitlines()[-1])
                print(f"round {round_} {name:10} ({figures['library']}), load {load()}:\n"
                      f"  held {options.hold_s} s: CPU s per s {figures['held_cpu_per_s']}, "
                      f"wake-ups per s {figures['held_wakeups_per_s']}\n"
                      f"  held 30 ms, SIGCONT to the wait's return: p50 {figures['resume_p50_us']:.0f} "
                      f"p90 {figures['resume_p90_us']:.0f} us (20)\n"
                      f"  64 B round trip p50 {figures['rt64_p50_us']:.1f} p99 {figures['rt64_p99_us']:.1f} us "
                      f"({figures['rt64_samples']})\n"
                      f"  16 MiB write    p50 {figures['w16m_p50_us']:.0f} p99 {figures['w16m_p99_us']:.0f} us "
                      f"({figures['w16m_samples']})\n"
                      f"  held {options.hold_s} s, {options.waiters} waiters: CPU s per s {figures['many_cpu_per_s']}, "
                      f"wake-ups per s {figures['many_wakeups_per_s']}; SIGCONT after 30 ms to the last wait's "
                      f"return p50 {figures['many_resume_p50_us']:.0f} p90 {figures['many_resume_p90_us']:.0f} us "
                      f"({options.resume_holds})\n"
                      f"  client CPU: submit_one {figures['submit_us']:.2f} us, a completion taken "
                      f"{figures['drain_us']:.2f} us (medians of 20)", flush=True)
    finally:
        daemon.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
