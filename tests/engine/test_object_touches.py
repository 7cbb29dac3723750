"""Which allocations each launch read and wrote (docs/memory.md, "Object touches"), and the engine's cached
shadow page after an allocation is freed and another one takes its address."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from engine_records import ATOMIC, READ, WRITE, mem, records, warp_addrs

from reuselens.analyzer import replay

A, B, C = 0x7F0000000000, 0x7F0000100000, 0x7F0000200000


def run_launches(workers: int, launches, frees_after: dict[int, list[int]] | None = None, allocs=None):
    engine = replay._engine_module().Engine(workers=workers, shadow_budget_bytes=1 << 30, split_configurations=False)
    for address, size in allocs or [(A, 4096), (B, 4096), (C, 4096)]:
        engine.add_allocation(address, size)
    for launch_id, recs in enumerate(launches):
        engine.begin_launch(launch_id, 0, [1, 1, 1], [32, 1, 1], 0)
        engine.consume(np.ascontiguousarray(records(recs)))
        for address in (frees_after or {}).get(launch_id, []):
            engine.free_allocation(address)  # freed while the launch is still open
        engine.end_launch(True)
    return json.loads(engine.object_touches_json())


@pytest.mark.parametrize("workers", [1, 3])
def test_each_launch_lists_the_allocations_it_read_and_wrote(workers):
    doc = run_launches(
        workers,
        [
            [mem(0, warp_addrs(A)), mem(16, warp_addrs(B), access=WRITE)],
            [mem(0, [A + 8] * 32), mem(16, warp_addrs(A + 128), access=WRITE), mem(32, {0: C}, access=ATOMIC)],
            [mem(0, warp_addrs(0x1000, stride=4096))],  # outside every allocation: no object touched
            [mem(0, {0: A, 1: B + 4, 2: C + 8}, access=READ)],  # a gather over three objects
        ],
    )
    assert doc["format"] == "reuselens-object-touches" and doc["version"] == 2
    touches = {e["launch"]: [(t["address"], t["read"], t["write"]) for t in e["touches"]] for e in doc["launches"]}
    assert touches == {
        0: [(A, True, False), (B, False, True)],
        1: [(A, True, True), (C, True, True)],
        2: [],
        3: [(A, True, False), (B, True, False), (C, True, False)],
    }


def test_an_allocation_freed_during_a_launch_keeps_its_touches():
    doc = run_launches(1, [[mem(0, warp_addrs(B), access=WRITE)]], frees_after={0: [B]})
    assert doc["launches"][0]["touches"] == [{"address": B, "read": False, "write": True, "slices": 1}]


@pytest.mark.parametrize("workers", [1, 3])
def test_per_object_slices_accesses_and_touched_bytes(workers):
    # GIVEN a 64 KiB object (64 slices of 1 KiB) whose launches each touch another quarter, some elements often
    size, quarter = 64 << 10, 16 << 10
    launches = []
    for q in range(4):
        base = A + q * quarter
        recs = [mem(0, warp_addrs(base + k * 128)) for k in range(quarter // 128)]  # the whole quarter, once
        if q == 3:
            recs += [mem(16, warp_addrs(base))] * 20  # its first 128 bytes read 20 more times: a hot slice
        launches.append(recs)
    doc = run_launches(workers, launches, allocs=[(A, size), (B, 8192)])
    # THEN each launch's touch names the 16 slices of its quarter
    masks = [e["touches"][0]["slices"] for e in doc["launches"]]
    assert masks == [0xFFFF << (16 * q) for q in range(4)]
    # AND the objects, in allocation order, with exact touched bytes and per-slice lane-granule accesses
    obj, untouched = doc["objects"]
    assert (obj["address"], obj["size"], obj["slice_bytes"], obj["touched_bytes"]) == (A, size, 1024, size)
    assert obj["slice_accesses"] == [256] * 48 + [256 + 20 * 32] + [256] * 15
    assert (untouched["address"], untouched["touched_bytes"], untouched["slice_bytes"]) == (B, 0, 1024)
    assert untouched["slice_accesses"] == [0] * 8


def replay_one_launch(workers: int, allocation: tuple[int, int], recs) -> tuple[dict, dict]:
    """The object touches and the engine's stats after one launch of `recs` with one allocation."""
    engine = replay._engine_module().Engine(workers=workers, shadow_budget_bytes=1 << 30, split_configurations=False)
    engine.add_allocation(*allocation)
    engine.begin_launch(0, 0, [1, 1, 1], [32, 1, 1], 0)
    engine.consume(np.ascontiguousarray(records(recs)))
    engine.end_launch(True)
    return json.loads(engine.object_touches_json()), engine.stats()


