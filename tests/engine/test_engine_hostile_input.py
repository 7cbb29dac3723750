"""Values no GPU produces, given to the engine: an allocation of 2^62 bytes, a 64 KiB shared access, a block of
2048 threads. Each ends in a result or in one clear error, never in a crash, a hang or quadratic time (issue
#20). What crashed the interpreter before runs in a child process, so that a crash fails one test only."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from engine_records import READ, SHARED, WRITE, mem, records, warp_addrs
from engine_reference import distributions, engine_distributions

from reuselens.analyzer import _engine
from reuselens.analyzer.replay import analyze_records

TOP = (1 << 64) - 1


def child(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300)


def test_allocation_too_large_to_map_is_tracked_like_memory_outside_allocations():
    """A 2^62-byte allocation overflowed the shadow's byte count: one page was mapped and then indexed far past
    its end (SIGSEGV, ASan heap-buffer-overflow in shadow.h). Such an allocation gets no direct shadow; its
    accesses have the labels they have without it (labels never depend on allocations)."""
    run = child("""
        import json
        import numpy as np
        from reuselens.analyzer import _engine
        from reuselens.analyzer.replay import RECORD_DTYPE

        def kernels(address, size):
            engine = _engine.Engine(workers=2)
            if size:
                engine.add_allocation(address, size)
            engine.begin_launch(0, 0, [1, 1, 1], [32, 1, 1])
            r = np.zeros(3, dtype=RECORD_DTYPE)
            r["type"], r["space"], r["size"], r["active_mask"] = 1, 1, 4, 0xFFFFFFFF
            r["access"] = [2, 1, 1]
            r["pc"] = [0, 16, 32]
            r["addr"] = address + (64 << 20) + np.arange(32, dtype=np.uint64) * 4
            engine.consume(r)
            engine.end_launch()
            return json.loads(engine.to_json())["kernels"]

        for address, size in [(0, 1 << 62), (0, 1 << 63), (0, (1 << 64) - 1), (1 << 63, 1 << 63)]:
            print(json.dumps([kernels(address, size), kernels(address, 0)]))
    """)
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stdout.splitlines()
    assert len(lines) == 4
    for line in lines:
        with_allocation, without = json.loads(line)
        assert with_allocation == without
        assert {e["label"] for e in with_allocation[0]["edges"]} == {"cold", "thread"}


def test_allocation_limits_and_overlaps_are_checked():
    engine = _engine.Engine(workers=1)
    with pytest.raises(
        RuntimeError, match="allocation at 0xfffffffffffffff0 of 17 bytes runs past the end of the 64-bit address space"
    ):
        engine.add_allocation(TOP - 15, 17)
    engine.add_allocation(TOP - 15, 16)  # ends on the last byte: fine
    engine.add_allocation(0, 1 << 62)  # too large to map: still known
    with pytest.raises(RuntimeError, match="overlaps an allocation"):
        engine.add_allocation(1 << 20, 4096)
    with pytest.raises(RuntimeError, match="overlaps an allocation"):
        engine.add_allocation(TOP - 4095, 4096)
    engine.free_allocation(0)
    engine.add_allocation(1 << 20, 4096)


@pytest.mark.parametrize(
    "block, shown",
    [
        ((2048, 1, 1), "2048x1x1"),
        ((0, 1, 1), "0x1x1"),
        ((32, 32, 2), "32x32x2"),
        ((1 << 31, 1 << 31, 4), "2147483648x2147483648x4"),
    ],
)
def test_block_size_outside_cuda_limits_is_rejected_and_leaves_the_engine_usable(block, shown):
    engine = _engine.Engine(workers=1)
    with pytest.raises(RuntimeError, match=f"launch 3: block of {shown} threads"):
        engine.begin_launch(3, 0, [1, 1, 1], list(block))
    engine.begin_launch(4, 0, [1, 1, 1], [32, 1, 1])
    engine.consume(records([mem(0, warp_addrs(1 << 20))]))
    engine.end_launch()
    assert json.loads(engine.to_json())["kernels"][0]["launches"] == [4]


def test_engine_refuses_every_call_after_a_failed_consume():
    """consume() may fail half-way through a batch; the figures after that would mix in a partial batch."""
    engine = _engine.Engine(workers=1)
    engine.begin_launch(0, 0, [1, 1, 1], [32, 1, 1])
    bad = records([mem(0, warp_addrs(1 << 20)), mem(16, warp_addrs(1 << 20))])
    bad["size"][1] = 0
    with pytest.raises(RuntimeError, match="record 1 of launch 0: access size 0"):
        engine.consume(bad)
    for call in (
        engine.end_launch,
        engine.to_json,
        lambda: engine.add_allocation(0, 16),
        lambda: engine.begin_launch(1, 0, [1, 1, 1], [32, 1, 1]),
    ):
        with pytest.raises(RuntimeError, match="engine unusable after an earlier error: record 1 of launch 0"):
            call()


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize(
    "flags, mask, said",
    [
        (0x20, 0x4, "handed over by the stride between its first and last lanes \\(flag 0x20\\) with fewer than two"),
        (0x20, 0x0, "handed over by the stride between its first and last lanes \\(flag 0x20\\) with fewer than two"),
        (0x10, 0x0, "handed over by its first lane's address \\(flag 0x10\\) with no active lane"),
    ],
)
def test_record_handed_over_by_addresses_it_lacks_is_named_not_a_crash(workers, flags, mask, said):
    """The engine queue hands a global record over by its first lane's address (RL_FLAG_ONE_ADDRESS) or by its first
    and last lanes' (RL_FLAG_ONE_STRIDE, the stride read back between them), only for two or more active lanes. Given
    to consume() with one lane, the stride's division by zero killed the process (SIGFPE); with none, the lane
    search read past the record (SIGSEGV). In a child: before the check, the crash took the interpreter down."""
    run = child(f"""
        import numpy as np
        from reuselens.analyzer import _engine
        from reuselens.analyzer.replay import RECORD_DTYPE

        engine = _engine.Engine(workers={workers})
        engine.begin_launch(0, 0, [1, 1, 1], [32, 1, 1])
        r = np.zeros(2, dtype=RECORD_DTYPE)
        r["type"], r["space"], r["size"], r["access"], r["pc"] = 1, 1, 4, 1, [0, 16]
        r["addr"] = (1 << 20) + np.arange(32, dtype=np.uint64) * 4
        r["active_mask"] = [0xFFFFFFFF, {mask}]
        r["flags"][1] = {flags}
        try:
            engine.consume(r)
        except RuntimeError as error:
            print(error)
    """)
    assert run.returncode == 0, run.stderr[-3000:]
    assert re.fullmatch(f"record 1 of launch 0: {said}.*\\n", run.stdout), run.stdout


def _shared(pc: int, size: int, addrs: list[int], mask: int = 0xFFFFFFFF, access: int = READ) -> tuple:
    return mem(
        pc, {lane: addrs[lane] for lane in range(32) if mask >> lane & 1}, space=SHARED, size=size, access=access
    )


def _wide_shared_records() -> np.ndarray:
    """Shared accesses of every size class, beyond the 16 bytes of ordinary loads (bulk copies carry sizes up
    to 65535): lanes apart by 4 B (overlapping footprints), by their size, by 128 B (one bank), all at one
    address, scattered and misaligned, partial warps."""
    rng = np.random.default_rng(20)
    lanes = np.arange(32)
    out = []
    for size in (1, 3, 4, 5, 8, 12, 16, 31, 33, 100, 127, 128, 129, 1000, 4096, 4097, 65535):
        patterns = [
            lanes * 4,
            lanes * size,
            lanes * 128,
            np.zeros(32, dtype=np.int64),
            rng.integers(0, 1 << 16, 32),
            lanes * size + 2,
        ]
        for i, offsets in enumerate(patterns):
            mask = 0xFFFFFFFF if i % 2 == 0 else int(rng.integers(1, 1 << 32))
            out.append(_shared(16 * len(out), size, [int(a) for a in offsets], mask, WRITE if i == 3 else READ))
    return records(out)


def test_wide_shared_accesses_match_the_reference_model():
    """Distinct words, wavefronts and their ideal (paper 3.2.2) of every shared record equal the plain
    definitions computed by the Python model, for every size and lane pattern."""
    recs = _wide_shared_records()
    out = analyze_records([({"id": 0, "function_id": 0, "grid": [1, 1, 1], "block": [32, 1, 1]}, recs)])
    expected = {pc: {k: dict(v) for k, v in d.items()} for pc, d in distributions(recs).items()}
    assert engine_distributions(out["kernels"][0]) == expected


def test_largest_shared_access_takes_linear_time():
    """One 288-byte record of size 65535 kept `reuselens analyze` busy for more than 40 s: its 32 x 16,385
    footprint words were insertion-sorted. It now takes milliseconds; 5 s leaves room for a loaded machine."""
    engine = _engine.Engine(workers=1)
    engine.begin_launch(0, 0, [1, 1, 1], [32, 1, 1])
    recs = records(
        [_shared(0, 65535, [lane * 4 for lane in range(32)]), _shared(16, 65535, [lane * 65536 for lane in range(32)])]
    )
    start = time.perf_counter()
    engine.consume(recs)
    elapsed = time.perf_counter() - start
    engine.end_launch()
    nodes = json.loads(engine.to_json())["kernels"][0]["nodes"]
    overlapping, apart = nodes[1], nodes[2]
    assert overlapping["addresses"] == [[16384 + 31, 1]]  # words 0 .. 16383 + 31, each lane's run shifted by one
    assert apart["addresses"] == [[32 * 16384, 1]]
    assert elapsed < 5, f"one record of size 65535 took {elapsed:.1f} s"


def test_huge_distribution_values_do_not_cost_memory_per_value():
    """Each PC's histograms were dense arrays indexed by value: a shared record of size 65535 with lanes 64 KiB
    apart has 524,288 distinct words, so 4 MiB per PC (and again per worker and in the merged kernel). 120 such
    PCs, a 35 KB trace, took about a GB; a few thousand, all of the machine."""
    run = child("""
        import json, resource
        import numpy as np
        from reuselens.analyzer import _engine
        from reuselens.analyzer.replay import RECORD_DTYPE

        pcs = 120
        r = np.zeros(pcs, dtype=RECORD_DTYPE)
        r["type"], r["space"], r["access"], r["size"], r["active_mask"] = 1, 2, 1, 65535, 0xFFFFFFFF
        r["pc"] = np.arange(pcs) * 16
        r["addr"] = np.arange(32, dtype=np.uint64) * 65536
        engine = _engine.Engine(workers=1)
        engine.begin_launch(0, 0, [1, 1, 1], [32, 1, 1])
        engine.consume(r[:1])  # the shadow pages these records share, and the engine's buffers
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        engine.consume(r[1:])
        engine.end_launch()
        nodes = json.loads(engine.to_json())["kernels"][0]["nodes"][1:]
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
        print(json.dumps([grown, len(nodes), nodes[0]["addresses"], nodes[0]["wavefronts"]]))
    """)
    assert run.returncode == 0, run.stderr[-3000:]
    grown_kib, count, addresses, wavefronts = json.loads(run.stdout)
    assert count == 120 and addresses == [[32 * 16384, 1]] and wavefronts == [[32 * 512, 1]]
    assert grown_kib < 100 << 10, f"{grown_kib >> 10} MiB for 120 PCs"


def test_shared_words_past_the_flat_shadow_match_the_reference_model():
    """Shared words past the block's flat shadow (1 MiB of offsets, more than any GPU has) live in a map, one node
    each, and two nodes made one after the other may lie back to back in memory. Session 26's closed forms took
    consecutive node addresses for consecutive words: a 20-byte footprint over such nodes read and overwrote the
    allocator's own bytes (`munmap_chunk(): invalid pointer`, found in review). Records on both sides of the limit,
    that one first, in a child process (a crash fails this test alone); the edges must be the Python model's."""
    run = child(f"""
        import json, sys
        import numpy as np
        sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})
        from engine_records import READ, SHARED, WRITE, mem, records
        from engine_reference import Reference, engine_edges
        from reuselens.analyzer.replay import analyze_records

        far = 4 << 20  # byte offset 4 MiB: word 2^20, in the map
        rows = [
            mem(0x10, [far + 400] + [None] * 31, space=SHARED, access=WRITE),
            mem(0x20, [far, far + 16] + [None] * 30, space=SHARED, access=WRITE),
            mem(0x40, [far, far] + [None] * 30, space=SHARED, access=READ, size=20),
        ]
        rng = np.random.default_rng(5)
        lanes = np.arange(32)
        for i in range(1200):  # lane groups sharing footprints, around the limit and past it
            size = int(rng.choice([4, 8, 16, 20]))
            start = int(rng.integers((1 << 20) - 4096, (1 << 20) + 8192)) // 4 * 4 if i % 3 else far + int(rng.integers(0, 2048)) * 4
            group = [lanes // 4, lanes % 4, lanes // 8, lanes][i % 4]
            addrs = [int(start + g * ((size + 3) // 4) * 4 * int(rng.integers(1, 3))) for g in group]
            mask = [a if rng.random() < 0.9 else None for a in addrs]
            rows.append(mem(0x100 + 16 * (i % 7), mask, space=SHARED, access=WRITE if i % 5 == 0 else READ, size=size))
        recs = records(rows)
        recs["warp"] = np.arange(len(recs)) % 4
        launch = {{"id": 0, "function_id": 0, "grid": [1, 1, 1], "block": [128, 1, 1]}}
        out = analyze_records([(launch, recs)], workers=1)
        ref = Reference()
        ref.run_launch(0, 0, 128, recs)
        print(json.dumps(engine_edges(out["kernels"][0]) == {{k: dict(v) for k, v in ref.edges[0].items()}}))
    """)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.split() == ["true"]
