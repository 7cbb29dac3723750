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
    assert doc["format"] == "reuselens-object-touches" and doc["version"] == 1
    touches = {e["launch"]: [(t["address"], t["read"], t["write"]) for t in e["touches"]] for e in doc["launches"]}
    assert touches == {
        0: [(A, True, False), (B, False, True)],
        1: [(A, True, True), (C, True, True)],
        2: [],
        3: [(A, True, False), (B, True, False), (C, True, False)],
    }


def test_an_allocation_freed_during_a_launch_keeps_its_touches():
    doc = run_launches(1, [[mem(0, warp_addrs(B), access=WRITE)]], frees_after={0: [B]})
    assert doc["launches"][0]["touches"] == [{"address": B, "read": False, "write": True}]


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
