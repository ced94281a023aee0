#!/usr/bin/env bash
# The queue depth 64 KiB random reads keep on the device: fio (io_uring, O_DIRECT, --iodepth 16) against xferd bench
# (--window 16) on the same 64 MiB of one file, xferd's client waiting in each of the given --client-idle modes in
# turn; the mean of /sys/block/DEV/inflight (reads) sampled every 0.5 ms for 4 s in the middle of each run, with
# GB/s and the p50 latency. A daemon that keeps the device short of requests shows here whatever the load does to
# GB/s (other I/O on the device counts too).
#
#   perf/bench-storage-qd.sh [--xferd-root DIR] [--dir DIR] [MODE...]     (MODE: gentle or spin; default gentle spin)
#
# Needs a built daemon (./mvnw -B -DskipTests package -pl daemon -am) and fio; --dir must be on a block device.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir=/var/tmp
while [[ $# -gt 0 ]]; do
  case "$1" in
    --xferd-root) root="$(cd "$2" && pwd)"; shift 2 ;;
    --dir) dir="$2"; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    -*) echo "unknown option: $1 (try --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
modes=("$@")
[[ ${#modes[@]} -gt 0 ]] || modes=(gentle spin)
xferd="$root/bin/xferd"
command -v fio >/dev/null || { echo "fio is missing (apt-get install fio)" >&2; exit 2; }
ls "$root"/daemon/target/daemon-*.jar >/dev/null 2>&1 ||
  { echo "no daemon build in $root (./mvnw -B -DskipTests package -pl daemon -am)" >&2; exit 2; }
inflight="/sys/class/block/$(basename "$(findmnt -no SOURCE -T "$dir")")/inflight"
[[ -r "$inflight" ]] || { echo "no block device under $dir ($inflight)" >&2; exit 2; }

work=$(mktemp -d /tmp/xferd-storage-qd.XXXX)
run=/dev/shm/xferd-storage-qd-$$
file="$dir/xferd-storage-qd-$$.bin"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$run" "$work"
  rm -f "$file"
}
trap cleanup EXIT

sample() { # seconds-to-wait: prints the mean reads in flight over the next 4 s
  sleep "$1"
  python3 - "$inflight" <<'PY'
import sys, time
total = samples = 0
end = time.monotonic() + 4
while time.monotonic() < end:
    with open(sys.argv[1]) as f:
        total += int(f.read().split()[0])
    samples += 1
    time.sleep(0.0005)
print(f"{total / samples:.1f}")
PY
}

echo "load before: $(cat /proc/loadavg); build $root ($(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'))"
fio --name=layout --filename="$file" --size=512M --rw=write --bs=1M --direct=1 --ioengine=io_uring --iodepth=16 \
  --output=/dev/null
sample 1 > "$work/qd-fio" &
fio --name=r --filename="$file" --size=64M --rw=randread --bs=64K --direct=1 --ioengine=io_uring --iodepth=16 \
  --time_based --runtime=6 --output-format=json --output="$work/fio.json"
wait
python3 - "$work/fio.json" "$(cat "$work/qd-fio")" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["jobs"][0]["read"]
print(f"fio          {r['bw_bytes'] / 1e9:.3f} GB/s  p50 {r['clat_ns']['percentile']['50.000000'] / 1e3:7.0f} us"
      f"  reads in flight {sys.argv[2]}")
PY

mkdir -p "$run"
"$xferd" daemon --dir "$run" --rpc-address 127.0.0.1:0 --metrics-address off > "$work/daemon.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 240); do grep -q 'xferd daemon serving' "$work/daemon.log" && break; sleep 0.5; done
"$xferd" bench-target --dir "$run" --name storage --file "$file" --size 536870912 --ignore-stdin \
  > "$work/target.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 240); do grep -q '^TARGET ' "$work/target.log" && break; sleep 0.5; done
read -r _ name address size <<< "$(grep -m1 '^TARGET ' "$work/target.log")"
for mode in "${modes[@]}"; do
  sample 3 > "$work/qd-x" &
  "$xferd" bench --dir "$run" --target "$name" --target-address "$address" --target-size "$size" --duration 6s \
    --warmup 2s --client-idle "$mode" --operation read --block-size 64KiB --batch-size 1 --window 16 --random \
    > "$work/bench.log" 2>&1
  wait "$!" || true
  result=$(grep -m1 '^RESULT' "$work/bench.log")
  gbs=${result##*gb_per_s=}; p50=${result##*p50_us=}
  printf 'xferd %-6s %s GB/s  p50 %7.0f us  reads in flight %s\n' "$mode" "${gbs%% *}" "${p50%% *}" "$(cat "$work/qd-x")"
done
echo "load after: $(cat /proc/loadavg)"
