"""A run directory's memory records (run.json's allocations and memory_operations, object_touches.json) become
the memory timeline the patterns read: each operation kind, touches by address, unknown touches, and a clear
one-line error for a run without memory operations or with a malformed field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from run_dirs import RunWriter

from reuselens.analyzer.errors import ReuseLensError
from reuselens.analyzer.memory import run_timeline
from reuselens.analyzer.memory.analysis import analyze_run
from reuselens.analyzer.memory.run_timeline import MemoryRunError, load_run_memory

HOST = 0x5600_0000_0000  # a host buffer: inside no device allocation


def kinds_and_touches(timeline):
    return [
        (op.kind, op.name, [(t.object_id, t.read, t.write, t.bytes) for t in op.touches]) for op in timeline.operations
    ]


def test_every_operation_kind_touches_the_objects_its_addresses_fall_in(tmp_path):
    run = RunWriter()
    a, b = run.alloc(4096), run.alloc(256, api="cuMemAlloc_v2")
    run.memcpy(HOST, run.address(a), 4096, "htod")
    run.memset(run.address(b) + 64, 1000)  # starts inside b: only b's remaining 192 bytes are b's
    run.memcpy(run.address(a), run.address(a) + 2048, 2048, "dtod")  # within one object: a read and a write
    run.kernel("_Z6smoothPKfPf", [(a, "r"), (b, "rw")])
    run.memcpy(run.address(b), HOST, 256, "dtoh")
    run.free(a).free(b)
    memory = load_run_memory(run.write(tmp_path / "run"))
    assert kinds_and_touches(memory.timeline) == [
        ("alloc", "cudaMalloc", []),
        ("alloc", "cuMemAlloc_v2", []),
        ("memcpy", "htod", [(0, False, True, 4096)]),
        ("memset", None, [(1, False, True, 192)]),
        ("memcpy", "dtod", [(0, True, False, 2048), (0, False, True, 2048)]),
        ("kernel", "smooth", [(0, True, False, None), (1, True, True, None)]),
        ("memcpy", "dtoh", [(1, True, False, 256)]),
        ("free", None, []),
        ("free", None, []),
    ]
    assert memory.unknown_touch_kernels == 0


def test_a_kernel_without_recorded_touches_touches_every_live_object_and_hides_no_waste(tmp_path):
    # x is written, then an uninstrumented kernel, then x is overwritten whole: without the kernel's touches
    # nobody can say it did not read x, so no dead write, no idle gap and no unused object may be claimed.
    run = RunWriter()
    x, idle = run.alloc(1024), run.alloc(1024)
    run.memset(run.address(x), 1024)
    run.kernel("_Z6opaquev", None)
    run.memset(run.address(x), 1024)
    run.kernel("_Z3usePf", [(x, "r")])
    run.free(x).free(idle)
    path = run.write(tmp_path / "run")
    analysis = analyze_run(path)
    opaque = analysis.timeline.operations[3]
    assert opaque.touches_unknown and {t.object_id for t in opaque.touches} == {x, idle}
    assert analysis.memory.unknown_touch_kernels == 1
    patterns = {(f.pattern, f.object_id) for f in analysis.findings}
    assert ("dead_write", x) not in patterns and ("unused_allocation", idle) not in patterns
    # Control: the same program with the kernel's touches recorded (it touched nothing) shows both.
    run.touches.append({"launch": 0, "touches": []})
    control = {(f.pattern, f.object_id) for f in analyze_run(run.write(tmp_path / "control")).findings}
    assert {("dead_write", x), ("unused_allocation", idle)} <= control


def test_a_missing_object_touches_file_leaves_every_kernel_unknown(tmp_path):
    run = RunWriter()
    a = run.alloc(64)
    run.kernel("_Z1kPf", [(a, "w")]).kernel("_Z1kPf", [(a, "r")]).free(a)
    memory = load_run_memory(run.write(tmp_path / "run", touches=False))
    assert memory.unknown_touch_kernels == 2


def test_kernel_touches_outside_every_live_allocation_are_left_out_and_counted(tmp_path):
    run = RunWriter()
    a = run.alloc(64)
    run.kernel("_Z1kPf", [(a, "w")])
    run.touches[0]["touches"].append({"address": HOST, "read": True, "write": False})
    run.free(a)
    memory = load_run_memory(run.write(tmp_path / "run"))
    assert memory.stray_touches == 1
    assert [t.object_id for t in memory.timeline.operations[1].touches] == [a]


def test_a_never_touched_allocation_is_unused_and_removing_it_lowers_the_peak_by_its_size(tmp_path):
    run = RunWriter()
    data = run.alloc(1 << 20)
    scratch = run.alloc(1 << 16)  # allocated, never used, freed at the end
    run.memcpy(HOST, run.address(data), 1 << 20, "htod")
    run.kernel("_Z4stepPf", [(data, "rw")])
    run.memcpy(run.address(data), HOST, 1 << 20, "dtoh")
    run.free(data).free(scratch)
    findings = analyze_run(run.write(tmp_path / "run")).findings
    assert [(f.pattern, f.object_id, f.bytes, f.peak_reduction) for f in findings] == [
        ("unused_allocation", scratch, 1 << 16, 1 << 16)
    ]


def test_a_run_from_an_older_collector_says_it_has_no_memory_operations(tmp_path):
    run = RunWriter()
    run.alloc(64)
    manifest = run.manifest()
    del manifest["memory_operations"]
    manifest["collector"] = {"finished": True}  # an older collector wrote the run, without memory operations
    with pytest.raises(MemoryRunError) as error:
        load_run_memory(run.write(tmp_path / "old", manifest))
    message = str(error.value)
    assert "\n" not in message and "no memory operations" in message and "re-profile" in message


def malformed(tmp_path, change):
    run = RunWriter()
    a = run.alloc(64)
    run.kernel("_Z1kPf", [(a, "w")]).free(a)
    manifest = run.manifest()
    change(manifest)
    with pytest.raises(ReuseLensError) as error:
        load_run_memory(run.write(tmp_path / "bad", manifest))
    assert "\n" not in str(error.value)
    return str(error.value)


@pytest.mark.parametrize(
    "change, field",
    [
        (lambda m: m["memory_operations"][0].update(allocation=5), "memory_operations[0]"),
        (lambda m: m["memory_operations"][0].update(kind="malloc"), "memory_operations[0].kind"),
        (lambda m: m["memory_operations"][1].pop("launch"), "memory_operations[1].launch"),
        (lambda m: m["memory_operations"][1].update(launch=9), "memory_operations[1].launch"),
        (lambda m: m["memory_operations"].append({"kind": "free", "allocation": 0}), "memory_operations[3].allocation"),
        (
            lambda m: m["memory_operations"].insert(0, {"kind": "free", "allocation": 0}),
            "memory_operations[0].allocation",
        ),
        (
            lambda m: m["memory_operations"].append({"kind": "memset", "dst": 1, "bytes": -1, "stream": 0}),
            "memory_operations[3].bytes",
        ),
        (
            lambda m: m["memory_operations"].append(
                {"kind": "memcpy", "src": 1, "dst": 2, "bytes": 1, "stream": 0, "direction": "sideways"}
            ),
            "memory_operations[3].direction",
        ),
        (
            lambda m: m["allocations"][0].update(call_path=[{"module": "/bin/app"}]),
            "allocations[0].call_path[0].offset",
        ),
        (lambda m: m["allocations"][0].update(api=7), "allocations[0].api"),
        (lambda m: m.update(memory_operations={}), "memory_operations"),
    ],
)
def test_a_malformed_field_is_one_line_naming_it(tmp_path, change, field):
    message = malformed(tmp_path, change)
    assert f"run.json: {field}" in message


def test_a_malformed_object_touches_file_is_one_line_naming_the_file_and_field(tmp_path):
    run = RunWriter()
    a = run.alloc(64)
    run.kernel("_Z1kPf", [(a, "w")]).free(a)
    path = run.write(tmp_path / "run")
    document = json.loads((path / "object_touches.json").read_text())
    document["launches"][0]["touches"][0]["write"] = "yes"
    (path / "object_touches.json").write_text(json.dumps(document))
    with pytest.raises(MemoryRunError, match=r"object_touches\.json: launches\[0\]\.touches\[0\]\.write: expected"):
        load_run_memory(path)
    (path / "object_touches.json").write_text('{"format": "reuselens-object-touches", "version": 3, "launches": []}')
    with pytest.raises(MemoryRunError, match="version int 3, this build reads 1 and 2"):
        load_run_memory(path)


def test_a_run_whose_operations_the_collector_cut_short_is_refused_with_the_reason(tmp_path):
    run = RunWriter()
    buffer = run.alloc(4096)
    run.kernel("k", [(buffer, "rw")])
    manifest = run.manifest()
    manifest["memory_operations_truncated"] = True
    with pytest.raises(MemoryRunError, match=r"listed only the first 2 memory operations.*profile a shorter run"):
        load_run_memory(run.write(tmp_path / "run", manifest))


def test_an_allocation_past_the_collectors_cap_is_named_as_such(tmp_path, monkeypatch):
    monkeypatch.setattr(run_timeline, "COLLECTOR_ALLOCATION_CAP", 2)
    run = RunWriter()
    run.alloc(64)
    run.alloc(64)
    manifest = run.manifest()
    manifest["memory_operations"].append({"kind": "alloc", "allocation": 2, "stream": None})
    with pytest.raises(MemoryRunError, match=r"allocation 2 is past the 2 that run.json lists"):
        load_run_memory(run.write(tmp_path / "run", manifest))


RECORDED = sorted(
    path.parent
    for root in ("memory_runs", "runs")
    for path in (Path(__file__).resolve().parents[1] / "data" / root).glob("*/run.json")
    if "memory_operations" in json.loads(path.read_text())
)


@pytest.mark.parametrize("run", RECORDED, ids=[run.name for run in RECORDED])
def test_the_builders_document_of_every_recorded_run_passes_the_full_format_check(run, monkeypatch):
    # The memory report reads the builder's document without checking its field types again
    # (timeline.from_built_document): every recorded run's document must pass the full check, to the same timeline.
    from reuselens.analyzer.memory import timeline

    built = []

    def checked(document, source="memory timeline"):
        full = timeline.from_document(document, source)
        built.append(full)
        return full

    monkeypatch.setattr(run_timeline, "from_built_document", checked)
    memory = load_run_memory(run)
    assert built and memory.timeline is built[0]
    monkeypatch.undo()
    assert load_run_memory(run).timeline == built[0]
