"""The memory analysis on a real GPU run: tests/gpu/memory_waste.cu built with host debug info, profiled, and
every implanted pattern found on its allocation's source line (skipped with the reason where there is no GPU)."""

from __future__ import annotations

import json
import subprocess

import memory_waste_expect as expect
import pytest
from run_dirs import touches_by_allocation

import reuselens.collector.launcher as launcher
from reuselens.analyzer.memory.analysis import analyze_run

pytestmark = pytest.mark.gpu


def test_implanted_patterns_are_found_on_their_allocation_lines(tmp_path):
    app = tmp_path / "memory_waste"
    subprocess.run(
        ["nvcc", "-g", "-O0", "-lineinfo", "-arch=sm_90", "-o", str(app), str(expect.SOURCE)], check=True, timeout=300
    )
    run = tmp_path / "run"
    summary = launcher.profile([str(app)], run_dir=run, timeout=300)
    assert summary.status == "complete", summary.partial_reason
    manifest = json.loads((run / "run.json").read_text())
    kinds = [op["kind"] for op in manifest["memory_operations"]]
    # 7 allocs, 3 copies, 1 set, 13 launches, 6 frees: the collector's own copies and buffers are not listed
    assert {k: kinds.count(k) for k in set(kinds)} == {"alloc": 7, "memcpy": 3, "memset": 1, "kernel": 13, "free": 6}
    expect.check(analyze_run(run), symbolised=True)


def test_object_level_mode_records_what_a_traced_run_records(tmp_path):
    """The object patch's marks against the engine's shadow, launch by launch: the same objects, access kinds
    and slices; and the same object-level findings from both runs."""
    app = tmp_path / "memory_waste"
    subprocess.run(
        ["nvcc", "-g", "-O0", "-lineinfo", "-arch=sm_90", "-o", str(app), str(expect.SOURCE)], check=True, timeout=300
    )
    traced, objects = tmp_path / "traced", tmp_path / "objects"
    assert launcher.profile([str(app)], run_dir=traced, timeout=300).status == "complete"
    summary = launcher.profile([str(app)], run_dir=objects, timeout=300, object_level=True)
    assert summary.status == "complete", summary.partial_reason
    manifest = json.loads((objects / "run.json").read_text())
    assert manifest["collector"]["collection"] == "objects" and summary.records == 0
    assert not (objects / "analysis.json").exists()
    expected, recorded = touches_by_allocation(traced), touches_by_allocation(objects)
    assert len(recorded) == 13 and recorded == expected

    def object_findings(run):
        return sorted(
            (f.pattern, f.object_id, f.bytes, f.peak_reduction)
            for f in analyze_run(run).findings
            if f.pattern not in ("overallocation", "non_uniform_access", "structured_access")
        )

    assert object_findings(objects) == object_findings(traced) != []


def test_implanted_intra_object_patterns_are_found_on_their_allocation_lines(tmp_path):
    import intra_waste_expect

    app = tmp_path / "intra_waste"
    subprocess.run(
        ["nvcc", "-g", "-O0", "-lineinfo", "-arch=sm_90", "-o", str(app), str(intra_waste_expect.SOURCE)],
        check=True,
        timeout=300,
    )
    run = tmp_path / "run"
    summary = launcher.profile([str(app)], run_dir=run, timeout=300)
    assert summary.status == "complete", summary.partial_reason
    intra_waste_expect.check(analyze_run(run), symbolised=True)


def test_virtual_memory_mappings_are_objects_from_their_access_grant_to_their_unmap(tmp_path):
    """tests/gpu/vmm_map.cu: two cuMemMap'd ranges of one reservation next to a cudaMalloc (vmm_map_expect.py)."""
    import vmm_map_expect

    app = tmp_path / "vmm_map"
    subprocess.run(
        ["nvcc", "-g", "-O0", "-lineinfo", "-arch=sm_90", "-o", str(app), str(vmm_map_expect.SOURCE), "-lcuda"],
        check=True,
        timeout=300,
    )
    run = tmp_path / "run"
    summary = launcher.profile([str(app)], run_dir=run, timeout=300, object_level=True)
    assert summary.status == "complete", summary.partial_reason
    vmm_map_expect.check(analyze_run(run), symbolised=True)


