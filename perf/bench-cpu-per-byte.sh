#!/usr/bin/env bash
# What a byte costs in CPU between two hosts, and what one small READ costs in time: two network namespaces joined
# by a veth pair, an xferd daemon in each, a bench-target in B (as perf/bench-netns.sh), and in the same run:
#
#  1. CPU seconds per GB moved, xferd write at 1 MiB and 64 KiB blocks (both daemons + bench-target + the bench
#     client, utime+stime from /proc and the client's rusage) against iperf3 -P N (client + server) on the same pair.
#     Differential: a short and a long run of each; (CPU long - CPU short) / (GB long - GB short), so the client
#     JVM's start-up and connection set-up cancel out. With --rounds-ab N, N rounds of both sides alternated
#     (iperf3 first in odd rounds, xferd first in even ones), and the medians per side: one cheap or dear iperf3
#     run does not decide the ratio.
#  2. The idle daemon: CPU % of one core over 10 s with nothing to do (after the runs above: warm).
#  3. A single 4 KiB READ across the namespaces, nothing else in flight (xferd bench --batch-size 1 --window 1):
#     p50/p99 against a plain TCP 64 B request / 4 KiB response ping-pong (TcpPingPong) on the same veth.
#
#   perf/bench-cpu-per-byte.sh [--duration S] [--connections N] [--rounds N] [--client-idle spin|gentle]
#                              [--blocks "1MiB 64KiB"] [--thread-cpu] [--no-latency] [--rounds-ab N] [--warmup S]
#
#   --duration     seconds of the long runs (default 10; the short runs take 2)
#   --connections  iperf3 -P N and the daemons' --connections-per-peer (default 2)
#   --rounds       measured TCP ping-pong rounds (default 50000)
#   --client-idle  how the bench client waits (default gentle: a spinning client would count a core of waiting)
#   --blocks       the xferd block sizes measured (default "1MiB 64KiB")
#   --thread-cpu   also print, per long xferd run, the CPU seconds per GB of each thread (by name) of both daemons
#                  and the bench-target: where the CPU goes
#   --no-latency   skip parts 2 and 3 (idle daemon, single READ)
#   --warmup       seconds each xferd bench (short and long alike) runs untimed before it measures (default 0):
#                  the same in both, so it cancels in the difference with the client's JIT compiling behind it
#   --rounds-ab    measure part 1 N times, iperf3 and xferd alternated (default 1); prints every round's s/GB and
#                  GB/s and the median of each side, the ratio taken between the medians (--thread-cpu: the
#                  threads' CPU summed over every round's long run)
#   --daemon-idle  the daemons' idle strategy (default backoff; spin-backoff spins 100 us after work first)
#   --read-client-idle  how the client of the single-READ latency part waits (default spin, the client library's
#                  default; gentle parks up to 500 us, which a round trip of tens of us would measure)
#
# Needs root (ip netns) and iperf3 (installed with apt-get when missing). Namespaces, veth, daemons, runtime
# directories are removed on exit; logs stay in a /tmp directory. Quote the ratios with `cat /proc/loadavg`.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
xferd="$root/bin/xferd"
duration=10
connections=2
rounds=50000
client_idle=gentle
blocks="1MiB 64KiB"
thread_cpu=0
latency=1
read_client_idle=spin
daemon_idle=backoff
rounds_ab=1
bench_warmup=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --duration) duration="$2"; shift 2 ;;
    --connections) connections="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --client-idle) client_idle="$2"; shift 2 ;;
    --blocks) blocks="$2"; shift 2 ;;
    --thread-cpu) thread_cpu=1; shift ;;
    --no-latency) latency=0; shift ;;
    --read-client-idle) read_client_idle="$2"; shift 2 ;;
    --daemon-idle) daemon_idle="$2"; shift 2 ;;
    --rounds-ab) rounds_ab="$2"; shift 2 ;;
    --warmup) bench_warmup="$2"; shift 2 ;;
    -h|--help) sed -n '2,36p' "$0"; exit 0 ;;
    *) echo "unknown option: $1 (try --help)" >&2; exit 2 ;;
  esac
