#!/usr/bin/env bash
# Cross-host benchmark on one machine: two network namespaces joined by a veth pair play two hosts, each with
# its own xferd daemon. Measures iperf3 -P N on the same pair (N = the daemons' connections per peer), then
# xferd bench write and read at 1 MiB and 64 KiB blocks with 1 and 2 client threads, and the KV workload, and
# prints a summary with the ratios docs/performance.md quotes (xferd / iperf3, 64 KiB / 1 MiB, 2 threads / 1 thread,
# KV transfer time / wire time), and per run the share of requests that rode in another's transfer ("merged": the
# sending daemon's coalescing counter; the KV column is both prompt sizes of that rate together).
#
#   perf/bench-netns.sh [--connections N] [--duration S] [--qps "2 4 8"] [--tokens 1024,8192] [--requests N]
#                       [--operations "write read"] [--blocks "1MiB 64KiB"] [--threads "1 2"] [--warmup S]
#                       [--arrival "poisson fixed"] [--client-idle spin|gentle] [--same-daemon] [--no-peer-auth] [--window N] [--rounds N]
#                       [--overlap "8192:1024 1024:8192"] [--overlap-delay 5ms] [--slow-start-after-idle 0|1]
#                       [--congestion cubic|bbr|reno] [--daemon-congestion cubic|reno] [--thread-switches]
#                       [--tcp-trace] [--nice N]
#
#   --connections  connections per peer: iperf3 -P N and the daemons' --connections-per-peer (default 2)
#   --duration     seconds per iperf3 and per throughput run (default 10)
#   --qps          KV workload rates, one run each (default "2 4 8")
#   --tokens       KV prompt sizes (default 1024,8192)
#   --requests     KV arrivals per prompt size and rate (default 16)
#   --arrival      KV arrival processes, one run each per rate (default poisson; "poisson fixed" runs both: fixed
#                  gaps of 1/QPS never put two prompts on the wire at once below 100 % load, Poisson ones do).
#                  Each KV run's slowest prompt is looked up in daemon A's journal (xferd profile --trace): its
#                  requests' queue wait, execution and slice wire times, one line; the records stay in the logs
#   --operations, --blocks, --threads
#                  which throughput runs (default all: "write read", "1MiB 64KiB", "1 2"); --qps "" skips the KV
#                  workload. Ratios whose runs were skipped print "-".
#   --window       batches of 32 requests each throughput thread keeps in flight (default: the bench's, 4): a
#                  larger window for small blocks checks whether they are bound by the bytes in flight
#   --rounds       run the throughput runs N times, alternated in one sitting (write 1 MiB, write 64 KiB, write
#                  1 MiB, ...; default 1): the table shows each cell's median run and the 64K/1M ratio of each
#                  round, since this VM swings 2x from run to run
#   --warmup       seconds of untimed write and read before the timed runs (default 5; 0 skips)
#   --overlap      KV prompts of two clients, FIRST:SECOND tokens, the second arriving --overlap-delay (default 5ms)
#                  after the first started, --requests rounds each, and each size alone in the same run
#                  (default "8192:1024 1024:8192": a short prompt behind a long one, and the reverse; "" skips)
#   --slow-start-after-idle
#                  net.ipv4.tcp_slow_start_after_idle inside both namespaces (default: the namespaces' own, 1):
#                  0 keeps a connection's congestion window across a quiet spell (Linux has no per-socket switch;
#                  an A/B check of whether the cwnd restart after idle shows in the KV workload at low QPS)
#   --congestion   the TCP congestion control of iperf3's (-C) and the daemons' (--tcp-congestion) connections, set
#                  per socket (default: the namespaces' own, inherited from the host's): an A/B of whether the host's choice
#                  (e.g. BBR, whose PROBE_RTT holds the window at 4 packets for 200 ms every 10 s) shows in the tail
#   --daemon-congestion
#                  the daemons' --tcp-congestion: only their peer connections use it, iperf3 and the namespaces keep
#                  theirs (default: unset, the daemons use the namespaces' algorithm)
#   --client-idle  how the bench clients wait for completions: spin (the client library's default) or gentle
#                  (parks up to 500 us; both "hosts" share this machine's cores, iperf3 does not spin)
#   --no-peer-auth the daemons run with --insecure-no-peer-auth (default: both prove one cluster token, made
#                  for the run); compare with a run without it for the cost of authentication
#   --thread-switches
#                  per throughput run, both daemons' threads by name: context switches (voluntary = the thread
#                  slept, involuntary = preempted or yielded), CPU ms and ms asleep per GB moved, and the mean sleep
#                  per voluntary switch, from /proc/PID/task/*/status and schedstat at 3.5 s into the run and 1 s before
#                  its end (--duration >= 5; GB at the run's mean rate), printed after each run (threads under 10
#                  switches and 1 ms of CPU per GB left out; threads of one name summed)
#   --tcp-trace    per KV run, in each namespace every 20 ms: `ss -tinm` of the peer connections (queues, cwnd,
#                  unacked, retransmits) and the daemon's xferd-peer-* threads' run and run-queue times
#                  (perf/lib/tcp-trace.sh, at chrt -f 1: a third of a vCPU per namespace, so its runs' figures are
#                  not for tables; $work/LABEL.ss-A, .ss-B), and nstat's TCP counters before and after (those that
#                  moved printed, $work/LABEL.nstat); the slowest prompt's trace beside the samples, per sample
#                  and in totals ($work/LABEL-slowest-TOKENS.tcp, perf/lib/tcp-trace-summary.py)
#   --nice         run iperf3, both daemons, the target and the bench at this nice value (e.g. -10; default:
#                  unchanged): on a machine others load, whether the daemons' share of the CPU is what they wait
#                  for (runnable threads not running); a figure measured with it says so
#   --same-daemon  run the bench in namespace B next to its target, through B's daemon only: checks the script
#                  and the bench tool where the daemon-to-daemon transport is missing (local copies, not the wire)
#
# Needs root (ip netns). Installs iperf3 with apt-get when missing; builds the daemon when it is not built.
# Namespaces, veth pair, daemons and runtime directories are removed on exit; logs stay in a /tmp directory.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
xferd="$root/bin/xferd"
connections=2
duration=10
qps_list="2 4 8"
arrivals="poisson"
tokens="1024,8192"
requests=16
operations="write read"
blocks="1MiB 64KiB"
threads_list="1 2"
warmup=5
client_idle=spin
same_daemon=0
no_peer_auth=0
overlap="8192:1024 1024:8192"
overlap_delay=5ms
slow_start_after_idle=""
congestion=""
daemon_congestion=""
thread_switches=0
tcp_trace=0
nice_options=()
window_options=()
rounds=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --connections) connections="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --qps) qps_list="$2"; shift 2 ;;
    --arrival) arrivals="$2"; shift 2 ;;
    --tokens) tokens="$2"; shift 2 ;;
    --requests) requests="$2"; shift 2 ;;
    --operations) operations="$2"; shift 2 ;;
    --blocks) blocks="$2"; shift 2 ;;
    --threads) threads_list="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --window) window_options=(--window "$2"); shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --client-idle) client_idle="$2"; shift 2 ;;
    --same-daemon) same_daemon=1; shift ;;
    --no-peer-auth) no_peer_auth=1; shift ;;
    --overlap) overlap="$2"; shift 2 ;;
    --overlap-delay) overlap_delay="$2"; shift 2 ;;
    --slow-start-after-idle) slow_start_after_idle="$2"; shift 2 ;;
    --congestion) congestion="$2"; shift 2 ;;
    --daemon-congestion) daemon_congestion="$2"; shift 2 ;;
    --thread-switches) thread_switches=1; shift ;;
    --tcp-trace) tcp_trace=1; shift ;;
    --nice) nice_options=(nice -n "$2"); shift 2 ;;
    -h|--help) sed -n '2,70p' "$0"; exit 0 ;;
    *) echo "unknown option: $1 (try --help)" >&2; exit 2 ;;
  esac
