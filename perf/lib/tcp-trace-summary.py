#!/usr/bin/env python3
"""One prompt's time beside its connections' TCP state, for bench-netns.sh --tcp-trace.

    tcp-trace-summary.py PROMPT.trace SAMPLES-A SAMPLES-B [PORT]

PROMPT.trace is `xferd profile --trace` of one prompt (daemon A's journal: each slice's answer time and wire time);
SAMPLES-A/B are perf/lib/tcp-trace.sh's samples of the sending (A) and receiving (B) namespaces. Prints one row per
sample inside the prompt's transfer: the slices answered since the last row; per peer connection (named by its
ephemeral port) A's send queue (written, not yet acknowledged) and cwnd, B's receive queue (received, not yet read
by the daemon), and from the last ss sample unacked segments, retransmits and rtt; the daemons' peer threads that
ran or waited on the run queue in that interval (ms of CPU / ms runnable but not running). Then totals over the
prompt and the threads' over the whole run.
"""
import re
import sys
from datetime import datetime, timezone
from typing import Dict, List, Optional, Tuple

STAMP = re.compile(r"^\s+(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.(\d+)Z (\w+)(?: \d+)?\s+request (\d+)(.*)$")
WIRE = re.compile(r"([\d,]+) B .* wire ([\d.]+) (ns|us|ms|s) ")
UNITS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
FIELD = re.compile(r"\b(cwnd|unacked|rcv_space|bytes_acked|bytes_received|retrans|rtt|lastrcv|lastsnd|"
                   r"delivery_rate|rwnd_limited|notsent):(\S+)")
SKMEM = re.compile(r"skmem:\(r(\d+),rb(\d+),t(\d+),tb(\d+)")


def epoch(day_time: str, fraction: str) -> float:
    """Seconds since the epoch of a journal time stamp (UTC)."""
    whole = datetime.strptime(day_time, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc).timestamp()
    return whole + float("0." + fraction)


def read_trace(path: str) -> Tuple[List[float], List[Tuple[float, float, int]]]:
    """Submit and completion times, and (answered at, wire ms, bytes) per slice."""
    times: List[float] = []
    slices: List[Tuple[float, float, int]] = []
    with open(path) as lines:
        for line in lines:
            match = STAMP.match(line)
            if not match:
                continue
            at = epoch(match.group(1), match.group(2))
            if match.group(3) in ("submitted", "completed"):
                times.append(at)
            elif match.group(3) == "slice":
                wire = WIRE.search(line)
                if wire:
                    slices.append((at, float(wire.group(2)) * UNITS[wire.group(3)],
                                   int(wire.group(1).replace(",", ""))))
    return times, slices


Sample = Tuple[float, Dict[str, Dict[str, str]], Dict[str, Tuple[str, str, int, int]]]


def read_samples(path: str, port: str) -> List[Sample]:
    """(time, {ephemeral port: fields}, {tid: (comm, state, cpu ns, wait ns)}) per sample."""
    samples: List[Sample] = []
    connection: Optional[str] = None
    last_ss: Dict[str, Dict[str, str]] = {}
    with open(path) as lines:
        for line in lines:
            if line.startswith("T "):
                samples.append((float(line[2:]), {}, {}))
                connection = None
            elif not samples:
                continue
            elif line.startswith("P "):
                parts = line.split()
                if len(parts) >= 6:
                    samples[-1][2][parts[1]] = (parts[2], parts[3], int(parts[4]), int(parts[5]))
            elif line[:1].isdigit():
                parts = line.split()
                if len(parts) >= 4:
                    local, peer = parts[2], parts[3]
                    # the ephemeral end names the connection on both sides: A's local one, B's peer's
                    connection = (peer if local.endswith(":" + port) else local).rsplit(":", 1)[-1]
                    last_ss[connection] = {"recvq": parts[0], "sendq": parts[1]}
                    samples[-1][1].setdefault(connection, {}).update(last_ss[connection])
            elif connection is not None:
                fields = last_ss[connection]
                fields.update(FIELD.findall(line))
                skmem = SKMEM.search(line)
                if skmem:
                    fields["rb"] = skmem.group(2)
                samples[-1][1].setdefault(connection, {}).update(fields)
    return samples


def number(fields: Dict[str, str], key: str, default: float = 0.0) -> float:
    value = fields.get(key)
    if value is None:
        return default
    try:
        return float(value.split("/")[-1] if key == "retrans" else value.split("/")[0].rstrip("ms"))
    except ValueError:
        return default


