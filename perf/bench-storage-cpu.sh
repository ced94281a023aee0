#!/usr/bin/env bash
# CPU per byte of the remote storage rows: runs `perf/bench-storage.sh --remote-only` and samples the CPU time
# (utime + stime from /proc/PID/stat) of daemon B (the responder, whose segment is read and written) and daemon A
# (the initiator) when each phase starts (its log appears) and when its RESULT line appears, so that on a loaded
# machine, where GB/s swing 2x between runs, the responder's CPU seconds per GB still compare two builds. Each
# phase's CPU includes its 2 s warm-up (and the first phase the JIT's warm-up of both daemons), its bytes only the
# measured seconds: compare a phase with the same phase of another build, not with another phase.
#
#   perf/bench-storage-cpu.sh DIR [CHECKOUT]     (root; DIR as bench-storage.sh --dir, CHECKOUT as its --build)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${1:?usage: $0 DIR [CHECKOUT]}"
build="${2:-$(cd "$here/.." && pwd)}"
log="$(mktemp /tmp/xferd-bench-storage-cpu.XXXXXX)"
before="$(ls -d /tmp/xferd-bench-storage.* 2>/dev/null | sort || true)"
"$here/bench-storage.sh" --dir "$dir" --size 512MiB --qd 16 --duration 6 --remote-only --build "$build" > "$log" 2>&1 &
bench=$!
work=""
for _ in $(seq 1 600); do
  work="$(comm -13 <(echo "$before") <(ls -d /tmp/xferd-bench-storage.* 2>/dev/null | sort) | head -1)"
  [[ -n "$work" ]] && break
  sleep 0.1
done
[[ -n "$work" ]] || { cat "$log" >&2; exit 1; }
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
phases=(r-file-read r-memory-read r-file-write r-memory-write)
declare -A start_b start_a end_b end_a
current="" pid_b="" pid_a=""
while kill -0 "$bench" 2>/dev/null; do
  [[ -z "$pid_b" ]] && pid_b="$(pgrep -f "daemon --dir /dev/shm/xferd-bench-storage-[0-9]*-b " | head -1 || true)"
  [[ -z "$pid_a" ]] && pid_a="$(pgrep -f "daemon --dir /dev/shm/xferd-bench-storage-[0-9]*-a " | head -1 || true)"
  for p in "${phases[@]}"; do
    if [[ -z "${start_b[$p]:-}" && -f "$work/$p.log" && -n "$pid_b" && -n "$pid_a" ]]; then
      start_b[$p]="$(ticks "$pid_b")"; start_a[$p]="$(ticks "$pid_a")"; current="$p"
    fi
  done
  if [[ -n "$current" && -z "${end_b[$current]:-}" ]] && grep -q '^RESULT' "$work/$current.log" 2>/dev/null; then
    end_b[$current]="$(ticks "$pid_b")"; end_a[$current]="$(ticks "$pid_a")"
  fi
  sleep 0.05
done
wait "$bench" || { cat "$log" >&2; exit 1; }
hz="$(getconf CLK_TCK)"
grep -E 'load before|load after|build:' "$log"
printf '%-16s %8s %8s %12s %12s %14s\n' phase GB/s GB "B cpu s" "A cpu s" "B cpu s / GB"
for p in "${phases[@]}"; do
  read -r gbs bytes < <(sed -n 's/^RESULT .* bytes=\([0-9]*\) .* gb_per_s=\([^ ]*\).*/\2 \1/p' "$work/$p.log" | head -1)
  b="$(awk -v t="$(( ${end_b[$p]:-0} - ${start_b[$p]:-0} ))" -v hz="$hz" 'BEGIN { printf "%.2f", t / hz }')"
  a="$(awk -v t="$(( ${end_a[$p]:-0} - ${start_a[$p]:-0} ))" -v hz="$hz" 'BEGIN { printf "%.2f", t / hz }')"
  awk -v p="$p" -v g="$gbs" -v n="$bytes" -v b="$b" -v a="$a" \
    'BEGIN { printf "%-16s %8s %8.2f %12s %12s %14.2f\n", p, g, n / 1e9, b, a, b / (n / 1e9) }'
done
rm -f "$log"
