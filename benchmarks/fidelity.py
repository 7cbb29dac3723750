#!/usr/bin/env python3
"""Collector fidelity: counts derived from the collector's traces vs Nsight Compute's counters.

For every kernel launch of a program (default: tests/gpu microbench), this runs the program under the
collector twice (default buffers, and the smallest buffer the collector accepts, forcing many flushes) and
`--ncu-runs` times (default 3) under `ncu --clock-control none`, derives from the raw warp records (numpy, below) global load/store/atomic
requests and 32-byte sectors, cp.async (LDGSTS) requests and sectors, shared load/store/atomic instructions and
load/store wavefronts (the paper's section 3.2.2 lane-group rule), and local load/store instructions, and prints
them side by side.

Nsight Compute is not its own fixed point: on identical input, the smsp__inst_executed_op_*_pred_on_any
instruction counters and the shared-wavefront counters vary a little from one ncu run to the next (three runs of
one stencil kernel: 29,287 / 29,292 / 29,276 global loads), while the l1tex request/sector counters and the
SASS-patched smsp__sass_* instruction counters do not. So every count is classified:
  ok                               equal to the counter in every ncu run, or to a deterministic counter
                                   (EXACT_REFERENCES: smsp__sass_* for instruction counts)
  within ncu's run-to-run spread   not equal, but inside [min, max] of the counter over the ncu runs
  mismatch                         outside that spread: a difference ncu's own noise does not explain
Exit status 1 when any count is a mismatch.

    python3 benchmarks/fidelity.py --bench build/gpu/microbench --work /tmp/fid [--ncu-runs 3] [--json out.json]
    python3 benchmarks/fidelity.py --runs RUN_BIG RUN_SMALL --ncu-csv ncu1.csv ncu2.csv   # re-derive offline
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
from reuselens.analyzer import replay  # noqa: E402  (the trace format's one reader)
from reuselens.analyzer.rundir import open_run  # noqa: E402  (run.json's one reader)

REC_MEM, SPACE_GLOBAL, SPACE_SHARED, SPACE_LOCAL = 1, 1, 2, 3
READ, WRITE = 1, 2
FLAG_ASYNC, FLAG_MATRIX, FLAG_BULK = 0x1, 0x2, 0x4

# metric key -> Nsight Compute metric
NCU_METRICS = {
    "gld_req": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "gld_sec": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "gst_req": "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "gst_sec": "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "gatom_req": "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
    "gred_req": "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
    "gatom_sec": "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum",
    "gred_sec": "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum",
    "gld_inst": "smsp__inst_executed_op_global_ld_pred_on_any.sum",
    "gst_inst": "smsp__inst_executed_op_global_st_pred_on_any.sum",
    "ldgsts_inst": "smsp__inst_executed_op_ldgsts.sum",
    "ldgsts_bypass": "smsp__sass_inst_executed_op_ldgsts_cache_bypass.sum",
    "ldgsts_access": "smsp__sass_inst_executed_op_ldgsts_cache_access.sum",
    # Warp instructions with at least one predicated-on thread: the ones that access memory, so the ones the
    # Sanitizer reports. The unqualified smsp__inst_executed_op_* also count warps whose threads are all
    # predicated off (measured on the H200: `if (threadIdx.x == 0) s[0] = v` compiled to a predicated STS
    # counts once per warp of the block there, once per block here).
    "sld_inst": "smsp__inst_executed_op_shared_ld_pred_on_any.sum",
    "sst_inst": "smsp__inst_executed_op_shared_st_pred_on_any.sum",
    "satom_inst": "smsp__inst_executed_op_shared_atom_pred_on_any.sum",
    "sld_wf": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "sst_wf": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "lld_inst": "smsp__inst_executed_op_local_ld_pred_on_any.sum",
    "lst_inst": "smsp__inst_executed_op_local_st_pred_on_any.sum",
    "ldsm_inst": "smsp__sass_inst_executed_op_ldsm.sum",
    # SASS-patched instruction counters: exact, the same in every ncu run (see EXACT_REFERENCES)
    "gld_inst_sass": "smsp__sass_inst_executed_op_global_ld.sum",
    "gst_inst_sass": "smsp__sass_inst_executed_op_global_st.sum",
    "sld_inst_sass": "smsp__sass_inst_executed_op_shared_ld.sum",
    "sst_inst_sass": "smsp__sass_inst_executed_op_shared_st.sum",
    "lld_inst_sass": "smsp__sass_inst_executed_op_local_ld.sum",
    "lst_inst_sass": "smsp__sass_inst_executed_op_local_st.sum",
    # bulk copies (cp.async.bulk) go through the TMA unit: bytes it read from / wrote to global memory
    "tma_ld_bytes": "l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum",
    "tma_st_bytes": "l1tex__m_l1tex2xbar_write_bytes_mem_global_op_tma_st.sum",
    # Issued counts (predicated-off warps included; every LDGSTS as a shared load): shown beside the trace,
    # never compared.
    "sst_issued": "smsp__inst_executed_op_shared_st.sum",
    "sld_issued": "smsp__inst_executed_op_shared_ld.sum",
}
# Rows of the table: what the trace gives -> how ncu names it (sums of metrics where the trace cannot
# tell two hardware opcodes apart: ATOM vs RED is whether the result is used).
ROWS = [
    ("global ld instructions", ["gld_inst"]),
    ("global ld requests", ["gld_req"]),
    ("global ld sectors", ["gld_sec"]),
    ("global st instructions", ["gst_inst"]),
    ("global st requests", ["gst_req"]),
    ("global st sectors", ["gst_sec"]),
    ("global atomic requests", ["gatom_req", "gred_req"]),
    ("global atomic sectors", ["gatom_sec", "gred_sec"]),
    ("cp.async instructions", ["ldgsts_inst"]),
    ("cp.async 16 B instructions", ["ldgsts_bypass"]),
    ("cp.async 4/8 B instructions", ["ldgsts_access"]),
    ("shared ld instructions", ["sld_inst"]),
    ("shared ld wavefronts", ["sld_wf"]),
    ("shared st instructions", ["sst_inst"]),
    ("shared st wavefronts", ["sst_wf"]),
    ("shared atomic instructions", ["satom_inst"]),
    ("local ld instructions", ["lld_inst"]),
    ("local st instructions", ["lst_inst"]),
    ("ldmatrix instructions", ["ldsm_inst"]),
    ("bulk copy bytes global->shared", ["tma_ld_bytes"]),
    ("bulk copy bytes shared->global", ["tma_st_bytes"]),
]
# Deterministic counters that also measure a row's count: a trace count equal to one of these is exact even when
# the row's own counter (a sampled smsp__inst_executed_op_*_pred_on_any) wanders between ncu runs. The SASS-patched
# counters count executed warp instructions; where one also counts warps whose lanes are all predicated off it
# differs from the trace by design, and then only the row's own counter and its spread decide.
EXACT_REFERENCES = {
    "global ld instructions": [["gld_inst_sass"]],
    "global st instructions": [["gst_inst_sass"]],
    "shared ld instructions": [["sld_inst_sass"]],
    "shared st instructions": [["sst_inst_sass"]],
    "local ld instructions": [["lld_inst_sass"]],
    "local st instructions": [["lst_inst_sass"]],
}
OK, WITHIN_SPREAD, MISMATCH = "ok", "within ncu's run-to-run spread", "mismatch"
# A count the trace gives only with the SASS (derive(): the form of a 16-byte LDGSTS), where it could not be had.
NEEDS_SASS = "needs the SASS"
# Rows printed for information only: ncu's value beside the trace count it differs from by design.
INFO_ROWS = [
    ("shared ld issued (incl. pred-off)", ["sld_issued"], "shared ld instructions"),
    ("shared st issued (incl. pred-off)", ["sst_issued"], "shared st instructions"),
]


# ------------------------------------------------------------------------------------------ trace side


def read_trace(path: Path) -> np.ndarray:
    return replay.read_trace(path).records


def lane_matrix(records: np.ndarray) -> np.ndarray:
    return ((records["active_mask"][:, None] >> np.arange(32, dtype=np.uint32)) & 1).astype(bool)


def distinct_sectors(records: np.ndarray) -> int:
    """Sum over records of the distinct 32-byte sectors touched by the active lanes."""
    if len(records) == 0:
        return 0
    active = lane_matrix(records)
    addr = records["addr"]
    size = records["size"].astype(np.uint64)[:, None]
    first = addr // 32
    last = (addr + size - 1) // 32
    sentinel = np.iinfo(np.uint64).max
    both = np.concatenate([np.where(active, first, sentinel), np.where(active, last, sentinel)], axis=1)
    both.sort(axis=1)
    new = np.ones_like(both, dtype=bool)
    new[:, 1:] = both[:, 1:] != both[:, :-1]
    return int((new & (both != sentinel)).sum())


def wavefronts(records: np.ndarray) -> int:
    """Paper section 3.2.2: per record, lanes split into groups (8 B: 16 lanes, 16 B: 8 lanes, else 32); per
    group the maximum over the 32 banks of the distinct 32-bit words in that bank; summed over groups."""
    if len(records) == 0:
        return 0
    total = 0
    for size in np.unique(records["size"]):
        part = records[records["size"] == size]
        size = int(size)
        per_group = 32 if size <= 4 else 32 // (size // 4)
        words_per_lane = max(1, size // 4)
        active = lane_matrix(part)  # (n, 32)
        rec_idx, lane = np.nonzero(active)
        base_word = part["addr"][rec_idx, lane] // 4
        group = lane // per_group
        key_rec = np.repeat(rec_idx, words_per_lane)
        key_group = np.repeat(group, words_per_lane)
        words = (base_word[:, None] + np.arange(words_per_lane, dtype=np.uint64)[None, :]).reshape(-1)
        bank = words % 32
        groups_per_rec = 32 // per_group
        cell = (key_rec.astype(np.int64) * groups_per_rec + key_group) * 32 + bank.astype(np.int64)
        pairs = np.unique(np.stack([cell, words.astype(np.int64)], axis=1), axis=0)
        cells, counts = np.unique(pairs[:, 0], return_counts=True)
        gid = cells // 32
        best = np.zeros(len(part) * groups_per_rec, dtype=np.int64)
        np.maximum.at(best, gid, counts)
        total += int(best.sum())
    return total


def atomic_sectors(records: np.ndarray) -> int:
    """L1TEX sector accesses of global atomics (ATOM and RED), a rule measured on the H200: per instruction,
    for every 32-byte sector touched, the largest number of lanes that address one and the same word in it
    (same-address lanes are served one per pass); summed over sectors. The collector sees the instruction as
    executed, so a compiler-aggregated atomic (one lane) counts as one."""
    total = 0
    for r in records:
        active = lane_matrix(r[None])[0]
        addrs, counts = np.unique(r["addr"][active], return_counts=True)
        per_sector: dict[int, int] = {}
        for a, c in zip(addrs.tolist(), counts.tolist()):
            s = a // 32
            per_sector[s] = max(per_sector.get(s, 0), c)
        total += sum(per_sector.values())
    return total


def lanes(records: np.ndarray) -> int:
    return int(lane_matrix(records).sum()) if len(records) else 0


def derive(records: np.ndarray, counted_copy_pcs: set[int] | None = None) -> dict[str, int | None]:
    """Trace -> hardware counts. Measured on the H200 (sm_90) with ncu 2025.3: a cp.async (LDGSTS) is counted
    as a global load request with its sectors but not as a global load instruction, and adds no shared wavefronts.
    It counts as a shared *load* instruction (pred_on_any) only in its 16-byte form without a zero-fill operand
    (64 = 48 LDS + 16 of 48 LDGSTS in the microbenchmark, whose 48 LDGSTS are 16 each of 16, 8 and 4 bytes; none of
    the 16-byte copies of tests/gpu/zero_fill.cu, whose SASS carries a zero-fill operand: `.ZFILL` with a predicate,
    or a predicate alone, even where every lane has a source); the SASS says which form a PC has, so
    `counted_copy_pcs` names the 16-byte LDGSTS PCs without that operand, and without it (no SASS) that count is
    None when the launch has 16-byte copies. The cp.async 16 B / 4/8 B rows check the sizes against ncu's
    cache-bypass / cache-access split; the issued-instruction counter counts all of them. A cp.async whose lanes were
    all zero fills (a null source: its global half has no lane) is an LDGSTS instruction but no global load request
    (tests/gpu/zero_fill.cu: 7 requests for 8 instructions, one of them all zero fills)."""
    mem = records[records["type"] == REC_MEM]
    space, access, flags = mem["space"], mem["access"] & 3, mem["flags"]
    sync = (flags & FLAG_ASYNC) == 0
    bulk = (flags & FLAG_BULK) != 0
    matrix = (flags & FLAG_MATRIX) != 0
    g_ld = mem[(space == SPACE_GLOBAL) & (access == READ) & ~bulk]  # LDG and the global half of LDGSTS
    g_ldg = mem[(space == SPACE_GLOBAL) & (access == READ) & sync]  # LDG alone
    g_st = mem[(space == SPACE_GLOBAL) & (access == WRITE) & sync]
    g_at = mem[(space == SPACE_GLOBAL) & (access == READ | WRITE) & sync]
    g_async = mem[(space == SPACE_GLOBAL) & ~sync & ~bulk]  # LDGSTS
    s_ld = mem[(space == SPACE_SHARED) & (access == READ) & sync & ~matrix]
    ldsm = mem[(space == SPACE_SHARED) & (access == READ) & matrix]
    bulk_in = mem[(space == SPACE_GLOBAL) & bulk & (access == READ)]
    bulk_out = mem[(space == SPACE_GLOBAL) & bulk & (access == WRITE)]
    s_st = mem[(space == SPACE_SHARED) & (access == WRITE) & sync]
    s_at = mem[(space == SPACE_SHARED) & (access == READ | WRITE) & sync]
    l_ld = mem[(space == SPACE_LOCAL) & (access == READ)]
    l_st = mem[(space == SPACE_LOCAL) & (access == WRITE)]
    return {
        "global ld instructions": len(g_ldg),
        "global ld requests": int((g_ld["active_mask"] != 0).sum()),
        "global ld sectors": distinct_sectors(g_ld),
        "global st instructions": len(g_st),
        "global st requests": len(g_st),
        "global st sectors": distinct_sectors(g_st),
        "global atomic requests": len(g_at),
        "global atomic sectors": atomic_sectors(g_at),
        "cp.async instructions": len(g_async),
        "cp.async 16 B instructions": int((g_async["size"] == 16).sum()),
        "cp.async 4/8 B instructions": int((g_async["size"] < 16).sum()),
        "shared ld instructions": shared_load_instructions(s_ld, g_async, counted_copy_pcs),
        "shared ld wavefronts": wavefronts(s_ld) + wavefronts(ldsm),  # LDSM: wavefronts yes, instructions no
        "shared st instructions": len(s_st),
        "shared st wavefronts": wavefronts(s_st),
        "shared atomic instructions": len(s_at),
        "local ld instructions": len(l_ld),
        "local st instructions": len(l_st),
        "ldmatrix instructions": len(ldsm),
        "bulk copy bytes global->shared": 16 * lanes(bulk_in),
        "bulk copy bytes shared->global": 16 * lanes(bulk_out),
    }


def shared_load_instructions(s_ld: np.ndarray, g_async: np.ndarray, counted_copy_pcs: set[int] | None) -> int | None:
    """LDS and the 16-byte LDGSTS without a zero-fill operand (derive()); None when that form is unknown."""
    wide = g_async[g_async["size"] == 16]
    if not len(wide):
        return len(s_ld)
    if counted_copy_pcs is None:
        return None
    return len(s_ld) + int(np.isin(wide["pc"], list(counted_copy_pcs)).sum())


def _unguarded(sass: str) -> str:
    """An instruction's SASS without its guard predicate (`@!P2 `) and closing semicolon."""
    return re.sub(r"^@!?U?P\w+\s+", "", sass.strip()).rstrip(" ;")


