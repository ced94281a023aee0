#!/usr/bin/env bash
# CPU % of one core and wake-ups per second of every thread of one or more processes over a window, from
# /proc/PID/task/*/schedstat (CPU ns, times scheduled), largest first, with each process's total.
#
#   perf/thread-cpu.sh [--seconds S] [--label L] PID...
#
# Used by perf/bench-idle.sh; also handy beside a running benchmark (e.g. the JMH fork of RoundTripBenchmark:
# pgrep -f ForkedMain).
set -euo pipefail
seconds=10
label=threads
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --label) label="$2"; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    -*) echo "unknown option: $1 (try --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
[[ $# -gt 0 ]] || { echo "thread-cpu: which process? (try --help)" >&2; exit 2; }
snapshot() { # pid...: "pid/tid name cpu_ns times_scheduled" per thread
  local pid task
  for pid in "$@"; do
    for task in /proc/"$pid"/task/*; do
      printf '%s/%s %s %s\n' "$pid" "${task##*/}" "$(tr ' ' '_' < "$task/comm")" \
        "$(awk '{print $1, $3}' "$task/schedstat")"
    done 2>/dev/null
  done
}
before="$(snapshot "$@")"
sleep "$seconds"
after="$(snapshot "$@")"
awk -v seconds="$seconds" -v label="$label" 'NR == FNR { cpu[$1] = $3; runs[$1] = $4; next }
  ($1 in cpu) {
    split($1, id, "/"); c = ($3 - cpu[$1]) / 1e7 / seconds; w = ($4 - runs[$1]) / seconds
    total[id[1]] += c; wakes[id[1]] += w
    if (c >= 0.05 || w >= 5) printf "  %-8s %-7s %-16s %7.2f %% %8.0f wake-ups/s\n", label, id[1], $2, c, w
  }
  END { for (p in total) printf "  %-8s %-7s %-16s %7.2f %% %8.0f wake-ups/s   <- whole process\n",
    label, p, "TOTAL", total[p], wakes[p] }' <(echo "$before") <(echo "$after") | sort -k2,2 -k4,4rn