done

say() { echo "bench-netns: $*"; }
die() { echo "bench-netns: $1" >&2; exit "${2:-1}"; }

[[ "$(id -u)" == 0 ]] || die "needs root (it creates network namespaces)" 2
command -v ip >/dev/null || die "needs iproute2's ip" 2
if ! command -v iperf3 >/dev/null; then
  say "installing iperf3 (apt-get)"
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -q iperf3 >/dev/null ||
    { apt-get -o DPkg::Lock::Timeout=300 update -qq && \
      DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -q iperf3 >/dev/null; } ||
    die "could not install iperf3" 2
fi
if [[ ! -f "$root/daemon/target/daemon-0.1.0-SNAPSHOT.jar" || ! -d "$root/daemon/target/lib" ]]; then
  say "building the daemon"
  (cd "$root" && ./mvnw -q -B -DskipTests package -pl daemon -am)
fi

source "$here/lib/netns.sh"
netns_trap
dir_a="/dev/shm/xferd-nsA-$$"; dir_b="/dev/shm/xferd-nsB-$$"
work="$(mktemp -d /tmp/xferd-bench-netns.XXXXXX)"
netns_on_exit 'rm -rf "$dir_a" "$dir_b"; echo "bench-netns: logs in $work"'
netns_pair xfb 10.213
ns_a="$NS_A"; ns_b="$NS_B"; addr_a="$ADDR_A"; addr_b="$ADDR_B"
say "namespaces $ns_a ($addr_a) and $ns_b ($addr_b), veth $VETH_A <-> $VETH_B"
if [[ -n "$slow_start_after_idle" ]]; then
  [[ "$slow_start_after_idle" == 0 || "$slow_start_after_idle" == 1 ]] || die "--slow-start-after-idle takes 0 or 1" 2
  for ns in "$ns_a" "$ns_b"; do
    ip netns exec "$ns" sysctl -q -w net.ipv4.tcp_slow_start_after_idle="$slow_start_after_idle"
  done
fi
iperf_congestion=()
if [[ -n "$congestion" ]]; then
  # per socket (root may pick any algorithm the kernel has; a namespace may only default to an allowed one)
  [[ "$congestion" =~ ^[a-z0-9_]{1,15}$ ]] || die "--congestion takes a name from net.ipv4.tcp_available_congestion_control" 2
  iperf_congestion=(-C "$congestion")
  [[ -z "$daemon_congestion" ]] || die "--congestion sets the daemons' algorithm too: give one of the two" 2
  daemon_congestion="$congestion"
