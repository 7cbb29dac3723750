"""The run directory of the end-to-end test: run.json + report.json for fixtures/workspace/src/kernel.cu.

row_sum<<<8, 128>>>(a, sums, n=1024, reps=4): 1024 threads = 32 warps. The load on line 8 runs
32 warps x 4 reps x 1024 j = 131072 warp instructions, 32 lanes x 4 B each = 16 MiB (W_total); the first rep
is cold (1024 rows x 1024 floats = 4 MiB), the three others re-read the same thread's data (12 MiB,
intra-thread RAR). Lanes read different rows (stride 4 KiB): 32 sectors per instruction where 4 would do.
The store on line 11 runs 32 times, 4 KiB, all cold. Paths are written with the build-tree prefix BUILD_PREFIX
and mapped onto the workspace with reuselens.pathPrefixMap, as for an app built on another machine.
`report(run_dir, reps=1)` is the same kernel after the fix (one pass over the row): everything is cold, the
RAR finding is gone and the coalescing waste is a quarter.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

BUILD_PREFIX = "/build/ws"
KERNEL_FILE = "src/kernel.cu"
MANGLED = "_Z7row_sumPKfPfii"
LOAD_LINE, STORE_LINE = 8, 11
WARPS, N, REPS = 32, 1024, 4
LOAD_EXECUTIONS = WARPS * REPS * N  # 131072
LOAD_BYTES = LOAD_EXECUTIONS * 32 * 4  # 16 MiB
COLD_BYTES = 1024 * N * 4  # 4 MiB
THREAD_BYTES = LOAD_BYTES - COLD_BYTES  # 12 MiB
STORE_BYTES = WARPS * 32 * 4  # 4 KiB
RAR_MESSAGE = "re-reads 12.6 MB already read by the same thread (RAR) — keep it in a register"
COALESCING_MESSAGE = "uncoalesced load: 32.0 sectors per instruction (ideal 4.0, R_coal 8.0)"


def _source(line: int) -> dict[str, Any]:
    return {"file": f"{BUILD_PREFIX}/{KERNEL_FILE}", "line": line, "column": 0, "inline": []}


def _node(node_id: int, pc: int, kind: str, line: int, executions: int, sectors: int, sass: str) -> dict[str, Any]:
    return {
        "id": node_id,
        "function": MANGLED,
        "pc": pc,
        "space": "global",
        "type": kind,
        "size": 4,
        "async_copy": False,
        "executions": executions,
        "lanes": [[32, executions]],
        "addresses": [[32, executions]],
        "sectors": [[sectors, executions]],
        "sectors_ideal": [[4, executions]],
        "wavefronts": None,
        "wavefronts_ideal": None,
        "bytes": executions * 32 * 4,
        "source": _source(line),
        "sass": sass,
    }


def _edge(source: int, target: int, label: str, nbytes: int, rar: int = 0) -> dict[str, Any]:
    return {
        "from": source,
        "to": target,
        "label": label,
        "bytes": nbytes,
        "accesses": nbytes // 4,
        "rar": rar,
        "raw": 0,
        "war": 0,
        "waw": 0,
        "prior_kernel": None,
    }


def report(run_dir: Path, reps: int = REPS) -> dict[str, Any]:
    cold = {
        "id": 0,
        "function": None,
        "pc": None,
        "space": None,
        "type": "read",
        "size": 0,
        "async_copy": False,
        "executions": 0,
        "lanes": [],
        "addresses": [],
        "sectors": None,
        "sectors_ideal": None,
        "wavefronts": None,
        "wavefronts_ideal": None,
        "bytes": 0,
        "source": None,
        "sass": None,
    }
    load_executions = WARPS * reps * N
    load_bytes, thread_bytes = load_executions * 32 * 4, (reps - 1) * COLD_BYTES
    load = _node(1, 0x1A0, "read", LOAD_LINE, load_executions, 32, "LDG.E R9, desc[UR4][R4.64]")
    store = _node(2, 0x260, "write", STORE_LINE, WARPS, 4, "STG.E desc[UR4][R2.64], R0")
    total_bytes = load_bytes + STORE_BYTES
    load_sectors, store_sectors = 32 * load_executions, 4 * WARPS
    excess_sectors = (32 - 4) * load_executions
    kernel = {
        "id": "k0",
        "mangled": MANGLED,
        "name": "row_sum(const float*, float*, int, int)",
        "module": "5e" * 32,
        "grid": [8, 1, 1],
        "block": [128, 1, 1],
        "dynamic_shared_bytes": 0,
        "launches": [0],
        "nodes": [cold, load, store],
        "edges": [
            _edge(1, 0, "cold", COLD_BYTES),
            *([_edge(1, 1, "thread", thread_bytes, rar=thread_bytes // 4)] if reps > 1 else []),
            _edge(2, 0, "cold", STORE_BYTES),
        ],
        "barriers": [],
        "subgraphs": [
            {
                "nodes": [1],
                "closed": True,
                "footprint_bytes": COLD_BYTES,
                "bytes": load_bytes,
                "reuse_intensity": float(reps),
                "bytes_by_label": {"cold": COLD_BYTES, **({"thread": thread_bytes} if reps > 1 else {})},
            },
            {
                "nodes": [2],
                "closed": True,
                "footprint_bytes": STORE_BYTES,
                "bytes": STORE_BYTES,
                "reuse_intensity": 1.0,
                "bytes_by_label": {"cold": STORE_BYTES},
            },
        ],
        "findings": (
            [
                {
                    "id": "k0:redundant-rar:1",
                    "pattern": "redundant-rar",
                    "severity": "warning",
                    "rank": 1,
                    "pcs": [1],
                    "origin_pcs": [1],
                    "scope": "thread",
                    "waste": {
                        "bytes": thread_bytes,
                        "instructions": (reps - 1) * WARPS * N,
                        "wavefronts": 0,
                        "share": round(thread_bytes / total_bytes, 4),
                    },
                    "fix": {
                        "kind": "register-promotion",
                        "explanation": "Each thread reads the same row again in every iteration of r. Sum the row "
                        "once into a register and reuse the sum instead of reloading a[].",
                    },
                    "message": RAR_MESSAGE,
                    "metrics": {"r_thread": thread_bytes / load_bytes},
                },
            ]
            if reps > 1
            else []
        )
        + [
            {
                "id": "k0:poor-coalescing:1",
                "pattern": "poor-coalescing",
                "severity": "warning",
                "rank": 2 if reps > 1 else 1,
                "pcs": [1],
                "origin_pcs": [],
                "scope": "warp",
                "waste": {
                    "bytes": excess_sectors * 32,
                    "instructions": 0,
                    "wavefronts": 0,
                    "share": round(excess_sectors / (load_sectors + store_sectors), 4),
                },
                "fix": {
                    "kind": "coalescing",
                    "explanation": "Lanes of a warp read different rows (stride n floats). Let consecutive "
                    "lanes read consecutive j, e.g. one warp per row and a warp reduction.",
                },
                "message": COALESCING_MESSAGE,
                "metrics": {"R_coal": 8.0},
            },
        ],
    }
    return {
        "format": "reuselens-report",
        "version": 1,
        "run": {
            "dir": str(run_dir),
            "status": "complete",
            "partial_reason": None,
            "command": ["./row_sum"],
            "gpu": {"name": "NVIDIA H200", "arch": "sm_90", "driver": "580.65"},
        },
        "settings": {
            "delta": 0.8,
            "streaming": 0.95,
            "coalescing": 1.5,
            "bank_conflict": 1.5,
            "constant_capacity_bytes": 65536,
            "min_share": 0.01,
        },
        "notes": [],
        "kernels": [kernel],
    }


def manifest(reps: int = REPS) -> dict[str, Any]:
    module = "5e" * 32
    return {
        "format": "reuselens-run",
        "version": 1,
        "tool": {"name": "reuselens", "version": "0.1.0"},
        "command": ["./row_sum"],
        "cwd": f"{BUILD_PREFIX}/src",
        "start_time": "2026-11-30T03:00:00Z",
        "end_time": "2026-11-30T03:00:04Z",
        "gpu": {"name": "NVIDIA H200", "arch": "sm_90", "driver": "580.65"},
        "status": "complete",
        "partial_reason": None,
        "exit_code": 0,
        "kernel_filter": {"regex": None, "names_file": None, "launch_range": [0, None]},
        "modules": [{"sha256": module, "path": f"modules/{module}.cubin", "arch": "sm_90"}],
        "functions": [{"id": 0, "module": module, "name": MANGLED, "size": 1024, "kernel": True}],
        "launches": [
            {
                "id": 0,
                "function_id": 0,
                "kernel": MANGLED,
                "module": module,
                "grid": [8, 1, 1],
                "block": [128, 1, 1],
                "cluster": [1, 1, 1],
                "dynamic_shared_bytes": 0,
                "stream": 1,
                "instrumented": True,
                "records": WARPS * reps * N + WARPS,
                "trace": None,
                "status": "complete",
            }
        ],
        "allocations": [],
        "errors": [],
    }


def write_run(run_dir: Path, reps: int = REPS) -> None:
    """Writes run.json, then report.json atomically (the server watches the directory)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "run.json").write_text(json.dumps(manifest(reps), indent=1), encoding="utf-8")
    partial = run_dir / "report.json.tmp"
    partial.write_text(json.dumps(report(run_dir, reps), indent=1), encoding="utf-8")
    partial.replace(run_dir / "report.json")
