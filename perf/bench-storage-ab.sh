#!/usr/bin/env bash
# Two daemon builds on the same local file request, alternated (A B, B A, A B, ...) so that a VM whose speed swings
# 2x between minutes hits both alike: each run starts that build's daemon and a bench-target serving one file, runs
# `xferd bench` once (qd 16, batches of 1) and prints GB/s with the p50 and p99 from submit to completion.
#
#   perf/bench-storage-ab.sh --a CHECKOUT --b CHECKOUT [--dir DIR] [--rounds N] [--duration S]
#                            [--operation read|write] [--block-size SIZE] [--sequential]
#                            [--client-idle doorbell|gentle|spin] [--client-idle-a IDLE] [--client-idle-b IDLE]
#                            [--priority]
#
#   --a, --b      the checkouts whose daemon builds run (./mvnw -B -DskipTests package -pl daemon -am in each)
#   --dir         where the 512 MiB test file lives (default /var/tmp)
#   --rounds      pairs of runs (default 3)
#   --duration    seconds per run after a 2 s warm-up (default 6)
#   --operation, --block-size, --sequential   the request (default: 64 KiB random reads)
#   --client-idle-a, --client-idle-b   each build's client idle, when they differ (a build before the completion
#                 doorbell knows only gentle and spin); both default to --client-idle (gentle)
#   --priority    run this script's process group at autogroup nice -15 (root; Linux with sched_autogroup), so that
#                 other sessions' builds take less of the two cores from both builds alike (a plain `nice` does
#                 not reach across autogroups); put back to 0 on exit
#
# Installs nothing. Say the load (printed with each run) with any figure.
set -euo pipefail
a="" b="" dir=/var/tmp rounds=3 duration=6 operation=read block=64KiB random=--random client_idle=gentle priority=0
idle_a="" idle_b=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --a) a="$(cd "$2" && pwd)"; shift 2 ;;
    --b) b="$(cd "$2" && pwd)"; shift 2 ;;
    --dir) dir="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --operation) operation="$2"; shift 2 ;;
    --block-size) block="$2"; shift 2 ;;
    --sequential) random=""; shift ;;
    --client-idle) client_idle="$2"; shift 2 ;;
    --client-idle-a) idle_a="$2"; shift 2 ;;
    --client-idle-b) idle_b="$2"; shift 2 ;;
    --priority) priority=1; shift ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "unknown option: $1 (try --help)" >&2; exit 2 ;;
  esac
done
[[ -n "$a" && -n "$b" ]] || { echo "--a and --b are required (try --help)" >&2; exit 2; }
idle_a="${idle_a:-$client_idle}" idle_b="${idle_b:-$client_idle}"
for root in "$a" "$b"; do
  ls "$root"/daemon/target/daemon-*.jar >/dev/null 2>&1 ||
    { echo "no daemon build in $root (./mvnw -B -DskipTests package -pl daemon -am)" >&2; exit 2; }
done

work=$(mktemp -d /tmp/xferd-storage-ab.XXXX)
file="$dir/xferd-storage-ab-$$.bin"
pids=()
stop_all() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
}
cleanup() {
  stop_all
  rm -rf "$work" /dev/shm/xferd-storage-ab-$$
  rm -f "$file"
  [[ $priority == 0 ]] || echo 0 > /proc/self/autogroup
}
trap cleanup EXIT
if [[ $priority == 1 ]]; then
  echo -15 > /proc/self/autogroup || { echo "--priority needs root and sched_autogroup" >&2; exit 2; }
fi

fio --name=layout --filename="$file" --size=512M --rw=write --bs=1M --direct=1 --ioengine=io_uring --iodepth=16 \
  --output=/dev/null 2>/dev/null || dd if=/dev/urandom of="$file" bs=1M count=512 oflag=direct status=none

one_run() { # label checkout client-idle
  local label="$1" root="$2" idle="$3" run=/dev/shm/xferd-storage-ab-$$
  local xferd="$root/bin/xferd"
  rm -rf "$run"; mkdir -p "$run"
  "$xferd" daemon --dir "$run" --rpc-address 127.0.0.1:0 --metrics-address off > "$work/daemon.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 240); do grep -q 'xferd daemon serving' "$work/daemon.log" && break; sleep 0.5; done
  "$xferd" bench-target --dir "$run" --name storage --file "$file" --size 536870912 --ignore-stdin \
    > "$work/target.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 240); do grep -q '^TARGET ' "$work/target.log" && break; sleep 0.5; done
  local name address size
  read -r _ name address size <<< "$(grep -m1 '^TARGET ' "$work/target.log")"
  "$xferd" bench --dir "$run" --target "$name" --target-address "$address" --target-size "$size" \
    --duration "${duration}s" --warmup 2s --client-idle "$idle" --operation "$operation" \
    --block-size "$block" --batch-size 1 --window 16 $random > "$work/bench.log" 2>&1 || true
  stop_all
  local result
  result=$(grep -m1 '^RESULT' "$work/bench.log" || echo "RESULT failed")
  printf '%-2s %s  load %s\n' "$label" "$(echo "$result" | grep -o 'gb_per_s=[^ ]*\|p50_us=[^ ]*\|p99_us=[^ ]*' |
    tr '\n' ' ')" "$(cut -d' ' -f1 /proc/loadavg)"
}

echo "A $a ($(git -C "$a" rev-parse --short HEAD 2>/dev/null || echo '?')), client idle $idle_a"
echo "B $b ($(git -C "$b" rev-parse --short HEAD 2>/dev/null || echo '?')), client idle $idle_b"
echo "$operation $block ${random:+random} qd 16, ${duration}s per run, load $(cat /proc/loadavg)"
for round in $(seq 1 "$rounds"); do
  if (( round % 2 )); then one_run A "$a" "$idle_a"; one_run B "$b" "$idle_b"
  else one_run B "$b" "$idle_b"; one_run A "$a" "$idle_a"; fi
done