# An allocation 512 bytes into a 1 KiB chunk, as cudaMalloc places one behind a smaller allocation: the object's
# shadow pages and slices (counted from its base) straddle the engine's chunks (absolute 1 KiB), so a coalesced
# warp within one chunk may cross a shadow page boundary (docs/engine.md, "Per-lane cost").
UNALIGNED = B + 512


@pytest.mark.parametrize("workers", [1, 3])
def test_coalesced_records_of_an_object_not_1_kib_aligned_count_in_their_slices(workers):
    # GIVEN a 128 KiB object (64 slices of 2 KiB, two shadow pages each) read by warps starting every 64 bytes,
    # so in one page, across a page boundary inside a slice, across a slice boundary, or across a chunk boundary
    size = 128 << 10
    starts = range(0, size - 128 + 1, 64)
    recs = [mem(0, warp_addrs(UNALIGNED + s)) for s in starts]
    recs += [mem(16, warp_addrs(UNALIGNED + s), access=WRITE) for s in starts[::3]]
    doc, stats = replay_one_launch(workers, (UNALIGNED, size), recs)
    (obj,) = doc["objects"]
    # THEN every lane counts in the slice of its own word, every word once in the touched bytes
    expected = [0] * 64
    for s in list(starts) + list(starts[::3]):
        for lane in range(32):
            expected[(s + 4 * lane) // 2048] += 1
    assert obj["slice_bytes"] == 2048 and obj["slice_accesses"] == expected
    assert obj["touched_bytes"] == size
    assert stats["shadow_bytes"] == 128 * 4096  # 4 KiB of entries per KiB of data, every page once


@pytest.mark.parametrize("workers", [1, 3])
def test_a_warp_across_two_shadow_pages_charges_both(workers):
    # GIVEN one coalesced warp over bytes 960..1087 of the object: one chunk, the object's first two shadow pages
    doc, stats = replay_one_launch(workers, (UNALIGNED, 128 << 10), [mem(0, warp_addrs(UNALIGNED + 960))])
    # THEN both pages are charged, as a lane-by-lane walk charges them, and the 128 bytes are touched in slice 0
    assert stats["shadow_bytes"] == 2 * 4096
    (obj,) = doc["objects"]
    assert obj["touched_bytes"] == 128 and obj["slice_accesses"] == [32] + [0] * 63


def test_touched_bytes_count_each_4_byte_word_once_and_stop_at_the_object():
    # 10 bytes allocated, 3 lanes on words 0 and 2, one 1-byte access on word 0 again: 8 bytes touched
    doc = run_launches(1, [[mem(0, {0: A, 1: A + 8, 2: A + 8}), mem(4, {0: A + 1}, size=1)]], allocs=[(A, 10)])
    (obj,) = doc["objects"]
    assert obj["touched_bytes"] == 8 and obj["slice_accesses"] == [4]


def test_a_freed_object_keeps_its_summary_and_a_reused_address_gets_its_own():
    doc = run_launches(1, [[mem(0, warp_addrs(A))], [mem(0, {0: A})]], frees_after={0: [A]}, allocs=[(A, 4096)])
    # the engine knew one allocation at A, freed during launch 0; the touches of launch 1 hit no known object
    assert [(o["address"], o["touched_bytes"]) for o in doc["objects"]] == [(A, 128)]
    assert doc["launches"][1]["touches"] == []


def test_a_new_allocation_at_a_freed_address_gets_a_shadow_of_its_own():
    # The worker cached the freed allocation's shadow page; the next launch at the same address must not use that
    # unmapped page (a crash, or writes into whatever the allocator put there since) but the new allocation's
    # shadow: its page is charged, and the access is a cold miss with no earlier kernel.
    code = textwrap.dedent(
        f"""
        import json, sys
        import numpy as np
        sys.path.insert(0, {str(__import__("pathlib").Path(__file__).parent)!r})
        from engine_records import WRITE, mem, records, warp_addrs
        from reuselens.analyzer import replay
        e = replay._engine_module().Engine(workers=1, shadow_budget_bytes=1 << 34, split_configurations=False)
        e.add_allocation({A}, 1 << 20)
        e.begin_launch(0, 0, [1, 1, 1], [32, 1, 1], 0)
        e.consume(np.ascontiguousarray(records([mem(0, warp_addrs({A}), access=WRITE)])))
        e.end_launch(True)
        e.free_allocation({A})
        e.add_allocation({A}, 1 << 33)  # larger: its shadow cannot reuse the old mapping
        e.begin_launch(1, 1, [1, 1, 1], [32, 1, 1], 0)
        e.consume(np.ascontiguousarray(records([mem(0, warp_addrs({A}), fid=1)])))
        e.end_launch(True)
        print(json.dumps({{"result": json.loads(e.to_json()), "shadow_bytes": e.stats()["shadow_bytes"]}}))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    result = out["result"]
    # the new allocation's shadow page was committed and charged (a stale cached page skipped both)
    assert out["shadow_bytes"] == 4096
    second = next(k for k in result["kernels"] if k["kernel_function_id"] == 1)
    (edge,) = [e for e in second["edges"] if e["accesses"]]
    assert edge["label"] == "cold" and edge.get("prior_kernel") is None, edge


@pytest.mark.parametrize("fixture", ["microbench", "pattern_suite"])
def test_profiles_of_recorded_gpu_runs_agree_with_their_traces(tmp_path, fixture):
    # GIVEN a run recorded on the H200 (traces + allocations, some addresses reused), replayed through the engine
    from pathlib import Path

    from reuselens.analyzer.replay import read_trace
    from reuselens.analyzer.rundir import open_run

    run_dir = Path(__file__).resolve().parents[1] / "data" / "runs" / fixture
    touches_path = tmp_path / "object_touches.json"
    replay.replay_run(run_dir, workers=2, object_touches_to=touches_path)
    objects = json.loads(touches_path.read_text())["objects"]
    manifest = open_run(run_dir).manifest
    allocations = [a for a in manifest["allocations"] if a["size"]]
    # the engine's objects are the run's allocations, in allocation order
    assert [(o["address"], o["size"]) for o in objects] == [(a["address"], a["size"]) for a in allocations]
    expected = [np.zeros(len(o["slice_accesses"]), dtype=np.int64) for o in objects]
    touched: list[set[int]] = [set() for _ in objects]
    for launch in manifest["launches"]:
        if not launch.get("trace"):
            continue
        live = [
            i
            for i, a in enumerate(allocations)
            if a["allocated_before_launch"] <= launch["id"]
            and (a["freed_after_launch"] is None or launch["id"] < a["freed_after_launch"])
        ]
        recs = read_trace(run_dir / launch["trace"]).records
        glob = recs[(recs["type"] == 1) & (recs["space"] == 1)]
        lanes = (glob["active_mask"][:, None] >> np.arange(32, dtype=np.uint32)) & 1
        for row, lane in zip(*np.nonzero(lanes)):
            address = int(glob["addr"][row, lane])
            for k in range((int(glob["size"][row]) + 3) // 4):
                g = (address >> 2) + k
                for i in live:  # THEN every lane-granule inside an object counts in its slice
                    o = objects[i]
                    first = o["address"] >> 2
                    if first <= g <= (o["address"] + o["size"] - 1) >> 2:
                        slot = min(len(o["slice_accesses"]) - 1, ((g - first) << 2) // o["slice_bytes"])
                        expected[i][slot] += 1
                        touched[i].add(g)
    assert any(sum(o["slice_accesses"]) for o in objects)
    for i, o in enumerate(objects):
        assert o["slice_accesses"] == expected[i].tolist(), (i, hex(o["address"]))
        assert o["touched_bytes"] == min(o["size"], 4 * len(touched[i])), (i, hex(o["address"]))
