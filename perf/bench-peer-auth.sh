#!/usr/bin/env bash
# The throughput cost of peer authentication (the handshake's session keys and a tag on every frame): two "hosts"
# (network namespaces joined by a veth pair), each with its own daemon, and xferd bench writing and reading
# 1 MiB blocks between them, alternately with daemons that authenticate (one cluster token, made for the run) and
# daemons started with --insecure-no-peer-auth, several rounds in the same run, so both see the same machine.
#
#   perf/bench-peer-auth.sh [--rounds 3] [--duration 8] [--block-size 1MiB] [--target-size 256MiB]
#
# Prints each run's GB/s and the CPU seconds both daemons spent per GB moved (user + system from /proc/PID/stat,
# taken while they are idle before and after the run, so the warm-up is in it; far less sensitive to the load of
# a shared machine than GB/s), and per operation the median of each mode and the cost (target: <= 5%).
# Needs root. Namespaces, pair, daemons and runtime directories are removed on exit; logs stay in /tmp.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
xferd="$root/bin/xferd"
rounds=3
duration=8
block=1MiB
target_size=256MiB
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --block-size) block="$2"; shift 2 ;;
    --target-size) target_size="$2"; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
[[ "$(id -u)" == 0 ]] || { echo "bench-peer-auth: needs root" >&2; exit 2; }
if [[ ! -f "$root/daemon/target/daemon-0.1.0-SNAPSHOT.jar" || ! -d "$root/daemon/target/lib" ]]; then
  (cd "$root" && ./mvnw -q -B -DskipTests package -pl daemon -am)
fi

source "$here/lib/netns.sh"
netns_trap
dir_a="/dev/shm/xferd-paA-$$"; dir_b="/dev/shm/xferd-paB-$$"
work="$(mktemp -d /tmp/xferd-bench-peer-auth.XXXXXX)"
netns_on_exit 'rm -rf "$dir_a" "$dir_b"; echo "bench-peer-auth: logs in $work"'
(umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/cluster.token")
netns_pair xfp 10.214
ns_a="$NS_A"; ns_b="$NS_B"; addr_a="$ADDR_A"; addr_b="$ADDR_B"

hz=$(getconf CLK_TCK)
cpu_ticks() { # user + system CPU of a process so far, in clock ticks (fields 14 and 15 of /proc/PID/stat)
  awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0
}
peer_bytes() { # payload bytes daemon $1 sent to and received from peers so far
  "$xferd" status --dir "$1" --json 2>/dev/null | python3 -c 'import json, sys
c = json.load(sys.stdin)["counters"]
print(c.get("bytes sent to peers", 0) + c.get("bytes received from peers", 0))' 2>/dev/null || echo 0
}

cpu_per_gb() { # $1 clock ticks, $2 bytes: CPU seconds per GB, or - without bytes
  python3 -c 'import sys; t, b, hz = map(int, sys.argv[1:]); print(f"{t / hz / (b / 1e9):.3f}" if b > 0 else "-")' \
    "$1" "$2" "$hz"
}

run() { # $1 mode (token|none), $2 round; prints "mode op GB/s cpu-s/GB" lines
  local mode="$1" round="$2" auth=()
  if [[ $mode == token ]]; then auth=(--cluster-token-file "$work/cluster.token"); else auth=(--insecure-no-peer-auth); fi
  rm -rf "$dir_a" "$dir_b"
  ip netns exec "$ns_a" "$xferd" daemon --dir "$dir_a" --rpc-address "$addr_a:12001" "${auth[@]}" \
    --no-journal --metrics-address off > "$work/daemon-a-$mode-$round.log" 2>&1 & netns_track $!; local da=$!
  ip netns exec "$ns_b" "$xferd" daemon --dir "$dir_b" --rpc-address "$addr_b:12001" "${auth[@]}" \
    --no-journal --metrics-address off > "$work/daemon-b-$mode-$round.log" 2>&1 & netns_track $!; local db=$!
  # serving, not only its socket made: on a loaded host a client's 10 s HELLO deadline can pass in between
  for _ in $(seq 1 240); do
    [[ $(grep -l 'xferd daemon serving' "$work/daemon-"[ab]"-$mode-$round.log" 2>/dev/null | wc -l) == 2 ]] && break
    sleep 0.5
  done
  ip netns exec "$ns_b" "$xferd" bench-target --dir "$dir_b" --name target --size "$target_size" --ignore-stdin \
    > "$work/target-$mode-$round.log" 2>&1 & netns_track $!; local tp=$!
  for _ in $(seq 1 240); do grep -q '^TARGET ' "$work/target-$mode-$round.log" 2>/dev/null && break; sleep 0.5; done
  if ! grep -q '^TARGET ' "$work/target-$mode-$round.log" 2>/dev/null; then
    echo "bench-peer-auth: bench-target did not start ($mode, round $round; logs in $work)" >&2
    kill "$tp" "$da" "$db" 2>/dev/null || true
    return 0
  fi
  local name address size
  read -r _ name address size < <(grep '^TARGET ' "$work/target-$mode-$round.log")
  for op in write read; do
    local log="$work/bench-$mode-$op-$round.log" bytes0 cpu0 cpu1 bytes1
    # CPU of both daemons per GB moved, warm-up included: both taken while the daemons are idle, before and after
    bytes0=$(peer_bytes "$dir_a"); cpu0=$(( $(cpu_ticks "$da") + $(cpu_ticks "$db") ))
    ip netns exec "$ns_a" "$xferd" bench --dir "$dir_a" --target "$name" --target-address "$address" \
      --target-size "$size" --operation "$op" --block-size "$block" --duration "${duration}s" --warmup 3s \
      > "$log" 2>&1 || true
    cpu1=$(( $(cpu_ticks "$da") + $(cpu_ticks "$db") )); bytes1=$(peer_bytes "$dir_a")
    local gbps; gbps=$(grep -o 'gb_per_s=[0-9.]*' "$log" | head -1 | cut -d= -f2)
    echo "$mode $op ${gbps:--} $(cpu_per_gb "$(( cpu1 - cpu0 ))" "$(( bytes1 - bytes0 ))")"
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
runs, cpu = {}, {}
for line in open(sys.argv[1]):
    parts = line.split()
    if len(parts) == 4 and parts[2] != "-":
        runs.setdefault((parts[0], parts[1]), []).append(float(parts[2]))
    if len(parts) == 4 and parts[3] != "-":
        cpu.setdefault((parts[0], parts[1]), []).append(float(parts[3]))
for op in ("write", "read"):
    none, token = runs.get(("none", op), []), runs.get(("token", op), [])
    if not none or not token:
        print(f"{op}: missing runs (none {none}, token {token})")
        continue
    a, b = statistics.median(none), statistics.median(token)
    print(f"{op:5}: no auth {a:.3f} GB/s {none}, token {b:.3f} GB/s {token}, cost {100 * (a - b) / a:+.1f}%"
          " (target <= 5%)")
    none, token = cpu.get(("none", op), []), cpu.get(("token", op), [])
    if none and token:
        a, b = statistics.median(none), statistics.median(token)
        print(f"{op:5}: CPU of both daemons per GB: no auth {a:.3f} s {none}, token {b:.3f} s {token},"
              f" cost {100 * (b - a) / a:+.1f}%")
PY
