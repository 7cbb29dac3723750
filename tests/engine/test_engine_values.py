"""Value mode (docs/engine.md, "Value redundancy"; docs/trace-format.md, "Value companions"): the engine against a
sequential model of LoadSpy's redundancy (seeds/001) over randomised traces whose memory records carry value
companions, for any worker count and any cut of the records into consume() calls; and what value mode must leave
alone: every other count of a run, and the companions of a run analysed without it."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from engine_records import MEM, READ, SHARED, WRITE, mem, records
from engine_reference import Reference, engine_edges
from test_engine_determinism import A, random_trace

from reuselens.analyzer.replay import RECORD_DTYPE, analyze_records

VALUES, FLAG_VALUES = 4, 0x8
LAUNCH = {"id": 0, "function_id": 0, "grid": [12, 1, 1], "block": [128, 1, 1]}


# Floats near one another, for approximate redundancy: within 1% of 1.0 (1.004, 0.995), beyond it (1.02), zero,
# a negative, infinity and NaN (never approximately equal to anything).
NEAR_FLOATS = [1.0, 1.004, 0.995, 1.02, 0.0, -1.0, float("inf"), float("nan")]


def float_bits(value: float, size: int) -> int:
    return (
        struct.unpack("<I", struct.pack("<f", value))[0]
        if size <= 4
        else struct.unpack("<Q", struct.pack("<d", value))[0]
    )


def random_values(recs: np.ndarray, seed: int, floats: bool = False) -> dict[int, tuple[int, int, list[int]]]:
    """Per memory record: (lanes with a value, silent store lanes, 32 values) as the value patch writes them. Values
    come from a few small numbers, so that equal values are common (`floats`: the bits of NEAR_FLOATS at the
    record's width); atomics get none (the Sanitizer gives no operand), and now and then a lane goes without one."""
    rng = np.random.default_rng(seed)
    out = {}
    for i in np.flatnonzero(recs["type"] == MEM):
        access = int(recs["access"][i])
        mask = int(recs["active_mask"][i]) & int(rng.integers(0, 2**32)) | (
            int(recs["active_mask"][i]) if rng.random() < 0.7 else 0
        )
        if access == READ | WRITE:
            mask = 0
        silent = mask & int(rng.integers(0, 2**32)) if access == WRITE else 0
        if floats:
            vals = [float_bits(float(v), int(recs["size"][i])) for v in rng.choice(NEAR_FLOATS, 32)]
        else:
            vals = [int(v) for v in rng.choice([0, 1, 2, 0x1_0000_0002], 32)]
        out[int(i)] = (mask, silent, [v if (mask >> lane) & 1 else 0 for lane, v in enumerate(vals)])
    return out


UNIFORM = 0x1  # companion flag: one value for all its lanes, in addr[0]


def with_companions(
    recs: np.ndarray, values: dict, seed: int = 0, pads: float = 0.0, compact: bool = False
) -> np.ndarray:
    """The trace the value patch writes: each memory record of `values` flagged and followed by its companion,
    and with probability `pads` a padding record (a companion of no lanes) before a record. `compact`: a companion
    whose lanes hold one value is written as the patch writes it, flagged UNIFORM with the value in addr[0] and
    garbage in the other slots (the patch leaves them as they were)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i, r in enumerate(recs):
        if rng.random() < pads:
            rows.append((VALUES, 0, 0, 0, 0, 0, 0, 0, 0, 0, [0] * 32))
        row = r.copy()
        if i in values:
            row["flags"] |= FLAG_VALUES
        rows.append(row)
        if i in values:
            mask, silent, vals = values[i]
            lanes = [vals[lane] for lane in range(32) if (mask >> lane) & 1]
            flags = 0
            if compact and lanes and len(set(lanes)) == 1:
                flags, vals = UNIFORM, [lanes[0]] + [int(v) for v in rng.integers(0, 2**63, 31)]
            rows.append(
                (VALUES, r["space"], r["access"], flags, r["size"], r["warp"], 0, mask, silent, r["block"], vals)
            )
    out = np.zeros(len(rows), dtype=RECORD_DTYPE)
    for j, row in enumerate(rows):
        out[j] = row
    return out


def analyse(trace, workers=1, chunk=1 << 16, values=True, launches=None, value_approx=0.0):
    return analyze_records(
        launches or [(LAUNCH, trace)],
        workers=workers,
        allocations=[(A, 1 << 20)],
        values=values,
        chunk_records=chunk,
        value_approx=value_approx,
    )


def value_edges(kernel: dict) -> dict:
    pcs = {n["id"]: (n["function_id"], n["pc"]) for n in kernel["nodes"] if n["id"]}
    out = {}
    for e in kernel["edges"]:
        if "value_loads" not in e:
            continue
        p = e["prior_kernel"]
        prior = (p["kernel_function_id"], (p["function_id"], p["pc"])) if p else None
        out[(pcs[e["from"]], pcs.get(e["to"]), e["label"], prior)] = [
            e["value_loads"],
            e["same_value"],
            e.get("approx_value", 0),
        ]
    return out


def test_value_companions_need_value_mode():
    recs = records([mem(0x10, [A + 4 * i for i in range(32)])])
    trace = with_companions(recs, {0: (0xFFFFFFFF, 0, list(range(32)))})
    with pytest.raises(Exception, match="value companion .* without value mode"):
        analyse(trace, values=False)


def test_value_mode_changes_no_other_count():
    recs = random_trace(41, n=1500)
    values = random_values(recs, 41)
    plain = analyse(recs, workers=2, values=False)["kernels"][0]
    valued = analyse(with_companions(recs, values, seed=1, pads=0.05), workers=2)["kernels"][0]
    assert engine_edges(valued) == engine_edges(plain)
    strip = lambda nodes: [{k: v for k, v in n.items() if k != "values"} for n in nodes]  # noqa: E731
    assert strip(valued["nodes"]) == strip(plain["nodes"])
    assert valued["records"] == plain["records"] == len(recs)
    assert any("values" in n for n in valued["nodes"])


def test_a_trace_without_companions_gives_the_same_result_in_value_mode():
    recs = random_trace(42, n=800)
    assert analyse(recs, values=True)["kernels"] == analyse(recs, values=False)["kernels"]


def value_nodes(kernel: dict) -> dict:
    return {(n["function_id"], n["pc"]): n["values"] for n in kernel["nodes"] if "values" in n}


def model_value_nodes(recs: np.ndarray, values: dict, silent: dict) -> dict:
    """Per PC what the companions say, execution by execution (docs/engine.md, "Value redundancy"); the silent
    store lanes as the reference model counted them (`silent`: Reference.silent of the launch)."""
    out: dict = {}
    for i, (mask, _silent, vals) in values.items():
        r = recs[i]
        mask &= int(r["active_mask"])
        if not mask:
            continue
        s = out.setdefault(
            (int(r["function_id"]), int(r["pc"])), dict.fromkeys(("lanes", "zero", "silent", "uniform", "spatial"), 0)
        )
        lanes = [lane for lane in range(32) if (mask >> lane) & 1]
        s["lanes"] += len(lanes)
        s["zero"] += sum(vals[lane] == 0 for lane in lanes)
        s["silent"] = silent.get((int(r["function_id"]), int(r["pc"])), 0)
        s["uniform"] += len(lanes) >= 2 and len({vals[lane] for lane in lanes}) == 1
        size = int(r["size"])
        s["spatial"] += sum(
            1
            for lane in lanes
            if lane > 0
            and (mask >> (lane - 1)) & 1
            and int(r["addr"][lane - 1]) + size == int(r["addr"][lane])
            and vals[lane - 1] == vals[lane]
        )
    return out


@pytest.mark.parametrize("seed", [51, 52, 53])
@pytest.mark.parametrize("workers", [1, 3])
@pytest.mark.parametrize("approx", [0.0, 0.01])
def test_value_redundancy_matches_the_model(seed, workers, approx):
    """Exact redundancy on small integers; with `approx`, on floats near one another, approximate too."""
    first, second = random_trace(seed, n=1500), random_trace(seed + 100, n=1500)
    second["function_id"] = 1  # another kernel: loads whose granule an earlier launch loaded
    floats = approx > 0
    first_values, second_values = random_values(first, seed, floats), random_values(second, seed + 100, floats)
    launches = [
        (LAUNCH, with_companions(first, first_values, seed, pads=0.02)),
        ({**LAUNCH, "id": 1, "function_id": 1}, with_companions(second, second_values, seed + 1, pads=0.02)),
    ]
    out = analyse(None, workers=workers, launches=launches, value_approx=approx)
    ref = Reference(value_approx=approx)
    ref.run_launch(0, 0, 128, first, first_values)
    ref.run_launch(1, 1, 128, second, second_values)
    for i, (kernel, recs, values) in enumerate(zip(out["kernels"], (first, second), (first_values, second_values))):
        expected = {k: v for k, v in ref.value_edges[i].items() if v[0]}
        assert value_edges(kernel) == expected
        assert value_nodes(kernel) == model_value_nodes(recs, values, ref.silent[i])
    if floats:  # approximate matches of both widths occurred, and exact ones too
        assert sum(v[2] for v in ref.value_edges[0].values()) > 0 and sum(v[1] for v in ref.value_edges[0].values())
    labels = {key[2] for key in ref.value_edges[0]} | {"prior" for key in ref.value_edges[1] if key[3]}
    assert {"thread", "warp_same_inst", "block", "grid", "prior"} <= labels  # every kind of reuse was compared
    assert any(v[1] for v in ref.value_edges[0].values()) and any(v[0] > v[1] for v in ref.value_edges[0].values())


@pytest.mark.parametrize("workers", [1, 3])
def test_uniform_companions_read_as_their_expansion(workers):
    """A companion written compactly (one value for all its lanes) counts exactly as the 32 copies would, whatever
    the cut into consume() calls (a uniform companion held over to the next call included)."""
    recs = random_trace(81, n=1500)
    values = random_values(recs, 81)
    rng = np.random.default_rng(82)
    for i, (mask, silent, _vals) in list(values.items()):
        if rng.random() < 0.5:  # one value for the whole warp: a broadcast, a flag, zeros
            one = int(rng.choice([0, 7]))
            values[i] = (mask, silent, [one if (mask >> lane) & 1 else 0 for lane in range(32)])
    full = with_companions(recs, values, seed=4, pads=0.02)
    compact = with_companions(recs, values, seed=4, pads=0.02, compact=True)
    assert (compact["flags"][compact["type"] == VALUES] == UNIFORM).sum() > 300
    expected = analyse(full, workers=workers)["kernels"]
    for chunk in (1, 5, 333, 1 << 16):
        assert analyse(compact, workers=workers, chunk=chunk)["kernels"] == expected


@pytest.mark.parametrize("chunk", [1, 2, 7, 64, 5000])
def test_any_cut_into_consume_calls_gives_the_same_result(chunk):
    recs = random_trace(61, n=600)
    trace = with_companions(recs, random_values(recs, 61), seed=3, pads=0.05)
    assert analyse(trace, workers=2, chunk=chunk)["kernels"] == analyse(trace, workers=2)["kernels"]


def test_a_record_whose_companion_never_comes_keeps_its_counts():
    """A flagged record at the very end of a launch (a trace cut short after it) is replayed without values."""
    recs = records([mem(0x10, [A + 4 * i for i in range(32)]), mem(0x20, [A + 4 * i for i in range(32)])])
    trace = with_companions(recs, {0: (0xFFFFFFFF, 0, [7] * 32), 1: (0xFFFFFFFF, 0, [7] * 32)})[:-1]
    kernel = analyse(trace)["kernels"][0]
    assert kernel["records"] == 2
    # the first load's 32 values count (first touches: nothing to find again); the second's never came
    assert value_edges(kernel) == {((0, 0x10), None, "cold", None): [32, 0, 0]}
    assert value_nodes(kernel) == {(0, 0x10): {"lanes": 32, "zero": 0, "silent": 0, "uniform": 1, "spatial": 31}}


def test_loads_shared_memory_stores_and_silence():
    """A block loads a shared tile twice around two stores, one silent: the second load finds half its values
    again (those under the silent store), each against its own lane's earlier load."""
    tile = [4 * i for i in range(32)]
    loads = [10 + i for i in range(32)]
    rows = [
        mem(0x10, tile, space=SHARED, access=READ),
        mem(0x20, tile[:16] + [None] * 16, space=SHARED, access=WRITE),
        mem(0x20, [None] * 16 + tile[16:], space=SHARED, access=WRITE),
        mem(0x30, tile, space=SHARED, access=READ),
    ]
    recs = records(rows)
    values = {
        0: (0xFFFFFFFF, 0, loads),
        1: (0x0000FFFF, 0, [99] * 16 + [0] * 16),
        2: (0xFFFF0000, 0xFFFF0000, [0] * 16 + loads[16:]),
        3: (0xFFFFFFFF, 0, [99] * 16 + loads[16:]),
    }
    kernel = analyse(with_companions(recs, values))["kernels"][0]
    assert value_edges(kernel) == {
        ((0, 0x10), None, "cold", None): [32, 0, 0],
        ((0, 0x30), (0, 0x20), "thread", None): [32, 16, 0],
    }
    assert value_nodes(kernel)[(0, 0x20)]["silent"] == 16


@pytest.mark.parametrize("workers", [1, 3])
def test_per_object_value_counts_match_the_model(workers):
    """object_touches.json's value_loads / same_value of the allocation: every path (lane loop, coalesced closed
    form, broadcast) counts what the model counts."""
    import json

    from reuselens.analyzer.replay import _engine_module

    recs = random_trace(71, n=2000)
    values = random_values(recs, 71)
    engine = _engine_module().Engine(workers=workers, values=True)
    engine.add_allocation(A, 1 << 20)
    engine.begin_launch(0, 0, [12, 1, 1], [128, 1, 1], 0)
    trace = with_companions(recs, values, seed=5, pads=0.02)
    for start in range(0, len(trace), 333):
        engine.consume(np.ascontiguousarray(trace[start : start + 333]))
    engine.end_launch(True)
    ref = Reference(allocation=(A, 1 << 20))
    ref.run_launch(0, 0, 128, recs, values)
    (obj,) = [o for o in json.loads(engine.object_touches_json())["objects"] if o["address"] == A]
    assert [obj["value_loads"], obj["same_value"]] == ref.object_values
    assert ref.object_values[1] > 0
