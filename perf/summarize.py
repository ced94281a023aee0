#!/usr/bin/env python3
"""Summarize a JMH JSON result file of the xferd perf benchmarks.

Prints: round-trip percentiles of xferd against the raw Agrona ring ping-pong (and their ratio), local transfer
bandwidth per block size against a plain memcpy between mapped files (and their ratio), and, when the run had
-prof gc, the allocation per operation. Usage: summarize.py RESULT.json [RUN.log]
With the run's log of a --gc run (-Dxferd.perf.threadAlloc=true), also prints the per-thread allocation of the
last measured iteration of each benchmark: which thread (client = jmh-worker, daemon = xferd-*) allocates.
"""
import json
import sys

BATCH = 32  # LocalBandwidthBenchmark.BATCH / requests per op, and blocks per memcpy op


def short(name):
    return name.rsplit(".", 2)[-2] + "." + name.rsplit(".", 1)[-1]


def params_key(entry):
    return tuple(sorted((entry.get("params") or {}).items()))


def fmt(value, digits=3):
    if value is None:
        return "-"
    return f"{value:.{digits}f}"


def ratio(a, b):
    return a / b if a is not None and b else None


def main(path):
    with open(path) as f:
        results = json.load(f)
    by = {}
    for e in results:
        by[(short(e["benchmark"]), e["mode"], params_key(e))] = e

    def find(bench, mode, **params):
        for (b, m, p), e in by.items():
            pd = dict(p)
            if b == bench and m == mode and all(pd.get(k) == v for k, v in params.items()):
                return e
        return None

    def pct(e, q):
        if e is None:
            return None
        return e["primaryMetric"].get("scorePercentiles", {}).get(q)

    def unit_scale(e):
        # report every latency in microseconds
        unit = e["primaryMetric"]["scoreUnit"]
        return {"us/op": 1.0, "ns/op": 1e-3, "ms/op": 1e3, "s/op": 1e6}.get(unit, 1.0)

    idles = sorted({dict(p).get("idle") for (b, m, p) in by if b.startswith(("RoundTrip", "RawRing"))} - {None})
    if idles:
        print("\nROUND TRIP, 64-byte local transfer (microseconds; tail beyond p99 is mostly the VM's scheduler)")
        print(f"{'benchmark':42s} {'idle':9s} {'p50':>8s} {'p90':>8s} {'p99':>9s} {'p99.9':>10s} {'mean':>8s} {'avgt':>8s}")
        for idle in idles:
            rows = {}
            # the raw ring's pong ring: one-to-one (issue #16's floor: the target is stated against it) and
            # many-to-one, as a client's completion ring is (like for like); without the parameter: one-to-one
            rings = sorted({dict(p).get("completionRing", "one-to-one") for (b, m, p) in by
                            if b.startswith("RawRing")})
            cases = [("xferd submit->completion (spin)", "RoundTripBenchmark.roundTrip", None),
                     ("xferd awaitBatch (client backoff)", "RoundTripBenchmark.roundTripAwaitBatch", None)]
            cases += [(f"raw Agrona ring ping-pong, {ring} pong", "RawRingPingPongBenchmark.pingPong", ring)
                      for ring in rings]
            for label, bench, ring in cases:
                extra = {}
                if ring is not None and any("completionRing" in dict(p) for (b, m, p) in by if b.startswith("RawRing")):
                    extra = {"completionRing": ring}
                s = find(bench, "sample", idle=idle, **extra)
                a = find(bench, "avgt", idle=idle, **extra)
                if s is None and a is None:
                    continue
                k = unit_scale(s or a)
                vals = [pct(s, q) for q in ("50.0", "90.0", "99.0", "99.9")]
                vals = [v * k if v is not None else None for v in vals]
                mean = s["primaryMetric"]["score"] * k if s else None
                avgt = a["primaryMetric"]["score"] * unit_scale(a) if a else None
                rows[(bench, ring)] = vals + [mean, avgt]
                print(f"{label:42s} {idle:9s} {fmt(vals[0]):>8s} {fmt(vals[1]):>8s} {fmt(vals[2]):>9s} "
                      f"{fmt(vals[3], 1):>10s} {fmt(mean):>8s} {fmt(avgt):>8s}")
            x = rows.get(("RoundTripBenchmark.roundTrip", None))
            for ring in rings:
                r = rows.get(("RawRingPingPongBenchmark.pingPong", ring))
                if not (x and r):
                    continue
                rs = [ratio(x[i], r[i]) for i in range(6)]
                print(f"{'ratio xferd / raw ring, ' + ring:42s} {idle:9s} {fmt(rs[0], 2):>8s} {fmt(rs[1], 2):>8s} "
                      f"{fmt(rs[2], 2):>9s} {fmt(rs[3], 2):>10s} {fmt(rs[4], 2):>8s} {fmt(rs[5], 2):>8s}")
                ok50 = x[0] is not None and r[0] and x[0] <= 2 * r[0]
                ok99 = x[2] is not None and x[2] <= 20.0
                floor = "issue #16's floor" if ring == "one-to-one" else "like for like"
                print(f"  targets against the {ring} floor ({floor}): p50 <= 2x raw ring: {'met' if ok50 else 'NOT met'} "
                      f"({fmt(rs[0], 2)}x); p99 <= 20 us: {'met' if ok99 else 'NOT met'} ({fmt(x[2])} us)")

    sizes = sorted({int(dict(p)["blockSize"]) for (b, m, p) in by if "blockSize" in dict(p)})
    if sizes:
        bandwidth(find, sizes, by)

    gc_rows = [(b, m, dict(p), e["secondaryMetrics"]["gc.alloc.rate.norm"]) for (b, m, p), e in sorted(by.items())
               if "gc.alloc.rate.norm" in e.get("secondaryMetrics", {})]
    if gc_rows:
        print("\nALLOCATION (-prof gc; counts every thread of the fork, so the in-process daemon's too;"
              " trust the avgt/thrpt rows, sample mode divides by fewer ops)")
        for b, m, p, g in gc_rows:
            rate = by[(b, m, tuple(sorted(p.items())))]["secondaryMetrics"].get("gc.alloc.rate", {}).get("score")
            ps = ",".join(f"{k}={v}" for k, v in sorted(p.items()))
            print(f"  {b:42s} {m:7s} {ps:28s} gc.alloc.rate.norm {g['score']:10.3f} {g['scoreUnit']:5s}"
                  f"  (gc.alloc.rate {fmt(rate)} MB/s)")


