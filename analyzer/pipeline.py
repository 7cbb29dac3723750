"""From a run directory to report.json: engine aggregates -> graph metrics -> source lines -> findings.

The engine's part (nodes, edges, distributions, barriers) comes from the collector's online analysis
(RUN/analysis.json) when present, or from replaying RUN/traces/ through the same C++ engine. Everything
after that is computed here once, for both paths.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Callable

from reuselens.analyzer import __version__, configurations, engine_result
from reuselens.analyzer.engine_result import OBJECT_TOUCHES, ONLINE_ANALYSIS
from reuselens.analyzer.errors import ReuseLensError
from reuselens.analyzer.rundir import RunDirectory, open_run
from reuselens.analyzer.statements import statement_line

log = logging.getLogger(__name__)
Progress = Callable[..., None]


def _no_progress(stage: str, done: float = 0, total: float | None = None) -> None:
    return None


def engine_aggregates(
    run: RunDirectory, workers: int | None, progress: Progress, split_configurations: bool = False
) -> tuple[dict[str, Any], bool]:
    """The engine's aggregates and whether they are the online result: the collector's own when it wrote one,
    else a replay of the traces. Asked for one entry per launch configuration, an online result that merged
    several configurations into one entry is replaced by a replay of the traces, or refused without them."""
    online = run.path / ONLINE_ANALYSIS
    if online.is_file():
        result = engine_result.load(online)
        merged = [k for k in result["kernels"] if configurations.merges_several(k)]
        if not (split_configurations and merged):
            return result, True
        if not _has_traces(run):
            raise ReuseLensError(
                f"{run.path}: the profile merged the launch configurations of {len(merged)} kernel(s) and kept "
                f"no traces to split them; profile again with --per-configuration"
            )
    if is_object_level(run):  # build_report answers these with an empty report; only a direct call gets here
        raise ReuseLensError(f"{run.path}: an object-level profile has no access trace to replay")
    from reuselens.analyzer.replay import replay_run

    progress("replay traces")
    touches = run.path / OBJECT_TOUCHES
    result = replay_run(
        run.path,
        workers=workers,
        split_configurations=split_configurations,
        object_touches_to=None if touches.exists() else touches,
    )
    return result, False


def _has_traces(run: RunDirectory) -> bool:
    return any(isinstance(launch, dict) and launch.get("trace") for launch in run.manifest.get("launches") or [])


def _attach_names(run: RunDirectory, result: dict[str, Any], from_online: bool) -> None:
    from reuselens.analyzer.lineinfo import demangle
    from reuselens.analyzer.names import resolve_names

    if from_online:
        functions = {int(f["id"]): f for f in run.manifest.get("functions", [])}
        resolve_names(result, functions, result.setdefault("notes", []))
    for kernel in result["kernels"]:
        mangled = kernel.get("mangled") or f"function#{kernel.get('kernel_function_id')}"
        kernel["mangled"] = mangled
        kernel.setdefault("name", demangle(mangled))


def _attach_sources(
    run: RunDirectory, kernels: list[dict[str, Any]], prefix_map: dict[str, str], notes: list[str], progress: Progress
) -> None:
    from reuselens.analyzer.lineinfo import SourceMapper

    # No SASS here but where a rule needs it (value types, the loops of functions with reloads): nvdisasm cost more
    # than the rest of the analysis, and hovers show it from sass_lookup.py.
    mapper = SourceMapper.from_run(run.path, prefix_map=prefix_map)
    lines = _SourceLines()
    total = sum(len(k.get("nodes", [])) for k in kernels)
    done = 0
    for kernel in kernels:
        for node in kernel.get("nodes", []):
            done += 1
            if node.get("pc") is None or not node.get("function"):
                continue
            # Callees live in the kernel's module: a launch cannot reach code of another module.
            module = kernel.get("module")
            location = _lookup(mapper, module, node["function"], int(node["pc"]), notes)
            node["source"] = location.to_dict() if location is not None else None
            _mark_statement(node["source"], lines)
        for barrier in kernel.get("barriers", []):
            module = kernel.get("module")
            if barrier.get("function") and barrier.get("pc") is not None:
                location = _lookup(mapper, module, barrier["function"], int(barrier["pc"]), notes)
                barrier["source"] = location.to_dict() if location is not None else None
                if barrier.get("kind") == "warp" and location is not None and _written_nowhere(location, lines):
                    barrier["compiler_inserted"] = True
        location = _kernel_location(mapper, kernel, notes)
        kernel["source"] = location.to_dict() if location is not None else None
        progress("map source lines", done, total)
    _attach_value_types(run, mapper, kernels, notes)
    from reuselens.analyzer.address_origin import attach_address_origins
    from reuselens.analyzer.atomic_results import attach_atomic_results
    from reuselens.analyzer.frame_saves import attach_frame_saves
    from reuselens.analyzer.loops import attach_loops
    from reuselens.analyzer.memory_order import attach_strong_accesses
    from reuselens.analyzer.operands import attach_operands

    attach_loops(mapper, kernels)  # only functions whose reloads look like a second loop (loops.py)
    attach_operands(mapper, kernels)  # only wasteful global accesses sharing a statement (operands.py)
    attach_address_origins(mapper, kernels)  # only wasteful accesses, in functions with lane-varying loads
    attach_strong_accesses(mapper, kernels)  # volatile and scoped global loads and stores (memory_order.py)
    attach_atomic_results(mapper, kernels)  # atomics whose old value the program uses (atomic_results.py)
    attach_frame_saves(mapper, kernels)  # called functions' register saves in local memory (frame_saves.py)
    notes.extend(note for note in _merge_lineless(mapper.notes) if note not in notes)


def _attach_value_types(run: RunDirectory, mapper: Any, kernels: list[dict[str, Any]], notes: list[str]) -> None:
    """Value mode's approximate redundancy: the share the run counted it within, and the loads' types (their
    SASS, only where approximate counts exist: value_types.py)."""
    share = (run.manifest.get("collector") or {}).get("values_approx")
    if not isinstance(share, (int, float)) or isinstance(share, bool) or share <= 0:
        return
    from reuselens.analyzer.value_types import attach_value_types

    for kernel in kernels:
        kernel["value_approx"] = float(share)
    attach_value_types(mapper, kernels, notes)


def _merge_lineless(mapper_notes: list[str]) -> list[str]:
    """One note for all modules without line info, where the mapper says it per module: a PyTorch run loads
    six library modules (cuBLAS, ATen) without it, and six notes buried the others."""
    from reuselens.analyzer.lineinfo.mapper import NO_LINE_INFO

    lineless = [
        note[len("module ") : -len(NO_LINE_INFO)]
        for note in mapper_notes
        if note.startswith("module ") and note.endswith(NO_LINE_INFO)
    ]
    if len(lineless) < 2:
        return list(mapper_notes)
    merged = (
        f"{len(lineless)} modules have no line info ({', '.join(lineless)}): library code, or built without "
        "-lineinfo; their findings name kernels and PCs (nvcc -lineinfo puts your own on source lines)"
    )
    out, placed = [], False
    for note in mapper_notes:
        if note.startswith("module ") and note.endswith(NO_LINE_INFO):
            if not placed:
                out.append(merged)
                placed = True
        else:
            out.append(note)
    return out


class _SourceLines:
    """Source lines by (file, line number), each readable file read once; None for a file or line that cannot be read."""

    def __init__(self) -> None:
        self._files: dict[str, list[str] | None] = {}
        self.statements: dict[tuple[str, int], int | None] = {}  # statement_line by (path, line): PCs share lines

    def get(self, path: str, line: int) -> str | None:
        if path not in self._files:
            try:
                self._files[path] = Path(path).read_text(errors="replace").splitlines()
            except (OSError, ValueError):
                self._files[path] = None
        text = self._files[path]
        return text[line - 1] if text is not None and 0 < line <= len(text) else None


def _mark_statement(source: dict[str, Any] | None, lines: _SourceLines) -> None:
    """Sets `statement_line` on a node's source whose line continues a statement begun on a line above
    (analyzer/statements.py): the rules take a statement written over several lines as one position."""
    if source and source.get("file") and source.get("line"):
        key = (source["file"], source["line"])
        if key not in lines.statements:
            lines.statements[key] = statement_line(lines.get, *key)
        start = lines.statements[key]
        if start is not None and start != source["line"]:
            source["statement_line"] = start


def _written_nowhere(location: Any, lines: _SourceLines) -> bool:
    """Whether a warp barrier's source line, and every line of its inline chain, can be read and names no barrier:
    one the compiler placed itself. ptxas puts WARPSYNC.ALL where a warp reconverges after a divergent loop, on the
    loop's line (Tango AlexNet's and ResNet's convolution loops, SHOC spmv's ELLPACK-R kernel: no barrier in the
    file, session 56), and removing it is no edit the developer can make. Every spelling of a warp barrier says
    "sync" (`__syncwarp()`, `tile.sync()`, `bar.warp.sync`); an unreadable line keeps the barrier the developer's."""
    frames = [(location.file, location.line), *((frame.file, frame.line) for frame in location.inline or ())]
    texts = [lines.get(path, line) if path and line else None for path, line in frames]
    return all(text is not None and "sync" not in text.lower() for text in texts)