# A SASS operand that is a predicate: the source-ignore (zero-fill) operand of an LDGSTS.
PREDICATE_OPERAND = re.compile(r"^!?(P[0-6]|PT)$")


def has_zero_fill_operand(sass: str) -> bool:
    """Whether an LDGSTS's SASS carries a zero-fill operand: the `.ZFILL` modifier, or a predicate after the two
    addresses (sm_90: `LDGSTS.E.BYPASS.128.ZFILL [R7], desc[UR6][R4.64], P1` and `LDGSTS.E.BYPASS.128 [R7],
    desc[UR4][R4.64], !P0`, against `LDGSTS.E.BYPASS.128 [R7], desc[UR4][R4.64]`)."""
    opcode, _, operands = _unguarded(sass).partition(" ")
    if ".ZFILL" in opcode:
        return True
    parts = [p.strip() for p in operands.split(",")]
    return len(parts) > 2 and bool(PREDICATE_OPERAND.match(parts[-1]))


# Beside a run, the SASS of its 16-byte LDGSTS as fidelity.py read it with nvdisasm, so that a run copied where no
# nvdisasm is (a test fixture in CI) still derives its shared load instructions. docs/collector.md, "Fidelity".
FORMS_FILE, FORMS_FORMAT, FORMS_VERSION = "ldgsts_forms.json", "reuselens-ldgsts-forms", 1


