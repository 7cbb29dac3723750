"""The memory analysis of a recorded H200 run of tests/gpu/memory_waste.cu (tests/data/memory_runs/memory_waste: run.json
with its memory operations and call paths, object_touches.json from the online engine), replayed without a GPU.
The program's binary is not kept, so the sites are not symbolised here; the GPU test checks those."""

from __future__ import annotations

import json
from pathlib import Path

import memory_waste_expect as expect
from run_dirs import touches_by_allocation

from reuselens.analyzer.memory.analysis import analyze_run
from reuselens.analyzer.memory.run_timeline import RUNTIME_LIBRARIES

RUN = Path(__file__).resolve().parents[1] / "data" / "memory_runs" / "memory_waste"
OBJECT_LEVEL_RUN = RUN.with_name("memory_waste_objects")  # the same program, `profile --object-level`


def test_each_implanted_pattern_is_found_on_the_recorded_run(tmp_path):
    expect.check(analyze_run(RUN), symbolised=False)


def test_the_recorded_operations_are_the_programs(tmp_path):
    manifest = json.loads((RUN / "run.json").read_text())
    kinds = [op["kind"] for op in manifest["memory_operations"]]
    assert {k: kinds.count(k) for k in set(kinds)} == {"alloc": 7, "memcpy": 3, "memset": 1, "kernel": 13, "free": 6}
    assert manifest["memory_operations_truncated"] is False
    # every allocation's call path reaches the program past the driver's frames (the collector's own are left out)
    for allocation in manifest["allocations"]:
        modules = [Path(frame["module"]).name for frame in allocation["call_path"]]
        assert "libreuselens_collector.so" not in modules and not any(m.startswith("libsanitizer") for m in modules)
        first = next(m for m in modules if not m.startswith(RUNTIME_LIBRARIES))
        assert first == "memory_waste", modules


def test_the_object_level_run_recorded_what_the_traced_run_recorded():
    """Two H200 runs of the program: the object patch's marks (no trace) against the engine's shadow (every access
    traced), launch by launch: the same objects and access kinds. (The traced fixture predates the slices; the GPU
    test, tests/memory/test_memory_gpu.py, compares them too, on two fresh runs.)"""
    manifest = json.loads((OBJECT_LEVEL_RUN / "run.json").read_text())
    assert manifest["collector"]["collection"] == "objects" and manifest["collector"]["records"] == 0

    def kinds(run):
        return {launch: {t[:3] for t in touches} for launch, touches in touches_by_allocation(run).items()}

    recorded = kinds(OBJECT_LEVEL_RUN)
    assert len(recorded) == 13 and recorded == kinds(RUN)
    assert all(t[3] for touches in touches_by_allocation(OBJECT_LEVEL_RUN).values() for t in touches)


def test_the_object_level_run_gives_the_traced_runs_object_level_findings():
    intra = ("overallocation", "non_uniform_access", "structured_access")

    def findings(run):
        return sorted(
            (f.pattern, f.object_id, f.bytes, f.peak_reduction)
            for f in analyze_run(run).findings
            if f.pattern not in intra
        )

    assert findings(OBJECT_LEVEL_RUN) == findings(RUN) != []
    assert not [f for f in analyze_run(OBJECT_LEVEL_RUN).findings if f.pattern in intra]
