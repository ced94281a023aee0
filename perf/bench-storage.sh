#!/usr/bin/env bash
# Storage regions against fio, in one run, on the same file, block size and queue depth, both through io_uring with
# O_DIRECT: sequential 1 MiB writes and reads and 64 KiB random reads, fio's figure next to xferd's memory -> file
# (WRITE into a registered file) and file -> memory (READ from it), and their ratio. Then, unless --no-remote, two
# network namespaces joined by a veth pair play two hosts: a READ of a file registered on host B from host A at
# 1 MiB, next to a READ of memory registered on host B (memory to memory), and their ratio; then the same for WRITEs
# (host A's memory into B's file, against into B's memory).
#
#   perf/bench-storage.sh [--dir DIR] [--size SIZE] [--qd N] [--duration S] [--no-remote | --remote-only]
#                         [--build CHECKOUT] [--fio-whole-file] [--client-idle doorbell|gentle|spin] [--rounds N]
#
#   --dir       where the test file lives (default /var/tmp: the machine's disk; /dev/shm for tmpfs)
#   --size      file size (default 1GiB)
#   --qd        queue depth: fio --iodepth, and xferd requests in flight (--batch-size 1 --window N) (default 16)
#   --duration  seconds per run (default 10)
#   --no-remote skip the two-namespace part (which needs root)
#   --remote-only  only the two-namespace part (no fio, no local runs)
#   --build     the checkout whose daemon build runs (default: this one), e.g. a worktree of main for a before/after
#   --fio-whole-file  fio over the whole file (rounds one to three did): by default fio covers the bytes xferd bench
#               does, the file's first min(size, 64 MiB) (xferd bench's span per thread), so both read and write the
#               same bytes of the same file (the virtio host caches a 64 MiB span better than 512 MiB)
#   --client-idle  how xferd bench's client waits for its oldest request (default doorbell, the client library's
#               default: spins, yields, then sleeps until the daemon rings its completion doorbell, as fio blocks in
#               io_uring_enter; gentle: parks up to 500 us; spin: spins, yields, parks up to 50 us)
#   --rounds    remote part: measure file and memory N times (default 1), in alternating order (file first in odd
#               rounds), printing each round and the ratio of the sums over all rounds. Each row also gives the
#               serving daemon's (B's) CPU seconds per GB moved and, with perf, its system calls per request,
#               memory / file
#
# For each local run it also prints the queue depth the device actually had: the mean of /sys/block/DEV/inflight
# (reads + writes) sampled every 0.5 ms for the run's middle seconds (other I/O on the device counts too).
#
# Installs nothing: it says what is missing (fio: apt-get install fio; the daemon: ./mvnw -DskipTests package -pl
# daemon -am). The machine it runs on should be quiet: print /proc/loadavg with the figures.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
build="$root"
dir=/var/tmp
size=1GiB
qd=16
duration=10
remote=1
local_runs=1
fio_whole=0
client_idle=doorbell
rounds=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --dir) dir="$2"; shift 2 ;;
    --size) size="$2"; shift 2 ;;
    --qd) qd="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --no-remote) remote=0; shift ;;
    --remote-only) local_runs=0; shift ;;
    --build) build="$(cd "$2" && pwd)"; shift 2 ;;
    --fio-whole-file) fio_whole=1; shift ;;
    --client-idle) client_idle="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    -h|--help) sed -n '2,32p' "$0"; exit 0 ;;
    *) echo "unknown option: $1 (try --help)" >&2; exit 2 ;;
  esac
done

say() { echo "bench-storage: $*"; }
die() { echo "bench-storage: $1" >&2; exit "${2:-1}"; }

missing=()
command -v fio >/dev/null || missing+=("fio (apt-get install fio)")
command -v python3 >/dev/null || missing+=("python3")
xferd="$build/bin/xferd"
[[ -f "$build/daemon/target/daemon-0.1.0-SNAPSHOT.jar" && -d "$build/daemon/target/lib" ]] ||
  missing+=("the daemon build in $build (./mvnw -B -DskipTests package -pl daemon -am)")
if [[ $remote == 1 ]]; then
  [[ "$(id -u)" == 0 ]] || missing+=("root, for the network namespaces (or --no-remote)")
  command -v ip >/dev/null || missing+=("iproute2's ip (or --no-remote)")