def _saved_forms(run_dir: Path) -> dict[tuple[str, str, int], str]:
    path = run_dir / FORMS_FILE
    if not path.is_file():
        return {}
    data = json.loads(path.read_text())
    if data.get("format") != FORMS_FORMAT or data.get("version") != FORMS_VERSION:
        raise SystemExit(f"{path}: not a version-{FORMS_VERSION} {FORMS_FORMAT} file")
    return {(i["module"], i["function"], int(i["pc"])): i["sass"] for i in data["instructions"]}


def _save_forms(run_dir: Path, forms: dict[tuple[str, str, int], str]) -> None:
    instructions = [{"module": m, "function": f, "pc": pc, "sass": text} for (m, f, pc), text in sorted(forms.items())]
    document = {"format": FORMS_FORMAT, "version": FORMS_VERSION, "instructions": instructions}
    try:
        (run_dir / FORMS_FILE).write_text(json.dumps(document, indent=1) + "\n")
    except OSError as error:  # a read-only run directory: the forms were read all the same
        print(f"fidelity: {run_dir / FORMS_FILE} not written ({error.strerror})", file=sys.stderr)


def wide_copy_keys(launch: dict, records: np.ndarray) -> list[tuple[str, str, int]]:
    """(module, function, pc) of the launch's 16-byte LDGSTS (not the bulk copies, UBLKCP)."""
    mem = records[records["type"] == REC_MEM]
    copies = (mem["flags"] & (FLAG_ASYNC | FLAG_BULK)) == FLAG_ASYNC
    wide = mem[(mem["space"] == SPACE_GLOBAL) & copies & (mem["size"] == 16)]
    return [(launch["module"], launch["kernel"], pc) for pc in sorted({int(pc) for pc in wide["pc"]})]


