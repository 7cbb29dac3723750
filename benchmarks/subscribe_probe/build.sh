#!/usr/bin/env bash
# Builds probe_tool.cpp into OUT_DIR/libprobe_tool.so against the Sanitizer API and cuda.h, found where the
# collector's build finds them (collector/native/CMakeLists.txt), and prints the library's path; a failed build
# prints why on stderr and exits non-zero.
set -euo pipefail
out=${1:?usage: build.sh OUT_DIR}
# The Sanitizer's headers and library where the collector's build looks for them: the wheel (any folder of the
# namespace package nvidia), else REUSELENS_SANITIZER_ROOT, else the CUDA toolkit's compute-sanitizer/ (beside nvcc,
# CUDA_HOME, /usr/local/cuda).
nvcc=$(command -v nvcc || true)
toolkit=${nvcc:+$(dirname "$(dirname "$(readlink -f "$nvcc")")")}
include= libdir=
wheel=$(python3 -c "
import os
try:
    import nvidia
except ImportError:
    raise SystemExit
for d in nvidia.__path__:
    if os.path.exists(os.path.join(d, 'cu13', 'include', 'sanitizer.h')):
        print(os.path.join(d, 'cu13')); break
" 2>/dev/null || true)
if [ -n "$wheel" ]; then
  include=$wheel/include libdir=$wheel/lib
else
  for c in ${REUSELENS_SANITIZER_ROOT:-} ${toolkit:+$toolkit/compute-sanitizer} ${CUDA_HOME:+$CUDA_HOME/compute-sanitizer} \
    /usr/local/cuda/compute-sanitizer /usr/local/cuda-13.0/compute-sanitizer; do
    if [ -f "$c/include/sanitizer.h" ]; then
      include=$c/include
      libdir=$c
      [ -f "$c/lib/libsanitizer-public.so" ] && libdir=$c/lib
      break
    fi
  done
fi
[ -n "$include" ] || { echo "build.sh: no Sanitizer API found (pip install nvidia-cuda-sanitizer-api)" >&2; exit 1; }
# cuda.h, which the Sanitizer's headers include: beside nvcc, as the collector's build looks first, else CUDA_HOME or
# the usual folders.
cuda_include=
for c in ${toolkit:+$toolkit/include} ${CUDA_HOME:+$CUDA_HOME/include} \
  /usr/local/cuda/include /usr/local/cuda-13.0/include; do
  if [ -f "$c/cuda.h" ]; then cuda_include=$c; break; fi
done
[ -n "$cuda_include" ] || { echo "build.sh: no cuda.h found (set CUDA_HOME)" >&2; exit 1; }
mkdir -p "$out"
here=$(dirname "$0")
g++ -O2 -std=c++17 -shared -fPIC -o "$out/libprobe_tool.so" "$here/probe_tool.cpp" \
  "$here/../../collector/native/src/launch_api.cpp" -I"$here/../../collector/native/src" -I"$include" -I"$cuda_include" -L"$libdir" -lsanitizer-public -Wl,-rpath,"$libdir"
echo "$out/libprobe_tool.so"
