#!/usr/bin/env bash
# Build (when needed) and run the xferd JMH benchmarks, write JSON to perf/results/, print a summary.
#
#   perf/run-benchmarks.sh [--gc] [--only roundtrip|bandwidth] [--idle backoff|busy-spin|yielding] [-- JMH args]
#
#   --gc      add -prof gc (allocation per op, all threads of the fork) and print per-thread allocations
#             after each iteration (-Dxferd.perf.threadAlloc=true: client = jmh-worker, daemon = xferd-*)
#   --only    run one group: roundtrip (RoundTripBenchmark + RawRingPingPongBenchmark) or
#             bandwidth (LocalBandwidthBenchmark + MemcpyBaselineBenchmark); default both
#   --idle    the daemon's / raw responder's idle strategy (default: the daemon's default, backoff)
#   after --, arguments go to JMH as they are (e.g. -- -p blockSize=65536 -i 3)
#
# Settings are sized for a small (2 vCPU) box: 1 fork, 3 x 2 s warm-up, 5 x 2 s measurement per benchmark.
# Environment: JAVA_HOME (default: Temurin 25), JMH_OPTS to replace the default settings.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
gc=0
only=all
idle=""
extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --gc) gc=1; shift ;;
    --only) only="$2"; shift 2 ;;
    --idle) idle="$2"; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "unknown option: $1 (try --help)" >&2; exit 2 ;;
  esac
done

# shellcheck source=lib/benchmarks-jar.sh
source "$here/lib/benchmarks-jar.sh"
benchmarks_java_home
java="$JAVA_HOME/bin/java"
jar="$here/target/benchmarks.jar"
benchmarks_jar "$root"

case "$only" in
  all) include='io\.xferd\.perf\.(RoundTripBenchmark|RawRingPingPongBenchmark|LocalBandwidthBenchmark|MemcpyBaselineBenchmark)\.' ;;
  roundtrip) include='io\.xferd\.perf\.(RoundTripBenchmark|RawRingPingPongBenchmark)\.' ;;
  bandwidth) include='io\.xferd\.perf\.(LocalBandwidthBenchmark|MemcpyBaselineBenchmark)\.' ;;
  *) echo "--only takes roundtrip or bandwidth" >&2; exit 2 ;;
esac

read -r -a settings <<< "${JMH_OPTS:--f 1 -wi 3 -w 2s -i 5 -r 2s}"
args=("$include" "${settings[@]}")
[[ -n "$idle" ]] && args+=(-p "idle=$idle")
if [[ $gc -eq 1 ]]; then
  # -jvmArgsPrepend: BenchmarkMain adds it after the flags of jvm.flags; @Fork jvmArgsAppend stays in force
  args+=(-prof gc -jvmArgsPrepend -Dxferd.perf.threadAlloc=true)
  # the bandwidth benchmarks sample batch times; bytes per op are read from a throughput run
  [[ "$only" == bandwidth ]] && args+=(-bm thrpt -tu s)
fi

mkdir -p "$here/results"
stamp="$(date +%Y%m%d-%H%M%S)"
out="$here/results/$stamp-$only$([[ $gc -eq 1 ]] && echo -gc || true).json"
log="${out%.json}.log"
echo "$java -jar perf/target/benchmarks.jar ${args[*]} ${extra[*]:-} -rf json -rff $out"
"$java" -jar "$jar" "${args[@]}" "${extra[@]}" -rf json -rff "$out" 2>&1 | tee "$log"

echo
echo "results: $out"
echo "log:     $log"
python3 "$here/summarize.py" "$out" "$log" | tee "${out%.json}.summary.txt"
