#!/usr/bin/env bash
# Chaos run: two "hosts" (network namespaces xf-<pid>-a and xf-<pid>-b, each with two NICs: two veth pairs), a
# daemon on each, a target buffer on B, and verifying clients on A (perf's io.xferd.perf.ChaosClient: write a fresh
# pattern, read it back, compare every byte) while a chaos loop, bounded in time, goes round:
#   kill -9 of a client (restarted), kill -9 of the target daemon (restarted, with its target), kill -9 of the
#   initiator daemon (restarted; clients reconnect), link down/up, tc netem loss+delay+reordering, a connection
#   flood on B's RPC port, a stalled peer (connects and sends half a frame).
# Counts requests verified, failed with a typed status, hung past the clients' await timeout (must be 0), wrong
# bytes reported OK (must be 0); then, calm again, the daemons' fds, /dev/shm mappings, xferd threads and the files
# of their runtime directories must come back to the baseline taken after a calm warm-up.
#
#   perf/chaos.sh [--duration S] [--clients N] [--transfer-timeout-ms MS] [--block-size BYTES]
#
#   --duration            seconds of chaos (default 20: the CI form; by hand e.g. 600); every kind of step runs at
#                         least once, so a short duration may run a little longer
#   --clients             verifying clients on A (default 2)
#   --transfer-timeout-ms the daemons' transfer timeout (default 3000)
#   --block-size          bytes per request (default 262144)
#
# Needs root (ip netns, tc). Traffic goes only between the two namespaces it makes. Namespaces, links, processes and
# runtime directories are removed on exit (trap); logs stay in a /tmp directory. Exit 0 when hung = wrong = 0,
# something verified and nothing leaked; 1 otherwise; 2 when it cannot run here.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
xferd="$root/bin/xferd"
duration=20
clients=2
timeout_ms=3000
block=262144
while [[ $# -gt 0 ]]; do
  case "$1" in
    --duration) duration="$2"; shift 2 ;;
    --clients) clients="$2"; shift 2 ;;
    --transfer-timeout-ms) timeout_ms="$2"; shift 2 ;;
    --block-size) block="$2"; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "unknown option: $1 (try --help)" >&2; exit 2 ;;
  esac
done

say() { echo "chaos: $(date -u +%H:%M:%S) $*"; }
die() { echo "chaos: $1" >&2; exit "${2:-1}"; }

[[ "$(id -u)" == 0 ]] || die "needs root (it creates network namespaces)" 2
command -v ip >/dev/null || die "needs iproute2's ip" 2
command -v python3 >/dev/null || die "needs python3 (connection flood, stalled peer, summary)" 2
jar="$root/daemon/target/daemon-0.1.0-SNAPSHOT.jar"
if [[ ! -f "$jar" || ! -d "$root/daemon/target/lib" || ! -f "$root/perf/target/classes/io/xferd/perf/ChaosClient.class" ]]; then
  say "building the daemon and perf"
  (cd "$root" && ./mvnw -q -B -DskipTests package -pl perf -am) || die "build failed" 2
fi
java_home="${JAVA_HOME:-}"
for candidate in "$java_home" /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/temurin-25-jdk /usr/lib/jvm/java-25-openjdk-amd64; do
  [[ -n "$candidate" && -x "$candidate/bin/java" ]] && { java_home="$candidate"; break; }
done
read -r -a jvm_flags <<< "$(sed -e '/^[[:space:]]*[#!]/d' -e 's/^xferd\.jvm\.flags=//' -e 's/\\$//' "$root/jvm.flags" | tr '\n' ' ')"

source "$here/lib/netns.sh"
k=$NETNS_K
a1="xfc$$a1"; b1="xfc$$b1"; a2="xfc$$a2"; b2="xfc$$b2"
addr_a="10.216.$k.1"; addr_b="10.216.$k.2"
dir_a="/dev/shm/xferd-chaosA-$$"; dir_b="/dev/shm/xferd-chaosB-$$"
work="$(mktemp -d /tmp/xferd-chaos.XXXXXX)"
pid_a=""; pid_b=""; pid_target=""
declare -A client_pid=()
extra_pids=()

