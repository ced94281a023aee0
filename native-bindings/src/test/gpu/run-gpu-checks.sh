#!/usr/bin/env bash
# CUDA checks for a machine with an NVIDIA GPU and the CUDA runtime (libcudart.so[.13|.12] on the loader path).
# Needs JDK 25 (JAVA_HOME or PATH). First, from the repository root: ./mvnw -q -o -pl native-bindings test-compile
# Runs GpuCheckMain as two processes (cudaIpcMemHandle export/import), within 5 minutes; exit 0 when all pass.
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
run import || { echo "GPU checks FAILED (see above)" >&2; exit 1; }
wait "$exporter" || { echo "GPU checks FAILED in the exporting process" >&2; exit 1; }
exporter=""
echo "GPU checks passed"