done
say() { echo "bench-cpu-per-byte: $*"; }
die() { echo "bench-cpu-per-byte: $1" >&2; exit "${2:-1}"; }
[[ "$rounds_ab" =~ ^[1-9][0-9]*$ ]] || die "--rounds-ab takes a count >= 1" 2
[[ "$(id -u)" == 0 ]] || die "needs root (it creates network namespaces)" 2
if ! command -v iperf3 >/dev/null; then
  say "installing iperf3 (apt-get)"
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -q iperf3 >/dev/null ||
    { apt-get -o DPkg::Lock::Timeout=300 update -qq && \
      DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -q iperf3 >/dev/null; } ||
    die "could not install iperf3" 2
fi
[[ -f "$root/daemon/target/daemon-0.1.0-SNAPSHOT.jar" ]] || (cd "$root" && ./mvnw -q -B -DskipTests package -pl daemon -am)
java="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"

source "$here/lib/netns.sh"
netns_trap
dir_a="/dev/shm/xferd-cpuA-$$"; dir_b="/dev/shm/xferd-cpuB-$$"
work="$(mktemp -d /tmp/xferd-bench-cpu.XXXXXX)"
netns_on_exit 'rm -rf "$dir_a" "$dir_b"; echo "bench-cpu-per-byte: logs in $work"'
netns_pair xfc 10.214
ns_a="$NS_A"; ns_b="$NS_B"; addr_a="$ADDR_A"; addr_b="$ADDR_B"
(umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/cluster.token")

start_daemon() { # namespace directory address log
  ip netns exec "$1" "$xferd" daemon --dir "$2" --rpc-address "$3:12001" --cluster-token-file "$work/cluster.token" \
    --connections-per-peer "$connections" --metrics-address off --idle "$daemon_idle" > "$4" 2>&1 &
  netns_track $!
  for _ in $(seq 1 240); do
    grep -q 'xferd daemon serving' "$4" && return 0
    kill -0 "${NETNS_PIDS[-1]}" 2>/dev/null || break
    sleep 0.5
  done
  cat "$4" >&2; die "the daemon in $1 did not start (log above)"
}
start_daemon "$ns_a" "$dir_a" "$addr_a" "$work/daemon-a.log"; daemon_a=${NETNS_PIDS[-1]}
start_daemon "$ns_b" "$dir_b" "$addr_b" "$work/daemon-b.log"; daemon_b=${NETNS_PIDS[-1]}
ip netns exec "$ns_b" "$xferd" bench-target --dir "$dir_b" --name bench-target --size 512MiB --pattern 42 \
  --ignore-stdin > "$work/target.log" 2>&1 &
target_pid=$!; netns_track $target_pid
for _ in $(seq 1 240); do grep -q '^TARGET ' "$work/target.log" && break; sleep 0.5; done
grep -q '^TARGET ' "$work/target.log" || { cat "$work/target.log" >&2; die "bench-target did not start"; }
read -r _ target_name target_address target_size <<< "$(grep -m1 '^TARGET ' "$work/target.log")"

hz="$(getconf CLK_TCK)"
cpu_of() { local sum=0 pid; for pid in "$@"; do sum=$((sum + $(awk '{print $14 + $15}' "/proc/$pid/stat"))); done; echo "$sum"; }
seconds() { awk -v t="$1" -v hz="$hz" 'BEGIN {printf "%.3f", t / hz}'; }
bench() { # log, bench arguments...: runs xferd bench in A; prints "cpu_seconds bytes" (servers' delta + client's rusage)
  local log="$1"; shift
  local before after TIMEFORMAT='%U %S' client
  before="$(cpu_of "$daemon_a" "$daemon_b" "$target_pid")"
  client="$( { time ip netns exec "$ns_a" "$xferd" bench --dir "$dir_a" --target "$target_name" \
    --target-address "$target_address"  --target-size "$target_size" --client-idle "${bench_idle:-$client_idle}" "$@" \
    > "$work/$log.log" 2>&1; } 2>&1 )" || die "xferd bench $* failed (log $work/$log.log)"
  after="$(cpu_of "$daemon_a" "$daemon_b" "$target_pid")"
  local bytes; bytes="$(sed -n 's/^RESULT .* bytes=\([0-9]*\) .*/\1/p' "$work/$log.log" | head -1)"
  awk -v s="$(seconds $((after - before)))" -v c="$client" -v b="$bytes" 'BEGIN {split(c, t, " "); printf "%.3f %.0f\n", s + t[1] + t[2], b}'
}
thread_ticks() { # label:pid...: "label:tid name ticks" per thread (names as the kernel keeps them, 15 characters)
  local spec label pid task
  for spec in "$@"; do
    label="${spec%%:*}"; pid="${spec#*:}"
    for task in /proc/"$pid"/task/*; do
      printf '%s:%s %s %s\n' "$label" "${task##*/}" "$(tr ' ' '_' < "$task/comm")" \
        "$(sed 's/^.*) //' "$task/stat" | awk '{print $12 + $13}')"
    done 2>/dev/null
  done
}
thread_report() { # bytes before-file after-file [before-file after-file ...]: CPU s/GB per process and thread name
  local bytes="$1"; shift
  awk -v hz="$hz" -v bytes="$bytes" 'FNR == 1 { file++ } file % 2 == 1 { before[file, $1] = $3; next }
    { split($1, id, ":"); key = id[1] " " $2; cpu[key] += ($3 - before[file - 1, $1]) / hz }
    END { for (k in cpu) if (cpu[k] > 0) printf "    %-34s %8.3f CPU s/GB\n", k, cpu[k] / (bytes / 1e9) }' \
    "$@" | sort -k3 -rn | head -16
}
per_gb() { # "cpu bytes" short, "cpu bytes" long
  awk -v s="$1" -v l="$2" 'BEGIN {split(s, a, " "); split(l, b, " "); printf "%.3f", (b[1] - a[1]) / ((b[2] - a[2]) / 1e9)}'
}
gb_per_s() { # "cpu bytes" of a run of $duration seconds
  awk -v l="$1" -v d="$duration" 'BEGIN {split(l, b, " "); printf "%.3f", b[2] / d / 1e9}'
}
median() { # numbers: the middle one (the mean of the two middle ones for an even count)
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) printf "%.3f", v[(NR + 1) / 2];
    else printf "%.3f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }

echo "load average before: $(cat /proc/loadavg)"
say "warm-up, not measured: write and read 1 MiB, 5 s each"
bench warmup-write --operation write --block-size 1MiB --duration 5s > /dev/null
bench warmup-read --operation read --block-size 1MiB --duration 5s > /dev/null

# ------------------------------------------------------------------ 1. CPU per GB
ip netns exec "$ns_b" iperf3 -s -B "$addr_b" -p 5201 > "$work/iperf3-server.log" 2>&1 &
iperf_pid=$!; netns_track $iperf_pid; sleep 1
iperf() { # seconds: prints "cpu_seconds bytes"
  local before after TIMEFORMAT='%U %S' client
  before="$(cpu_of "$iperf_pid")"
  client="$( { time ip netns exec "$ns_a" iperf3 -c "$addr_b" -p 5201 -P "$connections" -t "$1" -J > "$work/iperf3-$1.json"; } 2>&1 )"
  after="$(cpu_of "$iperf_pid")"
  local bytes; bytes="$(python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["end"]["sum_received"]["bytes"]))' "$work/iperf3-$1.json")"
  awk -v s="$(seconds $((after - before)))" -v c="$client" -v b="$bytes" 'BEGIN {split(c, t, " "); printf "%.3f %.0f\n", s + t[1] + t[2], b}'
}
declare -a iperf_rounds iperf_rates
declare -A xferd_rounds xferd_rates
measure_iperf() { # round
  say "round $1: iperf3 -P $connections: 2 s and $duration s"
  local short long
  short="$(iperf 2)"; long="$(iperf "$duration")"
  iperf_rounds+=("$(per_gb "$short" "$long")"); iperf_rates+=("$(gb_per_s "$long")")
}
measure_xferd() { # round
  local block short long
  for block in $blocks; do
    say "round $1: xferd bench write $block: 2 s and $duration s (warm-up $bench_warmup s, client-idle $client_idle)"
    short="$(bench "write-$block-short-$1" --operation write --block-size "$block" --warmup "${bench_warmup}s" --duration 2s)"
    [[ $thread_cpu == 1 ]] && thread_ticks "A:$daemon_a" "B:$daemon_b" "target:$target_pid" > "$work/threads-$block-$1.before"
    long="$(bench "write-$block-long-$1" --operation write --block-size "$block" --warmup "${bench_warmup}s" --duration "${duration}s")"
    [[ $thread_cpu == 1 ]] && thread_ticks "A:$daemon_a" "B:$daemon_b" "target:$target_pid" > "$work/threads-$block-$1.after"
    thread_bytes[$block]=$(( ${thread_bytes[$block]:-0} + ${long#* } ))
    xferd_rounds[$block]+=" $(per_gb "$short" "$long")"; xferd_rates[$block]+=" $(gb_per_s "$long")"
    say "  short: $short, long: $long (CPU s, bytes)"
  done
}
declare -A thread_bytes
for round in $(seq 1 "$rounds_ab"); do
  # alternated, so that neither side always runs on the warmer (or the busier) machine
  if (( round % 2 == 1 )); then measure_iperf "$round"; measure_xferd "$round"
  else measure_xferd "$round"; measure_iperf "$round"; fi
done
iperf_cpu_gb="$(median "${iperf_rounds[@]}")"
declare -A xferd_cpu_gb
for block in $blocks; do
  # shellcheck disable=SC2086
  xferd_cpu_gb[$block]="$(median ${xferd_rounds[$block]})"
  if [[ $thread_cpu == 1 ]]; then
    pairs=()
    for round in $(seq 1 "$rounds_ab"); do pairs+=("$work/threads-$block-$round.before" "$work/threads-$block-$round.after"); done
    thread_report "${thread_bytes[$block]}" "${pairs[@]}" > "$work/threads-$block.txt"
  fi
done
kill "$iperf_pid" 2>/dev/null || true

if [[ $latency == 1 ]]; then
  # ------------------------------------------------------------------ 2. idle daemon
  sleep 2
  idle_before="$(cpu_of "$daemon_a")"; idle_b_before="$(cpu_of "$daemon_b")"
  sleep 10
  idle_a="$(awk -v t=$(( $(cpu_of "$daemon_a") - idle_before )) -v hz="$hz" 'BEGIN {printf "%.2f", 100 * t / hz / 10}')"
  idle_b="$(awk -v t=$(( $(cpu_of "$daemon_b") - idle_b_before )) -v hz="$hz" 'BEGIN {printf "%.2f", 100 * t / hz / 10}')"

  # ------------------------------------------------------------------ 3. one 4 KiB READ vs TCP ping-pong
  pingpong=("$java" "$root/perf/src/main/java/io/xferd/perf/TcpPingPong.java")
  ip netns exec "$ns_b" "${pingpong[@]}" server "$addr_b" 5202 64 4096 > "$work/pingpong-server.log" 2>&1 &
  netns_track $!
  for _ in $(seq 1 120); do grep -q LISTENING "$work/pingpong-server.log" && break; sleep 0.5; done
  ip netns exec "$ns_a" "${pingpong[@]}" client "$addr_b" 5202 64 4096 20000 "$rounds" > "$work/pingpong.log" 2>&1 ||
    die "TCP ping-pong failed (log $work/pingpong.log)"
  read_since="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  bench_idle="$read_client_idle" bench read-4k --operation read --block-size 4KiB --batch-size 1 --window 1 --threads 1 --warmup 2s \
    --duration "${duration}s" > /dev/null
  tcp_p50="$(sed -n 's/.* p50_us=\([0-9.]*\).*/\1/p' "$work/pingpong.log")"; tcp_p99="$(sed -n 's/.* p99_us=\([0-9.]*\).*/\1/p' "$work/pingpong.log")"
  # where the READ's time went, by stage, from daemon A's transfer journal (the requests since the READ run began)
  "$xferd" profile --since "$read_since" "$dir_a/journal" > "$work/read-4k-profile.txt" 2>&1 || true
  read_p50="$(sed -n 's/^RESULT .* p50_us=\([0-9.]*\).*/\1/p' "$work/read-4k.log")"; read_p99="$(sed -n 's/^RESULT .* p99_us=\([0-9.]*\).*/\1/p' "$work/read-4k.log")"
fi
echo "load average after:  $(cat /proc/loadavg)"

echo
echo "CPU seconds per GB moved (all processes of both ends), write, $connections connection(s)"
printf '  %-22s %10s %18s %10s\n' "" "CPU s/GB" "ratio to iperf3" "GB/s"
printf '  %-22s %10s %18s %10s\n' "iperf3 -P $connections" "$iperf_cpu_gb" "" "$(median "${iperf_rates[@]}")"
for block in $blocks; do
  # shellcheck disable=SC2086
  printf '  %-22s %10s %18s %10s\n' "xferd $block" "${xferd_cpu_gb[$block]}" \
    "$(ratio "${xferd_cpu_gb[$block]}" "$iperf_cpu_gb")" "$(median ${xferd_rates[$block]})"
done
echo "  (target: <= 1.3 x iperf3)"
if [[ $rounds_ab -gt 1 ]]; then
  echo "  $rounds_ab rounds alternated (odd: iperf3 first); the rows above are each side's median round"
  printf '  %-8s %16s' round "iperf3 s/GB GB/s"
  for block in $blocks; do printf ' %28s' "xferd $block s/GB GB/s ratio"; done
  echo
  for round in $(seq 1 "$rounds_ab"); do
    i=$((round - 1)); printf '  %-8s %16s' "$round" "${iperf_rounds[$i]} ${iperf_rates[$i]}"
    for block in $blocks; do
      # shellcheck disable=SC2206
      cpu=(${xferd_rounds[$block]}); rate=(${xferd_rates[$block]})
      printf ' %28s' "${cpu[$i]} ${rate[$i]} $(ratio "${cpu[$i]}" "${iperf_rounds[$i]}")"
    done
    echo
  done
  printf '  %-8s %16s' median "$iperf_cpu_gb $(median "${iperf_rates[@]}")"
  # shellcheck disable=SC2086
  for block in $blocks; do printf ' %28s' "${xferd_cpu_gb[$block]} $(median ${xferd_rates[$block]}) $(ratio "${xferd_cpu_gb[$block]}" "$iperf_cpu_gb")"; done
  echo
fi
if [[ $thread_cpu == 1 ]]; then
  for block in $blocks; do
    echo "  where the CPU went, xferd $block (both daemons and the bench-target; the client is not split up):"
    cat "$work/threads-$block.txt"
  done
fi
[[ $latency == 1 ]] || exit 0
echo "idle daemon, 10 s: A $idle_a % of a core, B $idle_b % (target <= 2 %)"
echo "single 4 KiB READ, nothing else in flight (client-idle $read_client_idle, daemons $daemon_idle), vs TCP 64 B/4 KiB ping-pong on the same veth (us):"
printf '  %-22s %10s %10s\n' "" p50 p99
printf '  %-22s %10s %10s\n' "TCP ping-pong" "$tcp_p50" "$tcp_p99" "xferd READ 4 KiB" "$read_p50" "$read_p99"
printf '  %-22s %10s %10s\n' "ratio" "$(awk -v a="$read_p50" -v b="$tcp_p50" 'BEGIN {printf "%.2f", a / b}')" \
  "$(awk -v a="$read_p99" -v b="$tcp_p99" 'BEGIN {printf "%.2f", a / b}')"
echo "  (target: <= 2 x at p50)"
if [[ -s "$work/read-4k-profile.txt" ]]; then
  echo "  the READs' stages in daemon A's journal (xferd profile; $work/read-4k-profile.txt has every table):"
  awk '/^stages/ { on = 1 } on && /^$/ { exit } on' "$work/read-4k-profile.txt" | sed 's/^/    /'
fi
