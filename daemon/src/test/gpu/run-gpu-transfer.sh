#!/usr/bin/env bash
# GPU to GPU through xferd daemons, for a machine with an NVIDIA GPU and the CUDA runtime (libcudart.so[.13|.12] on
# the loader path). Within 5 minutes in all: builds if needed (offline Maven, JDK 25; never installs), then two cases,
# each with two client processes that cudaMalloc and register their memory through a CUDA IPC handle; the initiator
# READs the target's GPU memory and WRITEs its own to it, both verify by copying back to host, the initiator prints
# GB/s of both directions:
#   1. one daemon: `xferd daemon` in a private directory, both clients on it (a local cudaMemcpy per request);
#   2. two daemons on loopback: A and B in their own private directories, on free ports (--rpc-address
#      127.0.0.1:PORT), the target registered on B, the initiator on A opening 127.0.0.1:PORT_B/gpu-target, so every
#      byte crosses the TCP transport, staged through pinned host memory on both daemons.
# Exit 0 when all pass, 1 on any mismatch or failure, 77 (skip) when this host has no usable CUDA runtime. Every
# daemon, client and directory it started is removed on exit, however it exits. Options (environment):
# XFERD_GPU_INITIATOR_DEVICE (0), XFERD_GPU_TARGET_DEVICE (0; 1 on a two-GPU machine checks a peer copy).
# Referenced from native-bindings/src/test/gpu/run-gpu-checks.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../../.." && pwd)
deadline=$((SECONDS + 290))

if [[ -z "${JAVA_HOME:-}" || ! -x "${JAVA_HOME}/bin/java" ]] ||
    ! "${JAVA_HOME}/bin/java" -version 2>&1 | grep -qE 'version "(2[5-9]|[3-9][0-9])'; then
  for candidate in /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/temurin-25-jdk /usr/lib/jvm/java-25-openjdk-amd64; do
    if [[ -x "$candidate/bin/java" ]]; then export JAVA_HOME="$candidate"; break; fi
  done
fi
[[ -n "${JAVA_HOME:-}" ]] || { echo "run-gpu-transfer: needs a JDK 25; set JAVA_HOME" >&2; exit 2; }
java="$JAVA_HOME/bin/java"

target="$root/daemon/target"
main_class="$target/test-classes/io/xferd/daemon/gpu/GpuTransferCheckMain.class"
if [[ ! -f "$target/daemon-0.1.0-SNAPSHOT.jar" || ! -d "$target/lib" || ! -f "$main_class" ]]; then
  echo "run-gpu-transfer: building (offline) ..."
  (cd "$root" && ./mvnw -o -q -B -DskipTests package -pl daemon -am)
fi
cp="$target/test-classes:$target/classes:$target/lib/*"
case_end=$deadline
# seconds a process may still run: to the end of the current case's share, at least 5
left() {
  local end=$((case_end < deadline ? case_end : deadline))
  echo $((end - SECONDS > 5 ? end - SECONDS : 5))
}
# the client library's JVM flags (docs/user-guide.md, "The client library"): FFM, and Agrona's access to jdk.internal.misc
checker=("$java" --enable-native-access=ALL-UNNAMED --add-exports=java.base/jdk.internal.misc=ALL-UNNAMED -Xmx2g
    -cp "$cp" io.xferd.daemon.gpu.GpuTransferCheckMain)
# in the background, waited for: a signal to this script is then handled at once (and cleans up), not after the JVM
# (clients: this script's running client processes; one reaped is dropped, its pid may be reused)
check() {
  local pid rc=0 running=("${clients[@]}")
  timeout "$(left)" "${checker[@]}" "$@" & pid=$!
  clients+=("$pid")
  wait "$pid" || rc=$?
  clients=("${running[@]}")
  return $rc
}

