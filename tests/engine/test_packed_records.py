"""Packed records (reuselens/packed_records.h, docs/trace-format.md "Packed records"): the forms the device patch
writes into the collector's buffers reproduce every record exactly, and the engine fed the packed stream
(Engine.consume_packed, the collector's path) gives the results it gives for the full records."""

from __future__ import annotations

import json
import random
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from engine_records import ATOMIC, BAR_WARP, SHARED, WRITE, barrier, block_exit, mem, records, warp_addrs
from packed import FULL, NO_ADDRESSES, PADDING, SLOT, STRIDED, forms, pack

from reuselens.analyzer import replay
from reuselens.analyzer.replay import RECORD_DTYPE, _engine_module, replay_run
from tests.native_build import COMPILER, NO_COMPILER, REPO, build

RUNS = Path(__file__).resolve().parents[1] / "data" / "runs"
VALUE_RUNS = Path(__file__).resolve().parents[1] / "data" / "value_runs"
E = _engine_module()


def shapes() -> np.ndarray:
    """One record of each shape the forms must tell apart, edge cases of the arithmetic included."""
    rng = random.Random(7)
    top = (1 << 64) - 1
    rows = [
        mem(0x10, warp_addrs(0x7F0000001000)),  # coalesced: one stride
        mem(0x20, [0x7F0000002000] * 32),  # broadcast: stride 0
        mem(0x30, warp_addrs(0x7F0000003000, stride=-8)),  # descending
        mem(0x40, {3: 0x1000, 9: 0x1030, 20: 0x1088}),  # partial mask, one stride (8 per lane)
        mem(0x50, {3: 0x1000, 9: 0x1031}),  # partial, no whole stride between the two lanes
        mem(0x60, {5: 0x4444}),  # one lane
        mem(0x70, [0x9000 + 4 * (i % 8) + 0x400 * (i // 8) for i in range(32)]),  # tile rows: groups of 8
        mem(0x80, [0xA000 + 16 * (i % 4) + 0x1000 * (i // 4) for i in range(32)], size=16),  # groups of 4
        mem(0x90, [0xB000 + 4 * (i % 16) - 0x80 * (i // 16) for i in range(32)]),  # groups of 16, going down
        mem(0xA0, [0xC000 + 4 * (i % 3) + 0x100 * (i // 3) for i in range(32)]),  # groups of 3: no form
        mem(0xB0, [rng.randrange(1 << 40) * 4 for _ in range(32)]),  # a gather
        mem(0xC0, [top - 4 * i for i in range(32)]),  # near the top of the address space
        mem(0xD0, [top - 3 + 4 * i & top for i in range(32)]),  # wrapping around it
        mem(0xE0, warp_addrs(0x100, stride=4, lanes=17), space=SHARED, access=WRITE),
        mem(0xF0, {0: 0, 1: 0}),  # addresses 0 (a zero-fill half): no addresses
        mem(0x100, [0x5000 + 4 * i for i in range(31)] + [0x5000]),  # one lane off the stride
        barrier(0x110),
        block_exit(lanes=0x0000FFFF),
    ]
    return records(rows)


def test_forms_are_the_cheapest_exact_ones():
    # GIVEN records of every shape; WHEN packed as the device patch packs them
    stream = pack(shapes())
    # THEN regular lanes take the strided form, barriers and exits the header alone, the rest full records
    s, f, n = STRIDED, FULL, NO_ADDRESSES
    assert forms(stream) == [s, s, s, s, f, s, s, s, s, f, f, s, s, s, n, f, n, n]


@pytest.mark.parametrize("padding", [0.0, 0.5])
def test_unpacking_gives_back_every_record_byte_for_byte(padding):
    recs = shapes()
    stream = pack(recs, padding=padding, seed=3)
    assert E.unpack_records(stream) == recs.tobytes()


def test_the_model_slot_size_is_the_engines():
    assert E.SLOT_BYTES == SLOT and 9 * SLOT == E.RECORD_BYTES


def test_full_records_are_a_packed_stream():
    # an array of full records is the packed stream of their full forms: the collector's older path
    recs = shapes()
    assert E.unpack_records(recs.tobytes()) == recs.tobytes()


def test_random_strided_records_round_trip():
    # GIVEN many random strided and grouped warps, masks and strides (wrapping included)
    rng = random.Random(11)
    rows = []
    for i in range(2000):
        base, stride = rng.randrange(1 << 64), rng.choice([0, 1, 4, 8, 16, -4, rng.randrange(1 << 64)])
        group = rng.choice([32, 32, 2, 4, 8, 16])
        outer = rng.randrange(1 << 64)
        mask = 0xFFFFFFFF if rng.random() < 0.5 else rng.randrange(1, 1 << 32)
        addrs = {
            lane: (base + stride * (lane % group) + outer * (lane // group)) & ((1 << 64) - 1)
            for lane in range(32)
            if mask >> lane & 1
        }
        rows.append(mem(16 * i, addrs))
    recs = records(rows)
    stream = pack(recs, padding=0.1, seed=i)
    # THEN most take two slots, and each comes back exactly
    assert forms(stream).count(STRIDED) > 1000
    assert E.unpack_records(stream) == recs.tobytes()


@pytest.mark.parametrize("group", [1, 2, 3, 5, 12, 31, 32])
@pytest.mark.parametrize("mask", [0xFFFFFFFF, 0x0F0F00F1, 0x80000001])
def test_every_group_the_format_allows_unpacks_by_its_formula(group, mask):
    # the patch writes groups of 2, 4, 8, 16 and 32 lanes; the format allows any group of 1-32 lanes
    base, stride, outer = (1 << 64) - 40, 12, (1 << 63) + 4096
    header = bytearray(records([mem(0x40, {i: 1 for i in range(32) if mask >> i & 1})]).tobytes()[:32])
    header[0] |= STRIDED << 5
    stream = bytes(header) + struct.pack("<QQQII", base, stride, outer, group, 0)
    full = np.frombuffer(E.unpack_records(stream), dtype=RECORD_DTYPE)[0]
    expected = [
        (base + stride * (i % group) + outer * (i // group)) % (1 << 64) if mask >> i & 1 else 0 for i in range(32)
    ]
    assert [int(a) for a in full["addr"]] == expected
    assert int(full["type"]) == 1 and int(full["active_mask"]) == mask


# trace_format.h: RL_FLAG_VALUES and what the engine queue sets on a record it hands over by some of its addresses
VALUES_FLAG, ONE_ADDRESS, ONE_STRIDE = 0x8, 0x10, 0x20
POISON = 0xA5A5A5A5A5A5A5A5  # what unpack_records(for_engine=True) leaves in every byte not written


def strided_lanes(rng: random.Random, n: int, *, base: int = 0x7F0000010000) -> list[tuple]:
    """Records whose lanes one stride gives, of every kind the engine queue may hand over by one or two addresses
    and of kinds it must not: broadcasts (stride 0), coalesced accesses (stride = size), strides of twice the size and
    of 4 KiB (a column walk) and descending ones, of 1-16 bytes, full,
    partial, gapped and one-lane masks, loads, stores, atomics, footprints across 1 KiB chunks, shared memory, a
    record with a value companion's flag, blocks and warps mixed."""
    rows = []
    for _ in range(n):
        size = rng.choice([4, 4, 4, 8, 16, 1, 2])
        stride = rng.choice([0, size, size, size * 2, 4096, -size])
        addr = base + 4 * rng.randrange(4096) + rng.choice([0, 0, 0, 1, 2])
        addr -= addr % size
        mask = rng.choice(
            [0xFFFFFFFF, 0xFFFFFFFF, 0x0000FFFF, 0xFFFF0000, 0x0FF00000, 0x80000001, 0x00F000F0, 1 << rng.randrange(32)]
        )
        rows.append(
            mem(
                0x1000 + 16 * rng.randrange(6),
                {lane: addr + stride * lane for lane in range(32) if mask >> lane & 1},
                size=size,
                access=rng.choice([1, 1, WRITE, ATOMIC]),
                space=SHARED if rng.random() < 0.1 else 1,
                flags=VALUES_FLAG if rng.random() < 0.05 else 0,
                block=rng.randrange(6),
                warp=rng.randrange(4),
            )
        )
    return rows


def handed_over_as(rec: np.void, form: int) -> int:
    """The flag the engine queue hands `rec` over with (trace_format.h), 0 when it hands it over whole."""
    mask, lanes, size = int(rec["active_mask"]), [int(a) for a in rec["addr"]], int(rec["size"])
    active = [i for i in range(32) if mask >> i & 1]
    if not (
        form == STRIDED  # (lanes all at address 0 come as a header alone, NO_ADDRESSES, and are unpacked whole)
        and int(rec["type"]) == 1
        and int(rec["space"]) == 1
        and not int(rec["flags"]) & VALUES_FLAG
        and len(active) >= 2
        and size >= 1
    ):
        return 0
    lo, hi = active[0], active[-1]
    stride, rest = divmod(lanes[hi] - lanes[lo], hi - lo)  # Python integers: a descending stride stays negative
    if rest or any(lanes[i] != lanes[lo] + stride * (i - lo) for i in active):
        return 0  # not one stride over the warp: the patch packs it in groups, or whole
    if stride == 0 and size <= 4:
        return ONE_ADDRESS
    return ONE_STRIDE if stride >= 0 and lanes[hi] + size - 1 < 1 << 64 else 0


def test_the_engine_is_handed_only_the_bytes_it_reads():
    # GIVEN records of every shape, broadcasts and coalesced accesses of every kind; WHEN unpacked as the engine
    # queue hands them over
    rows = [*strided_lanes(random.Random(5), 600), barrier(0x10, kind=BAR_WARP), *(tuple(r) for r in shapes())]
    recs = records(rows)
    stream = pack(recs)
    whole = np.frombuffer(E.unpack_records(stream), dtype=RECORD_DTYPE)
    handed = np.frombuffer(E.unpack_records(stream, for_engine=True), dtype=RECORD_DTYPE)
    assert whole.tobytes() == recs.tobytes()
    seen = {ONE_ADDRESS: 0, ONE_STRIDE: 0}
    for w, h, form in zip(whole, handed, forms(stream), strict=True):
        header = [f for f in RECORD_DTYPE.names if f not in ("addr", "flags")]
        assert [h[f] for f in header] == [w[f] for f in header]
        flag = handed_over_as(w, form)
        mask = int(w["active_mask"])
        lo, hi = (mask & -mask).bit_length() - 1, mask.bit_length() - 1
        if flag:
            # THEN a global broadcast of at most 4 bytes comes as its one address in its first active lane's slot,
            # any other record of one stride (not negative) over the warp as its first and last active lanes' ones
            seen[flag] += 1
            written = {lo} if flag == ONE_ADDRESS else {lo, hi}
            assert int(h["flags"]) == int(w["flags"]) | flag
            assert [int(a) for a in h["addr"]] == [int(w["addr"][i]) if i in written else POISON for i in range(32)]
        elif int(w["type"]) in (2, 3):
            # a barrier or an exit as its header alone
            assert int(h["flags"]) == int(w["flags"]) and all(int(a) == POISON for a in h["addr"])
        else:
            # and every other record whole
            assert h.tobytes() == w.tobytes()
    assert min(seen.values()) > 50


@pytest.mark.parametrize("workers", [1, 2, 3])
@pytest.mark.parametrize("values", [False, True], ids=["plain", "value-mode"])
def test_records_handed_over_by_some_addresses_give_the_results_of_whole_records(workers, values):
    # GIVEN batches of gathers, whose lanes fill every slot of the engine's unpacking buffer with other addresses,
    # then broadcasts and coalesced accesses of every kind in and out of an allocation, barriers between them
    rng = random.Random(workers)
    rows = []
    for _ in range(3):
        rows += [mem(0x2000, [0x7F0000010000 + 4 * rng.randrange(1 << 16) for _ in range(32)]) for _ in range(5000)]
        rows += strided_lanes(rng, 5000) + strided_lanes(rng, 500, base=0x5000000000)
        rows += [barrier(0x3000, block=b, warp=w) for b in range(6) for w in range(4)]
    recs = records(rows)
    # no companions follow these records: value mode changes only the engine's path
    recs["flags"] &= np.uint8(0xFF ^ VALUES_FLAG)

    def results(feed) -> str:
        engine = E.Engine(workers=workers, values=values)
        engine.add_allocation(0x7F0000000000, 1 << 24)
        engine.begin_launch(0, 0, [6, 1, 1], [128, 1, 1])
        feed(engine)
        engine.end_launch()
        result = json.loads(engine.to_json())
        for timing in ("consume_us", "phase_us", "phase_cpu_us"):  # wall times differ run to run
            result["stats"].pop(timing)
        return json.dumps(result, sort_keys=True)

    # WHEN fed packed, as the collector hands them over, and whole
    # THEN every result is the same
    whole = results(lambda e: e.consume(recs))
    assert results(lambda e: e.consume_packed(pack(recs))) == whole


def replayed(run: Path, feed_packed: bool, monkeypatch, *, workers: int) -> str:
    def packed_feed(engine, recs, path):
        # the packed stream cut at record bounds into uneven batches, as the collector's buffers cut it
        stream = pack(np.ascontiguousarray(recs), padding=0.05, seed=len(recs))
        rng, at, slot = random.Random(len(recs)), 0, 32
        while at < len(stream):
            size = rng.choice([1, 7, 300, 100000]) * slot
            end = min(len(stream), at + size)
            while end < len(stream) and not record_starts(stream, at, end):
                end += slot
            engine.consume_packed(stream[at:end])
            at = end

    with monkeypatch.context() as m:
        if feed_packed:
            m.setattr(replay, "_feed", packed_feed)
        result = replay_run(run, workers=workers)
    for timing in ("consume_us", "phase_us", "phase_cpu_us"):  # wall times differ run to run
        result["stats"].pop(timing)
    return json.dumps(result, sort_keys=True)


def record_starts(stream: bytes, start: int, end: int) -> bool:
    """Whether `end` is where a record of the stream begins (walking from `start`, a record's beginning)."""
    at = start
    while at < end:
        at += 32 * {FULL: 9, NO_ADDRESSES: 1, STRIDED: 2, PADDING: 1}[stream[at] >> 5]
    return at == end


@pytest.mark.parametrize(
    "run,workers",
    [(RUNS / "microbench", 1), (RUNS / "pattern_suite", 3), (VALUE_RUNS / "approx_int", 2)],
    ids=["microbench", "pattern_suite", "values"],
)
def test_packed_stream_gives_the_same_results(run, workers, monkeypatch):
    # GIVEN a run recorded on the H200; WHEN its records reach the engine packed, cut and padded
    # THEN every result (graph, distributions, values) is what the full records give
    if not (run / "run.json").exists():
        pytest.skip(f"no recorded run in {run}")
    assert replayed(run, True, monkeypatch, workers=workers) == replayed(run, False, monkeypatch, workers=workers)


def engine_with_launch():
    engine = E.Engine(workers=1)
    engine.begin_launch(0, 0, [1, 1, 1], [32, 1, 1])
    return engine


@pytest.mark.parametrize(
    "stream,what",
    [
        (pack(shapes())[: -32 * 5], "a full record cut short"),
        (bytes([7 << 5 | 1]) + bytes(31), "an unknown form"),
        (bytes([STRIDED << 5 | 1]) + bytes(31), "a strided record without its payload"),
        (bytes([STRIDED << 5 | 1]) + bytes(31) + struct.pack("<QQQII", 0, 4, 0, 0, 0), "stride group 0"),
        (bytes([STRIDED << 5 | 1]) + bytes(31) + struct.pack("<QQQII", 0, 4, 0, 33, 0), "stride group 33"),
    ],
)
def test_malformed_streams_are_refused(stream, what):
    engine = engine_with_launch()
    with pytest.raises(RuntimeError, match="packed records"):
        engine.consume_packed(stream)
    with pytest.raises(ValueError, match="malformed"):
        E.unpack_records(stream)
    with pytest.raises(RuntimeError):  # an engine that refused its input is not used again
        engine.end_launch()


def test_a_stream_that_is_not_whole_slots_is_refused():
    with pytest.raises(ValueError, match="multiple of 32"):
        engine_with_launch().consume_packed(bytes(33))


def test_records_count_once_whatever_the_padding():
    recs = records([mem(0x10, warp_addrs(0x1000)), barrier(0x20), block_exit()])
    counts = []
    for padding in (0.0, 1.0):
        engine = engine_with_launch()
        engine.consume_packed(pack(recs, padding=padding))
        engine.end_launch()
        counts.append(engine.stats()["records"])
    assert counts == [3, 3]
    assert np.frombuffer(E.unpack_records(pack(recs, padding=1.0)), dtype=RECORD_DTYPE).shape == (3,)


@pytest.mark.skipif(COMPILER is None, reason=NO_COMPILER)
@pytest.mark.parametrize("level", ["-O1", "-O2", "-O3"])
def test_every_strided_form_unpacks_as_defined_at_each_optimisation_level(tmp_path, level):
    """The collector's queue and trace sink unpack with this header, built at the package's optimisation level, not
    the engine's: GCC 12.2's loop vectorizer at -O2 and -O3 made lanes 2 and 3 of a one-stride record copies of
    lanes 0 and 1 in a former form of the loop (found in session 26's review; every other test built it at -O1 or
    inlined it where it came out right). 12,960 forms, each lane against its definition."""
    exe = build(
        tmp_path / "unpack_check",
        [REPO / "tests/engine/native/unpack_check.cpp"],
        [REPO / "analyzer/engine/include"],
        optimize=level,
    )
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip() == "12960 forms unpacked as defined"
