#!/usr/bin/env bash
# Builds probe_tool.cpp into OUT_DIR/libprobe_tool.so against the Sanitizer wheel of this Python and cuda.h beside
# nvcc (or CUDA_HOME's, or /usr/local/cuda's), where the collector's build finds them (collector/native/CMakeLists.txt),
# and prints the library's path; a failed build prints why on stderr and exits non-zero.
set -euo pipefail
out=${1:?usage: build.sh OUT_DIR}
# The namespace package nvidia may span several site folders: the one holding the Sanitizer's headers.
root=$(python3 -c "
import nvidia, os
print(next(p for p in (os.path.join(d, 'cu13') for d in nvidia.__path__) if os.path.exists(p + '/include/sanitizer.h')))
") || { echo "build.sh: no Sanitizer wheel (pip install nvidia-cuda-sanitizer-api)" >&2; exit 1; }
# cuda.h, which the Sanitizer's headers include: beside nvcc, as the collector's build looks first, else CUDA_HOME or
# the usual folders.
cuda_include=
nvcc=$(command -v nvcc || true)
for c in ${nvcc:+$(dirname "$(readlink -f "$nvcc")")/../include} ${CUDA_HOME:+$CUDA_HOME/include} \
  /usr/local/cuda/include /usr/local/cuda-13.0/include; do
  if [ -f "$c/cuda.h" ]; then cuda_include=$c; break; fi
done
[ -n "$cuda_include" ] || { echo "build.sh: no cuda.h found (set CUDA_HOME)" >&2; exit 1; }
mkdir -p "$out"
g++ -O2 -std=c++17 -shared -fPIC -o "$out/libprobe_tool.so" "$(dirname "$0")/probe_tool.cpp" \
  -I"$root/include" -I"$cuda_include" -L"$root/lib" -lsanitizer-public -Wl,-rpath,"$root/lib"
echo "$out/libprobe_tool.so"