work=$(mktemp -d)
dirs=("$work")
# both daemons prove one cluster token (each would otherwise make its own in its directory and refuse the other)
(umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/cluster.token")
daemons=()
clients=()
stop() { # PID...: children of this shell; TERM, up to 10 s each, then KILL
  local pid
  for pid in "$@"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "$@"; do
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
}
cleanup() {
  set +e
  trap '' INT TERM # a second signal must not cut the clean-up short
  stop "${clients[@]}" "${daemons[@]}"
  rm -rf "${dirs[@]}"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

set +e
check probe
probe=$?
set -e
if [[ $probe -eq 77 ]]; then
  echo "run-gpu-transfer: SKIPPED: no usable CUDA runtime on this host (reason above); nothing GPU-related was checked"
  exit 77
elif [[ $probe -ne 0 ]]; then
  echo "run-gpu-transfer: FAILED: the CUDA probe exited $probe" >&2
  exit 1
fi

# start_daemon NAME RPC_ADDRESS [OPTION...]: a daemon in a new private directory under /dev/shm, its log in
# $work/NAME.log; sets daemon_dir and daemon_pid. Its RPC port is bound before its control socket appears.
start_daemon() {
  daemon_dir=$(mktemp -d "/dev/shm/xferd-gpu-$1.XXXXXX")
  dirs+=("$daemon_dir")
  "$root/bin/xferd" daemon --dir "$daemon_dir" --rpc-address "$2" --metrics-address off --no-journal \
    --cluster-token-file "$work/cluster.token" "${@:3}" \
      >"$work/$1.log" 2>&1 &
  daemon_pid=$!
  daemons+=("$daemon_pid")
  for _ in $(seq 300); do
    if [[ -S "$daemon_dir/xferd.sock" ]]; then
      echo "run-gpu-transfer: daemon $1 up (pid $daemon_pid, --rpc-address $2, $daemon_dir)"
      return 0
    fi
    kill -0 "$daemon_pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "run-gpu-transfer: FAILED: daemon $1 (--rpc-address $2) did not start" >&2
  return 1
}

# pair NAME TARGET_DIR INITIATOR_ROLE INITIATOR_DIR [HOST:PORT]: the target client on TARGET_DIR's daemon, the
# initiator on INITIATOR_DIR's, meeting in $work/NAME; 0 when both pass
pair() {
  local meet="$work/$1" status=0 target_pid
  mkdir "$meet"
  # a simple command, so $! is timeout itself (which passes a TERM on to the JVM), not a subshell
  timeout "$(left)" "${checker[@]}" target "$2" "$meet" "${XFERD_GPU_TARGET_DEVICE:-0}" & target_pid=$!
  clients+=("$target_pid")
  check "$3" "$4" "$meet" "${XFERD_GPU_INITIATOR_DEVICE:-0}" "${@:5}" || status=1
  # a failed initiator never signals done: do not leave the target waiting for it
  [[ $status -eq 0 ]] || kill -TERM "$target_pid" 2>/dev/null || true
  wait "$target_pid" || status=1
  clients=()
  return $status
}

failed=()
daemon_logs() { local log; for log in "$@"; do echo "--- daemon $log"; cat "$work/$log.log" 2>/dev/null || true; done; }

echo "run-gpu-transfer: 1. GPU -> GPU through one daemon"
case_end=$((SECONDS + (deadline - SECONDS) / 2)) # the first half of what is left; the second case gets the rest
if start_daemon single 127.0.0.1:0 && pair single "$daemon_dir" initiator "$daemon_dir"; then
  grep -E 'GPU memory|WARN|ERROR' "$work/single.log" || true
else
  daemon_logs single
  failed+=("one daemon")
fi
stop "${daemons[@]}"
daemons=()

echo "run-gpu-transfer: 2. GPU -> GPU between two daemons over TCP, staged through pinned host memory"
case_end=$deadline
ports=$(check free-ports 2) && read -r port_a port_b <<<"$ports" && [[ -n "$port_b" ]] ||
  { echo "run-gpu-transfer: FAILED: no free ports (got '$ports')" >&2; exit 1; }
if start_daemon a "127.0.0.1:$port_a" --protocol tcp && dir_a=$daemon_dir &&
    start_daemon b "127.0.0.1:$port_b" --protocol tcp && dir_b=$daemon_dir &&
    pair two "$dir_b" remote-initiator "$dir_a" "127.0.0.1:$port_b"; then
  grep -E 'GPU memory|staging|WARN|ERROR' "$work/a.log" "$work/b.log" || true
else
  daemon_logs a b
  failed+=("two daemons")
fi

if [[ ${#failed[@]} -ne 0 ]]; then
  echo "run-gpu-transfer: FAILED: $(IFS=,; echo "${failed[*]}" | sed 's/,/, /g') (see above)" >&2
  exit 1
fi
echo "run-gpu-transfer: passed (one daemon, two daemons over TCP)"
