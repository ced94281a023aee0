#!/usr/bin/env bash
# PassCostProbe (CPU ns per local request through intake and a worker, one thread) for two builds in one JVM,
# alternated, and the median of rounds 2-6 of each side per mode.
#
#   perf/pass-cost-ab.sh A-checkout B-checkout [--block BYTES] [--pairs N] [modes...]
#
# Only the daemon module differs between the sides: B's target/lib (with the ringbuffer, ipc-client, topology and
# native-bindings jars) serves both, so the script refuses checkouts whose other modules differ.
# Each checkout needs its daemon's classes and test classes and its target/lib:
#   ./mvnw -B -o -q -DskipTests -Dxferd.aot.skip=true package -pl daemon -am && ./mvnw -B -o -q test-compile -pl daemon -am
# --block 64 leaves the copy out of the figure (what a request costs besides its bytes); default 4096.
# Modes: batch, batch-scattered, batch+journal, batch-scattered+journal, requests, ... (default: the first three).
# PROBE_OPTS: more JVM flags, e.g. "-Dxferd.probe.shared=true -Dxferd.probe.pipeline=4096" (intake runs work inline
# on the worker, as the daemon's default SHARED threading does, over the daemon's default pipeline size).
set -euo pipefail
a="$(cd "$1" && pwd)"; b="$(cd "$2" && pwd)"; shift 2
block=4096; pairs=4
while [[ $# -gt 0 ]]; do
  case "$1" in
    --block) block="$2"; shift 2 ;;
    --pairs) pairs="$2"; shift 2 ;;
    *) break ;;
  esac
done
modes=("$@"); [[ ${#modes[@]} -eq 0 ]] && modes=(batch batch-scattered batch+journal)
if ! diff -rq "$a/ringbuffer/src/main" "$b/ringbuffer/src/main" >/dev/null ||
   ! diff -rq "$a/ipc-client/src/main" "$b/ipc-client/src/main" >/dev/null ||
   ! diff -rq "$a/topology/src/main" "$b/topology/src/main" >/dev/null ||
   ! diff -rq "$a/native-bindings/src/main" "$b/native-bindings/src/main" >/dev/null; then
  echo "pass-cost-ab.sh: the checkouts differ outside the daemon module; B's jars would serve both sides" >&2
  exit 2
fi
if [[ -z "${JAVA_HOME:-}" || ! -x "$JAVA_HOME/bin/java" ]]; then export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64; fi
m2="${HOME}/.m2/repository"
jar() { ls "$m2/$1"/*/"$2"-*.jar | grep -v sources | sort -V | tail -1; }
cp="$b/daemon/target/lib/*:$(jar org/assertj/assertj-core assertj-core):$(jar org/junit/jupiter/junit-jupiter-api junit-jupiter-api)"
cp="$cp:$(jar org/opentest4j/opentest4j opentest4j):$(jar org/apiguardian/apiguardian-api apiguardian-api)"
flags=$(sed -n '/^xferd.jvm.flags/,$p' "$b/jvm.flags" | sed 's/xferd.jvm.flags=//; s/\\$//' | tr '\n' ' ')
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
echo "A=$a B=$b block=$block pairs=$pairs modes=${modes[*]} ${PROBE_OPTS:-} load: $(uptime | sed 's/.*average: //')"
# shellcheck disable=SC2086
"$JAVA_HOME/bin/java" $flags ${PROBE_OPTS:-} -Xmx512m -Dxferd.probe.block="$block" -cp "$cp" "$here/lib/PassCostAB.java" \
  "$a" "$b" "$pairs" "${modes[@]}" 2>&1 | python3 -c '
import collections, re, statistics, sys
rounds = collections.defaultdict(list)
side = None
for line in sys.stdin:
    m = re.match(r"SIDE (\S+) (\S+)", line)
    if m:
        side = m.group(1)
        continue
    m = re.match(r"PROBE (\S+) round (\d+): ([\d.]+)", line)
    if m and int(m.group(2)) >= 2:
        rounds[(m.group(1), side)].append(float(m.group(3)))
    elif "Exception" in line or "Error" in line:
        print(line.rstrip())
for mode in dict.fromkeys(k[0] for k in rounds):
    a, b = rounds.get((mode, "A"), []), rounds.get((mode, "B"), [])
    if a and b:
        ma, mb = statistics.median(a), statistics.median(b)
        print(f"{mode:26s} A {ma:6.1f}  B {mb:6.1f} CPU ns per request (median of {len(a)} rounds each)  B/A {mb / ma:.3f}")
'
