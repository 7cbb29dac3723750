"""run.json fields that replay feeds to the engine: a value of the wrong type or out of range is one error
naming run.json and the field, never a KeyError, a pybind11 conversion error or an EngineError traceback; and
`reuselens analyze` on the recorded reproducers of issue #20 ends with a result or one line on stderr."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from engine_records import mem, records, warp_addrs, write_trace

from reuselens.analyzer.errors import RunDirectoryError, TraceError
from reuselens.analyzer.replay import replay_run

HOSTILE = Path(__file__).resolve().parents[1] / "data" / "hostile"


def make_run(tmp_path: Path, edit) -> Path:
    (tmp_path / "traces").mkdir()
    write_trace(tmp_path / "traces" / "0.rltrace", records([mem(0, warp_addrs(1 << 20))]))
    manifest = {
        "format": "reuselens-run",
        "version": 1,
        "status": "complete",
        "functions": [{"id": 0, "module": "m", "name": "_Z1kv", "kernel": True}],
        "launches": [
            {
                "id": 0,
                "function_id": 0,
                "grid": [1, 1, 1],
                "block": [32, 1, 1],
                "dynamic_shared_bytes": 0,
                "trace": "traces/0.rltrace",
                "status": "complete",
            }
        ],
        "allocations": [{"address": 1 << 20, "size": 4096, "allocated_before_launch": 0, "freed_after_launch": None}],
    }
    edit(manifest)
    (tmp_path / "run.json").write_text(json.dumps(manifest))
    return tmp_path


def launch(field, value):
    return lambda m: m["launches"][0].__setitem__(field, value)


def allocation(field, value):
    return lambda m: m["allocations"][0].__setitem__(field, value)


CASES = {
    "block too large": (
        launch("block", [2048, 1, 1]),
        r"launches\[0\]\.block: 2048x1x1 threads per block, CUDA allows at most 1024",
    ),
    "block product too large": (launch("block", [64, 32, 1]), r"launches\[0\]\.block: 64x32x1 threads"),
    "block of two": (launch("block", [32, 1]), r"launches\[0\]\.block: expected a list of 3, found a list of 2"),
    "block zero": (
        launch("block", [0, 1, 1]),
        r"launches\[0\]\.block\[0\]: expected an integer 1 to 2\^32-1, found int 0",
    ),
    "grid beyond u32": (
        launch("grid", [1, 1 << 32, 1]),
        r"launches\[0\]\.grid\[1\]: expected an integer 1 to 2\^32-1, found int 4294967296",
    ),
    "id a string": (launch("id", "zero"), r"launches\[0\]\.id: expected an integer 0 to 2\^64-1, found str 'zero'"),
    "id a float": (launch("id", 1.5), r"launches\[0\]\.id: expected an integer 0 to 2\^64-1, found float 1\.5"),
    "no function id": (lambda m: m["launches"][0].pop("function_id"), r"launches\[0\]\.function_id is missing"),
    "negative shared": (
        launch("dynamic_shared_bytes", -1),
        r"launches\[0\]\.dynamic_shared_bytes: expected an integer 0 to 2\^32-1, found int -1",
    ),
    "trace a number": (
        launch("trace", 7),
        r"launches\[0\]\.trace: expected a non-empty string of at most 4096 characters, found int 7",
    ),
    "launch not an object": (lambda m: m.__setitem__("launches", [5]), r"launches\[0\]: expected an object"),
    "launches not a list": (
        lambda m: m.__setitem__("launches", {"id": 0}),
        r"launches: expected a list, found an object",
    ),
    "allocation past 2^64": (
        lambda m: m["allocations"][0].update(address=(1 << 64) - 16, size=32),
        r"allocations\[0\]\.size: 32 bytes at address 0xfffffffffffffff0 run past the end",
    ),
    "allocation size negative": (
        allocation("size", -5),
        r"allocations\[0\]\.size: expected an integer 0 to 2\^64-1, found int -5",
    ),
    "allocation address huge": (
        allocation("address", 1 << 64),
        r"allocations\[0\]\.address: expected an integer 0 to 2\^64-1, found int 18446744073709551616",
    ),
    "freed a string": (allocation("freed_after_launch", "later"), r"allocations\[0\]\.freed_after_launch: expected"),
    "function id missing": (lambda m: m["functions"][0].pop("id"), r"functions\[0\]\.id is missing"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_malformed_field_is_one_error_naming_run_json_and_the_field(tmp_path, case):
    edit, message = CASES[case]
    run = make_run(tmp_path, edit)
    with pytest.raises(RunDirectoryError, match=r"run\.json: " + message):
        replay_run(run, workers=1)


@pytest.mark.parametrize("trace", ["/dev/zero", "../outside.rltrace", "traces/link.rltrace"])
def test_a_trace_path_outside_the_run_directory_is_refused(tmp_path, trace):
    # run.json is data: /dev/zero would be read forever, ../ or a link leaves the run directory
    (tmp_path / "run").mkdir()
    run = make_run(tmp_path / "run", launch("trace", trace))
    (tmp_path / "outside.rltrace").write_bytes((run / "traces" / "0.rltrace").read_bytes())
    (run / "traces" / "link.rltrace").symlink_to(tmp_path / "outside.rltrace")
    # absolute and ../ paths fail the schema; a link that leaves the directory fails when it is resolved
    outside = (
        r"(launches\[0\]\.trace: expected a path inside the directory|the trace of launch 0 .* is outside the run)"
    )
    with pytest.raises(RunDirectoryError, match=r"run\.json: " + outside):
        replay_run(run, workers=1)


def test_a_trace_that_is_not_a_regular_file_is_refused_without_blocking(tmp_path):
    run = make_run(tmp_path, launch("trace", "traces/fifo.rltrace"))
    os.mkfifo(run / "traces" / "fifo.rltrace")
    with pytest.raises(TraceError, match="not a regular file"):
        replay_run(run, workers=1)


def test_well_formed_run_still_replays(tmp_path):
    out = replay_run(make_run(tmp_path, lambda m: None), workers=1)
    assert out["kernels"][0]["launches"] == [0] and out["kernels"][0]["mangled"] == "_Z1kv"


def analyze_cli(tmp_path: Path, fixture: str) -> subprocess.CompletedProcess:
    run = tmp_path / fixture
    shutil.copytree(HOSTILE / fixture, run)
    try:  # seconds normally; the shared-size reproducer took over 40 s before its fix
        return subprocess.run(
            [sys.executable, "-m", "reuselens", "analyze", str(run)], capture_output=True, text=True, timeout=60
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"reuselens analyze {fixture} still running after 60 s")


@pytest.mark.parametrize("fixture", ["alloc_size_2_62_run", "shared_size_65535_run"])
def test_recorded_reproducer_is_analysed(tmp_path, fixture):
    """alloc_size_2_62_run crashed `reuselens analyze` (SIGSEGV); shared_size_65535_run kept it busy > 40 s."""
    done = analyze_cli(tmp_path, fixture)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "1 kernel configuration(s) analysed" in done.stdout
    report = json.loads((tmp_path / fixture / "report.json").read_text())
    assert report["kernels"]


def test_block_of_2048_threads_is_one_line_on_stderr(tmp_path):
    done = analyze_cli(tmp_path, "block_2048_run")
    assert done.returncode != 0
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert "run.json: launches[0].block: 2048x1x1 threads per block" in done.stderr
