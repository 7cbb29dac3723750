"""report.json (docs/report-format.md, version 2): load and save with format/version checks.

Public API: :data:`FORMAT`, :data:`VERSION`, :func:`load`, :func:`parse`, :func:`save`. Problems reach the user
as one ReportError sentence naming the file. Only this module parses report.json: the language server reads the
bytes itself (size cap, regular files only) and hands them to :func:`parse`.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from reuselens.analyzer.engine_result import (
    BARRIER_FIELDS,
    COUNT,
    DISTRIBUTION,
    DISTRIBUTIONS,
    EDGE_FIELDS,
    FUNCTION_ID,
    KERNEL_FIELDS,
    NODE_FIELDS,
    NODE_ID,
    OPTIONAL_NODE_FIELDS,
    SPAN,
    kernel_rule,
    with_configurations,
)
from reuselens.analyzer.errors import ReportError
from reuselens.analyzer.schema import (
    ANY,
    Bool,
    Enum,
    Int,
    List,
    Map,
    Maybe,
    Num,
    Obj,
    SchemaError,
    Str,
    check,
    decode,
    field_error,
)

FORMAT = "reuselens-report"
VERSION = 2
# Version 1 reports (one kernel entry per launch configuration) are read too: each entry gets its one
# configuration (engine_result.with_configurations).
READABLE_VERSIONS = (1, 2)

LINE = Int(0, (1 << 31) - 1)
NAME = Maybe(Str())
SOURCE = Maybe(
    Obj(
        {
            "file": Str(),
            "line": LINE,
            "column": LINE,
            "inline": List(Obj({"function": NAME, "file": NAME, "line": Maybe(LINE)})),
        },
        required=("file", "line"),
    )
)
NUMBER = Maybe(Num())
REPORT_NODE = Obj(
    {
        **NODE_FIELDS,
        **OPTIONAL_NODE_FIELDS,
        **{name: Maybe(DISTRIBUTION) for name in DISTRIBUTIONS},
        "function": NAME,
        "source": SOURCE,
        "sass": NAME,
        "address": Obj(
            {"register": Int(0, 254), "offset": Int(-(1 << 23), (1 << 23) - 1), "defined_at": Int(-1, (1 << 40) - 1)},
            required=("register", "offset"),
        ),
        "address_from": List(Int(0, (1 << 40) - 1)),
        "strong": Bool(),
        "returns": Bool(),
        "fetch_add": Bool(),
        "metrics": Maybe(
            Obj(
                {
                    "W_out": Map(Num(0)),
                    "W_total": Num(0),
                    "R_coal": NUMBER,
                    "R_conf": NUMBER,
                    "subgraph": Maybe(Int(0, (1 << 31) - 1)),
                }
            )
        ),
    },
    required=("id",),
)
REPORT_EDGE = Obj(
    {
        **EDGE_FIELDS,
        "prior_kernel": Maybe(
            Obj(
                {
                    "kernel_function_id": FUNCTION_ID,
                    "function_id": FUNCTION_ID,
                    "pc": COUNT,
                    "bytes": COUNT,
                    "kernel": NAME,
                    "function": NAME,
                }
            )
        ),
    },
    required=("from", "to", "label", "bytes"),
)
REPORT_BARRIER = Obj(
    {**BARRIER_FIELDS, "function": NAME, "source": SOURCE, "spans": List(SPAN), "compiler_inserted": Bool()}
)
SUBGRAPH = Obj(
    {
        "nodes": List(NODE_ID),
        "closed": Bool(),
        "footprint_bytes": COUNT,
        "bytes": COUNT,
        "reuse_intensity": Maybe(Num(0)),
        "bytes_by_label": Map(COUNT),
        "reuse_ratio": Map(NUMBER),
    }
)
FINDING = Obj(
    {
        "id": Str(1024),
        "pattern": Str(128),
        "severity": Enum("error", "warning", "information", "hint"),
        "rank": Int(0, (1 << 31) - 1),
        "pcs": List(NODE_ID),
        "origin_pcs": List(NODE_ID),
        "scope": Maybe(Str(64)),
        "waste": Obj(
            {"bytes": Num(0), "instructions": Num(0), "wavefronts": Num(0), "share": Num(0), "basis": Str(64)}
        ),
        "fix": Obj({"kind": Str(64), "explanation": Str()}),
        "message": Str(),
        "metrics": Map(ANY),
        "barrier": Maybe(Obj({"function": NAME, "pc": Maybe(COUNT), "kind": Str(64), "source": SOURCE})),
    }
)


def _loop_rule(loop: list[Any]) -> str | None:
    """A loop is [head pc, back-edge pc], the head at or before the back edge."""
    return None if loop[0] <= loop[1] else f"head {loop[0]} after back edge {loop[1]}"


def _report_kernel_rule(kernel: dict[str, Any]) -> SchemaError | None:
    """The engine's rules, and findings and subgraphs name nodes of their kernel."""
    problem = kernel_rule(kernel)
    if problem:
        return problem
    ids = {node["id"] for node in kernel.get("nodes") or []}
    for index, finding in enumerate(kernel.get("findings") or []):
        for name in ("pcs", "origin_pcs"):
            unknown = [pc for pc in finding.get(name) or [] if pc not in ids]
            if unknown:
                return field_error(f"findings[{index}].{name}", f"{unknown[0]} is not a node id of this kernel")
    for index, subgraph in enumerate(kernel.get("subgraphs") or []):
        unknown = [node for node in subgraph.get("nodes") or [] if node not in ids]
        if unknown:
            return field_error(f"subgraphs[{index}].nodes", f"{unknown[0]} is not a node id of this kernel")
    return None


