#!/usr/bin/env bash
# Start-up benchmark of bin/xferd: `xferd --help`, `xferd status` and `xferd status --json` (against a daemon the
# script starts) and a daemon from launch to its "serving" log line, each with the build's AOT cache
# (daemon/target/xferd.aot) and without it (XFERD_AOT_CACHE=none), alternated run by run. (A launcher that runs help
# requests without the cache whatever it is given, as bin/xferd does since the help texts are pre-rendered, shows
# the same figures in both rows of `help`. bin/xferd gives status its own cache, daemon/target/xferd-status.aot, in
# the rows marked aot, and none in the rows marked none.) Prints per case the median and max wall time, the median CPU
# seconds (user + sys of the JVM: what a busy machine changes least), the classes loaded, and the load average
# before and after: on a shared machine quote CPU seconds, not wall.
#
#   perf/bench-startup.sh [--runs N] [--no-aot-compare] [--xferd PATH]
#
#   --runs            runs per case (default 5)
#   --no-aot-compare  only the launcher as it is (with the cache when the build made one)
#   --xferd PATH      another checkout's built launcher (say, main's, for a before/after in one sitting)
#
# Needs a built daemon (./mvnw -B -DskipTests package -pl daemon -am; the package phase trains the AOT cache).
# Its daemons use their own /tmp directories, an ephemeral RPC port and no metrics endpoint; all removed on exit.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
xferd="$root/bin/xferd"
runs=5
compare=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --no-aot-compare) compare=0; shift ;;
    --xferd) xferd="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; root="$(cd "$(dirname "$2")/.." && pwd)"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

work="$(mktemp -d /tmp/xferd-bench-startup.XXXXXX)"
daemon_pid=""
cleanup() {
  if [[ -n "$daemon_pid" ]] && kill -0 "$daemon_pid" 2>/dev/null; then kill "$daemon_pid"; wait "$daemon_pid" || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
ticks="$(getconf CLK_TCK)"
modes=(aot)
if [[ ! -f "$root/daemon/target/xferd.aot" ]]; then modes=(none); echo "no daemon/target/xferd.aot: without the AOT cache only"; fi
if [[ "$compare" == 1 && "${modes[0]}" == aot ]]; then modes=(aot none); fi
cache_for() { if [[ "$1" == aot ]]; then echo "$root/daemon/target/xferd.aot"; else echo none; fi; }

# one command: wall and CPU seconds (bash's time: the child's rusage), classes loaded (a second, logged run)
measure_command() { # mode label args...
  local mode="$1" label="$2"; shift 2
  local TIMEFORMAT='%R %U %S' t
  t="$( { time XFERD_AOT_CACHE="$(cache_for "$mode")" "$xferd" "$@" >/dev/null 2>&1 || true; } 2>&1 )"
  echo "$label $mode $(awk '{printf "%.3f %.3f", $1, $2 + $3}' <<< "$t")" >> "$work/results"
}
count_classes() { # mode label args...
  local mode="$1" label="$2"; shift 2
  XFERD_AOT_CACHE="$(cache_for "$mode")" XFERD_JAVA_OPTS="-Xlog:class+load:file=$work/classes.log" \
    "$xferd" "$@" >/dev/null 2>&1 || true
  echo "$label $mode $(wc -l < "$work/classes.log") $(grep -vc 'shared objects file' "$work/classes.log" || true)" >> "$work/classes"
}

# a daemon from launch to "serving": wall from the fork, CPU of the JVM at that moment (from /proc), then SIGTERM
start_daemon() { # mode run-dir log [java opts]
  : > "$3"
  XFERD_AOT_CACHE="$(cache_for "$1")" XFERD_JAVA_OPTS="${4:-}" "$xferd" daemon --dir "$2" \
    --rpc-address 127.0.0.1:0 --metrics-address off > "$3" 2>&1 &
  daemon_pid=$!
  local waited=0
  until grep -q 'xferd daemon serving' "$3"; do
    sleep 0.01; waited=$((waited + 1))
    if [[ $waited -gt 12000 ]] || ! kill -0 "$daemon_pid" 2>/dev/null; then echo "daemon did not serve:" >&2; cat "$3" >&2; exit 1; fi
  done
}
stop_daemon() { kill "$daemon_pid"; wait "$daemon_pid" || true; daemon_pid=""; }
measure_daemon() { # mode
  local dir="$work/daemon-$1-$RANDOM" start end cpu
  start="$(date +%s%N)"
  start_daemon "$1" "$dir" "$work/daemon.log"
  end="$(date +%s%N)"
  cpu="$(awk -v hz="$ticks" '{printf "%.3f", ($14 + $15) / hz}' "/proc/$daemon_pid/stat")"
  echo "daemon-start $1 $(awk -v ns=$((end - start)) 'BEGIN {printf "%.3f", ns / 1e9}') $cpu" >> "$work/results"
  stop_daemon
  rm -rf "$dir"
}

echo "launcher $xferd ($(git -C "$root" log -1 --format='%h %s' 2>/dev/null | cut -c1-70))"
echo "load average before: $(cat /proc/loadavg)"
: > "$work/results"; : > "$work/classes"
for ((i = 0; i < runs; i++)); do
  for mode in "${modes[@]}"; do
    measure_command "$mode" help --help
    measure_daemon "$mode"
  done
done
# status against a live daemon (its registry and cnc files)
start_daemon "${modes[0]}" "$work/status-daemon" "$work/status-daemon.log"
for ((i = 0; i < runs; i++)); do
  for mode in "${modes[@]}"; do
    measure_command "$mode" status status --dir "$work/status-daemon"
    measure_command "$mode" status-json status --json --dir "$work/status-daemon"
  done
done
for mode in "${modes[@]}"; do
  count_classes "$mode" help --help
  count_classes "$mode" status status --dir "$work/status-daemon"
  count_classes "$mode" status-json status --json --dir "$work/status-daemon"
done
stop_daemon
for mode in "${modes[@]}"; do
  start_daemon "$mode" "$work/classes-daemon-$mode" "$work/classes-daemon.log" "-Xlog:class+load:file=$work/classes.log"
  stop_daemon
  echo "daemon-start $mode $(wc -l < "$work/classes.log") $(grep -vc 'shared objects file' "$work/classes.log" || true)" >> "$work/classes"
done
echo "load average after:  $(cat /proc/loadavg)"
echo
printf '%-14s %-5s %12s %12s %16s %16s %18s\n' case cache "wall p50 s" "wall max s" "CPU s p50" "classes loaded" "not from a cache"
for label in help status status-json daemon-start; do
  for mode in "${modes[@]}"; do
    walls="$(awk -v l="$label" -v m="$mode" '$1 == l && $2 == m {print $3}' "$work/results" | sort -n)"
    cpus="$(awk -v l="$label" -v m="$mode" '$1 == l && $2 == m {print $4}' "$work/results" | sort -n)"
    wall_p50="$(awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}' <<< "$walls")"
    wall_max="$(tail -1 <<< "$walls")"
    cpu_p50="$(awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}' <<< "$cpus")"
    read -r loaded uncached < <(awk -v l="$label" -v m="$mode" '$1 == l && $2 == m {print $3, $4}' "$work/classes")
    printf '%-14s %-5s %12s %12s %16s %16s %18s\n' "$label" "$mode" "$wall_p50" "$wall_max" "$cpu_p50" "$loaded" "$uncached"
  done
done
echo "(targets: --help and status <= 0.300 s wall, daemon start to serving <= 1 s, on a quiet machine)"