def ldgsts_forms(run_dir: Path, keys: list[tuple[str, str, int]]) -> dict[tuple[str, str, int], str]:
    """The SASS of the given LDGSTS, from FORMS_FILE beside the run, the rest disassembled from the run's CUBINs with
    nvdisasm (one mapper for the whole run) and added to that file; without nvdisasm or a CUBIN, those are missing."""
    from reuselens.analyzer.errors import ReuseLensError
    from reuselens.analyzer.lineinfo import SourceMapper

    forms = _saved_forms(run_dir)
    missing = [key for key in keys if key not in forms]
    if missing:
        try:
            mapper = SourceMapper.from_run(run_dir)
            found = {key: mapper.sass(*key) for key in missing}
        except ReuseLensError:
            return forms
        found = {key: text for key, text in found.items() if text is not None}
        if found:
            forms.update(found)
            _save_forms(run_dir, forms)
    for (_module, function, pc), text in forms.items():
        if not _unguarded(text).startswith("LDGSTS"):
            raise SystemExit(f"{run_dir}: cp.async PC {pc} of {function} is not an LDGSTS in the SASS: {text}")
    return forms


def counted_copy_pcs(keys: list[tuple[str, str, int]], forms: dict[tuple[str, str, int], str]) -> set[int] | None:
    """Of a launch's 16-byte LDGSTS, the PCs ncu counts as shared load instructions (no zero-fill operand); None when
    the SASS of one of them is missing."""
    if not all(key in forms for key in keys):
        return None
    return {key[2] for key in keys if not has_zero_fill_operand(forms[key])}