def percentile(e, q):
    """The q-quantile (0..1) of a sample-mode result's pooled raw histogram, in its unit; None without one."""
    pairs = sorted((float(v), int(c)) for fork in e["primaryMetric"].get("rawDataHistogram") or []
                   for iteration in fork for v, c in iteration)
    total = sum(c for _, c in pairs)
    seen = 0
    for value, count in pairs:
        seen += count
        if seen >= q * total:
            return value
    return None


def iteration_medians(e):
    """The median op time of each measured iteration of a sample-mode result (its raw histogram), in its unit."""
    medians = []
    for fork in e["primaryMetric"].get("rawDataHistogram") or []:
        for iteration in fork:
            pairs = sorted((float(v), int(c)) for v, c in iteration)
            total = sum(c for _, c in pairs)
            if total == 0:
                continue
            seen = 0
            for value, count in pairs:
                seen += count
                if 2 * seen >= total:
                    medians.append(value)
                    break
    return medians


def bandwidth(find, sizes, by):
    """Local bandwidth per block size, xferd against memcpy. Sample mode (the benchmarks' own since round five):
    GB/s of the median batch (robust to batches the VM's scheduler stalled) and of the mean, the spread of the
    iterations' medians, and the ratio at the fastest tenth of the batches (p10: what a batch costs when neither
    thread was descheduled; on a loaded VM even the median can be a stalled batch). Throughput mode (older results,
    or -bm thrpt): the mean and JMH's error only."""
    print(f"\nLOCAL BANDWIDTH, batches of {BATCH} WRITE requests (GB/s = 1e9 bytes/s; p50: of the median batch, "
          "mean: of the mean batch time; +-: half the range of the iterations' p50s, or JMH's error in thrpt mode)")
    print(f"{'block':>24s} {'xferd p50':>10s} {'memcpy p50':>11s} {'ratio':>6s} {'xferd mean':>11s} "
          f"{'memcpy mean':>12s} {'ratio':>6s} {'xferd us':>9s} {'memcpy us':>10s} {'xferd +-':>9s} {'memcpy +-':>10s} "
          f"{'p10 ratio':>9s}")
    # api=requests: 32 SUBMIT records, 32 completions; api=batch: one SUBMIT_BATCH record, one completion
    apis = sorted({dict(p).get("api", "requests") for (b, m, p) in by
                   if b == "LocalBandwidthBenchmark.writeBatch"}, reverse=True) or ["requests"]
    with_api = any("api" in dict(p) for (b, m, p) in by)
    # layout=adjacent: block i lands at block i (the daemon copies a run as one span); scattered: at BATCH-1-i
    layouts = sorted({dict(p).get("layout", "adjacent") for (b, m, p) in by
                      if b == "LocalBandwidthBenchmark.writeBatch"}) or ["adjacent"]
    with_layout = any("layout" in dict(p) for (b, m, p) in by)

    def pick(bench, size, api=None, layout="adjacent"):
        params = {"blockSize": str(size)}
        if api is not None and with_api:
            params["api"] = api
        if with_layout:
            params["layout"] = layout
        return find(bench, "sample", **params) or find(bench, "thrpt", **params)

    def figures(e, size):
        """(GB/s at p50, GB/s at mean, us per batch at p50, spread as a share, time at p10) of one result, or Nones."""
        if e is None:
            return None, None, None, None, None
        metric = e["primaryMetric"]
        unit = metric["scoreUnit"]
        if e["mode"] == "thrpt":
            per_s = metric["score"] * {"ops/s": 1, "ops/ms": 1e3, "ops/us": 1e6}.get(unit, 1)
            half = metric.get("scoreError")
            spread = half / metric["score"] if half is not None and half == half and metric["score"] else None
            return None, per_s * BATCH * size / 1e9, None, spread, None
        to_us = {"us/op": 1.0, "ns/op": 1e-3, "ms/op": 1e3, "s/op": 1e6}.get(unit, 1.0)
        p50 = metric.get("scorePercentiles", {}).get("50.0")
        mean = metric["score"]
        medians = iteration_medians(e)
        spread = (max(medians) - min(medians)) / 2 / p50 if medians and p50 else None
        gb = lambda us: BATCH * size / (us * 1e3) if us else None
        return (gb(p50 * to_us if p50 else None), gb(mean * to_us), p50 * to_us if p50 else None, spread,
                percentile(e, 0.1))

    for size, api, layout in [(size, api, layout) for size in sizes for api in apis for layout in layouts]:
        x50, xmean, xus, xspread, x10 = figures(
            pick("LocalBandwidthBenchmark.writeBatch", size, api, layout), size)
        m50, mmean, mus, mspread, m10 = figures(pick("MemcpyBaselineBenchmark.copyBatch", size, None, layout), size)
        label = f"{size // 1024} KiB" if size < 1 << 20 else f"{size >> 20} MiB"
        if api != "requests":
            label += f" ({api})"
        if layout != "adjacent":
            label += f" {layout}"
        pc = lambda v: "-" if v is None else f"{100 * v:.0f}%"
        print(f"{label:>24s} {fmt(x50, 2):>10s} {fmt(m50, 2):>11s} {fmt(ratio(x50, m50), 2):>6s} "
              f"{fmt(xmean, 2):>11s} {fmt(mmean, 2):>12s} {fmt(ratio(xmean, mmean), 2):>6s} {fmt(xus, 1):>9s} "
              f"{fmt(mus, 2):>10s} {pc(xspread):>9s} {pc(mspread):>10s} {fmt(ratio(m10, x10), 2):>9s}")


