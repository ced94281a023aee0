#!/usr/bin/env bash
# Striping benchmark: two "hosts" (network namespaces) joined by TWO veth pairs, each rate-limited with tc.
# Measures one large request at a time (block = one request) with the daemons striping over both NICs, then
# with one NIC only, and prints the ratio (target: >= 1.8x the single-NIC rate).
#
#   perf/bench-multinic.sh [--rate-mbit 500] [--block-size 64MiB] [--duration 10]
#
# Needs root. Namespaces, pairs, daemons and runtime directories are removed on exit.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
xferd="$root/bin/xferd"
rate=500
block=64MiB
duration=10
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rate-mbit) rate="$2"; shift 2 ;;
    --block-size) block="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
[[ "$(id -u)" == 0 ]] || { echo "bench-multinic: needs root" >&2; exit 2; }

source "$here/lib/netns.sh"
netns_trap
k=$NETNS_K
work="$(mktemp -d /tmp/xferd-bench-multinic.XXXXXX)"
netns_on_exit 'rm -rf /dev/shm/xferd-mnA-$$ /dev/shm/xferd-mnB-$$; echo "bench-multinic: logs in $work"'
# one cluster token for both daemons
(umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/cluster.token")

netns_create xfm
ns_a="$NS_A"; ns_b="$NS_B"
a1="xfm$$a1"; b1="xfm$$b1"; a2="xfm$$a2"; b2="xfm$$b2"
for i in 1 2; do
  eval "va=\$a$i; vb=\$b$i"
  netns_veth "$va" "$vb" "10.21$((2 + i))"
  ip netns exec "$ns_a" tc qdisc replace dev "$va" root tbf rate "${rate}mbit" burst 256kb latency 50ms
  ip netns exec "$ns_b" tc qdisc replace dev "$vb" root tbf rate "${rate}mbit" burst 256kb latency 50ms
done

run() { # $1 label, $2 NICs of A, $3 NICs of B
  local label="$1" dir_a="/dev/shm/xferd-mnA-$$" dir_b="/dev/shm/xferd-mnB-$$"
  rm -rf "$dir_a" "$dir_b"
  ip netns exec "$ns_a" "$xferd" daemon --dir "$dir_a" --rpc-address "10.213.$k.1:12001" --device-name "$2" \
    --cluster-token-file "$work/cluster.token" --no-journal --metrics-address off > "$work/daemon-a-$label.log" 2>&1 & netns_track $!; local da=$!
  ip netns exec "$ns_b" "$xferd" daemon --dir "$dir_b" --rpc-address "10.213.$k.2:12001" --device-name "$3" \
    --cluster-token-file "$work/cluster.token" --no-journal --metrics-address off > "$work/daemon-b-$label.log" 2>&1 & netns_track $!; local db=$!
  for _ in $(seq 1 60); do [[ -S "$dir_a/xferd.sock" && -S "$dir_b/xferd.sock" ]] && break; sleep 0.5; done
  ip netns exec "$ns_b" "$xferd" bench-target --dir "$dir_b" --name target --size 256MiB --ignore-stdin \
    > "$work/target-$label.log" 2>&1 & netns_track $!; local tp=$!
  for _ in $(seq 1 60); do grep -q '^TARGET ' "$work/target-$label.log" 2>/dev/null && break; sleep 0.5; done
  read -r _ name address size < <(grep '^TARGET ' "$work/target-$label.log")
  ip netns exec "$ns_a" "$xferd" bench --dir "$dir_a" --target "$name" --target-address "$address" \
    --target-size "$size" --operation write --block-size "$block" --batch-size 1 --window 1 \
    --duration "${duration}s" --warmup 2s | tee "$work/bench-$label.log" | grep -E '^(write|latency)'
  kill "$tp" "$da" "$db" 2>/dev/null || true
  wait "$tp" "$da" "$db" 2>/dev/null || true
  grep -o 'gb_per_s=[0-9.]*' "$work/bench-$label.log" | cut -d= -f2
}

echo "bench-multinic: two pairs at ${rate} Mbit/s each, one ${block} request at a time"
one=$(run one-nic "$a1" "$b1" | tail -1)
two=$(run two-nics "$a1,$a2" "$b1,$b2" | tail -1)
python3 - "$one" "$two" "$rate" <<'PY'
import sys
one, two, rate = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
print(f"one NIC:  {one:.3f} GB/s  (link {rate / 8000:.3f} GB/s)")
print(f"two NICs: {two:.3f} GB/s")
print(f"ratio two/one: {two / one:.2f} (target >= 1.8)")
PY