def run_counts(run_dir: Path) -> list[tuple[str, dict[str, int | None]]]:
    manifest = open_run(run_dir).manifest
    traced = []
    for launch in manifest["launches"]:
        if not launch.get("instrumented"):
            continue
        if launch.get("status") != "complete" or not launch.get("trace"):
            raise SystemExit(f"{run_dir}: launch {launch['id']} is {launch.get('status')} (no complete trace)")
        records = read_trace(run_dir / launch["trace"])
        if len(records) != launch["records"]:
            raise SystemExit(
                f"{run_dir}: launch {launch['id']}: run.json says {launch['records']} records, "
                f"trace holds {len(records)}"
            )
        traced.append((launch, records, wide_copy_keys(launch, records)))
    wanted = [key for _launch, _records, keys in traced for key in keys]
    forms = ldgsts_forms(run_dir, wanted) if wanted else {}
    return [(launch["kernel"], derive(records, counted_copy_pcs(keys, forms))) for launch, records, keys in traced]


# ------------------------------------------------------------------------------------------ ncu side


def available_metrics(ncu: str) -> set[str]:
    result = subprocess.run([ncu, "--query-metrics", "--csv"], capture_output=True, text=True)
    names = set()
    for line in result.stdout.splitlines():
        first = line.split(",")[0].strip('"')
        if first and not first.startswith("Metric"):
            names.add(first)
    return names