def main(argv: List[str]) -> int:
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    port = argv[4] if len(argv) > 4 else "12001"
    times, slices = read_trace(argv[1])
    if not times:
        print("no records in " + argv[1])
        return 1
    start, end = min(times), max(times)
    sides = {"A": read_samples(argv[2], port), "B": read_samples(argv[3], port)}
    print(f"prompt {1e3 * (end - start):.1f} ms, {len(slices)} slices; rows: ms since its first submit")
    print("  ms    | slices answered (mean wire ms) | per connection (ephemeral port) A: send-Q KiB (written, not yet"
          " acknowledged) cwnd; B: recv-Q KiB (received, not yet read by the daemon) | last ss: unacked retrans rtt"
          " | peer threads that ran or waited: ms ran / ms runnable not running")
    previous: Optional[Sample] = None
    for sample in sides["A"]:
        at = sample[0]
        if at < start - 0.02 or at > end + 0.02:
            previous = sample if at < start - 0.02 else previous
            continue
        since = previous[0] if previous else at - 0.01
        answered = [s for s in slices if since < s[0] <= at]
        wire = sum(s[1] for s in answered) / len(answered) if answered else 0.0
        row = [f"{1e3 * (at - start):7.1f} | {len(answered):3d} ({wire:6.1f})"]
        receiver = min(sides["B"], key=lambda s: abs(s[0] - at)) if sides["B"] else None
        for name, fields in sorted(sample[1].items()):
            unread = int(receiver[1].get(name, {}).get("recvq", "0")) if receiver else 0
            row.append(f"| {name} A {int(fields['sendq']) >> 10:5d} {fields.get('cwnd', '-'):>4} B {unread >> 10:5d}"
                       f" ({number(fields, 'unacked'):4.0f} {number(fields, 'retrans'):4.0f}"
                       f" {number(fields, 'rtt'):5.2f})")
        threads = []
        for side_name, side in sides.items():
            now = min(side, key=lambda s: abs(s[0] - at))
            before_sample = max((s for s in side if s[0] < now[0]), key=lambda s: s[0], default=None)
            if before_sample is None:
                continue
            for tid, (comm, state, cpu, waited) in now[2].items():
                old = before_sample[2].get(tid)
                if old is None:
                    continue
                ran, queued = (cpu - old[2]) / 1e6, (waited - old[3]) / 1e6
                if ran >= 0.5 or queued >= 0.5:
                    threads.append(f"{side_name}:{comm[11:]}{state} {ran:.1f}/{queued:.1f}")
        row.append("| " + " ".join(threads))
        print(" ".join(row))
        previous = sample
    print_totals(sides, start, end)
    return 0


def bracket(side: List[Sample], start: float, end: float) -> Optional[Tuple[Sample, Sample]]:
    """The last sample before start and the first after end (or the nearest inside)."""
    before = [s for s in side if s[0] <= start]
    after = [s for s in side if s[0] >= end]
    first = before[-1] if before else (side[0] if side else None)
    last = after[0] if after else (side[-1] if side else None)
    return (first, last) if first and last and last[0] > first[0] else None


def thread_times(first: Sample, last: Sample) -> Dict[str, List[float]]:
    """Per thread name (threads of one name summed): [ms run, ms runnable but not running] between two samples."""
    per_name: Dict[str, List[float]] = {}
    for tid, (comm, _state, cpu, waited) in last[2].items():
        old = first[2].get(tid)
        if old is None:
            continue
        totals = per_name.setdefault(comm, [0.0, 0.0])
        totals[0] += (cpu - old[2]) / 1e6
        totals[1] += (waited - old[3]) / 1e6
    return per_name


def describe(per_name: Dict[str, List[float]]) -> str:
    return ", ".join(f"{name} ran {ran:.0f} / runnable not running {queued:.0f}"
                     for name, (ran, queued) in sorted(per_name.items()) if ran + queued >= 1)


def print_totals(sides: Dict[str, List[Sample]], start: float, end: float) -> None:
    """Where the prompt's time went, summed over the samples that bracket it; the threads over the whole run too."""
    print(f"totals over the prompt ({1e3 * (end - start):.0f} ms; samples bracket it):")
    for side_name, side in sides.items():
        span = bracket(side, start, end)
        if span is None:
            continue
        first, last = span
        wall = 1e3 * (last[0] - first[0])
        whole = 1e3 * (side[-1][0] - side[0][0])
        print(f"  {side_name} threads over the whole run ({whole:.0f} ms): {describe(thread_times(side[0], side[-1]))}")
        print(f"  {side_name} threads over the prompt ({wall:.0f} ms; ms, threads of one name summed): "
              f"{describe(thread_times(first, last))}")
        inside = [s for s in side if start <= s[0] <= end]
        for name in sorted(last[1]):
            retrans = number(last[1][name], "retrans") - number(first[1].get(name, {}), "retrans")
            if side_name == "A":
                idle = sum(1 for s in inside if name in s[1] and int(s[1][name]["sendq"]) == 0)
                queued = sum(1 for s in inside if name in s[1] and int(s[1][name]["sendq"]) > 0)
                print(f"  A port {name}: {len(inside)} samples inside: {idle} with nothing written and unacknowledged"
                      f" (the wire idle), {queued} with bytes in the socket; {retrans:.0f} segments retransmitted")
            else:
                behind = sum(1 for s in inside if name in s[1] and int(s[1][name]["recvq"]) >= 256 << 10)
                print(f"  B port {name}: {len(inside)} samples inside: {behind} with >= 256 KiB received but not yet read"
                      f" by the daemon")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