def _lookup(mapper: Any, module: str | None, function: str, pc: int, notes: list[str]) -> Any:
    from reuselens.analyzer.errors import MappingError

    if not module:
        return None
    try:
        return mapper.lookup(module, function, pc)
    except MappingError as error:
        message = str(error)
        if message not in notes:
            notes.append(message)
        return None


def _kernel_location(mapper: Any, kernel: dict[str, Any], notes: list[str]) -> Any:
    from reuselens.analyzer.errors import MappingError

    if not kernel.get("module"):
        return None
    try:
        return mapper.kernel_location(kernel["module"], kernel["mangled"])
    except MappingError as error:
        if str(error) not in notes:
            notes.append(str(error))
        return None


def import_analysis_modules() -> None:
    """Import everything build_report imports on its way (the patterns, the line mapper). `reuselens profile`
    calls it in a thread while the application runs, so that the time between the app's exit and the summary
    holds the analysis alone. (No networkx: the report's path builds no networkx graph, analyzer/graph.py.)"""
    from reuselens.analyzer import (  # noqa: F401
        address_origin,
        atomic_results,
        frame_saves,
        graph,
        memory_order,
        names,
        operands,
        report,
    )
    from reuselens.analyzer.errors import MappingError  # noqa: F401
    from reuselens.analyzer.lineinfo import SourceMapper, demangle  # noqa: F401
    from reuselens.analyzer.patterns import registry  # noqa: F401  (the rules; the package itself loads them lazily)


