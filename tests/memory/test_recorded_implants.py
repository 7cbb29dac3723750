"""Two more H200 runs replayed without a GPU (tests/data/memory_runs/README.md): the intra-object implants of
tests/gpu/intra_waste.cu (a traced run: the engine's per-object slice profiles) and the virtual-memory mappings of
tests/gpu/vmm_map.cu (an object-level run). The binaries are not kept, so the allocation sites are not symbolised
here; the GPU tests in test_memory_gpu.py check those on fresh runs."""

from __future__ import annotations

from pathlib import Path

import intra_waste_expect
import vmm_map_expect

from reuselens.analyzer.memory.analysis import analyze_run

RUNS = Path(__file__).resolve().parents[1] / "data" / "memory_runs"


def test_each_intra_object_implant_is_found_on_the_recorded_run_and_no_control_is():
    intra_waste_expect.check(analyze_run(RUNS / "intra_waste"), symbolised=False)


def test_the_recorded_vmm_mappings_are_objects_and_the_untouched_one_is_unused():
    vmm_map_expect.check(analyze_run(RUNS / "vmm_map_objects"), symbolised=False)