fi
[[ ${#missing[@]} == 0 ]] || die "missing: $(IFS=';'; echo "${missing[*]}")" 2
fio --enghelp 2>/dev/null | grep -q io_uring || die "this fio has no io_uring engine" 2

work="$(mktemp -d /tmp/xferd-bench-storage.XXXXXX)"
file="$dir/xferd-bench-storage-$$.bin"
run_dir="/dev/shm/xferd-bench-storage-$$"
source "$here/lib/netns.sh"
netns_trap
netns_on_exit 'rm -rf "$run_dir" "$run_dir"-a "$run_dir"-b; rm -f "$file"; echo "bench-storage: logs in $work"'

bytes="$(numfmt --from=iec "${size%B}" 2>/dev/null || numfmt --from=iec-i "${size%B}")"
# the bytes xferd bench cycles over with one thread (ThroughputBench.MAX_SPAN), which fio covers too unless told not to
span=$(( bytes < 64 * 1024 * 1024 ? bytes : 64 * 1024 * 1024 ))
[[ $fio_whole == 1 ]] && fio_span=$bytes || fio_span=$span
say "load before: $(cat /proc/loadavg)"
say "file $file ($size), queue depth $qd, ${duration}s per run, io_uring + O_DIRECT on both sides"
say "span: fio $(numfmt --to=iec "$fio_span")B, xferd bench $(numfmt --to=iec "$span")B of the file (from its start)"
say "build: $build ($(git -C "$build" rev-parse --short HEAD 2>/dev/null || echo '?'))"

# lay the file out with real blocks (a sparse file would read as zeros without touching the device)
fio --name=layout --filename="$file" --size="$bytes" --rw=write --bs=1M --direct=1 --ioengine=io_uring \
  --iodepth="$qd" --output="$work/fio-layout.log" >/dev/null

# the block device under --dir (a partition's own inflight file will do), for the queue depth reached
device_inflight="/sys/class/block/$(basename "$(findmnt -no SOURCE -T "$dir" 2>/dev/null || echo none)")/inflight"
inflight_during() { # label seconds-to-wait seconds-to-sample: mean operations in flight on the device -> $work/qd-label
  [[ -r "$device_inflight" ]] || { echo "-" > "$work/qd-$1"; return 0; }
  sleep "$2"
  python3 - "$device_inflight" "$3" > "$work/qd-$1" <<'PY' || echo "-" > "$work/qd-$1"
import sys, time
path, seconds = sys.argv[1], float(sys.argv[2])
total = samples = 0
end = time.monotonic() + seconds
while time.monotonic() < end:
    with open(path) as f:
        reads, writes = f.read().split()
    total += int(reads) + int(writes)
    samples += 1
    time.sleep(0.0005)
print(f"{total / max(samples, 1):.1f}")
PY
}
sample_seconds=$(( duration > 3 ? duration - 2 : 1 ))

fio_gbs() { # label rw bs
  inflight_during "$1" 1 "$sample_seconds" &
  fio --name="$1" --filename="$file" --size="$fio_span" --rw="$2" --bs="$3" --direct=1 --ioengine=io_uring \
    --iodepth="$qd" --time_based --runtime="$duration" --randrepeat=1 --output-format=json \
    --output="$work/fio-$1.json" >/dev/null
  wait
  python3 - "$work/fio-$1.json" <<'PY'
import json, sys
job = json.load(open(sys.argv[1]))["jobs"][0]
print(f"{(job['read']['bw_bytes'] + job['write']['bw_bytes']) / 1e9:.3f}")
PY
}

start_daemon() { # directory log [netns address]
  if [[ $# -gt 2 ]]; then
    ip netns exec "$3" "$xferd" daemon --dir "$1" --rpc-address "$4:12001" --metrics-address off \
      --cluster-token-file "$work/cluster.token" > "$2" 2>&1 &
  else
    "$xferd" daemon --dir "$1" --rpc-address 127.0.0.1:0 --metrics-address off > "$2" 2>&1 &
  fi
  netns_track $!
  for _ in $(seq 1 240); do
    grep -q 'xferd daemon serving' "$2" && return 0
    kill -0 "${NETNS_PIDS[-1]}" 2>/dev/null || break
    sleep 0.5
  done
  cat "$2" >&2
  die "the daemon in $1 did not start (log above)"
}

start_target() { # log [netns] -- bench-target arguments
  local log="$1" ns="$2"; shift 3
  if [[ -n "$ns" ]]; then ip netns exec "$ns" "$xferd" bench-target "$@" --ignore-stdin > "$log" 2>&1 &
  else "$xferd" bench-target "$@" --ignore-stdin > "$log" 2>&1 &
  fi
  netns_track $!
  for _ in $(seq 1 240); do
    grep -q '^TARGET ' "$log" && return 0
    kill -0 "${NETNS_PIDS[-1]}" 2>/dev/null || break
    sleep 0.5
  done
  cat "$log" >&2
  die "bench-target did not start (log above)"
}

xferd_gbs() { # label directory target-log [netns] -- bench arguments
  local label="$1" bench_dir="$2" target_log="$3" ns="$4"; shift 5
  local name address tsize
  read -r _ name address tsize <<< "$(grep -m1 '^TARGET ' "$target_log")"
  local prefix=()
  [[ -n "$ns" ]] && prefix=(ip netns exec "$ns")
  [[ -z "$ns" ]] && inflight_during "$label" 3 "$sample_seconds" &
  "${prefix[@]}" "$xferd" bench --dir "$bench_dir" --target "$name" --target-address "$address" \
    --target-size "$tsize" --duration "${duration}s" --warmup 2s --client-idle "$client_idle" "$@" > "$work/$label.log" 2>&1 ||
    { cat "$work/$label.log" >&2; die "xferd bench $label failed (log above)"; }
  wait
  sed -n 's/^RESULT .* gb_per_s=\([^ ]*\).*/\1/p' "$work/$label.log" | head -1
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

# ---- local: fio vs xferd on the same file
if [[ $local_runs == 1 ]]; then
fio_write=$(fio_gbs seq-write write 1M)
fio_read=$(fio_gbs seq-read read 1M)
fio_rand=$(fio_gbs rand-read randread 64K)

mkdir -p "$run_dir"
start_daemon "$run_dir" "$work/daemon.log"
start_target "$work/target-file.log" "" -- --dir "$run_dir" --name storage --file "$file" --size "$bytes"
x_write=$(xferd_gbs x-seq-write "$run_dir" "$work/target-file.log" "" -- --operation write --block-size 1MiB \
  --batch-size 1 --window "$qd")
x_read=$(xferd_gbs x-seq-read "$run_dir" "$work/target-file.log" "" -- --operation read --block-size 1MiB \
  --batch-size 1 --window "$qd")
x_rand=$(xferd_gbs x-rand-read "$run_dir" "$work/target-file.log" "" -- --operation read --block-size 64KiB \
  --batch-size 1 --window "$qd" --random)

qd_of() { cat "$work/qd-$1" 2>/dev/null || echo "-"; }
printf '\n%-34s %10s %10s %8s %13s\n' "local, $size file, qd $qd" "fio GB/s" "xferd GB/s" "ratio" "device qd f/x"
printf '%-34s %10s %10s %8s %13s\n' "seq write 1 MiB (memory -> file)" "$fio_write" "$x_write" \
  "$(ratio "$x_write" "$fio_write")" "$(qd_of seq-write)/$(qd_of x-seq-write)"
printf '%-34s %10s %10s %8s %13s\n' "seq read 1 MiB (file -> memory)" "$fio_read" "$x_read" \
  "$(ratio "$x_read" "$fio_read")" "$(qd_of seq-read)/$(qd_of x-seq-read)"
printf '%-34s %10s %10s %8s %13s\n' "rand read 64 KiB (file -> memory)" "$fio_rand" "$x_rand" \
  "$(ratio "$x_rand" "$fio_rand")" "$(qd_of rand-read)/$(qd_of x-rand-read)"
say "client idle: $client_idle"
fi

# ---- remote: a peer's storage segment vs its memory, between two network namespaces
if [[ $remote == 1 ]]; then
  netns_pair xfs 10.214
  ns_a="$NS_A"; ns_b="$NS_B"; addr_a="$ADDR_A"; addr_b="$ADDR_B"
  (umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/cluster.token")
  mkdir -p "$run_dir-a" "$run_dir-b"
  start_daemon "$run_dir-a" "$work/daemon-a.log" "$ns_a" "$addr_a"
  start_daemon "$run_dir-b" "$work/daemon-b.log" "$ns_b" "$addr_b"
  daemon_b_pid="${NETNS_PIDS[-1]}"
  start_target "$work/target-b-file.log" "$ns_b" -- --dir "$run_dir-b" --name file --file "$file" --size "$bytes"
  start_target "$work/target-b-memory.log" "$ns_b" -- --dir "$run_dir-b" --name memory --size "$bytes" --pattern 7
  # warm both daemons' JIT on the memory path first (result dropped): otherwise the first measured phase (the
  # file READ) would also pay the daemons' warm-up, which each bench's own --warmup does not cover
  # (in a command substitution, as every call: its `wait` must not wait for the daemons this shell started)
  _=$(xferd_gbs r-warmup-read "$run_dir-a" "$work/target-b-memory.log" "$ns_a" -- --operation read \
    --block-size 1MiB --batch-size 1 --window "$qd")
  _=$(xferd_gbs r-warmup-write "$run_dir-a" "$work/target-b-memory.log" "$ns_a" -- --operation write \
    --block-size 1MiB --batch-size 1 --window "$qd")
  # each round measures file and memory back to back, file first in odd rounds and memory first in even ones (an
  # A/B/B/A over two rounds), so that a drift of the shared machine does not favour one side
  # the serving daemon's CPU (user + system) over one bench call, per GB that call measured: the call's 2 s warm-up
  # counts in the CPU but not in the bytes, the same for file and memory. Less swayed by a loaded machine than GB/s
  cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
  cpu_per_gb() { # ticks-before ticks-after bench-log
    local bytes
    bytes=$(sed -n 's/^RESULT .* bytes=\([0-9]*\).*/\1/p' "$3" | head -1)
    awk -v t="$(( $2 - $1 ))" -v hz="$(getconf CLK_TCK)" -v b="${bytes:-0}" \
      'BEGIN { if (b > 0) printf "%.3f", t / hz / (b / 1e9); else print "-" }'
  }
  # with perf: every system call of the serving daemon over one bench call (raw_syscalls:sys_enter), per request
  # that call measured (the warm-up's count too, as for the CPU above)
  perf_pid=""
  count_syscalls_start() {
    perf_pid=""
    command -v perf >/dev/null || return 0
    perf stat -x, -e raw_syscalls:sys_enter -p "$daemon_b_pid" -o "$1" >/dev/null 2>&1 &
    perf_pid=$!
  }
  count_syscalls_stop() {
    [[ -n "$perf_pid" ]] || return 0
    kill -INT "$perf_pid" 2>/dev/null || true
    wait "$perf_pid" 2>/dev/null || true
  }
  syscalls_per_request() { # perf-output bench-log
    local calls requests
    calls=$(awk -F, '/raw_syscalls:sys_enter/ { print $1 }' "$1" 2>/dev/null | head -1)
    requests=$(sed -n 's/^RESULT .* requests=\([0-9]*\).*/\1/p' "$2" | head -1)
    awk -v c="${calls:-0}" -v r="${requests:-0}" 'BEGIN { if (c > 0 && r > 0) printf "%.1f", c / r; else print "-" }'
  }
  sum() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", a + b }'; }
  r_file_sum=0; r_memory_sum=0; w_file_sum=0; w_memory_sum=0
  printf '\n%-34s %10s %10s %8s %16s %16s\n' "remote 1 MiB, two namespaces" "memory" "file" "ratio" \
    "B cpu-s/GB m / f" "B calls/req m / f"
  for round in $(seq 1 "$rounds"); do
    for op in read write; do
      if (( round % 2 == 1 )); then order=(file memory); else order=(memory file); fi
      for side in "${order[@]}"; do
        cpu_before=$(cpu_ticks "$daemon_b_pid")
        count_syscalls_start "$work/syscalls-$side-$op-$round"
        gbs=$(xferd_gbs "r-$side-$op-$round" "$run_dir-a" "$work/target-b-$side.log" "$ns_a" -- --operation "$op" \
          --block-size 1MiB --batch-size 1 --window "$qd")
        count_syscalls_stop
        printf -v "${op}_$side" '%s' "$gbs"
        printf -v "${op}_${side}_cpu" '%s' "$(cpu_per_gb "$cpu_before" "$(cpu_ticks "$daemon_b_pid")" \
          "$work/r-$side-$op-$round.log")"
      done
      if [[ $op == read ]]; then
        r_file_sum=$(sum "$r_file_sum" "$read_file"); r_memory_sum=$(sum "$r_memory_sum" "$read_memory")
        label="A reads B's segment (GB/s)"
      else
        w_file_sum=$(sum "$w_file_sum" "$write_file"); w_memory_sum=$(sum "$w_memory_sum" "$write_memory")
        label="A writes B's segment (GB/s)"
      fi
      [[ $rounds -gt 1 ]] && label="${label%% (GB/s)}, round $round"
      eval "m=\$${op}_memory f=\$${op}_file mc=\$${op}_memory_cpu fc=\$${op}_file_cpu"
      ms=$(syscalls_per_request "$work/syscalls-memory-$op-$round" "$work/r-memory-$op-$round.log")
      fs=$(syscalls_per_request "$work/syscalls-file-$op-$round" "$work/r-file-$op-$round.log")
      printf '%-34s %10s %10s %8s %16s %16s\n' "$label" "$m" "$f" "$(ratio "$f" "$m")" "$mc / $fc" "$ms / $fs"
    done
  done
  if [[ $rounds -gt 1 ]]; then
    printf '%-34s %10s %10s %8s\n' "reads, all rounds (sum)" "$r_memory_sum" "$r_file_sum" \
      "$(ratio "$r_file_sum" "$r_memory_sum")"
    printf '%-34s %10s %10s %8s\n' "writes, all rounds (sum)" "$w_memory_sum" "$w_file_sum" \
      "$(ratio "$w_file_sum" "$w_memory_sum")"
  fi
fi
say "load after: $(cat /proc/loadavg)"
