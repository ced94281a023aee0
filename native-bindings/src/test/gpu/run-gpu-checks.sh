#!/usr/bin/env bash
# CUDA checks for a machine with an NVIDIA GPU and the CUDA runtime (libcudart.so[.13|.12] on the loader path).
# Needs JDK 25 (JAVA_HOME or PATH). First, from the repository root: ./mvnw -q -o -pl native-bindings test-compile
# Runs GpuCheckMain as two processes (cudaIpcMemHandle export/import), then the daemon's GPU-to-GPU transfer check
# (daemon/src/test/gpu/run-gpu-transfer.sh; XFERD_GPU_BINDINGS_ONLY=1 skips it); exit 0 when all pass, 77 when this
# host has no usable CUDA runtime (nothing checked).
set -euo pipefail
module=$(cd "$(dirname "$0")/../../.." && pwd)
java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
cp="$module/target/classes:$module/target/test-classes"
[ -f "$module/target/test-classes/io/xferd/nativebindings/cuda/GpuCheckMain.class" ] ||
    { echo "run ./mvnw -q -o -pl native-bindings test-compile first" >&2; exit 2; }
work=$(mktemp -d)
exporter=""
trap '[ -n "$exporter" ] && kill "$exporter" 2>/dev/null; rm -rf "$work"' EXIT
run() { timeout 280 "$java" --enable-native-access=ALL-UNNAMED -Xmx1g -cp "$cp" \
    io.xferd.nativebindings.cuda.GpuCheckMain "$1" "$work/handle" "$work/done"; }
run export & exporter=$!
status=0
run import || status=$?
if [ "$status" -eq 2 ]; then
    wait "$exporter" || true
    exporter=""
    echo "GPU checks SKIPPED: no usable CUDA runtime on this host (reason above); nothing GPU-related was checked"
    exit 77
fi
[ "$status" -eq 0 ] || { echo "GPU checks FAILED (see above)" >&2; exit 1; }
wait "$exporter" || { echo "GPU checks FAILED in the exporting process" >&2; exit 1; }
exporter=""
echo "GPU checks (bindings) passed"
[ -n "${XFERD_GPU_BINDINGS_ONLY:-}" ] || "$module/../daemon/src/test/gpu/run-gpu-transfer.sh"
