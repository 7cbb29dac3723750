#!/usr/bin/env bash
# Builds the patch variants of this folder (sm_90) into DIR: floor.fatbin and components_<bits>.fatbin.
# Usage: benchmarks/patch_variants/build.sh DIR
# Needs nvcc and the Sanitizer headers of the installed nvidia-cuda-sanitizer-api wheel.
set -euo pipefail
out=${1:?usage: build.sh DIR}
here=$(cd "$(dirname "$0")" && pwd)
# The headers the collector's build uses: the wheel's, else the toolkit's (collector/native/CMakeLists.txt).
inc=$(python3 -c 'import nvidia, pathlib; print(next((str(p) for p in (pathlib.Path(d) / "cu13" / "include" for d in nvidia.__path__) if (p / "sanitizer_patching.h").is_file()), ""))' 2>/dev/null || true)
for c in "${CUDA_HOME:-}" /usr/local/cuda; do
  [[ -z $inc && -n $c && -f $c/compute-sanitizer/include/sanitizer_patching.h ]] && inc=$c/compute-sanitizer/include
done
[[ -n $inc ]] || { echo "build.sh: Sanitizer headers not found" >&2; exit 1; }
mkdir -p "$out"
repo=$(cd "$here/../.." && pwd)
build() {  # build NAME SOURCE [nvcc flags...]
  local name=$1 src=$2
  shift 2
  nvcc --fatbin --keep-device-functions -Xptxas --compile-as-tools-patch -O3 -gencode arch=compute_90,code=sm_90 \
    -I"$inc" -I"$repo/collector/native/src" -I"$repo/analyzer/engine/include" "$@" -o "$out/$name.fatbin" "$src"
}
build floor "$here/floor.cu"
for bits in 1 3 5 7 9 15; do
  build "components_$bits" "$here/components.cu" -DRL_COMPONENTS=$bits
done
