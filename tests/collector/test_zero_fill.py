"""Zero-fill cp.async, recorded on the H200 from tests/gpu/zero_fill.cu (tests/data/runs/zero_fill, with the Nsight
Compute CSV of the same program; session 19, call 1): a lane with a null source reads no global memory, so the
global half leaves it out, and a half with no lane left is an LDGSTS instruction but no global load request. The
third kernel issues the same 16-byte form with a source in every lane. The counts the trace gives are held to
ncu's."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from collector_traces import (
    ZERO_FILL_BLOCKS,
    cp_async_halves,
    fidelity_table,
    recorded_launches,
    zero_fill_sourced_lanes,
)

REPO = Path(__file__).resolve().parents[2]
RUN = REPO / "tests/data/runs/zero_fill"
BLOCKS = ZERO_FILL_BLOCKS


def launches() -> dict[str, tuple[dict, np.ndarray]]:
    return recorded_launches(RUN, "session 19's call 1 recorded it: benchmarks/results/h200-2026-12-03-s19")


def test_the_global_half_holds_the_lanes_with_a_source_only():
    assert len(launches()) == 3
    for kernel, (_launch, records) in launches().items():
        global_half, shared_half = cp_async_halves(records)
        assert len(global_half) == len(shared_half) == 2 * BLOCKS, kernel
        for r in global_half:
            sourced = zero_fill_sourced_lanes(int(r["block"]), int(r["warp"]), kernel)
            assert int(r["active_mask"]) == sourced, kernel
            assert all(int(r["addr"][lane]) != 0 for lane in range(32) if (sourced >> lane) & 1)
        assert (shared_half["active_mask"] == 0xFFFFFFFF).all()


def test_counts_equal_nsight_compute():
    """Every count equals ncu's, the requests and sectors of the zero-fill halves included (ncu: 7 requests for the
    8 LDGSTS of each zero-fill kernel; 21 and 70 sectors, none for the null sources). ncu counts none of the 16-byte
    LDGSTS as a shared load instruction (8 = the 8 LDS of each kernel), the sourced ones included: their SASS carries
    a zero-fill operand (`.ZFILL`, or a predicate), which the microbenchmark's 16-byte copies, counted one each, do
    not. The forms come from the SASS kept beside the run (ldgsts_forms.json, written by fidelity.py on the GPU
    machine)."""
    table, mismatches = fidelity_table(RUN)
    compared = {(r["kernel"], r["metric"]): r for r in table if r["ncu"] is not None and r["match"] is not None}
    assert mismatches == 0 and all(r["match"] for r in compared.values())
    for kernel in ("zero_fill_vectors", "sourced_vectors"):
        assert compared[kernel, "shared ld instructions"]["ncu"] == 2 * BLOCKS
    for kernel, requests, sectors in (
        ("zero_fill_words", 2 * BLOCKS - 1, 21),
        ("zero_fill_vectors", 2 * BLOCKS - 1, 70),
        ("sourced_vectors", 2 * BLOCKS, 128),
    ):
        assert compared[kernel, "global ld requests"]["ncu"] == requests
        assert compared[kernel, "global ld sectors"]["ncu"] == sectors
        assert compared[kernel, "cp.async instructions"]["ncu"] == 2 * BLOCKS


def test_the_forms_come_from_nvdisasm_or_stay_underived(tmp_path):
    """A copy of the run without ldgsts_forms.json: with nvdisasm (on PATH or from the nvidia wheel) fidelity.py
    reads the forms off the CUBIN and writes the same file the GPU machine wrote; without it those two counts are
    left underived, and no file is written."""
    from reuselens.analyzer.lineinfo.sass import find_nvdisasm

    run = tmp_path / "zero_fill"
    shutil.copytree(RUN, run, ignore=shutil.ignore_patterns("ldgsts_forms.json"))
    table, mismatches = fidelity_table(run)
    underived = {(r["kernel"], r["metric"]) for r in table if r["verdict"] == "needs the SASS"}
    assert mismatches == 0
    if find_nvdisasm():
        assert not underived
        written = json.loads((run / "ldgsts_forms.json").read_text())
        assert written == json.loads((RUN / "ldgsts_forms.json").read_text())
    else:
        wide = {("zero_fill_vectors", "shared ld instructions"), ("sourced_vectors", "shared ld instructions")}
        assert underived == wide
        assert not (run / "ldgsts_forms.json").exists()


@pytest.mark.parametrize(
    "sass, zero_fill",
    [
        # tests/gpu/zero_fill.cu and tests/gpu/microbench.cu on sm_90 (session 19, call 1 and 2)
        ("LDGSTS.E.BYPASS.128.ZFILL [R7], desc[UR6][R4.64], P1 ;", True),
        ("LDGSTS.E.BYPASS.128 [R7], desc[UR4][R4.64], !P0 ;", True),
        ("LDGSTS.E [R7], desc[UR4][R4.64], !P0 ;", True),
        ("LDGSTS.E.BYPASS.128 [R7], desc[UR4][R2.64] ;", False),
        ("@!P2 LDGSTS.E.BYPASS.128 [R7+0x100], desc[UR4][R2.64+0x10] ;", False),
    ],
)
def test_the_zero_fill_operand_is_read_off_the_sass(sass, zero_fill):
    spec = importlib.util.spec_from_file_location("fidelity", REPO / "benchmarks/fidelity.py")
    fidelity = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fidelity)
    assert fidelity.has_zero_fill_operand(sass) is zero_fill


@pytest.mark.parametrize("workers", [1, 3])
def test_the_engine_counts_an_instruction_per_half_and_a_request_per_half_with_a_lane(workers):
    from reuselens.analyzer.replay import replay_run

    result = replay_run(RUN, workers=workers)
    requests_and_sectors = []
    for kernel in result["kernels"]:
        (node,) = [n for n in kernel["nodes"] if n["space"] == "global" and n["async_copy"]]
        assert node["executions"] == 2 * BLOCKS
        requests_and_sectors.append(
            (sum(count for _, count in node["sectors"]), sum(value * count for value, count in node["sectors"]))
        )
        # each element is read once per kernel: cold misses only
        assert {edge["label"] for edge in kernel["edges"] if edge["from"] == node["id"]} == {"cold"}
    assert sorted(requests_and_sectors) == [(2 * BLOCKS - 1, 21), (2 * BLOCKS - 1, 70), (2 * BLOCKS, 128)]


def test_findings_predict_requests_from_the_halves_with_a_lane():
    """A finding that removes a cp.async's global half predicts the requests ncu would lose: its halves with a lane,
    not its executions (a half whose lanes were all zero fills is no request); a node from a result without its
    sector distribution keeps its executions."""
    from reuselens.analyzer.patterns.finding import predicted_removal_plain
    from reuselens.analyzer.patterns.view import Node
    from reuselens.analyzer.replay import replay_run

    kernel = replay_run(RUN, workers=1)["kernels"][0]
    raw = next(n for n in kernel["nodes"] if n["space"] == "global" and n["async_copy"])
    node = Node(raw["id"], raw)
    assert node.executions == 2 * BLOCKS and node.requests == 2 * BLOCKS - 1
    assert predicted_removal_plain(node, 1.0)["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == 2 * BLOCKS - 1
    assert Node(raw["id"], {k: v for k, v in raw.items() if k != "sectors"}).requests == 2 * BLOCKS
