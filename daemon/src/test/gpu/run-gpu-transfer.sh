#!/usr/bin/env bash
# GPU to GPU through the daemon, for a machine with an NVIDIA GPU and the CUDA runtime (libcudart.so[.13|.12] on the
# loader path). Within 5 minutes: builds if needed (offline Maven, JDK 25; never installs), starts `xferd daemon` in a
# private directory, runs two client processes that each cudaMalloc and register their memory through a CUDA IPC
# handle; one READs the other's GPU memory and WRITEs its own to it through the daemon, both verify by copying back
# to host, the initiator prints GB/s. Exit 0 when all pass, 1 on any mismatch or failure, 77 (skip) when this host has
# no usable CUDA runtime. Options (environment): XFERD_GPU_INITIATOR_DEVICE (0), XFERD_GPU_TARGET_DEVICE (0; 1 on a
# two-GPU machine checks a peer copy). Referenced from native-bindings/src/test/gpu/run-gpu-checks.sh.
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
left() { local s=$((deadline - SECONDS)); echo $((s > 5 ? s : 5)); }
# the client library's JVM flags (README, "The client library"): FFM, and Agrona's access to jdk.internal.misc
check() { timeout "$(left)" "$java" --enable-native-access=ALL-UNNAMED \
    --add-exports=java.base/jdk.internal.misc=ALL-UNNAMED -Xmx2g -cp "$cp" \
    io.xferd.daemon.gpu.GpuTransferCheckMain "$@"; }

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

dir=$(mktemp -d /dev/shm/xferd-gpu.XXXXXX)
work=$(mktemp -d)
daemon_pid=""
target_pid=""
cleanup() {
  set +e
  [[ -n "$target_pid" ]] && kill "$target_pid" 2>/dev/null
  if [[ -n "$daemon_pid" ]]; then
    kill -TERM "$daemon_pid" 2>/dev/null
    for _ in $(seq 100); do kill -0 "$daemon_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$daemon_pid" 2>/dev/null
  fi
  rm -rf "$dir" "$work"
}
trap cleanup EXIT

"$root/bin/xferd" daemon --dir "$dir" --rpc-address 127.0.0.1:0 --metrics-address off --no-journal \
    >"$work/daemon.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 300); do [[ -S "$dir/xferd.sock" ]] && break; sleep 0.1; done
[[ -S "$dir/xferd.sock" ]] || { cat "$work/daemon.log"; echo "run-gpu-transfer: FAILED: daemon did not start" >&2; exit 1; }

check target "$dir" "$work" "${XFERD_GPU_TARGET_DEVICE:-0}" & target_pid=$!
status=0
check initiator "$dir" "$work" "${XFERD_GPU_INITIATOR_DEVICE:-0}" || status=1
# a failed initiator never signals done: do not leave the target waiting for it
[[ $status -eq 0 ]] || kill "$target_pid" 2>/dev/null || true
wait "$target_pid" || status=1
target_pid=""
if [[ $status -ne 0 ]]; then
  echo "--- daemon log"; cat "$work/daemon.log"
  echo "run-gpu-transfer: FAILED (see above)" >&2
  exit 1
fi
grep -E 'GPU memory|WARN|ERROR' "$work/daemon.log" || true
echo "run-gpu-transfer: passed"