def run_ncu(ncu: str, argv: list[str], csv_path: Path) -> None:
    have = available_metrics(ncu)
    (csv_path.parent / "ncu_metrics.txt").write_text("\n".join(sorted(have)))
    metrics = [m for m in NCU_METRICS.values() if not have or m.rsplit(".", 1)[0] in have]
    missing = sorted(set(NCU_METRICS.values()) - set(metrics))
    if missing:
        print(f"ncu does not know {missing}; those rows read n/a", file=sys.stderr)
    cmd = [
        ncu,
        "--clock-control",
        "none",
        "--csv",
        "--print-kernel-base",
        "mangled",
        "--print-units",
        "base",
        "--metrics",
        ",".join(metrics),
        "--log-file",
        str(csv_path),
        *argv,
    ]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def parse_ncu(csv_path: Path) -> list[tuple[str, dict[str, float]]]:
    lines = [ln for ln in csv_path.read_text().splitlines() if ln.startswith('"')]
    reader = csv.DictReader(lines)
    launches: dict[int, tuple[str, dict[str, float]]] = {}
    reverse = {v: k for k, v in NCU_METRICS.items()}
    for row in reader:
        try:
            launch = int(row["ID"])
        except (KeyError, ValueError):
            continue
        name = row.get("Kernel Name", "")
        metric = reverse.get(row.get("Metric Name", ""))
        entry = launches.setdefault(launch, (name, {}))
        if metric:
            value = row.get("Metric Value", "").replace(",", "")
            try:
                entry[1][metric] = float(value)
            except ValueError:
                pass
    return [launches[k] for k in sorted(launches)]


# ------------------------------------------------------------------------------------------ table


def short_name(mangled: str) -> str:
    try:
        import cxxfilt

        text = cxxfilt.demangle(mangled)
    except Exception:
        text = mangled
    return re.sub(r"\(.*", "", text).replace("void ", "")


def classify(derived: int, measured: list[int], exact: list[list[int]]) -> str:
    """One trace count against a counter's values over the ncu runs (`measured`) and the values of the row's
    deterministic counters (`exact`, one list per counter): OK, WITHIN_SPREAD or MISMATCH."""
    if measured and all(value == derived for value in measured):
        return OK
    if any(values and all(value == derived for value in values) for values in exact):
        return OK
    if measured and min(measured) <= derived <= max(measured):
        return WITHIN_SPREAD
    return MISMATCH


def _counter(ncu_runs: list[list[tuple[str, dict[str, float]]]], launch: int, keys: list[str]) -> list[int]:
    """A sum of metrics for one launch, per ncu run that measured all of them."""
    values = []
    for rows in ncu_runs:
        measured = rows[launch][1]
        if all(k in measured for k in keys):
            values.append(int(round(sum(measured[k] for k in keys))))
    return values


def _spread_text(values: list[int]) -> str | None:
    if not values:
        return None
    low, high = min(values), max(values)
    return str(low) if low == high else f"{low}..{high}"