# the daemons, target and clients are restarted during the run: their current pids are ended here, first
netns_before_cleanup() {
  local pid
  for pid in "${client_pid[@]}" "${extra_pids[@]}" $pid_target $pid_a $pid_b; do kill "$pid" 2>/dev/null; done
  sleep 1
  for pid in "${client_pid[@]}" "${extra_pids[@]}" $pid_target $pid_a $pid_b; do kill -9 "$pid" 2>/dev/null; done
}
netns_on_exit 'rm -rf "$dir_a" "$dir_b"; echo "chaos: logs in $work"'
netns_trap

netns_create xf || die "cannot create network namespaces" 2
ns_a="$NS_A"; ns_b="$NS_B"
say "namespaces $ns_a ($addr_a) and $ns_b ($addr_b), two veth pairs $a1<->$b1, $a2<->$b2"
for i in 1 2; do
  eval "va=\$a$i; vb=\$b$i"
  netns_veth "$va" "$vb" "10.21$((5 + i))" || die "cannot create veth pairs" 2
done
# the netem step needs tc and the kernel's sch_netem qdisc: probed once on one NIC; without it the step is skipped,
# said here once and on the summary's events line, and every other step still runs
netem=1
if ! netem_error=$(ip netns exec "$ns_a" tc qdisc add dev "$a2" root netem delay 1ms 2>&1); then
  netem=0
  say "tc netem is not available here (${netem_error//$'\n'/ }; no sch_netem in this kernel, or no tc): the netem" \
    "step is skipped, every other step runs"
else
  ip netns exec "$ns_a" tc qdisc del dev "$a2" root 2>/dev/null
fi

(umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/cluster.token")
generation=0

start_daemon() { # a|b
  local ns dir addr nics log
  generation=$((generation + 1))
  if [[ $1 == a ]]; then ns=$ns_a; dir=$dir_a; addr=$addr_a; nics="$a1,$a2"; else ns=$ns_b; dir=$dir_b; addr=$addr_b; nics="$b1,$b2"; fi
  log="$work/daemon-$1-$generation.log"
  rm -f "$dir/xferd.sock"
  ip netns exec "$ns" "$xferd" daemon --dir "$dir" --rpc-address "$addr:12001" --device-name "$nics" \
    --cluster-token-file "$work/cluster.token" --transfer-timeout-ms "$timeout_ms" > "$log" 2>&1 &
  local pid=$!
  if [[ $1 == a ]]; then pid_a=$pid; else pid_b=$pid; fi
  # serving, not only its socket made: on a loaded host a client's 10 s HELLO deadline can pass in between (and
  # a restart took over a minute at load 29 on 2 cores)
  for _ in $(seq 1 720); do
    [[ -S "$dir/xferd.sock" ]] && grep -q 'xferd daemon serving' "$log" && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.25
  done
  tail -20 "$log" >&2
  die "the daemon in $ns did not start (log $log)"
}

start_target() {
  local log="$work/target-$generation.log"
  ip netns exec "$ns_b" "$xferd" bench-target --dir "$dir_b" --name chaos-target --size $((block * 64)) \
    --ignore-stdin > "$log" 2>&1 &
  pid_target=$!
  for _ in $(seq 1 240); do
    if grep -q '^TARGET ' "$log"; then
      grep -m1 '^TARGET ' "$log" > "$work/target.line.new" && mv "$work/target.line.new" "$work/target.line"
      return 0
    fi
    kill -0 "$pid_target" 2>/dev/null || break
    sleep 0.25
  done
  tail -20 "$log" >&2
  die "bench-target did not start (log $log)"
}

start_client() { # slot: runs until the stop file exists (or 2 h)
  generation=$((generation + 1))
  ip netns exec "$ns_a" "$java_home/bin/java" "${jvm_flags[@]}" \
    -cp "$root/perf/target/classes:$jar:$root/daemon/target/lib/*" io.xferd.perf.ChaosClient \
    --dir "$dir_a" --target-file "$work/target.line" --slot "$1" --duration-s 7200 --stop-file "$work/stop" --block-size "$block" \
    --await-ms "$await_ms" > "$work/client-$1-$generation.log" 2>&1 &
  client_pid[$1]=$!
}

# a client that has not finished its request within the daemons' transfer timeout (times the attempts on both
# paths) plus a margin counts it as hung
await_ms=$(( timeout_ms * 4 + 5000 ))

wait_clients() { # seconds
  local slot deadline=$(( $(date +%s) + $1 ))
  for slot in "${!client_pid[@]}"; do
    while kill -0 "${client_pid[$slot]}" 2>/dev/null && [[ $(date +%s) -lt $deadline ]]; do sleep 0.5; done
    if kill -0 "${client_pid[$slot]}" 2>/dev/null; then
      echo "STUCK client $slot still running ${1}s after it was told to stop" | tee -a "$work/stuck.log"
      kill -9 "${client_pid[$slot]}" 2>/dev/null
    fi
  done
}

# peer connections are pooled: a path first used during the chaos (the second NIC, after the first went down) keeps
# its connections (a socket, and xferd-peer-in-/-out-/-ack- threads) up to the pool's size. Sockets and those threads
# are checked against that bound; every other fd, the /dev/shm mappings, the other xferd threads and the files of
# the runtime directory must come back to the baseline exactly.
peer_bound=$(( 2 * 2 * 2 )) # connections per peer (default 2) x paths x directions
measure() { # pid dir [snapshot] -> "other-fds maps other-threads files sockets peer-threads"
  local fds sockets maps threads files peers
  fds=$(ls "/proc/$1/fd" 2>/dev/null | wc -l)
  sockets=$(for fd in /proc/$1/fd/*; do readlink "$fd"; done 2>/dev/null | grep -c '^socket:')
  maps=$(grep -c '/dev/shm/' "/proc/$1/maps" 2>/dev/null)
  peers=$(cat /proc/$1/task/*/comm 2>/dev/null | grep -c '^xferd-peer-\(in\|out\|ack\)-')
  threads=$(cat /proc/$1/task/*/comm 2>/dev/null | grep '^xferd' | grep -vc '^xferd-peer-\(in\|out\|ack\)-')
  files=$(find "$2" -type f 2>/dev/null | wc -l)
  if [[ -n "${3:-}" ]]; then # a snapshot to compare when something did not come back
    { echo "== threads"; cat /proc/$1/task/*/comm 2>/dev/null | sort | uniq -c
      echo "== fds"; for fd in /proc/$1/fd/*; do readlink "$fd"; done 2>/dev/null | sed 's/[0-9]\+/N/g' | sort | uniq -c
      echo "== files"; find "$2" -type f 2>/dev/null | sort; } > "$3"
  fi
  echo "$(( fds - sockets )) ${maps:-0} $threads $files $sockets $peers"
}

start_daemon a
start_daemon b
start_target
say "daemons $pid_a (A) and $pid_b (B), target $(cut -d' ' -f2 "$work/target.line")"

# a calm warm-up: the baseline is what the daemons hold after a verified workload ended
for slot in $(seq 0 $((clients - 1))); do start_client "$slot"; done
sleep 3; touch "$work/stop"
wait_clients 60
rm -f "$work/stop"
sleep 2
baseline_a=$(measure "$pid_a" "$dir_a" "$work/baseline-a.txt"); baseline_b=$(measure "$pid_b" "$dir_b" "$work/baseline-b.txt")
say "baseline (other-fds shm-maps other-xferd-threads dir-files sockets peer-threads): A $baseline_a, B $baseline_b"

# chaos: clients run until the chaos ends plus a calm tail; a killed one is restarted
calm_tail=5
chaos_end=$(( $(date +%s) + duration ))
for slot in $(seq 0 $((clients - 1))); do start_client "$slot"; done
# cheap steps first: the short form does each at least once (the loop runs until every kind ran and the time is up)
steps=(kill-client link-down-up netem flood stalled-peer kill-target-daemon kill-initiator-daemon)
declare -A done_steps=()
step_index=0
event() { echo "$(date -u +%H:%M:%S) $*" >> "$work/events.log"; say "$*"; done_steps[$1]=$(( ${done_steps[$1]:-0} + 1 )); }
while [[ $(date +%s) -lt $chaos_end || $step_index -lt ${#steps[@]} ]]; do
  step=${steps[$((step_index % ${#steps[@]}))]}
  step_index=$((step_index + 1))
  case $step in
    kill-client)
      slot=$(( RANDOM % clients ))
      kill -9 "${client_pid[$slot]}" 2>/dev/null
      event kill-client "kill -9 client $slot"
      sleep 0.5; start_client "$slot" ;;
    kill-target-daemon)
      kill -9 "$pid_b" 2>/dev/null; wait "$pid_b" 2>/dev/null
      event kill-target-daemon "kill -9 the target daemon (B), restart it and its target"
      kill "$pid_target" 2>/dev/null; wait "$pid_target" 2>/dev/null
      start_daemon b; start_target ;;
    kill-initiator-daemon)
      kill -9 "$pid_a" 2>/dev/null; wait "$pid_a" 2>/dev/null
      event kill-initiator-daemon "kill -9 the initiator daemon (A), restart it"
      start_daemon a ;;
    link-down-up)
      event link-down-up "link $a1 down for 1 s"
      ip -n "$ns_a" link set "$a1" down; sleep 1; ip -n "$ns_a" link set "$a1" up ;;
    netem)
      if [[ $netem == 1 ]]; then
        event netem "netem on $a1 and $a2: loss 5%, delay 20ms +-10ms, reorder 25%, for 3 s"
        for dev in "$a1" "$a2"; do
          ip netns exec "$ns_a" tc qdisc add dev "$dev" root netem loss 5% delay 20ms 10ms reorder 25% 50%
        done
        sleep 3
        for dev in "$a1" "$a2"; do ip netns exec "$ns_a" tc qdisc del dev "$dev" root 2>/dev/null; done
      fi ;;
    flood)
      event flood "300 connections to $addr_b:12001 held 2 s"
      ip netns exec "$ns_a" python3 - "$addr_b" <<'PY'
import socket, sys, time
held = []
for _ in range(300):
    try:
        held.append(socket.create_connection((sys.argv[1], 12001), timeout=1))
    except OSError:
        pass
time.sleep(2)
for s in held:
    s.close()
print(f"flood: {len(held)} connections held")
PY
      ;;
    stalled-peer)
      event stalled-peer "a peer that connects to $addr_b:12001, sends half a frame and stalls"
      ip netns exec "$ns_a" python3 - "$addr_b" $(( timeout_ms / 1000 + 2 )) <<'PY'
import socket, struct, sys, time
s = socket.create_connection((sys.argv[1], 12001), timeout=2)
s.sendall(struct.pack("<I", 64) + b"\x01" * 16)  # a length that promises 64 bytes, then 16 of them
time.sleep(float(sys.argv[2]))
try:
    gone = s.recv(1, socket.MSG_DONTWAIT) == b""
except BlockingIOError:
    gone = False
except OSError:
    gone = True
print("stalled peer: " + ("disconnected by the daemon" if gone else f"still connected after {sys.argv[2]} s"))
s.close()
PY
      ;;
  esac
  sleep 0.5
done
say "chaos over; calm tail of ${calm_tail} s, then the clients end"
sleep "$calm_tail"; touch "$work/stop"
wait_clients $(( await_ms / 1000 + 30 ))

# leaks: back to the baseline once calm (closed connections and unmapped buffers may take a moment)
final_a=""; final_b=""
for _ in $(seq 1 30); do
  final_a=$(measure "$pid_a" "$dir_a" "$work/after-a.txt"); final_b=$(measure "$pid_b" "$dir_b" "$work/after-b.txt")
  python3 - "$baseline_a" "$final_a" "$baseline_b" "$final_b" "$peer_bound" <<'PY' && break
import sys
pairs = [(sys.argv[1], sys.argv[2]), (sys.argv[3], sys.argv[4])]
bound = int(sys.argv[5])
def fine(base, final):
    b, f = [int(v) for v in base.split()], [int(v) for v in final.split()]
    return all(f[i] <= b[i] for i in range(4)) and f[4] <= b[4] + bound and f[5] <= b[5] + 2 * bound
sys.exit(0 if all(fine(base, final) for base, final in pairs) else 1)
PY
  sleep 1
done

python3 - "$work" "$baseline_a" "$final_a" "$baseline_b" "$final_b" "$duration" "$(declare -p done_steps)" \
  "$peer_bound" "$netem" <<'PY'
import glob, os, re, sys
work, base_a, final_a, base_b, final_b, duration, steps, peer_bound, netem = sys.argv[1:10]
totals = {}
for path in sorted(glob.glob(os.path.join(work, "client-*.log"))):
    last = None
    with open(path, encoding="utf-8", errors="replace") as log:
        for line in log:
            if line.startswith("CHAOS "):
                last = line
    for key, value in re.findall(r"(\S+)=(\d+)", last or ""):
        totals[key] = totals.get(key, 0) + int(value)
stuck = 0
if os.path.exists(os.path.join(work, "stuck.log")):
    stuck = sum(1 for _ in open(os.path.join(work, "stuck.log")))
events = dict(re.findall(r"\[([\w-]+)\]=\"?(\d+)", steps))
print(f"\n== chaos, {duration} s, events: " + ", ".join(f"{k} {v}" for k, v in sorted(events.items()))
      + ("" if netem == "1" else "; netem skipped (no sch_netem in this kernel)"))
print("| outcome | count |")
print("|---|---|")
print(f"| requests completed, verified (write + read back + compare) | {totals.get('verified', 0)} |")
print(f"| requests failed with a typed status | {totals.get('failed', 0)} |")
for key in sorted(k for k in totals if k.startswith(("write:", "read:"))):
    print(f"| &nbsp; {key} | {totals[key]} |")
for key in sorted(k for k in totals if k.startswith("reopen:")):
    print(f"| target reopened after {key[7:]} | {totals[key]} |")
for key in sorted(k for k in totals if k.startswith("error:")):
    print(f"| client reconnects after {key[6:]} | {totals[key]} |")
print(f"| hung past the await timeout (must be 0) | {totals.get('hung', 0) + stuck} |")
print(f"| wrong bytes reported OK (must be 0) | {totals.get('wrong', 0)} |")
labels = ["fds other than sockets", "/dev/shm mappings", "xferd threads other than peer connections",
          "runtime-dir files"]
bound = int(peer_bound)
leaks = 0
for name, base, final in (("A", base_a, final_a), ("B", base_b, final_b)):
    b, f = base.split(), final.split()
    for label, bv, fv in zip(labels, b, f):
        leaked = int(fv) > int(bv)
        leaks += leaked
        print(f"| daemon {name} {label}: baseline {bv}, after {fv} | {'LEAK' if leaked else 'ok'} |")
    leaked = int(f[4]) > int(b[4]) + bound
    leaks += leaked
    print(f"| daemon {name} sockets: baseline {b[4]}, after {f[4]} (pooled peer connections: at most +{bound}) | "
          f"{'LEAK' if leaked else 'ok'} |")
    leaked = int(f[5]) > int(b[5]) + 2 * bound
    leaks += leaked
    print(f"| daemon {name} peer-connection threads: baseline {b[5]}, after {f[5]} (at most +{2 * bound}) | "
          f"{'LEAK' if leaked else 'ok'} |")
ok = totals.get("hung", 0) + stuck == 0 and totals.get("wrong", 0) == 0 and leaks == 0 and totals.get("verified", 0) > 0
if leaks:
    print(f"(what differs: diff {work}/baseline-a.txt {work}/after-a.txt, and -b)")
print("\nchaos: " + ("PASS" if ok else "FAIL"))
sys.exit(0 if ok else 1)
PY