def build_report(
    run_dir: str | Path,
    settings: dict[str, Any] | None = None,
    *,
    workers: int | None = None,
    prefix_map: dict[str, str] | None = None,
    progress: Progress | None = None,
    write: bool = True,
    split_configurations: bool = False,
) -> dict[str, Any]:
    """Analyse a run directory and (by default) write RUN/report.json. Returns the report dict. One kernel entry
    per kernel, or per kernel and launch configuration with ``split_configurations``."""
    from reuselens.analyzer.patterns.settings import DEFAULT_SETTINGS
    from reuselens.analyzer.report import save

    progress = progress or _no_progress
    run = open_run(run_dir)
    effective = {**DEFAULT_SETTINGS, **(settings or {})}
    graph_note = graph_nodes_note(run.manifest)
    if is_object_level(run):
        notes = [OBJECT_LEVEL_NOTE.format(run=run.path), *([graph_note] if graph_note else [])]
        report = _report_document(run, effective, notes, [], [])
        if write:
            save(report, run.report_path)
        return report
    from reuselens.analyzer.graph import annotate_kernel
    from reuselens.analyzer.patterns import find_report_findings

    result, from_online = engine_aggregates(run, workers, progress, split_configurations)
    kernels = result.get("kernels")
    if not isinstance(kernels, list):
        raise ReuseLensError(f"{run.path}: the engine produced no kernel list")
    _attach_names(run, result, from_online=from_online)
    notes: list[str] = list(result.get("notes", []))
    if graph_note:
        notes.append(graph_note)
    for kernel in kernels:
        annotate_kernel(kernel)
    _attach_sources(run, kernels, prefix_map or {}, notes, progress)
    progress("find patterns")
    for kernel, findings in zip(kernels, find_report_findings(kernels, effective, run.manifest.get("gpu"))):
        kernel["findings"] = findings
    report = _report_document(run, effective, notes, kernels, result.get("partial", []))
    if write:
        save(report, run.report_path)
    return report