def _check_launches(ncu_runs, base) -> None:
    for number, rows in enumerate(ncu_runs, start=1):
        if len(rows) != len(base):
            raise SystemExit(f"ncu run {number} profiled {len(rows)} launches, the collector {len(base)}")
        for i, (ncu_name, _vals) in enumerate(rows):
            kernel = base[i][0]
            if ncu_name and ncu_name != kernel and short_name(kernel) not in ncu_name:
                raise SystemExit(f"launch {i}: ncu kernel {ncu_name} vs collector {kernel}")


def compare(ncu_runs: list[list[tuple[str, dict[str, float]]]], runs: list[tuple[str, list]]) -> tuple[list[dict], int]:
    """The table over every launch and row: the counter over the ncu runs (`ncu_runs`, one parsed CSV each) beside
    the count of every collector run, with its verdict; and the number of mismatches."""
    table, mismatches = [], 0
    base = runs[0][1]
    _check_launches(ncu_runs, base)
    for i in range(len(base)):
        kernel = short_name(base[i][0])
        for row, keys in ROWS:
            measured = _counter(ncu_runs, i, keys)
            exact = [_counter(ncu_runs, i, ref) for ref in EXACT_REFERENCES.get(row, [])]
            derived = [r[1][i][1][row] for r in runs]
            if all(d == 0 for d in derived) and all(v == 0 for v in measured):
                continue
            if any(d is None for d in derived):
                verdict = NEEDS_SASS
            elif not measured:
                verdict = None
            else:
                verdicts = [classify(d, measured, exact) for d in derived]
                verdict = MISMATCH if MISMATCH in verdicts else WITHIN_SPREAD if WITHIN_SPREAD in verdicts else OK
                mismatches += verdict == MISMATCH
            table.append(
                {
                    "launch": i,
                    "kernel": kernel,
                    "metric": row,
                    "ncu": measured[0] if measured else None,
                    "ncu_runs": measured,
                    "ncu_spread": _spread_text(measured),
                    "exact": {ref[0]: _spread_text(v) for ref, v in zip(EXACT_REFERENCES.get(row, []), exact) if v},
                    **{label: d for (label, _), d in zip(runs, derived)},
                    "verdict": verdict,
                    "match": _match(verdict),
                }
            )
        for row, keys, trace_row in INFO_ROWS:
            measured = _counter(ncu_runs, i, keys)
            derived = [r[1][i][1][trace_row] for r in runs]
            if measured and derived[0] is not None and any(value != derived[0] for value in measured):
                table.append(
                    {
                        "launch": i,
                        "kernel": kernel,
                        "metric": row,
                        "ncu": measured[0],
                        "ncu_runs": measured,
                        "ncu_spread": _spread_text(measured),
                        "exact": {},
                        **{label: d for (label, _), d in zip(runs, derived)},
                        "verdict": "info",
                        "match": None,
                    }
                )
    return table, mismatches


def _match(verdict: str | None) -> bool | None:
    """A row's `match`: None for a count not derived (no SASS), else whether the verdict is ok."""
    if verdict == NEEDS_SASS:
        return None
    return verdict == OK


def spread_summary(table: list[dict]) -> list[str]:
    """Per counter row, how far ncu's own runs spread: one line for each row whose counter varied."""
    widths: dict[str, list[int]] = {}
    for r in table:
        if len(r.get("ncu_runs") or []) > 1:
            widths.setdefault(r["metric"], []).append(max(r["ncu_runs"]) - min(r["ncu_runs"]))
    return [
        f"{metric}: varied in {sum(1 for w in ws if w)} of {len(ws)} launches, by up to {max(ws)}"
        for metric, ws in sorted(widths.items())
        if any(ws)
    ]


