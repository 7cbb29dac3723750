#!/usr/bin/env bash
# Rebuilds the committed CUBIN fixtures from tests/lineinfo/cu with nvcc 13.0 and, when nvdisasm is
# available, their `nvdisasm -gi` reference listings. The sources are copied to a fixed directory first so
# the recorded paths (/tmp/reuselens-fixture-src/...) do not depend on where the repository is checked out;
# tests map that prefix back onto tests/lineinfo/cu.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src=/tmp/reuselens-fixture-src
rm -rf "$src" && mkdir -p "$src" && cp "$here"/../../lineinfo/cu/*.cu "$here"/../../lineinfo/cu/*.cuh "$src"/
cd "$src"
nvcc -cubin -arch=sm_90 -O3 -lineinfo -o "$here/kernels.sm_90.lineinfo.cubin" kernels.cu
nvcc -cubin -arch=sm_80 -O3 -lineinfo -o "$here/kernels.sm_80.lineinfo.cubin" kernels.cu
nvcc -cubin -arch=sm_120 -O3 -lineinfo -o "$here/kernels.sm_120.lineinfo.cubin" kernels.cu
nvcc -cubin -arch=sm_90 -O3 -o "$here/kernels.sm_90.nolineinfo.cubin" kernels.cu
nvcc -cubin -arch=sm_89 -G -o "$here/other.sm_89.G.cubin" other.cu
# -rdc: the device-linked CUBIN of an executable (3 line-table units, dead-stripped kernels), kept alone.
nvcc -rdc=true -arch=sm_90 -lineinfo -DWITH_EXTERNAL -cudart shared -o rdcapp kernels.cu other.cu rdc_main.cu
python3 - "$here" <<'PY'
import sys
from analyzer.lineinfo import cubins_from_binary
from analyzer.lineinfo.elf import ElfFile
for arch, cubin in cubins_from_binary("rdcapp"):
    if ElfFile.parse(cubin).type == 2:  # ET_EXEC: the device-linked one
        open(f"{sys.argv[1]}/rdc_linked.sm_90.lineinfo.cubin", "wb").write(cubin)
PY
# A small executable whose fatbinary holds ZSTD-compressed sm_80 and sm_90 CUBINs.
nvcc -lineinfo -cudart shared -Xfatbin=-compress-all -gencode arch=compute_80,code=sm_80 \
    -gencode arch=compute_90,code=sm_90 -o "$here/app_zstd.elf" main.cu
strip "$here/app_zstd.elf"
# A bare fatbinary file whose sm_90 CUBIN is an LZ4 block.
nvcc -fatbin -lineinfo -Xfatbin=-compress-all --compress-mode=speed -arch=sm_90 -o "$here/app_lz4.fatbin" main.cu
nvdisasm="$(command -v nvdisasm || python3 -c 'import sys,pathlib;print(next((str(p) for e in sys.path for p in [pathlib.Path(e)/"nvidia/cu13/bin/nvdisasm"] if p.is_file()), ""))')"
if [ -n "$nvdisasm" ]; then
    for f in "$here"/*.cubin; do
        "$nvdisasm" -gi -c "$f" | gzip -9n > "${f%.cubin}.gi.txt.gz"
    done
fi
ls -la "$here"
