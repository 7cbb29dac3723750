#!/usr/bin/env bash
# Builds probe_tool.cpp into OUT_DIR/libprobe_tool.so against the Sanitizer API and cuda.h, found where the
# collector's build finds them (collector/native/CMakeLists.txt), and prints the library's path; a failed build
# prints why on stderr and exits non-zero.
set -euo pipefail
out=${1:?usage: build.sh OUT_DIR}
# Looked for in collector/native/CMakeLists.txt's order. The Sanitizer's headers and library:
# REUSELENS_SANITIZER_ROOT (here from the environment; the CMake option of that name), else the wheel (a folder of
# the namespace package nvidia holding cu13/include/sanitizer.h), else compute-sanitizer/ of CUDA_HOME,
# /usr/local/cuda or /usr/local/cuda-13.0 (the GPU machine's case: its Python has no Sanitizer wheel).
wheel_dir() {  # the folder of the namespace package nvidia holding cu13/$1, or nothing
  python3 -c "
import os, sys
try:
    import nvidia
except ImportError:
    raise SystemExit
print(next((os.path.join(d, 'cu13') for d in nvidia.__path__ if os.path.exists(os.path.join(d, 'cu13', sys.argv[1]))), ''))
" "$1" 2>/dev/null || true
}
include= libdir=
if [ -n "${REUSELENS_SANITIZER_ROOT:-}" ]; then
  include=$REUSELENS_SANITIZER_ROOT/include libdir=$REUSELENS_SANITIZER_ROOT/lib
  [ -f "$libdir/libsanitizer-public.so" ] || libdir=$REUSELENS_SANITIZER_ROOT
elif wheel=$(wheel_dir include/sanitizer.h) && [ -n "$wheel" ]; then
  include=$wheel/include libdir=$wheel/lib
else
  for c in ${CUDA_HOME:-} /usr/local/cuda /usr/local/cuda-13.0; do
    if [ -f "$c/compute-sanitizer/include/sanitizer.h" ]; then
      include=$c/compute-sanitizer/include libdir=$c/compute-sanitizer
      break
    fi
  done
fi
[ -n "$include" ] && [ -f "$libdir/libsanitizer-public.so" ] ||
  { echo "build.sh: no Sanitizer API found (pip install nvidia-cuda-sanitizer-api, or set REUSELENS_SANITIZER_ROOT)" >&2; exit 1; }
# cuda.h, which the Sanitizer's headers include: beside nvcc (CUDA_HOME's, CUDA_PATH's, /usr/local/cuda's, then
# PATH's), then CUDA_HOME, /usr/local/cuda, /usr/local/cuda-13.0, then the runtime wheel's.
nvcc=
for c in ${CUDA_HOME:+$CUDA_HOME/bin/nvcc} ${CUDA_PATH:+$CUDA_PATH/bin/nvcc} /usr/local/cuda/bin/nvcc \
  /usr/local/cuda-13.0/bin/nvcc; do
  if [ -x "$c" ]; then nvcc=$c; break; fi
done
[ -n "$nvcc" ] || nvcc=$(command -v nvcc || true)
cuda_include=
runtime_wheel=$(wheel_dir include/cuda.h)
for c in ${nvcc:+$(dirname "$(readlink -f "$nvcc")")/../include} ${CUDA_HOME:+$CUDA_HOME/include} \
  /usr/local/cuda/include /usr/local/cuda-13.0/include ${runtime_wheel:+$runtime_wheel/include}; do
  if [ -f "$c/cuda.h" ]; then cuda_include=$c; break; fi
done
[ -n "$cuda_include" ] || { echo "build.sh: no cuda.h found (set CUDA_HOME)" >&2; exit 1; }
mkdir -p "$out"
here=$(dirname "$0")
g++ -O2 -std=c++17 -shared -fPIC -o "$out/libprobe_tool.so" "$here/probe_tool.cpp" \
  "$here/../../collector/native/src/launch_api.cpp" -I"$here/../../collector/native/src" -I"$include" -I"$cuda_include" -L"$libdir" -lsanitizer-public -Wl,-rpath,"$libdir"
echo "$out/libprobe_tool.so"