def print_table(table: list[dict], labels: list[str]) -> None:
    head = (
        f"{'#':>2} {'kernel':<22} {'metric':<26} {'ncu':>13} " + " ".join(f"{lab:>10}" for lab in labels) + "  verdict"
    )
    print(head)
    print("-" * len(head))
    for r in table:
        hw = r["ncu_spread"] or "n/a"
        if r["verdict"] is None:
            note = "  (metric not in this ncu)"
        elif r["verdict"] == NEEDS_SASS:
            note = "  not derived: the LDGSTS form needs nvdisasm and the run's CUBIN"
        elif r["verdict"] == "info":
            note = "  info: ncu's issued count, see NCU_METRICS"
        elif r["verdict"] == OK:
            note = "  ok" + (
                f" (exact: {', '.join(f'{k} {v}' for k, v in r['exact'].items())})"
                if r["exact"] and r["ncu_spread"] and ".." in r["ncu_spread"]
                else ""
            )
        elif r["verdict"] == WITHIN_SPREAD:
            note = "  " + WITHIN_SPREAD
        else:
            note = "  MISMATCH"
        print(
            f"{r['launch']:>2} {r['kernel'][:22]:<22} {r['metric']:<26} {hw:>13} "
            + " ".join(f"{'?' if r[lab] is None else r[lab]:>10}" for lab in labels)
            + note
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", help="program to profile (default: build/gpu/microbench)")
    parser.add_argument("--work", default="/tmp/reuselens-fidelity", help="where runs and the ncu CSV go")
    parser.add_argument("--ncu", default="ncu")
    parser.add_argument("--runs", nargs="+", help="existing run directories (skip profiling)")
    parser.add_argument("--ncu-csv", nargs="+", help="existing ncu CSVs, one per ncu run (skip ncu)")
    parser.add_argument(
        "--ncu-runs",
        type=int,
        default=3,
        metavar="N",
        help="profile under ncu N times and compare against the spread (default 3)",
    )
    parser.add_argument("--json", help="write the table as JSON here")
    args, rest = parser.parse_known_args(argv)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    if args.runs:
        run_dirs = [Path(r) for r in args.runs]
        labels = [p.name for p in run_dirs]
    else:
        from reuselens.collector.launcher import MIN_BUFFER_BYTES, profile

        bench = [args.bench or str(REPO / "build/gpu/microbench"), *rest]
        run_dirs = [work / "run_default", work / "run_minbuf"]
        labels = ["trace", "trace@min"]
        for run_dir, buffer in zip(run_dirs, [None, MIN_BUFFER_BYTES]):
            summary = profile(bench, run_dir=run_dir, write_traces=True, buffer_bytes=buffer, timeout=600)
            print(
                f"{run_dir.name}: {summary.status} ({summary.partial_reason}), {summary.launches_instrumented} "
                f"launches, {summary.records} records, {summary.wall_seconds:.2f} s",
                file=sys.stderr,
            )
            if summary.status != "complete":
                return 2
    if args.ncu_runs < 1:
        parser.error("--ncu-runs must be at least 1")
    if args.ncu_csv:
        csv_paths = [Path(p) for p in args.ncu_csv]
    else:
        bench = [args.bench or str(REPO / "build/gpu/microbench"), *rest]
        csv_paths = [work / f"ncu{n}.csv" for n in range(1, args.ncu_runs + 1)]
        for csv_path in csv_paths:
            run_ncu(args.ncu, bench, csv_path)
    ncu_runs = [parse_ncu(p) for p in csv_paths]
    ncu_rows = ncu_runs[0]
    runs = [(label, run_counts(d)) for label, d in zip(labels, run_dirs)]
    table, mismatches = compare(ncu_runs, runs)
    print_table(table, labels)
    flushes = []
    for d in run_dirs:
        m = open_run(d).manifest
        flushes.append(sum(int(l.get("flushes", 0)) for l in m["launches"]))
    compared = [r for r in table if r["verdict"] in (OK, WITHIN_SPREAD, MISMATCH)]
    counts = {v: sum(1 for r in compared if r["verdict"] == v) for v in (OK, WITHIN_SPREAD, MISMATCH)}
    print(
        f"\n{len(compared)} counts compared over {len(ncu_rows)} launches and {len(ncu_runs)} ncu run(s): "
        f"{counts[OK]} ok, {counts[WITHIN_SPREAD]} within ncu's run-to-run spread, {counts[MISMATCH]} mismatch(es); "
        f"buffer flushes per run: {dict(zip(labels, flushes))}"
    )
    for line in spread_summary(table):
        print(f"  ncu spread, {line}")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "rows": table,
                    "mismatches": mismatches,
                    "verdicts": counts,
                    "ncu_runs": len(ncu_runs),
                    "spread": spread_summary(table),
                    "flushes": dict(zip(labels, flushes)),
                },
                indent=1,
            )
        )
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