GPU_PROGRAMS = {
    "intra_waste": ["nvcc", "-g", "-O0", "-lineinfo", "-arch=sm_90"],
    "memory_waste": ["nvcc", "-g", "-O0", "-lineinfo", "-arch=sm_90"],
    "async_copies": ["nvcc", "-O3", "-lineinfo", "-arch=sm_90"],  # cp.async.bulk blocks, ldmatrix
    "pattern_suite": ["nvcc", "-O3", "-lineinfo", "-arch=sm_90"],  # vector, strided and gathered accesses
}


def _intra_figures(run):
    """Per allocation index: size, touched bytes, accesses per slice (the profiles the intra patterns read)."""
    memory = analyze_run(run).memory
    return {
        oid: (p.size, p.touched_bytes, p.slice_accesses, p.touched_unit)
        for oid, p in memory.profiles.items()
        if p.touched_slices is None
    }


@pytest.mark.parametrize("program", sorted(GPU_PROGRAMS))
def test_element_maps_count_what_a_traced_runs_engine_counts(tmp_path, program):
    """--intra-object's element maps against the engine's shadow: per allocation, the same touched bytes and the
    same lane-granule accesses in every slice; the same touches per launch; and the same findings."""
    source = expect.SOURCE.parent / f"{program}.cu"
    app = tmp_path / program
    subprocess.run([*GPU_PROGRAMS[program], "-o", str(app), str(source)], check=True, timeout=300)
    traced, elements = tmp_path / "traced", tmp_path / "elements"
    assert launcher.profile([str(app)], run_dir=traced, timeout=300).status == "complete"
    summary = launcher.profile([str(app)], run_dir=elements, timeout=300, object_level=True, element_maps=True)
    assert summary.status == "complete", summary.partial_reason
    manifest = json.loads((elements / "run.json").read_text())
    assert manifest["collector"]["collection"] == "objects" and manifest["collector"]["element_maps"] is True
    assert touches_by_allocation(elements) == touches_by_allocation(traced)
    expected, counted = _intra_figures(traced), _intra_figures(elements)
    assert counted == expected and any(touched for _, touched, _, _ in counted.values())

    def findings(run):
        return sorted((f.pattern, f.object_id, f.bytes, f.peak_reduction) for f in analyze_run(run).findings)

    assert findings(elements) == findings(traced)


def test_element_maps_coarsen_when_the_budget_is_small_and_still_bound_what_was_touched(tmp_path):
    """With 2 KiB for the maps of one table upload, each 4 MiB object gets a coarse map: its touched bytes are whole
    units, never fewer than the exact count; the overallocated buffer is still found, worded as a bound."""
    import intra_waste_expect

    app = tmp_path / "intra_waste"
    subprocess.run(
        [*GPU_PROGRAMS["intra_waste"], "-o", str(app), str(intra_waste_expect.SOURCE)], check=True, timeout=300
    )
    exact, coarse = tmp_path / "exact", tmp_path / "coarse"
    for run, env in ((exact, {}), (coarse, {"REUSELENS_ELEMENT_MAP_BYTES": "2048"})):
        summary = launcher.profile([str(app)], run_dir=run, timeout=300, object_level=True, element_maps=True, env=env)
        assert summary.status == "complete", summary.partial_reason
    precise, bounded = _intra_figures(exact), _intra_figures(coarse)
    assert all(unit == 4 for *_, unit in precise.values())
    assert bounded and all(unit > 4 for *_, unit in bounded.values())
    for oid, (size, touched, accesses, unit) in bounded.items():
        assert accesses == precise[oid][2]  # the counters do not depend on the map's resolution
        assert precise[oid][1] <= touched <= min(size, precise[oid][1] + 2 * unit)
    fixes = [f.fix for f in analyze_run(coarse).findings if f.pattern == "overallocation"]
    assert len(fixes) == 1 and "at most" in fixes[0] and "counted in units of" in fixes[0]
