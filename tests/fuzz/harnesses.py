"""Structure-aware fuzz harnesses for every reader of ReuseLens's on-disk formats (issue #20, item 9).

Each harness pairs a hypothesis strategy, which mutates a real recorded document (the runs in tests/data/runs and
the demo run: their run.json, analysis.json, traces, and the report.json built from them), with a target that
feeds one input to a public entry point: the CLI (`reuselens analyze|report|graph|diff` through
`reuselens.cli.main.main`), the language server's report model and settings parser, `replay.read_trace` and the
engine's replay entry. A target returns "ok" (accepted) or "rejected" (one clean error line); anything else, an
exception or a second line on stderr, is a finding and raises.

tests/fuzz/test_fuzz.py runs each harness with a short derandomized budget; benchmarks/fuzz.py runs the same
harnesses with a long one and counts inputs, crashes, tracebacks and hangs per harness.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import math
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[2]
SEED_RUNS = [REPO / "tests/data/runs" / name for name in ("kernel_fault", "multistream", "async_copies")]
DEMO_RUN = REPO / "reuselens/demo/run"

# Values at the edges of every type: past 64 bits, negative, not finite, huge, empty, control and surrogate
# characters, paths out of the run directory, the wrong container.
HOSTILE_SCALARS: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    1,
    31,
    32,
    33,
    1023,
    1024,
    1025,
    65535,
    65536,
    (1 << 31) - 1,
    1 << 31,
    (1 << 32) - 1,
    1 << 32,
    (1 << 63) - 1,
    1 << 63,
    (1 << 64) - 1,
    1 << 64,
    -(1 << 63),
    -(1 << 64),
    10**30,
    0.5,
    -0.0,
    1e308,
    -1e308,
    math.nan,
    math.inf,
    -math.inf,
    "",
    "0",
    "x" * 70000,
    "\0",
    "\ud800",
    "é漢字\u202e",
    "../../../etc/passwd",
    "/dev/zero",
    "modules/../../x",
    "%s%n{}",
    "k0",
]


class Rejected(Exception):
    """Not a finding: the input was refused with one clean line."""


@dataclass(frozen=True)
class Harness:
    name: str
    strategy: st.SearchStrategy
    target: Callable[[Any], str]  # "ok" or "rejected"; raises on a finding
    setup: Callable[[], None] = lambda: None


# -- mutation -----------------------------------------------------------------------------------------------------


def _containers(doc: Any, path: tuple = ()) -> list[tuple]:
    """Paths of every container (object or list) in doc, the root included."""
    out = [path]
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for key, value in items:
        if isinstance(value, (dict, list)):
            out.extend(_containers(value, path + (key,)))
    return out


def _at(doc: Any, path: tuple) -> Any:
    for key in path:
        doc = doc[key]
    return doc


hostile_values = st.one_of(
    st.sampled_from(HOSTILE_SCALARS),
    st.integers(min_value=-(1 << 70), max_value=1 << 70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    # a fresh copy each time: a later mutation must not change the value a later input draws
    st.sampled_from([[], {}, [[]], [None], [0, 0], [1, 1, 1], [[1 << 64, 1]], {"": None}, [-1, -1, -1]]).map(
        copy.deepcopy
    ),
)


EDGE_INTS = [
    0,
    1,
    2,
    3,
    31,
    32,
    33,
    1023,
    1024,
    4096,
    (1 << 31) - 1,
    (1 << 32) - 1,
    (1 << 53) + 1,
    (1 << 63) - 1,
    (1 << 64) - 1,
]
EDGE_STRINGS = [
    "",
    "k0",
    "global",
    "shared",
    "cold",
    "thread",
    "block",
    "\ud800",
    "é漢字\u202e",
    "x" * 5000,
    "a\nb",
    "../x",
    "_Z1fv",
    "sm_90",
    "$(rm -rf /)",
    "<script>alert(1)</script>",
    "[link](command:x)",
]


@st.composite
def same_type_value(draw: Any, old: Any) -> Any:
    """A value of the type already there, from the edges of its valid range: it passes the readers' type checks
    more often than a hostile value and so reaches the code behind them."""
    if isinstance(old, bool):
        return not old
    if isinstance(old, int):
        return draw(st.sampled_from(EDGE_INTS + [max(0, old - 1), old + 1]))
    if isinstance(old, float):
        return draw(st.sampled_from([0.0, 5e-324, 1e-300, 1.0, 1e300, 1.7976931348623157e308, old * 1e6]))
    if isinstance(old, str):
        return draw(st.sampled_from(EDGE_STRINGS))
    if isinstance(old, list):
        return [] if not old or draw(st.booleans()) else old * draw(st.integers(2, 3))
    if isinstance(old, dict):
        return {}
    return draw(st.sampled_from([0, "", False]))


@st.composite
def mutated_document(draw: Any, seed: Any, max_mutations: int = 4) -> Any:
    """A deep copy of `seed` with 1 to `max_mutations` structural changes at random places: a field dropped,
    retyped or set to an extreme value, a list entry duplicated or removed, an entry wrapped or nested deeper."""
    doc = copy.deepcopy(seed)
    for _ in range(draw(st.integers(1, max_mutations))):
        places = _containers(doc)
        parent = _at(doc, draw(st.sampled_from(places)))
        keys = list(parent.keys()) if isinstance(parent, dict) else list(range(len(parent)))
        op = draw(
            st.sampled_from(["tweak", "tweak", "tweak", "tweak", "set", "set", "drop", "dup", "wrap", "add", "empty"])
        )
        if not keys or op == "add":
            value = draw(hostile_values)
            if isinstance(parent, dict):
                parent[draw(st.sampled_from(["id", "nodes", "edges", "from", "pc", "source", "x", "kernels"]))] = value
            else:
                parent.append(value)
            continue
        key = draw(st.sampled_from(keys))
        if op == "tweak":
            parent[key] = draw(same_type_value(parent[key]))
        elif op == "set":
            parent[key] = draw(hostile_values)
        elif op == "drop":
            del parent[key]
        elif op == "dup" and isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
        elif op == "wrap":
            parent[key] = [parent[key]] if draw(st.booleans()) else {"value": parent[key]}
        elif op == "empty":
            parent[key] = type(parent[key])() if isinstance(parent[key], (dict, list, str)) else None
        else:
            parent[key] = str(parent[key])[:100]
    return doc


@st.composite
def document_bytes(draw: Any, seed: Any) -> bytes:
    """A mutated document serialised as Python's json writes it (NaN and Infinity included), sometimes cut short,
    byte-flipped or nested past any recursion limit."""
    raw = json.dumps(draw(mutated_document(seed)), allow_nan=True).encode("utf-8", "surrogatepass")
    damage = draw(st.sampled_from(["none"] * 12 + ["truncate", "flip", "deep", "bom"]))
    if damage == "truncate":
        raw = raw[: draw(st.integers(0, max(0, len(raw) - 1)))]
    elif damage == "flip" and raw:
        at = draw(st.integers(0, len(raw) - 1))
        raw = raw[:at] + bytes([raw[at] ^ draw(st.integers(1, 255))]) + raw[at + 1 :]
    elif damage == "deep":
        depth = draw(st.sampled_from([1000, 100_000]))
        raw = raw[:-1] + b', "deep": ' + b"[" * depth + b"]" * depth + b"}"
    elif damage == "bom":
        raw = b"\xef\xbb\xbf" + raw
    return raw


# -- running the CLI ------------------------------------------------------------------------------------------------


def run_cli(argv: list[str]) -> str:
    """`reuselens ARGV` in-process: exit 0 is "ok", exit 2 with exactly one `reuselens: error:` line is "rejected";
    any other exit, an exception or a traceback on stderr is a finding."""
    from reuselens.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    lines = [line for line in err.getvalue().splitlines() if line.startswith("reuselens: error:")]
    if "Traceback" in err.getvalue():
        raise AssertionError(f"traceback on stderr: {err.getvalue()[-2000:]}")
    if code == 0:
        return "ok"
    if code == 2 and len(lines) == 1 and "\n" not in lines[0]:
        return "rejected"
    raise AssertionError(f"exit {code}, stderr {err.getvalue()[-2000:]!r}")


class _Workdir:
    """One scratch copy per seed run, reused by every input (only the mutated file changes)."""

    def __init__(self) -> None:
        self.root: Path | None = None
        self.runs: dict[str, Path] = {}

    def run(self, seed: Path) -> Path:
        if self.root is None:
            self.root = Path(tempfile.mkdtemp(prefix="reuselens-fuzz-"))
        if seed.name not in self.runs:
            target = self.root / seed.name
            shutil.copytree(seed, target, ignore=shutil.ignore_patterns("report.json", "*.csv"))
            self.runs[seed.name] = target
        return self.runs[seed.name]

    def file(self, name: str) -> Path:
        if self.root is None:
            self.root = Path(tempfile.mkdtemp(prefix="reuselens-fuzz-"))
        return self.root / name


WORK = _Workdir()


def _seed_json(seed: Path, name: str) -> Any:
    return json.loads((seed / name).read_text(encoding="utf-8"))


def _restore(run: Path, seed: Path, names: tuple[str, ...]) -> None:
    for name in names:
        shutil.copyfile(seed / name, run / name)
    (run / "report.json").unlink(missing_ok=True)


# -- run.json and analysis.json through `reuselens analyze` ------------------------------------------------------

RUN_SEEDS = {seed.name: _seed_json(seed, "run.json") for seed in SEED_RUNS}
ANALYSIS_SEEDS = {seed.name: _seed_json(seed, "analysis.json") for seed in SEED_RUNS}
seed_names = st.sampled_from(sorted(RUN_SEEDS))


@st.composite
def run_json_inputs(draw: Any) -> tuple[str, bytes, bool]:
    name = draw(seed_names)
    return name, draw(document_bytes(RUN_SEEDS[name])), draw(st.booleans())  # replay or use the online analysis


def analyze_with_run_json(case: tuple[str, bytes, bool]) -> str:
    name, raw, replay = case
    seed = next(s for s in SEED_RUNS if s.name == name)
    run = WORK.run(seed)
    _restore(run, seed, ("run.json", "analysis.json"))
    (run / "run.json").write_bytes(raw)
    if replay:
        (run / "analysis.json").unlink()
    return run_cli(["analyze", str(run), "--workers", "1", "--quiet"])


@st.composite
def analysis_json_inputs(draw: Any) -> tuple[str, bytes]:
    name = draw(seed_names)
    return name, draw(document_bytes(ANALYSIS_SEEDS[name]))


def analyze_with_analysis_json(case: tuple[str, bytes]) -> str:
    name, raw = case
    seed = next(s for s in SEED_RUNS if s.name == name)
    run = WORK.run(seed)
    _restore(run, seed, ("run.json", "analysis.json"))
    (run / "analysis.json").write_bytes(raw)
    return run_cli(["analyze", str(run), "--workers", "1", "--quiet"])


# -- report.json through `report`, `graph`, `diff` and the server's model -----------------------------------------

REPORT_SEEDS: dict[str, Any] = {}


def build_report_seeds() -> None:
    """report.json of the demo run and the seed runs, as `reuselens analyze` writes them (built once)."""
    if REPORT_SEEDS:
        return
    from reuselens.analyzer.pipeline import build_report

    for seed in (DEMO_RUN, *SEED_RUNS):
        REPORT_SEEDS[seed.name] = json.loads(json.dumps(build_report(seed, workers=1, write=False)))
    for fixture in sorted((REPO / "tests/lsp/fixtures").glob("run*/report.json")):
        REPORT_SEEDS[f"lsp-{fixture.parent.name}"] = json.loads(fixture.read_text(encoding="utf-8"))


REPORT_SEED_NAMES = ("run", *(seed.name for seed in SEED_RUNS), "lsp-run1", "lsp-run2")


@st.composite
def report_inputs(draw: Any) -> tuple[bytes, str]:
    build_report_seeds()
    seed = REPORT_SEEDS[draw(st.sampled_from(REPORT_SEED_NAMES))]
    command = draw(
        st.sampled_from(
            ["report", "report-json", "report-csv", "report-sarif", "graph-html", "graph-dot", "graph-graphml", "diff"]
        )
    )
    return draw(document_bytes(seed)), command


def cli_with_report(case: tuple[bytes, str]) -> str:
    raw, command = case
    path = WORK.file("report.json")
    path.write_bytes(raw)
    verb, _, form = command.partition("-")
    if verb == "diff":
        build_report_seeds()
        before = WORK.file("before.json")
        if not before.exists():
            before.write_text(json.dumps(REPORT_SEEDS["run"]), encoding="utf-8")
        return run_cli(["diff", str(before), str(path)])
    argv = [verb, str(path)] + (["--format", form] if form else [])
    return run_cli(argv)


def server_report_model(case: tuple[bytes, str]) -> str:
    """What the server does with a report.json: read it within its limits, parse it with the one reader, index it
    (lsp_server.model.RunResults) and walk the index as the editor features do."""
    from reuselens.analyzer.errors import ReportError
    from reuselens.lsp_server.model import RunResults
    from reuselens.lsp_server.report_source import load

    raw, _ = case
    path = WORK.file("server-report.json")
    path.write_bytes(raw)
    try:
        report, digest = load(path)
    except ReportError as error:
        _one_line(str(error))
        return "rejected"
    results = RunResults(report, str(path), digest, {"/old": "/new"})
    for ref in results.hot_spots():
        results.edges_from(ref.kernel, ref.finding.get("pcs", [0])[0] if ref.finding.get("pcs") else 0)
    for kernel in results.kernels:
        results.kernel(str(kernel.get("id")))
        for node in kernel.get("nodes") or []:
            results.node(kernel, node["id"])
    results.files()
    return "ok"


def _one_line(message: str) -> None:
    if "\n" in message or not message:
        raise AssertionError(f"error message is not one line: {message!r}")


# -- the server's settings -----------------------------------------------------------------------------------------

json_values = st.recursive(
    st.one_of(st.sampled_from(HOSTILE_SCALARS), st.text(max_size=30), st.integers(), st.floats()),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)


@st.composite
def settings_inputs(draw: Any) -> Any:
    from reuselens.lsp_server.settings import DEFAULTS

    if draw(st.booleans()):
        return draw(json_values)
    raw = {key: copy.deepcopy(value) for key, value in DEFAULTS.items()}
    for key in draw(st.lists(st.sampled_from(sorted(DEFAULTS)), min_size=1, max_size=5)):
        raw[key] = draw(json_values)
    if draw(st.booleans()):  # nested, as VS Code sends the section
        nested: dict[str, Any] = {}
        for key, value in raw.items():
            *parents, leaf = key.split(".")
            node = nested
            for part in parents:
                node = node.setdefault(part, {}) if isinstance(node.get(part, {}), dict) else {}
            node[leaf] = value
        raw = {"reuselens": nested} if draw(st.booleans()) else nested
    return raw


def server_settings(raw: Any) -> str:
    from reuselens.lsp_server.settings import Settings, parse

    settings, problems = parse(raw, "/workspace")
    if not isinstance(settings, Settings):
        raise AssertionError(f"parse returned {type(settings).__name__}")
    for problem in problems:
        _one_line(problem)
    return "rejected" if problems else "ok"


# -- traces: read_trace and the engine's replay entry ------------------------------------------------------------

TRACE_SEEDS = {seed.name: sorted((seed / "traces").glob("*.rltrace")) for seed in SEED_RUNS}


@st.composite
def trace_inputs(draw: Any) -> tuple[str, int, bytes]:
    from reuselens.analyzer.replay import HEADER_BYTES, RECORD_BYTES

    name = draw(seed_names)
    index = draw(st.integers(0, len(TRACE_SEEDS[name]) - 1))
    raw = bytearray(TRACE_SEEDS[name][index].read_bytes()[: HEADER_BYTES + 64 * RECORD_BYTES])
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["header", "header", "record", "record", "truncate", "extend"]))
        if op == "truncate":
            del raw[draw(st.integers(0, len(raw))) :]
        elif op == "extend":
            raw += draw(st.binary(max_size=2 * RECORD_BYTES))
        elif raw:
            span = HEADER_BYTES if op == "header" else len(raw)
            at = draw(st.integers(0, max(0, min(span, len(raw)) - 1)))
            width = draw(st.sampled_from([1, 2, 4, 8]))
            value = draw(st.sampled_from([0, 0xFF, 0x7F, 0x80]) | st.integers(0, 255))
            raw[at : at + width] = bytes([value]) * len(raw[at : at + width])
    return name, index, bytes(raw)


def replay_trace(case: tuple[str, int, bytes]) -> str:
    """The trace through read_trace, then the run through the engine's replay entry (replay.replay_run)."""
    from reuselens.analyzer.errors import ReuseLensError
    from reuselens.analyzer.replay import read_trace, replay_run

    name, index, raw = case
    seed = next(s for s in SEED_RUNS if s.name == name)
    run = WORK.run(seed)
    _restore(run, seed, ("run.json",))
    for original in TRACE_SEEDS[name]:
        shutil.copyfile(original, run / "traces" / original.name)
    path = run / "traces" / TRACE_SEEDS[name][index].name
    path.write_bytes(raw)
    try:
        read_trace(path)
        replay_run(run, workers=1, shadow_budget_bytes=64 << 20)
    except ReuseLensError as error:
        _one_line(str(error))
        return "rejected"
    return "ok"


HARNESSES = [
    Harness("settings", settings_inputs(), server_settings),
    Harness("server_report", report_inputs(), server_report_model, build_report_seeds),
    Harness("cli_report", report_inputs(), cli_with_report, build_report_seeds),
    Harness("trace_replay", trace_inputs(), replay_trace),
    Harness("analyze_run_json", run_json_inputs(), analyze_with_run_json),
    Harness("analyze_analysis_json", analysis_json_inputs(), analyze_with_analysis_json),
]
