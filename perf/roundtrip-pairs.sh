#!/usr/bin/env bash
# The 64 B round trip against both raw-ring floors, alternated window by window inside each fork (RoundTripPairs),
# with the cache-line placement of each window: the per-fork ratio without comparing forks of different placements.
#
#   perf/roundtrip-pairs.sh [--forks N] [--windows N] [--window-ms MS] [--warm-up-s S] [--idle NAME] [--journal on|off]
#
# Each fork is a fresh JVM on the flags of jvm.flags and the JMH forks' heap settings; its per-window table and
# SUMMARY lines (all windows, fast-line windows, slow-line windows) go to perf/results/<time>-pairs.log.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
forks=3
args=()
while [[ $# -gt 0 ]]; do # --forks anywhere; the rest goes to RoundTripPairs, which rejects what it does not know
  case "$1" in
    --forks) forks="$2"; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
# shellcheck source=lib/benchmarks-jar.sh
source "$here/lib/benchmarks-jar.sh"
benchmarks_java_home
jar="$here/target/benchmarks.jar"
benchmarks_jar "$root"
flags=$(sed -n '/^xferd.jvm.flags/,$p' "$root/jvm.flags" | sed 's/xferd.jvm.flags=//; s/\\$//' | tr '\n' ' ')
mkdir -p "$here/results"
log="$here/results/$(date +%Y%m%d-%H%M%S)-pairs.log"
echo "forks=$forks ${args[*]} load: $(uptime | sed 's/.*average: //')" | tee "$log"
for ((f = 1; f <= forks; f++)); do
  echo "# fork $f of $forks" | tee -a "$log"
  # shellcheck disable=SC2086
  "$JAVA_HOME/bin/java" $flags -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Xms512m -Xmx512m -XX:+AlwaysPreTouch \
    -cp "$jar" io.xferd.perf.RoundTripPairs "${args[@]}" 2>&1 | tee -a "$log"
done
echo "load after: $(uptime | sed 's/.*average: //')" | tee -a "$log"
echo
grep -E '^# fork|^SUMMARY' "$log"
echo "log: $log"