def thread_allocations(log_path):
    blocks = {}
    bench = mode = None
    current = None
    with open(log_path, errors="replace") as f:
        for line in f:
            if line.startswith("# Benchmark: "):
                bench = short(line.split(":", 1)[1].strip())
            elif line.startswith("# Benchmark mode: "):
                mode = line.split(":", 1)[1].strip()
            elif line.startswith("# Parameters: "):
                params = line.split(":", 1)[1].strip()
                key = (bench, mode, params)
            elif line.startswith("[thread-alloc] ") and not line.startswith("[thread-alloc]   "):
                current = [line.rstrip()]
                blocks[key] = current
            elif line.startswith("[thread-alloc]   ") and current is not None:
                current.append(line.rstrip())
    if blocks:
        print("\nPER-THREAD ALLOCATION, last measured iteration (xferd.perf.threadAlloc)")
        for (b, m, p), lines in blocks.items():
            print(f"  {b} [{m}] {p}")
            for line in lines:
                print("    " + line.replace("[thread-alloc] ", "").strip())


def fork_medians(log_path):
    """Per fork of each sampled round-trip benchmark: the median of its measured iterations' p50s (from the log).

    The target is per fork (p50 <= 2x the raw ring in each of three forks); a fork's iterations are bimodal on a
    2-vCPU VM (the two spinning threads on one vCPU or two), so the median of five is what a fork says. Fork n of
    xferd and fork n of the raw ring ran minutes apart, and the cost of a cache line between the two vCPUs is itself
    bimodal (the host's placement: ~0.1 or ~0.37 us a line round trip), so their ratio may compare two placements;
    perf/roundtrip-pairs.sh measures both in one fork, window by window.
    """
    import re
    import statistics
    forks = {}
    key = None
    fork = None
    sampled = False
    with open(log_path, errors="replace") as f:
        for line in f:
            if line.startswith("# Benchmark mode:"):
                sampled = "Sampling" in line
            elif line.startswith("# Benchmark:"):
                bench = short(line.split(":", 1)[1].strip())
            elif line.startswith("# Parameters:"):
                key = (bench, line.split(":", 1)[1].strip())
            elif line.startswith("# Fork:"):
                fork = int(line.split()[2])
            m = re.match(r"\s+p0\.50:\s+([\d.]+) (\w+)/op", line)
            if m and sampled and key and fork:
                scale = {"us": 1.0, "ns": 1e-3, "ms": 1e3}.get(m.group(2), 1.0)
                forks.setdefault(key, {}).setdefault(fork, []).append(float(m.group(1)) * scale)
    wanted = {k: v for k, v in forks.items() if k[0] in ("RoundTripBenchmark.roundTrip", "RawRingPingPongBenchmark.pingPong")}
    if not wanted:
        return
    print("\nROUND TRIP PER FORK: median of the measured iterations' p50 (us)")
    xferd = {}
    for (bench, params), by_fork in sorted(wanted.items()):
        medians = {n: statistics.median(v) for n, v in sorted(by_fork.items())}
        if bench == "RoundTripBenchmark.roundTrip":
            xferd = medians
        print(f"  {bench:36s} {params:50s} " + " ".join(f"fork {n}: {v:.3f}" for n, v in medians.items()))
    for (bench, params), by_fork in sorted(wanted.items()):
        if bench != "RawRingPingPongBenchmark.pingPong" or not xferd:
            continue
        ratios = {n: xferd[n] / statistics.median(v) for n, v in sorted(by_fork.items()) if n in xferd}
        verdict = "met" if ratios and all(r <= 2 for r in ratios.values()) else "NOT met"
        print(f"  ratio per fork against ({params}): " + " ".join(f"{r:.2f}x" for r in ratios.values()) +
              f"  (p50 <= 2x in each fork: {verdict})")
    if xferd:
        print("  (forks of the two benchmarks ran minutes apart, maybe on different vCPU placements: "
              "perf/roundtrip-pairs.sh pairs them in one fork)")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    main(sys.argv[1])
    if len(sys.argv) == 3:
        fork_medians(sys.argv[2])
        thread_allocations(sys.argv[2])
