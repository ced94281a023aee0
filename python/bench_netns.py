"""``bench.py --netns``: 1 MiB write batches between two network namespaces, from Python and from Java, one run.

The parent (root) makes namespaces A and B joined by a veth pair and a daemon in each (one cluster token, so they
trust each other), then runs, each as ``ip netns exec NS python3 bench_netns.py ROLE ...``:

* ``target`` in B: registers a buffer, prints ``TARGET <segment> <address> <size>``, holds it until stdin closes;
* ``writer`` in A: writes into that buffer through A's daemon (so over the veth pair) and prints ``GBPS <x>``;

and ``bin/xferd bench`` in A against the same buffer, with the same block, batch and window. Everything it made is
removed in a ``finally``: processes, namespaces, daemon directories, the token file.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BLOCK, BATCH, WINDOW = 1 << 20, 32, 4
SIZE = BLOCK * BATCH * WINDOW
ROLE_TIMEOUT_S = 120


def install_signal_exit() -> None:
    """SIGTERM and SIGHUP unwind like Ctrl-C, so every ``finally`` below runs."""
    def leave(signum: int, _frame) -> None:
        raise KeyboardInterrupt(f"signal {signum}")
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, leave)


def _in_namespace(namespace: str, *arguments: str) -> list[str]:
    return ["ip", "netns", "exec", namespace, sys.executable, os.path.abspath(__file__), *arguments]


def _environment() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=HERE)


def _end(process: subprocess.Popen) -> None:
    """Close stdin, then SIGTERM, then SIGKILL the process group of ``process``."""
    if process.stdin is not None:
        try:
            process.stdin.close()
        except OSError:
            pass
    for sig, wait_s in ((None, 5), (signal.SIGTERM, 10), (signal.SIGKILL, 10)):
        if sig is not None and process.poll() is None:
            try:
                os.killpg(process.pid, sig)
            except ProcessLookupError:
                pass
        try:
            process.wait(wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


def _java_write(namespace: str, directory: str, target: tuple[str, str, str], seconds: float,
                launcher: str) -> tuple[float | None, str]:
    segment, address, size = target
    command = ["ip", "netns", "exec", namespace, launcher, "bench", "--dir", directory, "--target", segment,
               "--target-address", address, "--target-size", size, "--operation", "write", "--block-size", "1MiB",
               "--batch-size", str(BATCH), "--window", str(WINDOW), "--duration", f"{max(1, int(seconds))}s"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=seconds + ROLE_TIMEOUT_S)
    finally:
        _end(process)
    found = re.search(r"^RESULT .*\bgb_per_s=([0-9.]+)", output or "", re.MULTILINE)
    return (float(found.group(1)) if found else None), (output or "")


def _python_write(namespace: str, directory: str, target: tuple[str, str, str], seconds: float) -> tuple[float | None, str]:
    segment, address, _ = target
    process = subprocess.Popen(_in_namespace(namespace, "writer", directory, segment, address, str(seconds)),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=_environment(),
                               stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=seconds + ROLE_TIMEOUT_S)
    finally:
        _end(process)
    found = re.search(r"^GBPS ([0-9.]+)", output or "", re.MULTILINE)
    return (float(found.group(1)) if found else None), (output or "")


def run(seconds: float, launcher: str, skip_java: bool) -> int:
    """The namespace figures; 0 when both were measured (or Java skipped), 1 otherwise, 2 without namespaces."""
    sys.path.insert(0, os.path.join(HERE, "tests"))
    import support
    reason = support.namespaces_unavailable()
    if reason:
        print(f"netns: not measured: {reason}")
        return 2
    made: list = []
    try:
        namespaces = support.NetworkNamespaces()
        made.append(namespaces.close)
        token = support.cluster_token_file()
        made.append(lambda: os.unlink(token))
        daemon_a = support.Daemon("--cluster-token-file", token, rpc_host=namespaces.address_a,
                                  namespace=namespaces.a)
        made.append(daemon_a.stop)
        daemon_b = support.Daemon("--cluster-token-file", token, rpc_host=namespaces.address_b,
                                  namespace=namespaces.b)
        made.append(daemon_b.stop)
        print(f"netns: {namespaces.a} ({namespaces.address_a}:{daemon_a.rpc_port}) -> "
              f"{namespaces.b} ({namespaces.address_b}:{daemon_b.rpc_port}), veth pair, load "
              f"{os.getloadavg()[0]:.2f}", flush=True)
        holder = subprocess.Popen(_in_namespace(namespaces.b, "target", daemon_b.directory, str(SIZE)),
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  env=_environment(), start_new_session=True)
        made.append(lambda: _end(holder))
        line = holder.stdout.readline()  # bounded: the role exits (EOF) if the daemon refuses it
        if not line.startswith("TARGET "):
            print(f"netns: the target process in {namespaces.b} failed: {line}{holder.stdout.read()[-2000:]}")
            return 1
        _, segment, address, size = line.split()
        target = (segment, address, size)
        # fresh daemons: compile their transfer paths before anything is timed (as perf/bench-netns.sh warms up)
        _python_write(namespaces.a, daemon_a.directory, target, min(3.0, seconds))
        python_gbs, python_log = _python_write(namespaces.a, daemon_a.directory, target, seconds)
        print(f"netns python: write {python_gbs if python_gbs is not None else 'FAILED'} GB/s "
              f"(1 MiB blocks, batches of {BATCH}, {WINDOW} in flight, {seconds:g} s)"
              + ("" if python_gbs is not None else f"\n{python_log[-2000:]}"), flush=True)
        if skip_java:
            return 0 if python_gbs is not None else 1
        java_gbs, java_log = _java_write(namespaces.a, daemon_a.directory, target, seconds, launcher)
        print(f"netns java:   write {java_gbs if java_gbs is not None else 'FAILED'} GB/s (xferd bench, same "
              f"parameters)" + ("" if java_gbs is not None else f"\n{java_log[-2000:]}"))
        if python_gbs is None or java_gbs is None or java_gbs == 0:
            return 1
        print(f"netns python/java: {python_gbs / java_gbs:.2f} (target >= 0.80), load {os.getloadavg()[0]:.2f}")
        return 0
    finally:
        for undo in reversed(made):
            try:
                undo()
            except Exception as error:  # keep undoing the rest
                print(f"netns: cleanup step failed: {error}", file=sys.stderr)


def _target(directory: str, size: int) -> None:
    import xferd
    client = xferd.Client(directory)
    buffer = client.allocate_memory(size)
    client.register_memory(buffer.address, size, "cpu:0")
    print(f"TARGET {client.segment_name} {buffer.address} {size}", flush=True)
    sys.stdin.read()  # hold the buffer until the parent closes stdin (or ends this process)
    client.close()


def _writer(directory: str, segment: str, address: int, seconds: float) -> None:
    import xferd
    from bench import write_batches
    client = xferd.Client(directory)
    local = client.allocate_memory(SIZE)
    client.register_memory(local.address, SIZE, "cpu:0")
    handle = client.open_segment(segment)
    print(f"GBPS {write_batches(client, handle, local.address, address, seconds, BATCH, WINDOW, BLOCK):.3f}",
          flush=True)
    client.close()


if __name__ == "__main__":
    role = sys.argv[1]
    if role == "target":
        _target(sys.argv[2], int(sys.argv[3]))
    elif role == "writer":
        _writer(sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]))
    else:
        sys.exit(f"unknown role {role}")
