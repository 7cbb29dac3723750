#!/usr/bin/env bash
# Builds probe_tool.cpp into OUT_DIR/libprobe_tool.so (CMakeLists.txt here) against the Sanitizer API and cuda.h
# that the collector's build finds, through its own search (collector/native/cmake/cuda_inputs.cmake; the Python it
# asks for the wheels is the `python3` on PATH; REUSELENS_SANITIZER_ROOT is passed on from the environment), and
# prints the library's path; a failed build prints why on stderr and exits non-zero.
set -euo pipefail
out=${1:?usage: build.sh OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
python=$(command -v python3 || true)
if ! cmake -S "$here" -B "$out/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_LIBRARY_OUTPUT_DIRECTORY="$out" \
  ${python:+-DPython_EXECUTABLE="$python"} \
  ${REUSELENS_SANITIZER_ROOT:+-DREUSELENS_SANITIZER_ROOT="$REUSELENS_SANITIZER_ROOT"} > "$out/configure.txt" 2>&1; then
  if grep -q "probe: no Sanitizer API found" "$out/configure.txt"; then
    echo "build.sh: no Sanitizer API found (pip install nvidia-cuda-sanitizer-api, or set REUSELENS_SANITIZER_ROOT)" >&2
  elif grep -q "probe: no cuda.h found" "$out/configure.txt"; then
    echo "build.sh: no cuda.h found (set CUDA_HOME)" >&2
  else
    tail -n 20 "$out/configure.txt" >&2
  fi
  exit 1
fi
cmake --build "$out/build" > "$out/build.txt" 2>&1 || { tail -n 20 "$out/build.txt" >&2; exit 1; }
echo "$out/libprobe_tool.so"