# The note of a report whose run recorded no access trace (`profile --object-level`, docs/memory.md).
OBJECT_LEVEL_NOTE = (
    "object-level profile: the collector recorded which allocations each kernel touched, not every access, so "
    "there is no reuse analysis; the memory findings are on the allocation lines (`reuselens memory {run}`), and "
    "a profile without --object-level has both"
)


def graph_nodes_note(manifest: dict[str, Any]) -> str | None:
    """The note of a run whose app launched kernels through CUDA graphs: the collector lists their kernel nodes as
    launches but does not instrument them (docs/collector.md, "CUDA graphs"), so their accesses are not in the
    report. The count is run.json's collector.graph_kernel_nodes where the collector wrote it (its launch list stops
    listing launches that were not instrumented at 100,000), else the listed graph nodes."""
    nodes = [x for x in manifest.get("launches") or () if isinstance(x, dict) and x.get("graph_node")]
    counted = (manifest.get("collector") or {}).get("graph_kernel_nodes")
    skipped = (
        counted if isinstance(counted, int) and counted > 0 else sum(1 for x in nodes if not x.get("instrumented"))
    )
    if not skipped:
        return None
    kernels = len({x.get("kernel") for x in nodes if not x.get("instrumented")})
    return (
        f"{skipped} kernel launch(es){f' of {kernels} kernel(s)' if kernels else ''} ran inside CUDA graphs and "
        "were not analysed: the collector does not record kernels launched through graphs yet; launch them "
        "directly (without stream capture or cudaGraphLaunch) to analyse them"
    )


def is_object_level(run: RunDirectory) -> bool:
    return (run.manifest.get("collector") or {}).get("collection") == "objects"


def _report_document(
    run: RunDirectory,
    effective: dict[str, Any],
    notes: list[str],
    kernels: list[dict[str, Any]],
    partial_launches: list[Any],
) -> dict[str, Any]:
    from reuselens.analyzer.report import VERSION as REPORT_VERSION

    return {
        "format": "reuselens-report",
        "version": REPORT_VERSION,
        "tool": {"name": "reuselens", "version": __version__},
        "run": _run_fields(run, partial_launches),
        "settings": effective,
        "notes": notes,
        "kernels": kernels,
    }


def _run_fields(run: RunDirectory, partial_launches: list[Any]) -> dict[str, Any]:
    manifest = run.manifest
    return {
        "dir": str(run.path),
        "status": manifest.get("status", "partial"),
        "partial_reason": manifest.get("partial_reason"),
        "command": manifest.get("command"),
        "gpu": manifest.get("gpu", {}),
        "exit_code": manifest.get("exit_code"),
        "partial_launches": partial_launches,
    }


def save_with_run_fields(report: dict[str, Any], run_dir: str | Path) -> dict[str, Any]:
    """Write a report built (write=False) from the tool library's exit files before the app had gone, with the
    run's fields as run.json has them now (the launcher adds the status, the reason and the exit code after the
    exit): `reuselens profile` builds the report while the app tears down (docs/collector.md)."""
    from reuselens.analyzer.report import save

    run = open_run(run_dir)
    report["run"] = _run_fields(run, report["run"].get("partial_launches", []))
    save(report, run.report_path)
    return report