fi
say "net.ipv4.tcp_congestion_control in the namespaces: $(ip netns exec "$ns_a" sysctl -n net.ipv4.tcp_congestion_control)${congestion:+ (iperf3 and the daemons: $congestion, per socket)}"
[[ ${#nice_options[@]} -eq 0 ]] || say "--nice: iperf3, daemons, target and bench run at nice ${nice_options[2]}"
say "net.ipv4.tcp_slow_start_after_idle in the namespaces: $(ip netns exec "$ns_a" sysctl -n net.ipv4.tcp_slow_start_after_idle)"

daemon_options=()
# both daemons prove one cluster token (each would otherwise make its own <dir>/cluster.token and refuse the other)
if "$xferd" daemon --help 2>/dev/null | grep -q -- '--insecure-no-peer-auth'; then
  if [[ $no_peer_auth == 1 ]]; then
    say "--no-peer-auth: the daemons run WITHOUT peer authentication (a baseline for its cost)"
    daemon_options+=(--insecure-no-peer-auth)
  else
    (umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/cluster.token")
    daemon_options+=(--cluster-token-file "$work/cluster.token")
  fi
fi
if [[ -n "$daemon_congestion" ]]; then
  "$xferd" daemon --help 2>/dev/null | grep -q -- '--tcp-congestion' ||
    die "--daemon-congestion: this build's daemon has no --tcp-congestion option" 2
  daemon_options+=(--tcp-congestion "$daemon_congestion")
  if [[ -n "$congestion" ]]; then
    say "--congestion: iperf3's and the daemons' peer connections use $congestion"
  else
    say "--daemon-congestion: the daemons' peer connections use $daemon_congestion (iperf3: the namespaces' algorithm)"
  fi
fi
if "$xferd" daemon --help 2>/dev/null | grep -q -- '--connections-per-peer'; then
  daemon_options+=(--connections-per-peer "$connections")
else
  say "this build's daemon has no --connections-per-peer option: it runs with its default"
fi

start_daemon() { # namespace directory address log
  ip netns exec "$1" "${nice_options[@]}" "$xferd" daemon --dir "$2" --rpc-address "$3:12001" "${daemon_options[@]}" > "$4" 2>&1 &
  netns_track $!
  for _ in $(seq 1 120); do
    [[ -S "$2/xferd.sock" ]] && return 0
    kill -0 "${NETNS_PIDS[-1]}" 2>/dev/null || break
    sleep 0.5
  done
  cat "$4" >&2
  die "the daemon in $1 did not start (log above)"
}
start_daemon "$ns_a" "$dir_a" "$addr_a" "$work/daemon-a.log"
daemon_a_pid="${NETNS_PIDS[-1]}"
start_daemon "$ns_b" "$dir_b" "$addr_b" "$work/daemon-b.log"
daemon_b_pid="${NETNS_PIDS[-1]}"
say "daemons: $addr_a:12001 ($dir_a), $addr_b:12001 ($dir_b)"

ip netns exec "$ns_b" "${nice_options[@]}" "$xferd" bench-target --dir "$dir_b" --name bench-target --size 512MiB --pattern 42 \
  --ignore-stdin > "$work/target.log" 2>&1 &
target_pid=$!
netns_track $target_pid
for _ in $(seq 1 120); do
  grep -q '^TARGET ' "$work/target.log" && break
  kill -0 "$target_pid" 2>/dev/null || break
  sleep 0.5
done
grep -q '^TARGET ' "$work/target.log" || { cat "$work/target.log" >&2; die "bench-target did not start"; }
read -r _ target_name target_address target_size <<< "$(grep -m1 '^TARGET ' "$work/target.log")"
say "target $target_name, $target_size bytes at $target_address"

# ---------------------------------------------------------------- iperf3 baseline on the same pair
ip netns exec "$ns_b" "${nice_options[@]}" iperf3 -s -B "$addr_b" -p 5201 > "$work/iperf3-server.log" 2>&1 &
netns_track $!
sleep 1
iperf_mbit() { awk '/receiver/ { for (i = 1; i <= NF; i++) if ($i == "Mbits/sec") v = $(i - 1) } END { print v }' "$1"; }
say "iperf3 -P $connections -t $duration, $ns_a -> $ns_b"
ip netns exec "$ns_a" "${nice_options[@]}" iperf3 -c "$addr_b" -p 5201 -P "$connections" -t "$duration" -f m "${iperf_congestion[@]}" > "$work/iperf3-ab.log"
say "iperf3 -P $connections -t $duration -R, $ns_b -> $ns_a"
ip netns exec "$ns_a" "${nice_options[@]}" iperf3 -c "$addr_b" -p 5201 -P "$connections" -t "$duration" -f m -R "${iperf_congestion[@]}" > "$work/iperf3-ba.log"
iperf_ab_gbs=$(awk -v m="$(iperf_mbit "$work/iperf3-ab.log")" 'BEGIN { printf "%.3f", m / 8000 }')
iperf_ba_gbs=$(awk -v m="$(iperf_mbit "$work/iperf3-ba.log")" 'BEGIN { printf "%.3f", m / 8000 }')
say "iperf3: $iperf_ab_gbs GB/s A->B (write direction), $iperf_ba_gbs GB/s B->A (read direction)"

# ---------------------------------------------------------------- xferd bench
bench_ns="$ns_a"; bench_dir="$dir_a"
if [[ $same_daemon == 1 ]]; then
  bench_ns="$ns_b"; bench_dir="$dir_b"
  say "--same-daemon: the bench runs in $ns_b through $ns_b's daemon: local copies, NOT the network"
fi
failures=0
# daemon A's counter with this label (xferd status --json; it reads the daemon's files, no network), 0 when absent
counter_a() {
  local value
  value="$("$xferd" status --dir "$bench_dir" --json 2>/dev/null | sed -n "s/^ *\"$1\" : \([0-9]*\),\{0,1\}$/\1/p" | head -1)"
  echo "${value:-0}"
}
# requests that rode in another request's transfer (intake's RequestCoalescer), as a share of those submitted in
# the run: adjacent blocks that coalesce cross the wire as slices of the slice size, not one frame per block
coalesced_share() { # label submitted-before merged-before
  local submitted=$(( $(counter_a "requests submitted") - $2 )) merged=$(( $(counter_a "requests merged with adjacent ones into one transfer") - $3 ))
  awk -v m="$merged" -v s="$submitted" 'BEGIN { if (s <= 0) print "-"; else printf "%.2f", m / s }' > "$work/$1.merged"
  say "  coalesced: $merged of $submitted requests rode in another's transfer ($(cat "$work/$1.merged"))"
}
merged_of() { cat "$work/$1.merged" 2>/dev/null || echo "-"; }
# "daemon tid name voluntary involuntary cpu_ns wait_ns" per thread of both daemons (names without their trailing
# digits), after a "T now_ns" line
thread_snapshot() {
  local side pid task
  echo "T $(date +%s%N)"
  for side in A B; do
    [[ $side == A ]] && pid="$daemon_a_pid" || pid="$daemon_b_pid"
    for task in /proc/"$pid"/task/*; do
      printf '%s %s %s %s %s\n' "$side" "${task##*/}" "$(tr ' ' '_' < "$task/comm" | sed 's/[-_0-9.]*$//')" \
        "$(awk '/^voluntary_ctxt_switches/ { v = $2 } /^nonvoluntary_ctxt_switches/ { n = $2 } END { print v, n }' \
          "$task/status")" "$(awk '{ print $1, $2 }' "$task/schedstat")"
    done 2>/dev/null
  done
}
# per thread name of each daemon: switches, CPU and time asleep (neither running nor runnable) per GB moved between
# the snapshots (at the run's mean rate), and the mean sleep per voluntary switch
thread_switches_report() { # label before-file after-file
  local rate
  rate="$(field "$(result "$1")" gb_per_s)"
  [[ -n "$rate" && -f "$3" ]] || return 0
  awk -v rate="$rate" 'BEGIN { exit !(rate > 0) }' || return 0 # every request failed: no GB to divide by
  # GB moved between the snapshots, at the run's mean rate
  awk -v rate="$rate" '
    $1 == "T" { if (NR == FNR) t0 = $2; else { t1 = $2; gb = rate * (t1 - t0) / 1e9 }; next }
    NR == FNR { v[$1 "/" $2] = $4; n[$1 "/" $2] = $5; c[$1 "/" $2] = $6; w[$1 "/" $2] = $7; next }
    ($1 "/" $2) in v { k = $1 " " $3; id = $1 "/" $2; vol[k] += $4 - v[id]; inv[k] += $5 - n[id]; cpu[k] += $6 - c[id]
      asleep[k] += (t1 - t0) - ($6 - c[id]) - ($7 - w[id]) }
    END { for (k in vol) if (vol[k] + inv[k] >= 10 * gb || cpu[k] >= 1e6 * gb)
      printf "    %-24s %9.0f %9.0f %8.1f %9.1f %8.0f\n", k, vol[k] / gb, inv[k] / gb, cpu[k] / 1e6 / gb,
        asleep[k] / 1e6 / gb, (vol[k] > 0 ? asleep[k] / 1e3 / vol[k] : 0) }' "$2" "$3" |
    sort -k1,1 -k4,4nr > "$work/$1.threads"
  { printf "    %-24s %9s %9s %8s %9s %8s\n" "daemon thread (per GB)" voluntary involun. "CPU ms" "asleep ms" \
      "us/sleep"; cat "$work/$1.threads"; } | sed "s/^/  /"
}
# TCP counters of both namespaces, "A name value" per line (absolute, nstat's history untouched)
nstat_snapshot() {
  local ns side
  for side in A B; do
    [[ $side == A ]] && ns="$ns_a" || ns="$ns_b"
    ip netns exec "$ns" nstat -asz 2>/dev/null | awk -v s="$side" '$1 ~ /^(Tcp|TcpExt)/ { print s, $1, $2 }'
  done
}
tcp_trace_running() { # pid: not ended (kill -0 cannot tell: an ended child not yet waited for is a zombie)
  local stat
  read -r stat 2>/dev/null < "/proc/$1/stat" || return 1
  stat="${stat##*) }"
  [[ ${stat%% *} != Z ]]
}
tcp_trace_failure() { # samples-file: the first line of a failed sampler's file that is not a sample row
  local line
  line="$(grep -m 1 -vE '^(T |P |[0-9]|[[:space:]])' "$1")"
  [[ -n $line ]] || line="$(head -n 1 "$1")"
  [[ -n $line ]] || line="no sample rows, no message"
  printf '%s' "$line"
}
tcp_trace_start() { # label bench-pid: samplers in both namespaces while the bench runs, counters before
  nstat_snapshot > "$work/$1.nstat-before"
  # real-time priority (chrt -f 1), so that the samples keep coming on a loaded machine (under load 15 a plain
  # sampler managed one per 70 ms): a sample is one ss (~6 ms of CPU) and reads of /proc with builtins
  ip netns exec "$ns_a" chrt -f 1 "$here/lib/tcp-trace.sh" "$2" "$daemon_a_pid" 0.02 12001 > "$work/$1.ss-A" 2>&1 &
  tcp_trace_pids=($!)
  ip netns exec "$ns_b" chrt -f 1 "$here/lib/tcp-trace.sh" "$2" "$daemon_b_pid" 0.02 12001 > "$work/$1.ss-B" 2>&1 &
  tcp_trace_pids+=($!)
  netns_track "${tcp_trace_pids[@]}"
}
tcp_trace_stop() { # label: the samplers' failures, the counters that moved during the run
  local pid side rc _
  # the bench has ended: nothing left to sample. Stopped here, not left to notice that its pid is gone (a reused pid
  # would keep a real-time sampler running, and the wait below with it); still our children, so no pid is reused yet
  kill "${tcp_trace_pids[@]}" 2>/dev/null || true
  for _ in 1 2 3 4 5 6 7 8 9 10; do # up to 2 s, then KILL
    tcp_trace_running "${tcp_trace_pids[0]}" || tcp_trace_running "${tcp_trace_pids[1]}" || break
    sleep 0.2
  done
  kill -9 "${tcp_trace_pids[@]}" 2>/dev/null || true
  for side in A B; do
    [[ $side == A ]] && pid="${tcp_trace_pids[0]}" || pid="${tcp_trace_pids[1]}"
    wait "$pid" 2>/dev/null && rc=0 || rc=$?
    netns_untrack "$pid"
    # 0: it saw the bench end; 143/137: stopped above. Anything else (chrt's EPERM where the cgroup has no real-time
    # budget, a failed ss), or no sample at all, and its file holds the reason
    if [[ $rc != 0 && $rc != 143 && $rc != 137 ]] || ! grep -q '^T ' "$work/$1.ss-$side"; then
      say "  tcp-trace sampler failed: $(tcp_trace_failure "$work/$1.ss-$side") ($side's namespace, exit $rc)"
    fi
  done
  nstat_snapshot > "$work/$1.nstat-after"
  awk 'NR == FNR { v[$1 " " $2] = $3; next } { d = $3 - v[$1 " " $2]; if (d != 0) printf "%s %s %d\n", $1, $2, d }' \
    "$work/$1.nstat-before" "$work/$1.nstat-after" > "$work/$1.nstat"
  say "  TCP counters that moved (A = sender's namespace, B = receiver's): $(awk '$2 ~ /Retrans|Loss|Prune|Collapse|Ofo|Drop|Delayed|DelAck|Pressure|Reneg|SACK|Recovery|Undo|Timeout|RcvQ|Backlog|Zero|Window/ { printf "%s %s %s; ", $1, $2, $3 }' "$work/$1.nstat")"
}
run_bench() { # label, bench arguments...
  local label="$1"; shift
  local submitted_before merged_before
  submitted_before="$(counter_a "requests submitted")"
  merged_before="$(counter_a "requests merged with adjacent ones into one transfer")"
  say "xferd bench $*"
  set +e
  ip netns exec "$bench_ns" "${nice_options[@]}" "$xferd" bench --dir "$bench_dir" --target "$target_name" \
    --target-address "$target_address" --target-size "$target_size" --client-idle "$client_idle" "$@" \
    > "$work/$label.log" 2>&1 &
  # in the background (the snapshots are taken meanwhile), where it ignores SIGINT: tracked, so that an interrupted
  # script ends it on exit
  local bench_pid=$!
  netns_track "$bench_pid"
  if [[ $thread_switches == 1 && $duration -ge 5 && $label != kv-* ]]; then
    # inside the timed part only: after the bench's start-up and 1 s warm-up, 1 s before its end; none once the
    # bench has ended (one failing at start-up is not waited out)
    netns_sleep_while "$bench_pid" 3.5 && thread_snapshot > "$work/$label.threads-before" &&
      netns_sleep_while "$bench_pid" "$((duration - 3))" && thread_snapshot > "$work/$label.threads-after"
  fi
  if [[ $tcp_trace == 1 && $label == kv-* ]]; then
    tcp_trace_start "$label" "$bench_pid"
  fi
  wait "$bench_pid"
  local rc=$?
  netns_untrack "$bench_pid"
  if [[ $tcp_trace == 1 && $label == kv-* ]]; then
    tcp_trace_stop "$label"
  fi
  set -e
  grep -vE '^\[' "$work/$label.log" | sed 's/^/    /'
  coalesced_share "$label" "$submitted_before" "$merged_before"
  if [[ $thread_switches == 1 ]]; then
    thread_switches_report "$label" "$work/$label.threads-before" "$work/$label.threads-after"
  fi
  if ! kill -0 "$target_pid" 2>/dev/null; then
    wait "$target_pid" 2>/dev/null && target_rc=0 || target_rc=$?
    cat "$work/target.log" >&2
    die "bench-target in $ns_b ended (exit $target_rc, log above): no target left to bench against" 3
  fi
  if [[ $rc == 3 ]] && grep -q 'cannot open the target segment' "$work/$label.log"; then
    die "xferd bench in $bench_ns could not open $target_name on $ns_b's daemon: a segment on another host's \
daemon needs the daemon-to-daemon TCP transport, which this build lacks. The iperf3 baseline above is valid; \
'--same-daemon' checks the rest of this script." 3
  fi
  if [[ $rc != 0 ]]; then
    say "FAILED: $label (exit $rc, log $work/$label.log)"
    failures=$((failures + 1))
  fi
}
field() { # RESULT-line key [printf format]
  local value
  value="$(sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<< "$1")"
  if [[ -n "$value" && $# -gt 2 ]]; then awk -v v="$value" -v f="$3" 'BEGIN { printf f, v }'; else echo "$value"; fi
}
result() { # label [tokens]
  if [[ $# == 1 ]]; then grep -m1 '^RESULT ' "$work/$1.log" 2>/dev/null || true
  else grep "^RESULT .* tokens=$2 " "$work/$1.log" 2>/dev/null | head -1 || true; fi
}

# fresh daemons: their transfer paths are not compiled yet, so the first timed run would measure the JIT
# (the first 1 MiB write ran ~25% slower than the same run repeated); warm both directions up, untimed
if [[ $warmup -gt 0 ]]; then
  for op in write read; do
    say "warm-up, not measured: $op for ${warmup} s"
    ip netns exec "$bench_ns" "${nice_options[@]}" "$xferd" bench --dir "$bench_dir" --target "$target_name" \
      --target-address "$target_address" --target-size "$target_size" --operation "$op" --block-size 1MiB \
      --duration "${warmup}s" > "$work/warmup-$op.log" 2>&1 || say "warm-up $op failed (log $work/warmup-$op.log)"
  done
fi
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "--rounds takes a count >= 1" 2
for round in $(seq 1 "$rounds"); do
  for op in $operations; do
    for bs in $blocks; do
      for threads in $threads_list; do
        run_bench "$op-$bs-t$threads-r$round" --operation "$op" --block-size "$bs" --threads "$threads" \
          --duration "${duration}s" --verify "${window_options[@]}"
      done
    done
  done
done
# the cell's median round (the lower one of an even count): its run is the one the table shows
median_round() { # op-bs-tN
  local round
  for round in $(seq 1 "$rounds"); do
    echo "$(field "$(result "$1-r$round")" gb_per_s) $round"
  done | sort -g | awk '{ r[NR] = $2 } END { print r[int((NR + 1) / 2)] }'
}
for op in $operations; do
  for bs in $blocks; do
    for threads in $threads_list; do
      median="$(median_round "$op-$bs-t$threads")"
      cp "$work/$op-$bs-t$threads-r$median.log" "$work/$op-$bs-t$threads.log"
      cp "$work/$op-$bs-t$threads-r$median.merged" "$work/$op-$bs-t$threads.merged" 2>/dev/null || true
    done
  done
done
# the slowest prompt of each KV phase, request by request, from daemon A's journal ($work/LABEL-slowest-TOKENS.trace):
# whether its time went in intake's queue (client -> daemon), in execution, or in its slices' wire time
to_ms() { awk '{ f = $2 == "ns" ? 1e-6 : $2 == "us" ? 1e-3 : $2 == "ms" ? 1 : 1000; printf "%.3f\n", $1 * f }'; }
med_max() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else printf "p50 %.2f max %.2f ms", v[int((NR + 1) / 2)], v[NR] }'; }
trace_slowest() { # label, since (trace ids repeat from run to run: only this run's records)
  local t tokens trace file
  for t in $(sed -n 's/^RESULT mode=kv .* tokens=\([0-9]*\) .* slowest_trace=\([0-9a-f]*\).*/\1:\2/p' "$work/$1.log"); do
    tokens="${t%%:*}"; trace="${t#*:}"; file="$work/$1-slowest-$tokens.trace"
    "$xferd" profile "$bench_dir/journal" --since "$2" --trace "$trace" > "$file" 2>&1 || true
    say "  slowest $tokens-token prompt, trace $trace, daemon A's journal: $(grep -c ' completed  request' "$file") requests;" \
      "queue $(sed -n 's/.*(queue \([0-9.]*\) \([a-z]*\),.*/\1 \2/p' "$file" | to_ms | med_max);" \
      "execution $(sed -n 's/.*, execution \([0-9.]*\) \([a-z]*\)).*/\1 \2/p' "$file" | to_ms | med_max);" \
      "slice wire $(sed -n 's/.* wire \([0-9.]*\) \([a-z]*\) status.*/\1 \2/p' "$file" | to_ms | med_max)"
    if [[ $tcp_trace == 1 ]] && grep -q '^T ' "$work/$1.ss-A" && grep -q '^T ' "$work/$1.ss-B"; then
      "$here/lib/tcp-trace-summary.py" "$file" "$work/$1.ss-A" "$work/$1.ss-B" > "${file%.trace}.tcp" 2>&1 || true
      say "    beside its connections' TCP state and the peer threads: ${file%.trace}.tcp"
    fi
  done
}
for q in $qps_list; do
  for arrival in $arrivals; do
    since="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    run_bench "kv-qps$q-$arrival" --workload kv --operation write --qps "$q" --prompt-tokens "$tokens" \
      --requests "$requests" --arrival "$arrival" --verify
    trace_slowest "kv-qps$q-$arrival" "$since"
  done
done
if [[ -n "$overlap" ]]; then
  run_bench "kv-overlap" --workload kv --operation write --overlap "${overlap// /,}" --overlap-delay "$overlap_delay" \
    --requests "$requests" --verify
fi

# ---------------------------------------------------------------- summary
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.2f", a / b }'; }
echo
echo "== xferd bench between two network namespaces, $connections connection(s) per peer, ${duration} s per run"
[[ $rounds -gt 1 ]] && echo "   $rounds rounds alternated: each cell is its median round's run (rounds listed below the table)"
[[ $same_daemon == 1 ]] && echo "   (--same-daemon: local copies through one daemon, not the network: ratios to iperf3 mean nothing)"
echo "   iperf3 -P $connections: A->B $iperf_ab_gbs GB/s, B->A $iperf_ba_gbs GB/s"
echo
printf '| %-9s | %-6s | %-7s | %-10s | %-11s | %-14s | %-13s | %-10s | %-9s | %-9s | %-6s |\n' operation block threads \
  "xferd GB/s" "iperf3 GB/s" "xferd/iperf3" "64K/1M" "t2/t1" "p50 us" "p99 us" merged
printf '|%s|\n' "-----------|--------|---------|------------|-------------|----------------|---------------|------------|-----------|-----------|--------"
for op in $operations; do
  base="$iperf_ab_gbs"; [[ $op == read ]] && base="$iperf_ba_gbs"
  for bs in $blocks; do
    for threads in $threads_list; do
      line="$(result "$op-$bs-t$threads")"
      gbs="$(field "$line" gb_per_s %.3f)"
      big="$(field "$(result "$op-1MiB-t$threads")" gb_per_s)"
      one="$(field "$(result "$op-$bs-t1")" gb_per_s)"
      small_ratio="-"; [[ $bs == 64KiB ]] && small_ratio="$(ratio "$gbs" "$big") (>=0.75)"
      thread_ratio="-"; [[ $threads == 2 ]] && thread_ratio="$(ratio "$gbs" "$one") (>=1)"
      printf '| %-9s | %-6s | %-7s | %-10s | %-11s | %-14s | %-13s | %-10s | %-9s | %-9s | %-6s |\n' "$op" "$bs" \
        "$threads" "${gbs:-FAILED}" "$base" "$(ratio "$gbs" "$base") (>=0.9)" "$small_ratio" "$thread_ratio" \
        "$(field "$line" p50_us %.0f)" "$(field "$line" p99_us %.0f)" "$(merged_of "$op-$bs-t$threads")"
    done
  done
done
if [[ $rounds -gt 1 ]]; then
  echo
  echo "GB/s of each round, in the order run; 64K/1M of the same round and thread count"
  for op in $operations; do
    for threads in $threads_list; do
      for round in $(seq 1 "$rounds"); do
        line="  $op t$threads round $round:"
        for bs in $blocks; do
          line+=" $bs $(field "$(result "$op-$bs-t$threads-r$round")" gb_per_s %.3f)"
        done
        if [[ " $blocks " == *" 1MiB "* && " $blocks " == *" 64KiB "* ]]; then
          line+="  64K/1M $(ratio "$(field "$(result "$op-64KiB-t$threads-r$round")" gb_per_s)" \
            "$(field "$(result "$op-1MiB-t$threads-r$round")" gb_per_s)")"
        fi
        echo "$line"
      done
    done
  done
fi
echo
echo "KV workload (Qwen2.5-7B, 57,344 bytes per token, 32 KiB block requests, one batch per request), write;"
echo "wire time = bytes / iperf3 A->B bandwidth; load = offered bytes/s / iperf3; p50, p99: every prompt;"
echo "alone: the prompts with no other in flight at any moment of their transfer (n of all, their p99 / wire);"
echo "slowest: its arrival number and the share of its transfer another prompt was on the wire beside it"
printf '| %-6s | %-4s | %-7s | %-5s | %-11s | %-8s | %-8s | %-8s | %-8s | %-8s | %-7s | %-10s | %-7s | %-6s |\n' tokens QPS \
  arrival load bytes "p50 ms" "p99 ms" "wire ms" "p50/wire" "p99/wire" alone "alone p99/w" slowest merged
printf '|%s|\n' "--------|------|---------|-------|-------------|----------|----------|----------|----------|----------|---------|------------|---------|--------"
for q in $qps_list; do
  for arrival in $arrivals; do
    for t in ${tokens//,/ }; do
      line="$(result "kv-qps$q-$arrival" "$t")"
      bytes="$(field "$line" bytes)"
      wire="$(awk -v b="$bytes" -v g="$iperf_ab_gbs" 'BEGIN { if (b == "" || g == 0) print "-"; else printf "%.1f", b / g / 1e6 }')"
      alone_p99="-"; [[ "$(field "$line" alone)" =~ ^[1-9] ]] && alone_p99="$(ratio "$(field "$line" alone_p99_ms)" "$wire")"
      load="$(awk -v b="$bytes" -v q="$q" -v g="$iperf_ab_gbs" 'BEGIN { if (b == "" || g == 0) print "-"; else printf "%.0f%%", 100 * b * q / g / 1e9 }')"
      printf '| %-6s | %-4s | %-7s | %-5s | %-11s | %-8s | %-8s | %-8s | %-8s | %-8s | %-7s | %-10s | %-7s | %-6s |\n' "$t" "$q" \
        "$arrival" "$load" "${bytes:-FAILED}" "$(field "$line" p50_ms %.1f)" "$(field "$line" p99_ms %.1f)" "$wire" \
        "$(ratio "$(field "$line" p50_ms)" "$wire")" "$(ratio "$(field "$line" p99_ms)" "$wire")" \
        "$(field "$line" alone)/$(field "$line" completed)" "$alone_p99" \
        "#$(field "$line" slowest_ordinal) $(field "$line" slowest_overlap)" "$(merged_of "kv-qps$q-$arrival")"
    done
  done
done
if [[ -n "$overlap" ]]; then
  echo
  echo "KV prompts of two clients at once, write: the second arrives $overlap_delay after the first started;"
  echo "alone = the same size with nothing else on the wire, in the same run; wire = bytes / iperf3 A->B"
  printf '| %-10s | %-6s | %-6s | %-8s | %-8s | %-8s | %-8s | %-8s | %-8s | %-10s |\n' order role tokens "p50 ms" \
    "p99 ms" "wire ms" "p50/wire" "p99/wire" "alone p50" "p50/alone"
  printf '|%s|\n' "------------|--------|--------|----------|----------|----------|----------|----------|----------|-----------"
  for pair in $overlap; do
    for role in first second; do
      line="$(grep "^RESULT mode=kv-overlap .* order=$pair .* role=$role " "$work/kv-overlap.log" 2>/dev/null | head -1 || true)"
      t="$(field "$line" tokens)"
      alone="$(grep "^RESULT mode=kv-overlap .* order=alone tokens=$t " "$work/kv-overlap.log" 2>/dev/null | head -1 || true)"
      wire="$(awk -v b="$(field "$line" bytes)" -v g="$iperf_ab_gbs" 'BEGIN { if (b == "" || g == 0) print "-"; else printf "%.1f", b / g / 1e6 }')"
      printf '| %-10s | %-6s | %-6s | %-8s | %-8s | %-8s | %-8s | %-8s | %-8s | %-10s |\n' "$pair" "$role" "${t:-FAILED}" \
        "$(field "$line" p50_ms %.1f)" "$(field "$line" p99_ms %.1f)" "$wire" "$(ratio "$(field "$line" p50_ms)" "$wire")" \
        "$(ratio "$(field "$line" p99_ms)" "$wire")" "$(field "$alone" p50_ms %.1f)" \
        "$(ratio "$(field "$line" p50_ms)" "$(field "$alone" p50_ms)")"
    done
  done
  echo
  echo "What the second prompt waited behind: bytes of the first prompt that completed while the second was under way"
  echo "(per round; as a share of the second's own bytes: 0 = it went first, 1 = as many of the other's crossed"
  echo "as of its own). Set by the order the daemons chose, not by the wire's speed: comparable across loads."
  printf '| %-10s | %-6s | %-16s | %-16s | %-14s |\n' order tokens "other MiB p50" "other MiB max" "p50 / own bytes"
  printf '|%s|\n' "------------|--------|------------------|------------------|----------------"
  for pair in $overlap; do
    line="$(grep "^RESULT mode=kv-overlap-share .* order=$pair " "$work/kv-overlap.log" 2>/dev/null | head -1 || true)"
    own="$(grep "^RESULT mode=kv-overlap .* order=$pair .* role=second " "$work/kv-overlap.log" 2>/dev/null | head -1 || true)"
    printf '| %-10s | %-6s | %-16s | %-16s | %-14s |\n' "$pair" "$(field "$line" tokens)" \
      "$(awk -v b="$(field "$line" other_bytes_during_p50)" 'BEGIN { if (b == "") print "-"; else printf "%.1f", b / 1048576 }')" \
      "$(awk -v b="$(field "$line" other_bytes_during_max)" 'BEGIN { if (b == "") print "-"; else printf "%.1f", b / 1048576 }')" \
      "$(ratio "$(field "$line" other_bytes_during_p50)" "$(field "$own" bytes)")"
  done
fi
echo
if [[ $failures -gt 0 ]]; then
  die "$failures bench run(s) failed (logs in $work)"
fi
say "done"