# Written by this package from the engine's result; hand-made and older reports may leave out any field but the
# kernel id the commands select kernels by and the ones the graph is built from (node ids, edge ends, labels and
# weights).
REPORT_SCHEMA = Obj(
    {
        "run": Obj(
            {
                "dir": NAME,
                "cwd": NAME,
                "status": NAME,
                "partial_reason": NAME,
                "command": Maybe(List(Str())),
                "gpu": Maybe(Map(ANY)),
                "exit_code": Maybe(Int(-(1 << 31), (1 << 31) - 1)),
                "partial_launches": List(Obj({"launch": COUNT, "reason": Str()})),
            }
        ),
        "settings": Map(ANY),
        "notes": List(Str()),
        "kernels": List(
            Obj(
                {
                    **KERNEL_FIELDS,
                    "mangled": NAME,
                    "name": NAME,
                    "module": NAME,
                    "source": SOURCE,
                    "nodes": List(REPORT_NODE),
                    "edges": List(REPORT_EDGE),
                    "barriers": List(REPORT_BARRIER),
                    "subgraphs": List(SUBGRAPH),
                    "findings": List(FINDING),
                    "loops": Map(List(List(COUNT, length=2, rule=_loop_rule))),
                },
                required=("id",),
                rule=_report_kernel_rule,
            )
        ),
    },
    required=("kernels",),
)


def load(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and check a report: JSON object, ``format`` = reuselens-report, ``version`` = 1, a kernel list."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ReportError(f"{path}: no such report (analyse the run first)") from None
    except OSError as error:
        raise _unreadable(path, error) from None
    return parse(raw, path)


def parse(raw: bytes, path: str | os.PathLike[str]) -> dict[str, Any]:
    """The report in ``raw`` (the bytes of ``path``) if it is one this build reads (format, version and the
    fields, types and limits of :data:`REPORT_SCHEMA`); ReportError naming ``path`` and the field otherwise."""
    try:
        data = decode(raw)
    except SchemaError as error:
        raise ReportError(f"{path}: {error}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ReportError(f"{path}: not a ReuseLens report (format is not {FORMAT!r})")
    if data.get("version") not in READABLE_VERSIONS:
        raise ReportError(
            f"{path}: report version {data.get('version')!r}, this build reads versions "
            f"{', '.join(map(str, READABLE_VERSIONS))}"
        )
    if not isinstance(data.get("kernels"), list):
        raise ReportError(f"{path}: report has no kernel list")
    data["kernels"] = [with_configurations(k) if isinstance(k, dict) else k for k in data["kernels"]]
    try:
        check(data, REPORT_SCHEMA)
    except SchemaError as error:
        raise ReportError(f"{path}: {error}") from None
    return data


def _unreadable(path: str | os.PathLike[str], error: Exception) -> ReportError:
    return ReportError(f"{path}: not readable as JSON ({error})")


def save(report: dict[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write atomically (temporary file in the same directory, then rename), so readers never see half a file.

    The report must carry the current format and version; anything else is a programming error."""
    if report.get("format") != FORMAT or report.get("version") != VERSION:
        raise ReportError(f"{path}: refusing to write a report without format {FORMAT!r} version {VERSION}")
    path = Path(path)
    tmp = None
    try:
        # One compact string from the json module's C encoder: json.dump, and any indent, take its pure-Python one,
        # which wrote sortingNetworks' report (3.6 MB indented) in 0.26 s of the GPU host's post-run time; this
        # way 21 ms instead of 137 on the development machine, and 2.1 MB. Encoded first, so that a report that
        # cannot be written (NaN) leaves no temporary file behind.
        text = json.dumps(report, allow_nan=False, separators=(",", ":"))
        fd, tmp = tempfile.mkstemp(prefix=".report-", suffix=".json", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.write("\n")
        os.replace(tmp, path)
    except (OSError, ValueError) as error:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise ReportError(f"{path}: cannot write report ({error})") from None
    return path
