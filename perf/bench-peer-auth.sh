#!/usr/bin/env bash
# The throughput cost of peer authentication (the handshake's session keys and a tag on every frame): two "hosts"
# (network namespaces joined by a veth pair), each with its own daemon, and xferd bench writing and reading
# 1 MiB blocks between them, alternately with daemons that authenticate (one cluster token, made for the run) and
# daemons started with --insecure-no-peer-auth, several rounds in the same run, so both see the same machine.
#
#   perf/bench-peer-auth.sh [--rounds 3] [--duration 8] [--block-size 1MiB]
#
# Prints each run's GB/s and, per operation, the median of each mode and the cost (target: <= 5%).
# Needs root. Namespaces, pair, daemons and runtime directories are removed on exit; logs stay in /tmp.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
xferd="$root/bin/xferd"
rounds=3
duration=8
block=1MiB
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --block-size) block="$2"; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
[[ "$(id -u)" == 0 ]] || { echo "bench-peer-auth: needs root" >&2; exit 2; }
if [[ ! -f "$root/daemon/target/daemon-0.1.0-SNAPSHOT.jar" || ! -d "$root/daemon/target/lib" ]]; then
  (cd "$root" && ./mvnw -q -B -DskipTests package -pl daemon -am)
fi

k=$(( $$ % 250 + 1 ))
ns_a="xfp-$$-a"; ns_b="xfp-$$-b"; va="xfp$$a"; vb="xfp$$b"
addr_a="10.214.$k.1"; addr_b="10.214.$k.2"
dir_a="/dev/shm/xferd-paA-$$"; dir_b="/dev/shm/xferd-paB-$$"
work="$(mktemp -d /tmp/xferd-bench-peer-auth.XXXXXX)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  sleep 1
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  ip netns del "$ns_a" 2>/dev/null || true
  ip netns del "$ns_b" 2>/dev/null || true
  rm -rf "$dir_a" "$dir_b"
  echo "bench-peer-auth: logs in $work"
}
trap cleanup EXIT
(umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/cluster.token")

ip netns add "$ns_a"; ip netns add "$ns_b"
ip link add "$va" netns "$ns_a" type veth peer name "$vb" netns "$ns_b"
ip -n "$ns_a" addr add "$addr_a/24" dev "$va"; ip -n "$ns_b" addr add "$addr_b/24" dev "$vb"
for ns in "$ns_a" "$ns_b"; do ip -n "$ns" link set lo up; done
ip -n "$ns_a" link set "$va" up; ip -n "$ns_b" link set "$vb" up

run() { # $1 mode (token|none), $2 round; prints "mode op GB/s" lines
  local mode="$1" round="$2" auth=()
  if [[ $mode == token ]]; then auth=(--cluster-token-file "$work/cluster.token"); else auth=(--insecure-no-peer-auth); fi
  rm -rf "$dir_a" "$dir_b"
  ip netns exec "$ns_a" "$xferd" daemon --dir "$dir_a" --rpc-address "$addr_a:12001" "${auth[@]}" \
    --no-journal --metrics-address off > "$work/daemon-a-$mode-$round.log" 2>&1 & pids+=($!); local da=$!
  ip netns exec "$ns_b" "$xferd" daemon --dir "$dir_b" --rpc-address "$addr_b:12001" "${auth[@]}" \
    --no-journal --metrics-address off > "$work/daemon-b-$mode-$round.log" 2>&1 & pids+=($!); local db=$!
  for _ in $(seq 1 240); do [[ -S "$dir_a/xferd.sock" && -S "$dir_b/xferd.sock" ]] && break; sleep 0.5; done
  ip netns exec "$ns_b" "$xferd" bench-target --dir "$dir_b" --name target --size 256MiB --ignore-stdin \
    > "$work/target-$mode-$round.log" 2>&1 & pids+=($!); local tp=$!
  for _ in $(seq 1 240); do grep -q '^TARGET ' "$work/target-$mode-$round.log" 2>/dev/null && break; sleep 0.5; done
  if ! grep -q '^TARGET ' "$work/target-$mode-$round.log" 2>/dev/null; then
    echo "bench-peer-auth: bench-target did not start ($mode, round $round; logs in $work)" >&2
    kill "$tp" "$da" "$db" 2>/dev/null || true
    return 0
  fi
  local name address size
  read -r _ name address size < <(grep '^TARGET ' "$work/target-$mode-$round.log")
  for op in write read; do
    local log="$work/bench-$mode-$op-$round.log"
    ip netns exec "$ns_a" "$xferd" bench --dir "$dir_a" --target "$name" --target-address "$address" \
      --target-size "$size" --operation "$op" --block-size "$block" --duration "${duration}s" --warmup 3s \
      > "$log" 2>&1 || true
    echo "$mode $op $(grep -o 'gb_per_s=[0-9.]*' "$log" | head -1 | cut -d= -f2)"
  done
  kill "$tp" "$da" "$db" 2>/dev/null || true
  wait "$tp" "$da" "$db" 2>/dev/null || true
}

echo "bench-peer-auth: $rounds rounds of write and read, $block blocks, ${duration} s each, modes alternating"
echo "bench-peer-auth: load before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
for round in $(seq 1 "$rounds"); do
  # alternate which mode goes first, so a drift of the machine's load does not favour one
  if (( round % 2 )); then modes="none token"; else modes="token none"; fi
  for mode in $modes; do run "$mode" "$round" | tee -a "$work/results.txt"; done
done
echo "bench-peer-auth: load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work/results.txt" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    parts = line.split()
    if len(parts) == 3 and parts[2]:
        runs.setdefault((parts[0], parts[1]), []).append(float(parts[2]))
for op in ("write", "read"):
    none, token = runs.get(("none", op), []), runs.get(("token", op), [])
    if not none or not token:
        print(f"{op}: missing runs (none {none}, token {token})")
        continue
    a, b = statistics.median(none), statistics.median(token)
    print(f"{op:5}: no auth {a:.3f} GB/s {none}, token {b:.3f} GB/s {token}, cost {100 * (a - b) / a:+.1f}%"
          " (target <= 5%)")
PY
