"""Mapping speed: parse + look up every instruction of a generated CUBIN (bench_mapping.py measures 100k+)."""

from __future__ import annotations

import subprocess

from tests.lineinfo.bench_mapping import generate, measure

# Regression bound: 10x what we measure unloaded, about 6 us per instruction, i.e. about 0.6 s for 100k
# instructions (docs/lineinfo.md). CI machines are shared and noisy, and CPU time grows there too (caches,
# clock); this still catches a lookup that stops being logarithmic.
MAX_CPU_US_PER_INSTRUCTION = 60


def test_mapping_speed(builder):
    source = builder.root / "speed.cu"
    source.write_text(generate(12))
    cubin = builder.root / "speed.cubin"
    subprocess.run(
        [builder.nvcc, "-cubin", "-arch=sm_90", "-O3", "-lineinfo", "-o", str(cubin), str(source)],
        check=True,
        capture_output=True,
    )
    result = measure(cubin)
    per_instruction_us = result["total_s"] / result["instructions"] * 1e6
    print(
        f"\n{result['instructions']} instructions: parse {result['parse_s']:.3f} s, lookups "
        f"{result['lookup_s']:.3f} s ({per_instruction_us:.1f} us per instruction)"
    )
    assert result["instructions"] > 20000 and result["mapped"] == result["instructions"]
    assert per_instruction_us < MAX_CPU_US_PER_INSTRUCTION
