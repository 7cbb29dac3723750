"""Mapping speed on a large generated CUBIN: `python tests/lineinfo/bench_mapping.py [--kernels N]`.

Generates N kernels (default 48, about 107k SASS instructions on sm_90) that each unroll a loop over
force-inlined helpers, compiles them with nvcc -O3 -lineinfo, then times (CPU time) parsing the CUBIN and
looking up every instruction through SourceMapper.lookup, the way the analyzer maps PCs.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HELPERS = Path(__file__).parent / "cu" / "helpers.cuh"


def generate(kernels: int) -> str:
    parts = [f'#include "{HELPERS}"']
    for k in range(kernels):
        parts.append(f"""
__global__ void big{k}(float *p, const float *q, int n)
{{
    float acc = q[threadIdx.x];
#pragma unroll
    for (int i = 0; i < 96; ++i)
        acc = poly(acc + q[(threadIdx.x + i * {k + 1}) % n], 3) * 0.5f + sq(acc);
    p[threadIdx.x] = acc;
}}""")
    return "\n".join(parts) + "\n"


def build(kernels: int, workdir: Path, arch: str = "sm_90") -> Path:
    source = workdir / "big.cu"
    source.write_text(generate(kernels))
    out = workdir / "big.cubin"
    subprocess.run(["nvcc", "-cubin", f"-arch={arch}", "-O3", "-lineinfo", "-o", str(out), str(source)], check=True)
    return out


def measure(cubin: Path) -> dict:
    from reuselens.analyzer.lineinfo import SourceMapper
    from reuselens.analyzer.lineinfo.mapper import clear_cache

    clear_cache()
    t0 = time.process_time()
    mapper = SourceMapper({"m": cubin})
    table = mapper.table("m")
    t1 = time.process_time()
    instructions = mapped = 0
    for kernel in table.kernels():
        for pc in range(0, table.elf.sections[kernel.shndx].size, 16):
            instructions += 1
            mapped += mapper.lookup("m", kernel.name, pc) is not None
    t2 = time.process_time()
    return {
        "instructions": instructions,
        "mapped": mapped,
        "parse_s": t1 - t0,
        "lookup_s": t2 - t1,
        "total_s": t2 - t0,
        "cubin_bytes": cubin.stat().st_size,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=48)
    parser.add_argument("--cubin", help="measure this CUBIN instead of generating one")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cubin = Path(args.cubin) if args.cubin else build(args.kernels, Path(tmp))
        r = measure(cubin)
    print(
        f"{r['instructions']} instructions ({r['mapped']} mapped), CUBIN {r['cubin_bytes']} bytes: "
        f"parse {r['parse_s']:.3f} s + lookups {r['lookup_s']:.3f} s = {r['total_s']:.3f} s CPU"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
