"""Replay of runs recorded on the H200 (tests/data/runs, committed by the collector) against ground truth:
Nsight Compute counters of the same launches (paper 5.1, "Cross-validation against hardware counters") and
the hand-derived labels of the microbenchmarks (tests/gpu/microbench.cu)."""

from __future__ import annotations

import csv
import io
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from reuselens.analyzer.replay import replay_run

RUNS = Path(__file__).resolve().parents[1] / "data" / "runs"
MICRO = RUNS / "microbench"
pytestmark = pytest.mark.skipif(
    not (MICRO / "ncu.csv").exists(), reason="no recorded microbench run in tests/data/runs"
)


@pytest.fixture(scope="module")
def micro():
    out = replay_run(MICRO, workers=2)
    return {launch: k for k in out["kernels"] for launch in k["launches"]}


def ncu_counters() -> dict[int, dict[str, float]]:
    text = "".join(line for line in (MICRO / "ncu.csv").read_text().splitlines(True) if line.startswith('"'))
    counters: dict[int, dict[str, float]] = defaultdict(dict)
    for row in csv.DictReader(io.StringIO(text)):
        counters[int(row["ID"])][row["Metric Name"]] = float(row["Metric Value"].replace(",", "") or 0)
    return counters


def total(kernel, space, kind, field, *, with_async=True):
    return sum(
        v * c
        for n in kernel["nodes"][1:]
        if n["space"] == space and n["type"] == kind and (with_async or not n["async_copy"])
        for v, c in n[field]
    ) / len(kernel["launches"])


NCU = ncu_counters() if (MICRO / "ncu.csv").exists() else {}


@pytest.mark.parametrize("launch", sorted(NCU))
def test_sectors_and_wavefronts_equal_nsight_compute(micro, launch):
    # GIVEN the same launch profiled by the collector and by ncu; THEN our per-instance counts sum to the
    # hardware counters exactly. The shared half of cp.async (LDGSTS) is not an op_st wavefront for ncu.
    k, m = micro[launch], NCU[launch]
    assert total(k, "global", "read", "sectors") == m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]
    assert total(k, "global", "write", "sectors") == m["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"]
    assert total(k, "shared", "read", "wavefronts") == m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"]
    assert (
        total(k, "shared", "write", "wavefronts", with_async=False)
        == m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"]
    )


def dominant_labels(kernel):
    out = []
    for n in kernel["nodes"][1:]:
        by = Counter()
        for e in kernel["edges"]:
            if e["from"] == n["id"]:
                by[e["label"]] += e["bytes"]
        out.append((n["type"], by.most_common(1)[0][0]))
    return out


def test_listing2_microbenchmark_labels(micro):
    # td_levels (microbench.cu): one load per Topological Distance level, in program order, then the store
    (k,) = {id(k): k for k in micro.values() if k["mangled"] == "_Z9td_levelsPKfPf"}.values()
    assert dominant_labels(k) == [
        ("read", "cold"),
        ("read", "thread"),
        ("read", "warp_same_inst"),
        ("read", "warp_diff_inst"),
        ("read", "block"),
        ("read", "grid"),
        ("write", "cold"),
    ]


def test_consumer_sees_producer_as_prior_kernel(micro):
    (k,) = {id(k): k for k in micro.values() if k["mangled"] == "_Z8consumerPKfPf"}.values()
    priors = {e["prior_kernel"]["kernel"] for e in k["edges"] if e["prior_kernel"]}
    assert "_Z8producerPf" in priors


def test_faulted_launch_is_partial():
    out = replay_run(RUNS / "kernel_fault", workers=1)
    bad = [k for k in out["kernels"] if k["partial_launches"]]
    assert [k["mangled"] for k in bad] == ["_Z10bad_kernelPf"]
    assert [p["launch"] for p in out["partial"]] == bad[0]["partial_launches"]
