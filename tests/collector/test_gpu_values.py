"""Value mode on a real GPU (issue 19; docs/engine.md "Value redundancy"): the implants of tests/gpu/value_redundancy.cu
against their controls, the online engine against a replay of the same run's traces, and a run's other counts
unchanged by values. Skipped, with the reason printed, where there is no GPU."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import reuselens.collector.launcher as launcher
from reuselens.analyzer import engine_result
from reuselens.analyzer.replay import replay_run

REPO = Path(__file__).resolve().parents[2]
N = 4096  # elements per case (value_redundancy.cu)

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    out = tmp_path_factory.mktemp("values") / "value_redundancy"
    src = REPO / "tests/gpu/value_redundancy.cu"
    subprocess.run(["nvcc", "-O3", "-lineinfo", "-arch=sm_90", "-o", str(out), str(src)], check=True)
    return out


def profile(program: Path, run: Path, case: str, values: bool = True) -> dict:
    summary = launcher.profile([str(program), case], run_dir=run, write_traces=True, values=values, timeout=300)
    assert summary.status == "complete", summary.partial_reason
    return json.loads((run / "run.json").read_text())


def kernel(result: dict, name: str) -> dict:
    (k,) = [k for k in result["kernels"] if name in (k.get("mangled") or "")]
    return k


def loads(k: dict, space: str = "global") -> list[dict]:
    return sorted(
        (n for n in k["nodes"] if n["id"] and n["type"] == "read" and n["space"] == space), key=lambda n: n["pc"]
    )


def edges_into(k: dict, node: dict) -> list[dict]:
    return [e for e in k["edges"] if e["from"] == node["id"]]


def compared(k: dict, node: dict) -> tuple[int, int]:
    es = edges_into(k, node)
    return sum(e.get("value_loads", 0) for e in es), sum(e.get("same_value", 0) for e in es)


@pytest.mark.parametrize("case, same", [("reload", N), ("reload_poked", 0)])
def test_a_thread_reloading_its_element(program, tmp_path, case, same):
    run = tmp_path / "run"
    manifest = profile(program, run, case)
    assert manifest["collector"]["values"] is True
    k = kernel(replay_run(run), "reload_in_thread")
    second = loads(k)[-1]
    (thread,) = [e for e in edges_into(k, second) if e["label"] == "thread"]
    assert (thread.get("value_loads"), thread.get("same_value", 0)) == (N, same)


@pytest.mark.parametrize("case, same", [("table", N), ("table_rewritten", 0)])
def test_a_table_read_again_by_the_next_launch(program, tmp_path, case, same):
    run = tmp_path / "run"
    profile(program, run, case)
    k = kernel(replay_run(run), "read_table")
    (load,) = loads(k)
    prior = [e for e in edges_into(k, load) if e["prior_kernel"]]
    assert sum(e.get("value_loads", 0) for e in prior) == N
    assert sum(e.get("same_value", 0) for e in prior) == same


@pytest.mark.parametrize("case, silent", [("flags_silent", N), ("flags_changed", 0)])
def test_silent_stores(program, tmp_path, case, silent):
    run = tmp_path / "run"
    profile(program, run, case)
    k = kernel(replay_run(run), "store_flags")
    (store,) = [n for n in k["nodes"] if n["id"] and n["type"] == "write"]
    assert store["values"]["lanes"] == N and store["values"]["silent"] == silent


def test_zeros_and_uniform_loads(program, tmp_path):
    run = tmp_path / "run"
    profile(program, run, "sparse")
    k = kernel(replay_run(run), "sparse_and_uniform")
    by_values = {n["values"]["zero"]: n["values"] for n in loads(k)}
    sparse = by_values[N - N // 10 - 1]  # elements 0, 10, 20, ... are 1
    assert sparse["lanes"] == N
    per_warp = [v for v in by_values.values() if v is not sparse]
    assert [v["uniform"] for v in per_warp] == [N // 32]


def test_sixteen_byte_values_and_a_silent_vector_store(program, tmp_path):
    run = tmp_path / "run"
    profile(program, run, "vector")
    k = kernel(replay_run(run), "reload_vector")
    first, second = loads(k)
    assert compared(k, second) == (4 * N, 4 * N)  # four granules per lane, each half of the lane's hash
    (store,) = [n for n in k["nodes"] if n["id"] and n["type"] == "write" and n["space"] == "global"][-1:]
    assert store["values"]["silent"] == N


def test_shared_memory_reload(program, tmp_path):
    run = tmp_path / "run"
    profile(program, run, "shared")
    k = kernel(replay_run(run), "shared_twice")
    second = loads(k, "shared")[-1]
    assert compared(k, second) == (N, N)


def test_online_equals_replay_and_values_change_no_other_count(program, tmp_path):
    run, plain = tmp_path / "run", tmp_path / "plain"
    manifest = profile(program, run, "table")
    baseline = profile(program, plain, "table", values=False)
    assert [l["records"] for l in manifest["launches"]] == [l["records"] for l in baseline["launches"]]
    online = engine_result.load(run / "analysis.json")
    replayed = replay_run(run)
    assert [k["edges"] for k in online["kernels"]] == [k["edges"] for k in replayed["kernels"]]

    def without_values(kernels):
        return [
            [{f: v for f, v in e.items() if f not in ("value_loads", "same_value")} for e in k["edges"]]
            for k in kernels
        ]

    assert without_values(replayed["kernels"]) == without_values(replay_run(plain)["kernels"])
