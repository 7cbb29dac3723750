"""Two more H200 runs replayed without a GPU (tests/data/memory_runs/README.md): the intra-object implants of
tests/gpu/intra_waste.cu (a traced run: the engine's per-object slice profiles) and the virtual-memory mappings of
tests/gpu/vmm_map.cu (an object-level run). The binaries are not kept, so the allocation sites are not symbolised
here; the GPU tests in test_memory_gpu.py check those on fresh runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import intra_waste_expect
import vmm_map_expect

from reuselens.analyzer.memory.analysis import analyze_run

RUNS = Path(__file__).resolve().parents[1] / "data" / "memory_runs"
INTRA_PATTERNS = intra_waste_expect.INTRA


def test_each_intra_object_implant_is_found_on_the_recorded_run_and_no_control_is():
    intra_waste_expect.check(analyze_run(RUNS / "intra_waste"), symbolised=False)


def test_the_recorded_vmm_mappings_are_objects_and_the_untouched_one_is_unused():
    vmm_map_expect.check(analyze_run(RUNS / "vmm_map_objects"), symbolised=False)


def test_an_object_level_run_finds_overallocation_and_structured_access_from_the_slices(tmp_path):
    # GIVEN the traced run as an object-level run records it: the slices each kernel touched, no profiles
    run = tmp_path / "objects"
    shutil.copytree(RUNS / "intra_waste", run)
    touches = json.loads((run / "object_touches.json").read_text())
    del touches["objects"]
    (run / "object_touches.json").write_text(json.dumps(touches))
    manifest = json.loads((run / "run.json").read_text())
    manifest["collector"]["collection"] = "objects"
    (run / "run.json").write_text(json.dumps(manifest))
    # WHEN it is analysed
    analysis = analyze_run(run)
    intra = {
        (intra_waste_expect.ORDER[f.object_id], f.pattern): f for f in analysis.findings if f.pattern in INTRA_PATTERNS
    }
    # THEN the two patterns that slices show are found on their implants, with the traced run's bytes (the oversized
    # buffer's used sixteenth is four whole slices), and non-uniform access, which needs access counts, is not
    assert sorted(intra) == [("oversized", "overallocation"), ("parts", "structured_access")]
    size = intra_waste_expect.BYTES
    assert intra["oversized", "overallocation"].bytes == size - size // 16
    assert "4 of its 64 slices, at most 262.1 KB" in intra["oversized", "overallocation"].fix
    assert intra["parts", "structured_access"].bytes == size - size // 4
