"""More H200 runs replayed without a GPU (tests/data/memory_runs/README.md): the intra-object implants of
tests/gpu/intra_waste.cu (a traced run: the engine's per-object slice profiles; and an --intra-object run: the same
profiles from the element maps on the GPU) and the virtual-memory mappings of tests/gpu/vmm_map.cu (an object-level
run). The binaries are not kept, so the allocation sites are not symbolised
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


def test_each_intra_object_implant_is_found_on_the_element_map_run_with_the_traced_runs_figures():
    elements, traced = analyze_run(RUNS / "intra_waste_elements"), analyze_run(RUNS / "intra_waste")
    intra_waste_expect.check(elements, symbolised=False)
    assert elements.memory.run.manifest["collector"]["element_maps"] is True

    def figures(analysis):
        return {
            oid: (p.size, p.touched_bytes, p.slice_accesses, p.touched_slices, p.touched_unit)
            for oid, p in analysis.memory.profiles.items()
        }

    assert figures(elements) == figures(traced) and len(figures(traced)) == len(intra_waste_expect.ORDER)

    def intra_findings(analysis):
        return sorted(
            (f.pattern, f.object_id, f.bytes, f.peak_reduction)
            for f in analysis.findings
            if f.pattern in INTRA_PATTERNS
        )

    assert intra_findings(elements) == intra_findings(traced) != []


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


def _element_run_with(tmp_path, change):
    """A copy of the element-map run whose object_touches.json `change` edits (a dict -> None function)."""
    run = tmp_path / "elements"
    shutil.copytree(RUNS / "intra_waste_elements", run)
    touches = json.loads((run / "object_touches.json").read_text())
    change(touches)
    (run / "object_touches.json").write_text(json.dumps(touches))
    return run


def test_a_coarse_element_map_gives_a_bound_worded_as_one(tmp_path):
    # GIVEN the oversized buffer's map coarsened to one bit per 512 bytes (its 256 KiB used part is 512 such units)
    oversized = intra_waste_expect.ORDER.index("oversized")

    def coarsen(touches):
        touches["objects"][oversized]["touched_unit_bytes"] = 512

    analysis = analyze_run(_element_run_with(tmp_path, coarsen))
    # THEN the profile carries the unit, and the overallocation finding says its figure is a bound
    assert analysis.memory.profiles[oversized].touched_unit == 512
    (finding,) = [f for f in analysis.findings if f.pattern == "overallocation"]
    assert "at most 262.1 KB" in finding.fix and "counted in units of 512 B" in finding.fix


def test_an_object_without_an_element_map_falls_back_on_its_slices(tmp_path):
    # GIVEN the element-map run with no map for the structured-access implant (none fitted in device memory)
    parts = intra_waste_expect.ORDER.index("parts")

    def drop(touches):
        del touches["objects"][parts]

    analysis = analyze_run(_element_run_with(tmp_path, drop))
    # THEN its profile comes from the slices its kernels touched, the others keep their counts, and its finding stays
    profiles = analysis.memory.profiles
    assert profiles[parts].touched_slices == (1 << 64) - 1 and profiles[0].touched_slices is None
    assert ("structured_access", parts) in {(f.pattern, f.object_id) for f in analysis.findings}


def test_resizing_findings_combine_like_the_peak_with_every_object_at_its_new_size():
    # GIVEN the element-map run's overallocation and structured-access findings (each a resize of its object)
    from reuselens.analyzer.memory.patterns import peak_reduction_together
    from reuselens.analyzer.memory.peak import PeakModel

    analysis = analyze_run(RUNS / "intra_waste_elements")
    resizing = [f for f in analysis.findings if f.pattern in ("overallocation", "structured_access")]
    assert len(resizing) == 2 and all(f.resize for f in resizing)
    # THEN each alone reduces the peak by its own figure, and together by the peak with both objects resized
    for finding in resizing:
        assert peak_reduction_together(analysis.timeline, [finding]) == finding.peak_reduction > 0
    model = PeakModel(analysis.timeline)
    sizes = {oid: size for f in resizing for oid, size in f.resize.items()}
    assert peak_reduction_together(analysis.timeline, resizing) == model.peak - model.peak_with({}, sizes)
    assert peak_reduction_together(analysis.timeline, resizing) >= max(f.peak_reduction for f in resizing)
