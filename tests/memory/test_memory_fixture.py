"""The memory analysis of a recorded H200 run of tests/gpu/memory_waste.cu (tests/data/memory_runs/memory_waste: run.json
with its memory operations and call paths, object_touches.json from the online engine), replayed without a GPU.
The program's binary is not kept, so the sites are not symbolised here; the GPU test checks those."""

from __future__ import annotations

import json
from pathlib import Path

import memory_waste_expect as expect

from reuselens.analyzer.memory.analysis import analyze_run
from reuselens.analyzer.memory.run_timeline import RUNTIME_LIBRARIES

RUN = Path(__file__).resolve().parents[1] / "data" / "memory_runs" / "memory_waste"


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
