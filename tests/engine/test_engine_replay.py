"""Trace files and run directories: validation (TraceError naming the file), partial traces, names, layout."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from engine_records import WRITE, mem, records, warp_addrs, write_trace

from reuselens.analyzer import _engine
from reuselens.analyzer.errors import RunDirectoryError, TraceError
from reuselens.analyzer.replay import HEADER_DTYPE, RECORD_DTYPE, read_trace, replay_run

A = 0x7F0000000000
DATA = Path(__file__).resolve().parents[1] / "data" / "runs"


def test_numpy_dtypes_match_the_cpp_header():
    assert RECORD_DTYPE.itemsize == _engine.RECORD_BYTES == 288
    assert HEADER_DTYPE.itemsize == _engine.HEADER_BYTES == 64
    for dtype, layout in ((RECORD_DTYPE, _engine.record_layout()), (HEADER_DTYPE, _engine.header_layout())):
        assert set(dtype.names) == set(layout)
        for name, (offset, size) in layout.items():
            assert dtype.fields[name][1] == offset, name
            assert dtype.fields[name][0].itemsize == size, name


def make_run(tmp_path: Path, traces: dict[int, np.ndarray], **trace_kw) -> Path:
    (tmp_path / "traces").mkdir()
    launches = []
    for lid, recs in traces.items():
        write_trace(tmp_path / "traces" / f"{lid}.rltrace", recs, launch_id=lid, kernel_function_id=lid % 2, **trace_kw)
        launches.append(
            {
                "id": lid,
                "function_id": lid % 2,
                "kernel": f"_Z1kv{lid % 2}",
                "module": "m",
                "grid": [1, 1, 1],
                "block": [32, 1, 1],
                "dynamic_shared_bytes": 0,
                "trace": f"traces/{lid}.rltrace",
                "status": "complete",
            }
        )
    run = {
        "format": "reuselens-run",
        "version": 1,
        "status": "complete",
        "functions": [
            {"id": 0, "module": "m", "name": "_Z6writerPf", "kernel": True},
            {"id": 1, "module": "m", "name": "_Z6readerPf", "kernel": True},
        ],
        "launches": launches,
        "allocations": [{"address": A, "size": 1 << 16, "kind": "device", "freed_after_launch": None}],
    }
    (tmp_path / "run.json").write_text(json.dumps(run))
    return tmp_path


def writer_reader():
    return {
        0: records([mem(0x10, warp_addrs(A), access=WRITE, fid=0)]),
        1: records([mem(0x20, warp_addrs(A), fid=1), mem(0x30, warp_addrs(A), fid=1)]),
    }


def test_replay_run_resolves_names_and_prior_kernel(tmp_path):
    out = replay_run(make_run(tmp_path, writer_reader()), workers=2)
    assert [k["mangled"] for k in out["kernels"]] == ["_Z6writerPf", "_Z6readerPf"]
    reader = out["kernels"][1]
    assert {n["function"] for n in reader["nodes"][1:]} == {"_Z6readerPf"}
    (cold,) = [e for e in reader["edges"] if e["label"] == "cold"]
    assert cold["prior_kernel"]["kernel"] == "_Z6writerPf" and cold["prior_kernel"]["pc"] == 0x10
    assert out["partial"] == [] and out["version"] == 2


def test_wrong_magic(tmp_path):
    p = write_trace(tmp_path / "x.rltrace", records([]), magic=b"NOTATRC\0")
    with pytest.raises(TraceError, match=r"x\.rltrace: not a ReuseLens trace \(bad magic\)"):
        read_trace(p)


@pytest.mark.parametrize("version", [0, 4])
def test_other_version(tmp_path, version):
    p = write_trace(tmp_path / "x.rltrace", records([]), version=version)
    with pytest.raises(
        TraceError, match=f"trace format version {version}, this build reads versions 1 to 3; re-record it"
    ):
        read_trace(p)


@pytest.mark.parametrize("version", [1, 2, 3])
def test_every_version_is_read(tmp_path, version):
    p = write_trace(tmp_path / "x.rltrace", records([]), version=version)
    assert read_trace(p).complete


def test_foreign_record_size(tmp_path):
    p = write_trace(tmp_path / "x.rltrace", records([]), record_bytes=256)
    with pytest.raises(TraceError, match="256-byte records, expected 64 and 288"):
        read_trace(p)


def test_truncated_header(tmp_path):
    p = tmp_path / "x.rltrace"
    p.write_bytes(b"RLTRACE\0\x01")
    with pytest.raises(TraceError, match="truncated trace header"):
        read_trace(p)


def test_complete_file_with_missing_records(tmp_path):
    recs = writer_reader()[1]
    p = write_trace(tmp_path / "x.rltrace", recs, record_count=5)
    with pytest.raises(TraceError, match="header says 5 records, the file holds 2 whole 288-byte records$"):
        read_trace(p)
    p = write_trace(tmp_path / "y.rltrace", recs, tail=b"\0" * 100)
    with pytest.raises(TraceError, match=r"y\.rltrace: corrupt or truncated trace"):
        read_trace(p)


def test_crashed_run_keeps_whole_records_and_is_partial(tmp_path):
    traces = writer_reader()
    run = make_run(tmp_path, {0: traces[0]})
    # launch 1 crashed: COMPLETE not set, header count never written, last record cut short
    write_trace(
        tmp_path / "traces" / "1.rltrace",
        traces[1],
        launch_id=1,
        kernel_function_id=1,
        complete=False,
        record_count=0,
        tail=b"\1" * 200,
    )
    manifest = json.loads((run / "run.json").read_text())
    manifest["launches"].append(dict(manifest["launches"][0], id=1, function_id=1, trace="traces/1.rltrace"))
    (run / "run.json").write_text(json.dumps(manifest))
    t = read_trace(tmp_path / "traces" / "1.rltrace")
    assert len(t.records) == 2 and not t.complete and "last record cut short" in t.partial_reason
    out = replay_run(run, workers=1)
    assert out["kernels"][1]["partial_launches"] == [1]
    assert out["partial"][0]["launch"] == 1
    assert sum(e["accesses"] for e in out["kernels"][1]["edges"]) == 64


def test_trace_of_another_launch(tmp_path):
    run = make_run(tmp_path, writer_reader())
    (run / "traces" / "1.rltrace").write_bytes((run / "traces" / "0.rltrace").read_bytes())
    with pytest.raises(TraceError, match="belongs to launch 0"):
        replay_run(run)


def test_malformed_record_names_the_file(tmp_path):
    bad = records([mem(0x10, warp_addrs(A))])
    bad["warp"] = 77
    run = make_run(tmp_path, {0: bad})
    with pytest.raises(TraceError, match=r"0\.rltrace: record 0 of launch 0: warp index 77 but the block has 1 warps"):
        replay_run(run)


@pytest.mark.parametrize("flag", [0x10, 0x20])
def test_a_record_with_the_engine_queues_flags_names_the_file(tmp_path, flag):
    # GIVEN a trace whose second record carries a flag only the engine queue's records carry (one or two of its lane
    # slots written); THEN its replay stops with the file and the record named, instead of reading lanes it lacks
    recs = records([mem(0x10, warp_addrs(A)), mem(0x20, warp_addrs(A), flags=flag)])
    run = make_run(tmp_path, {0: recs})
    with pytest.raises(TraceError, match=rf"0\.rltrace: record 1 has flags {flag:#x}: bits 0x30 mark records"):
        replay_run(run)


def test_not_a_run_directory(tmp_path):
    with pytest.raises(RunDirectoryError, match=r"not a run directory \(no run.json"):
        replay_run(tmp_path)


RUNS = sorted(p.parent for p in DATA.glob("*/run.json")) if DATA.exists() else []


@pytest.mark.skipif(not RUNS, reason="no recorded GPU runs under tests/data/runs yet")
@pytest.mark.parametrize("run_dir", RUNS, ids=[p.name for p in RUNS])
def test_recorded_runs_replay_identically_with_one_and_two_workers(run_dir):
    one = replay_run(run_dir, workers=1)
    two = replay_run(run_dir, workers=2)
    assert one["kernels"] == two["kernels"]
    for k in one["kernels"]:
        assert sum(e["bytes"] for e in k["edges"]) == sum(n["bytes"] for n in k["nodes"])
