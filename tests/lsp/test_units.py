"""Unit tests of the server's pure parts: settings validation, compiler-output parsing, line tracking,
path mapping and the refusal cases of the mechanical edits."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from reuselens.lsp_server import edits, profiling, settings
from reuselens.lsp_server import markdown as md
from reuselens.lsp_server.compiler_output import parse
from reuselens.lsp_server.paths import map_path
from reuselens.lsp_server.tracking import LineMap

REPO = Path(__file__).parents[2]


def test_defaults_equal_docs_settings_md():
    rows = re.findall(
        r"^\| `reuselens\.([^`]+)` \| [^|]+ \| `([^`]*)` \|", (REPO / "docs" / "settings.md").read_text(), re.MULTILINE
    )
    import json

    assert {name: json.loads(value) for name, value in rows} == settings.DEFAULTS


def test_parse_expands_workspace_folder_and_keeps_valid_values():
    parsed, problems = settings.parse(
        {
            "profile": {"command": ["./app", "${workspaceFolder}/in.bin"]},
            "reuselens.timeoutSeconds": 5,
            "thresholds": {"delta": "x"},
        },
        "/ws",
    )
    assert parsed.profile_command == ["./app", "/ws/in.bin"]
    assert parsed.timeout_seconds == 5.0 and parsed.run_directory == "/ws/.reuselens/run"
    assert parsed.thresholds["delta"] == 0.8
    assert problems == ["Setting reuselens.thresholds.delta must be a number; using the default 0.8."]
    assert settings.parse("nonsense", "/ws")[1] == ["The reuselens settings must be an object; using the defaults."]
    assert settings.parse({"launchRange": "3-4", "timeoutSeconds": 0}, "/ws")[1] == [
        'Setting reuselens.launchRange must look like "A:B" (e.g. "0:10"); using the default \'\'.',
        "Setting reuselens.timeoutSeconds must be positive; using the default 300.",
    ]


def test_compiler_output_both_forms_and_no_false_positives():
    out = parse(
        'a.cu(12): error: expected a ";"\n'
        'detected during instantiation of "void f<T>()" at line 30 of b.cu\n'
        "/x/y.cuh:7:3: fatal error: missing.h: No such file or directory\n"
        'c.cu(4): warning #550-D: variable "z" was set but never used\n'
        "ptxas info    : Used 10 registers\n"
        "make: *** [Makefile:3: all] Error 1\n",
        "/ws",
    )
    assert [(m.path, m.line, m.column, m.severity) for m in out] == [
        ("/ws/a.cu", 12, 0, "error"),
        ("/x/y.cuh", 7, 3, "error"),
        ("/ws/c.cu", 4, 0, "warning"),
    ]


def test_line_map_follows_insertions_and_drops_edited_lines():
    old = ["a", "b", "c", "d"]
    new = ["x", "a", "b", "C", "d"]
    m = LineMap.aligned(old, new)
    assert [m.to_current(i) for i in (1, 2, 3, 4)] == [2, 3, None, 5]
    assert [m.to_snapshot(i) for i in (1, 2, 4, 5)] == [None, 1, None, 4]
    assert LineMap.aligned(old, old).to_current(5) is None


def _range(a, b, c, d):
    from lsprotocol import types

    return types.Range(types.Position(a, b), types.Position(c, d))


def test_shift_follows_ranged_changes():
    from reuselens.lsp_server.tracking import shift

    ident = {i: i for i in range(1, 6)}
    assert shift(ident, _range(1, 0, 1, 0), "x\ny\n") == {1: 1, 2: 4, 3: 5, 4: 6, 5: 7}  # 2 lines above b
    assert shift(ident, _range(1, 0, 3, 0), "") == {1: 1, 4: 2, 5: 3}  # b, c deleted
    assert shift(ident, _range(2, 0, 2, 1), "C") == {1: 1, 2: 2, 3: 3, 4: 4, 5: 5}  # c: candidate only
    assert shift(ident, _range(2, 1, 3, 1), "") == {1: 1, 2: 2, 3: 3, 5: 4}  # c, d joined


def test_tracker_drops_edited_lines_and_checks_text(tmp_path):
    from lsprotocol import types

    from reuselens.lsp_server.tracking import Tracker

    snap = ["a", "b", "c", "b"]
    t = Tracker()
    t.reset({"/f": snap})
    t.opened("/f", "a\nb\nc\nb\n")
    # move the first "b" below "c": delete line 2, insert it after line 3 -> the text "b" exists twice
    changes = [
        types.TextDocumentContentChangePartial(range=_range(1, 0, 2, 0), text=""),
        types.TextDocumentContentChangePartial(range=_range(2, 0, 2, 0), text="b\n"),
    ]
    t.changed("/f", changes, "a\nc\nb\nb\n")
    line_map = t.line_map("/f", 2, "a\nc\nb\nb\n")
    assert [line_map.to_current(i) for i in (1, 2, 3, 4)] == [1, None, 2, 4]


def test_alignment_of_an_unchanged_file_is_the_identity_and_of_an_edited_one_the_diff():
    from reuselens.lsp_server.tracking import _align

    lines = [f"line {i}" for i in range(1, 1201)]
    assert _align(lines, list(lines)) == {k: k for k in range(1, 1201)}  # opened as profiled: no diff run
    edited = lines[:10] + ["// new"] + lines[10:]
    aligned = _align(lines, edited)
    assert aligned[10] == 10 and aligned[11] == 12 and aligned[1200] == 1201


def test_closed_file_changed_on_disk_is_realigned(tmp_path):
    from reuselens.lsp_server.source_files import SourceFiles
    from reuselens.lsp_server.tracking import Tracker, disk_stamp

    f = tmp_path / "k.cu"
    f.write_text("a\nb\nc\n")
    t = Tracker(SourceFiles([str(tmp_path)]).text)
    t.reset({str(f): ["a", "b", "c"]}, {str(f): disk_stamp(str(f))})
    assert t.line_map(str(f), None, None).to_current(3) == 3
    f.write_text("new\na\nb\nchanged\n")
    line_map = t.line_map(str(f), None, None)
    assert [line_map.to_current(i) for i in (1, 2, 3)] == [2, 3, None]
    assert t.disk_lines(str(f)) == ["new", "a", "b", "changed"]


def test_prefix_map_matches_whole_components_only():
    prefixes = {"/build": "/ws", "/build/sub/": "/other"}
    assert map_path("/build/sub/k.cu", prefixes) == "/other/k.cu"
    assert map_path("/build/k.cu", prefixes) == "/ws/k.cu"
    assert map_path("/buildx/k.cu", prefixes) == "/buildx/k.cu"
    assert map_path("rel/k.cu", {}, "/cwd") == "/cwd/rel/k.cu"


def test_padding_refused_when_array_escapes_by_pointer():
    lines = [
        "__global__ void k(float *o) {",
        "    __shared__ float t[32][32];",
        "    float *p = &t[0][0];",
        "    o[0] = t[threadIdx.x][0] + p[1];",
        "}",
    ]
    assert "address of an element of t is taken on line 3" in edits.padding(lines, 4)
    lines[2] = "    float (*p)[32] = t;"
    assert "used other than as t[i][j] on line 3" in edits.padding(lines, 4)


def test_padding_of_macro_and_expression_sizes_and_refusal_for_extern_arrays():
    # cuda-samples transpose: __shared__ float tile[TILE_DIM][TILE_DIM]; the sample's own fix is TILE_DIM + 1
    edit = edits.padding(["__shared__ float tile[TILE_DIM][TILE_DIM];", "x = tile[1][2];"], 2)
    assert isinstance(edit, edits.Edit) and edit.text == "TILE_DIM + 1"
    assert edits.padding(["__shared__ float t[N][2 * B];", "x = t[1][2];"], 2).text == "(2 * B) + 1"
    assert isinstance(edits.padding(["extern __shared__ float t[][32];", "x = t[1][2];"], 2), str)
    assert isinstance(edits.padding(["__shared__ float t[4][];", "x = t[1][2];"], 2), str)


def test_padding_picks_the_declaration_in_scope_when_kernels_reuse_a_name():
    lines = [
        "__global__ void a(float *o) {",
        "  __shared__ float tile[32][32];",
        "  float *p = &tile[0][0];",  # escapes, but only in kernel a
        "}",
        "__global__ void b(float *o) {",
        "  __shared__ float tile[32][32];",
        "  o[0] = tile[threadIdx.x][1];",
        "}",
    ]
    edit = edits.padding(lines, 7)
    assert isinstance(edit, edits.Edit) and (edit.line, edit.text) == (6, "33")
    assert "address of an element of tile is taken on line 3" in edits.padding(lines[:4] + ["  x = tile[1][2];"], 5)


def test_barrier_removal_refused_under_braceless_if_and_in_macros():
    assert "body of a statement" in edits.barrier_removal(["  if (x)", "    __syncthreads();"], 2, True)
    assert "not alone" in edits.barrier_removal(["  __syncthreads(); x = 1;"], 1, True)
    assert "macro" in edits.barrier_removal(["#define S \\", "  __syncthreads();"], 2, True)
    assert isinstance(edits.barrier_removal(["  x = 1;", "  __syncthreads(); // sync"], 2, True), edits.Edit)


def test_barrier_removal_accepts_the_other_barrier_calls_a_line_can_hold():
    for call in (
        "cg::sync(cta);",
        "cooperative_groups::sync(block);",
        "cta.sync();",
        "__syncwarp();",
        "__syncwarp(0xffffffff);",
        "__barrier_sync(0);",
    ):
        assert isinstance(edits.barrier_removal(["  x = 1;", f"  {call}"], 2, True), edits.Edit), call
    for call in ("cg::sync(cta); y = 2;", "__syncthreads_count(p);", "grid.sync(); x++;"):
        assert isinstance(edits.barrier_removal(["  x = 1;", f"  {call}"], 2, True), str), call


def test_constant_promotion_refused_without_const_or_over_capacity():
    assert isinstance(edits.constant_promotion(["__device__ float c[4] = {1};", "y = c[i];"], 2, 65536), str)
    assert "does not fit" in edits.constant_promotion(
        ["__device__ const double c[10000] = {1};", "y = c[i];"], 2, 65536
    )
    ok = edits.constant_promotion(["static __device__ const int c[4] = {1, 2};", "y = c[i];"], 2, 65536)
    assert isinstance(ok, edits.Edit) and (ok.line, ok.start, ok.end) == (1, 7, 17)


def test_kernel_filter_setting_is_checked_with_the_collectors_syntax():
    """Python's re accepts \\d, which the collector's POSIX regex would read as a plain "d"."""
    from reuselens.collector.kernel_regex import kernel_regex_problem

    parsed, problems = settings.parse({"kernelFilter": "\\d+_gemm"}, "/ws", kernel_regex_problem)
    assert parsed.kernel_filter == "" and len(problems) == 1
    assert "reuselens.kernelFilter is not a valid regular expression (\\d is not POSIX extended syntax" in problems[0]
    assert settings.parse({"kernelFilter": "^softmax|gemm"}, "/ws", kernel_regex_problem)[1] == []


def test_default_profiler_argv_carries_filters_thresholds_and_timeout():
    parsed, _ = settings.parse(
        {
            "profile": {"command": ["./app", "-n", "4"]},
            "kernelFilter": "soft.*",
            "launchRange": "0:10",
            "timeoutSeconds": 60,
            "thresholds": {"delta": 0.7},
        },
        "/ws",
    )
    argv = profiling.profiler_argv(parsed, "/ws/.reuselens/run")
    assert argv[:6] == [sys.executable, "-m", "reuselens", "profile", "--run-dir", "/ws/.reuselens/run"]
    assert argv[6:10] == ["--kernel-filter", "soft.*", "--launch-range", "0:10"]
    assert argv[argv.index("--delta") + 1] == "0.7" and argv[argv.index("--min-share") + 1] == "0.01"
    assert argv[-6:] == ["--timeout", "60", "--", "./app", "-n", "4"]
    override, _ = settings.parse({"profile": {"command": ["./app"]}, "profiler": {"command": ["fake", "-x"]}}, "/ws")
    assert profiling.profiler_argv(override, "D") == ["fake", "-x", "--run-dir", "D", "--", "./app"]
    assert "--per-configuration" not in argv
    split, _ = settings.parse({"profile": {"command": ["./app"]}, "perConfiguration": True}, "/ws")
    assert "--per-configuration" in profiling.profiler_argv(split, "D")
    assert "--object-level" not in argv
    objects, _ = settings.parse({"profile": {"command": ["./app"]}, "memory": {"objectLevel": True}}, "/ws")
    assert "--object-level" in profiling.profiler_argv(objects, "D")
    assert "--intra-object" not in argv
    intra, _ = settings.parse({"profile": {"command": ["./app"]}, "memory": {"intraObject": True}}, "/ws")
    assert "--intra-object" in profiling.profiler_argv(intra, "D")
    assert "--values" not in argv
    values, _ = settings.parse({"profile": {"command": ["./app"]}, "values": True}, "/ws")
    assert "--values" in profiling.profiler_argv(values, "D")
    with_values = profiling.profiler_argv(values, "D")
    assert with_values[with_values.index("--values-approx") + 1] == "0.01"  # the default share
    finer, _ = settings.parse({"profile": {"command": ["./app"]}, "values": True, "valuesApproximation": 0.001}, "/ws")
    assert "0.001" in profiling.profiler_argv(finer, "D")
    _, problems = settings.parse({"profile": {"command": ["./app"]}, "valuesApproximation": 3}, "/ws")
    assert problems == [
        "Setting reuselens.valuesApproximation must be a share between 0 and 1 (0.01 = 1%); using the default 0.01."
    ]
    both, _ = settings.parse(
        {"profile": {"command": ["./app"]}, "values": True, "memory": {"objectLevel": True}}, "/ws"
    )
    assert "--values" not in profiling.profiler_argv(both, "D")  # an object-level profile records no values


def test_default_profiler_argv_passes_every_threshold_the_way_the_cli_reads_it():
    from reuselens.analyzer.patterns.settings import THRESHOLDS
    from reuselens.cli.common import settings_from_args
    from reuselens.cli.main import build_parser

    parsed, _ = settings.parse({"profile": {"command": ["./app"]}, "thresholds": {"minShare": 0.25}}, "/ws")
    argv = profiling.profiler_argv(parsed, "D")
    assert argv[:3] == [sys.executable, "-m", "reuselens"]
    expected = {threshold.key: float(threshold.default) for threshold in THRESHOLDS} | {"minShare": 0.25}
    assert settings_from_args(build_parser().parse_args(argv[3:])) == expected


def test_hover_shows_the_inline_chain_innermost_first():
    from reuselens.lsp_server import hover
    from reuselens.lsp_server.model import RunResults

    node = {
        "id": 1,
        "space": "global",
        "type": "read",
        "size": 4,
        "pc": 16,
        "bytes": 8,
        "executions": 1,
        "source": {
            "file": "/b/h.cuh",
            "line": 9,
            "inline": [
                {"function": "poly(float)", "file": "/b/h.cuh", "line": 9},
                {"function": "kern(float*)", "file": "/b/k.cu", "line": 37},
            ],
        },
    }
    report = {
        "kernels": [
            {
                "id": "k0",
                "name": "kern(float*)",
                "nodes": [{"id": 0}, node],
                "edges": [{"from": 1, "to": 0, "label": "cold", "bytes": 8}],
            }
        ]
    }
    text = hover.markdown(RunResults(report, "/r/report.json", "d", {"/b": "/ws"}), "/ws/h.cuh", 9)
    assert (
        "inline chain: `poly(float)` at [h.cuh:9](file:///ws/h.cuh#L9) ← `kern(float*)` at "
        "[k.cu:37](file:///ws/k.cu#L37)" in text
    )


def _shared_node(node_id: int, access: str, nbytes: int, executions: int, source: dict) -> dict:
    """A 4-byte shared-memory PC of a hand-built report kernel."""
    return {
        "id": node_id,
        "space": "shared",
        "type": access,
        "size": 4,
        "pc": 16 * node_id,
        "bytes": nbytes,
        "executions": executions,
        "source": source,
    }


def test_a_line_of_a_hundred_pcs_gets_a_bounded_hover():
    """cuda-samples sortingNetworks: the inlined comparator puts 123 PCs of 3 kernels on one line (an 80 KB hover,
    measured by benchmarks/lsp_realapps.py); the hover shows each kernel's heaviest PCs and sums the rest."""
    from reuselens.lsp_server import hover
    from reuselens.lsp_server.model import RunResults

    kernels = []
    for k in range(6):
        nodes = [{"id": 0}]
        edges = []
        for i in range(1, 41):
            nodes.append(_shared_node(i, "read", 1000 * i, i, {"file": "/b/common.cuh", "line": 44}))
            edges += [{"from": i, "to": j, "label": "thread", "bytes": 10 + j} for j in range(41, 51)]
        nodes += [_shared_node(j, "write", 4, 1, {"file": "/b/common.cuh", "line": 100 + j}) for j in range(41, 51)]
        kernels.append({"id": f"k{k}", "name": f"sort{k}(unsigned*)", "nodes": nodes, "edges": edges})
    text = hover.markdown(RunResults({"kernels": kernels}, "/r/report.json", "d", {}), "/b/common.cuh", 44)
    assert len(text.encode()) <= 20 * 1024
    assert text.count("| +34 more PCs |") == hover.MAX_KERNELS
    assert "`0x0280`" in text and "`0x0010`" not in text  # the heaviest PCs (40 is the heaviest), not the first
    assert "Also on this line: `sort" in text and "+7 more" in text  # origins beyond three are counted


def test_template_library_inline_chains_keep_the_hover_bounded():
    """cuda-samples globalToShmemAsyncCopy: a line calling cuda::pipeline drew four inline chains through libcu++,
    each naming functions of several KB (a 22 KB hover, session 45); a hover shows three chains, each name cut."""
    from reuselens.lsp_server import hover
    from reuselens.lsp_server.model import RunResults

    template = "cuda::std::__4::__cuda_atomic_load<" + "integral_constant<int, 5>, " * 200 + ">"
    nodes = [{"id": 0}]
    for i in range(1, 7):
        chain = [{"function": f"{template}#{i}", "file": "/usr/local/cuda/include/cuda/pipeline", "line": 100 + i}]
        chain.append({"function": "kern(float*)", "file": "/b/k.cu", "line": 37})
        nodes.append(
            _shared_node(
                i, "read", 100, 1, {"file": "/usr/local/cuda/include/cuda/pipeline", "line": 100 + i, "inline": chain}
            )
        )
    report = {"kernels": [{"id": "k0", "name": "kern(float*)", "nodes": nodes, "edges": []}]}
    text = hover.markdown(RunResults(report, "/r/report.json", "d", {}), "/b/k.cu", 37)  # the app's call site
    assert text is not None and len(text.encode()) < 6 * 1024
    assert text.count("inline chain: ") == hover.MAX_CHAINS and "(+3 more inline chains)" in text
    assert "…` at" in text and "integral_constant<int, 5>, " * 10 not in text


def test_names_in_comments_and_strings_are_not_uses():
    lines = [
        "// the tile transpose: tile is read by column",
        "__shared__ float tile[32][32]; /* tile */",
        'printf("tile %d", 1);',
        "x = tile[threadIdx.x][threadIdx.y];",
    ]
    edit = edits.padding(lines, 4)
    assert isinstance(edit, edits.Edit) and (edit.line, edit.text) == (2, "33")
    assert edits.code_only(['a = "x // y"; // z', "/* a", "b */ c;"]) == ['a = "      ";     ', "    ", "     c;"]


def test_read_capped_reads_only_small_regular_files(tmp_path):
    import os

    from reuselens.lsp_server.source_files import UnreadableFile, read_capped

    small = tmp_path / "k.cu"
    small.write_bytes(b"0123456789")
    assert read_capped(small, 10) == b"0123456789"
    with pytest.raises(UnreadableFile, match="larger than"):
        read_capped(small, 9)
    os.mkfifo(tmp_path / "fifo")  # no writer: a blocking open would never return
    for special in (tmp_path / "fifo", "/dev/zero"):
        with pytest.raises(UnreadableFile, match="not a regular file"):
            read_capped(special, 1 << 20)


def test_source_files_stay_under_their_roots(tmp_path):
    from reuselens.lsp_server.source_files import SourceFiles

    ws, mapped, elsewhere = tmp_path / "ws", tmp_path / "src", tmp_path / "elsewhere"
    for d in (ws, mapped, elsewhere):
        d.mkdir()
        (d / "k.cu").write_text("k\n")
    (ws / "link.cu").symlink_to(elsewhere / "k.cu")
    sources = SourceFiles([str(ws), str(mapped)])
    assert sources.text(str(ws / "k.cu")) == "k\n" and sources.text(str(mapped / "k.cu")) == "k\n"
    assert sources.text(str(elsewhere / "k.cu")) is None
    assert sources.text(str(ws / ".." / "elsewhere" / "k.cu")) is None
    assert sources.text(str(ws / "link.cu")) is None
    assert sources.text("/dev/stdin") is None


def test_hover_shows_report_names_as_literal_text():
    # a report is workspace data: its names must not add links, end code spans or split table cells
    from reuselens.lsp_server.hover import markdown
    from reuselens.lsp_server.model import RunResults

    path = "/ws/a_[x](javascript:evil)|b.cu"
    source = {"file": path, "line": 3, "inline": [{"function": "f`` [y](javascript:evil)", "file": path, "line": 1}]}
    report = {
        "kernels": [
            {
                "id": "k0",
                "name": "k`|[z](javascript:evil)",
                "nodes": [
                    {"id": 0, "space": None},
                    {
                        "id": 1,
                        "pc": 16,
                        "space": "global",
                        "type": "read",
                        "size": 4,
                        "bytes": 128,
                        "executions": 1,
                        "source": source,
                        "sass": "LDG.E R0\n```\n[w](javascript:evil)",
                    },
                    {
                        "id": 2,
                        "pc": 32,
                        "space": "global",
                        "type": "write",
                        "size": 4,
                        "bytes": 128,
                        "executions": 1,
                        "source": {"file": path, "line": 3},
                    },
                ],
                "edges": [{"from": 1, "to": 2, "label": "warp", "bytes": 128}],
                "findings": [{"id": "f1", "pattern": "p|q", "pcs": [1], "message": "see [v](javascript:evil) | here"}],
            }
        ]
    }
    text = markdown(RunResults(report, "/ws/report.json", "d", {}), path, 3)
    assert "· ``k`|[z](javascript:evil)`` · a\\_\\[x\\](javascript:evil)\\|b.cu:3" in text
    assert "**p\\|q**: see \\[v\\](javascript:evil) \\| here" in text
    assert "```f`` [y](javascript:evil)```" in text
    assert "\n````sass\n" in text and text.count("````") == 2
    table_rows = [l for l in text.splitlines() if l.startswith("| `0x")]
    assert len({l.replace("\\|", "").count("|") for l in table_rows[:2]}) == 1


def test_an_unchanged_report_is_not_parsed_again(tmp_path):
    from reuselens.analyzer.errors import ReportError
    from reuselens.lsp_server.report_source import load

    source = Path(__file__).resolve().parent / "fixtures" / "run1" / "report.json"
    report, digest = load(source)
    assert report is not None
    assert load(source, digest) == (None, digest)  # the same bytes: nothing parsed
    changed = tmp_path / "report.json"
    changed.write_bytes(source.read_bytes() + b"\n")
    report2, digest2 = load(changed, digest)
    assert report2 is not None and digest2 != digest
    changed.write_bytes(b"{}")  # a different, invalid report is still checked
    with pytest.raises(ReportError):
        load(changed, digest)


def test_hover_shows_value_redundancy_of_a_run_with_values():
    from reuselens.lsp_server import hover
    from reuselens.lsp_server.model import RunResults

    def node(pc: int, type_: str, values: dict | None) -> dict:
        entry = {
            "id": pc // 16,
            "space": "global",
            "type": type_,
            "size": 4,
            "pc": pc,
            "bytes": 4096 * 4,
            "executions": 128,
            "source": {"file": "/ws/v.cu", "line": 7},
        }
        return {**entry, "values": values} if values else entry

    load = node(16, "read", {"lanes": 4096, "zero": 1024, "silent": 0, "uniform": 32, "spatial": 0})
    store = node(32, "write", {"lanes": 4096, "zero": 0, "silent": 4096, "uniform": 0, "spatial": 0})
    report = {
        "kernels": [
            {
                "id": "k0",
                "name": "k(float*)",
                "nodes": [{"id": 0}, load, store],
                "edges": [
                    {"from": 1, "to": 0, "label": "cold", "bytes": 8192, "accesses": 2048},
                    {
                        "from": 1,
                        "to": 1,
                        "label": "thread",
                        "bytes": 8192,
                        "accesses": 2048,
                        "value_loads": 2048,
                        "same_value": 1536,
                    },
                    {"from": 2, "to": 0, "label": "cold", "bytes": 16384, "accesses": 4096},
                ],
            }
        ]
    }
    text = hover.markdown(RunResults(report, "/r/report.json", "d", {}), "/ws/v.cu", 7)
    assert "| PC | reloaded unchanged | zero | silent stores | warp-uniform |" in text
    assert "| `0x0010` | 75% | 25% | – | 25% |" in text  # 1536 of the 2048 loads with a value; 1024 zero lanes
    assert "| `0x0020` | – | – | 100% | – |" in text
    plain = {"kernels": [{**report["kernels"][0], "nodes": [{"id": 0}, node(16, "read", None)], "edges": []}]}
    assert "reloaded unchanged" not in hover.markdown(RunResults(plain, "/r/report.json", "d", {}), "/ws/v.cu", 7)
    # a float load of a run that counted approximate redundancy: its near repeats too
    kernel = report["kernels"][0]
    kernel["value_approx"] = 0.01
    kernel["nodes"][1]["value_type"] = "float"
    kernel["edges"][1]["approx_value"] = 512
    text = hover.markdown(RunResults(report, "/r/report.json", "d", {}), "/ws/v.cu", 7)
    assert "| `0x0010` | 75% (+25% within 1%) | 25% | – | 25% |" in text


def test_hover_names_volatile_accesses_and_where_a_gathers_address_was_loaded():
    from reuselens.lsp_server import hover
    from reuselens.lsp_server.model import RunResults

    def node(pc: int, line: int, **extra) -> dict:
        return {
            "id": pc // 16,
            "function": "k",
            "space": "global",
            "type": "read",
            "size": 4,
            "pc": pc,
            "bytes": 4096,
            "executions": 32,
            "source": {"file": "/ws/bfs.cu", "line": line},
            **extra,
        }

    frontier = node(16, 581)
    gather = node(32, 591, address_from=[16])
    cost = node(48, 594, strong=True)
    report = {"kernels": [{"id": "k0", "name": "k(int*)", "nodes": [{"id": 0}, frontier, gather, cost], "edges": []}]}
    results = RunResults(report, "/r/report.json", "d", {})
    assert "global read 4 B, address from [bfs.cu:581](file:///ws/bfs.cu#L581)" in hover.markdown(
        results, "/ws/bfs.cu", 591
    )
    assert "global read 4 B volatile |" in hover.markdown(results, "/ws/bfs.cu", 594)
    assert "volatile" not in hover.markdown(results, "/ws/bfs.cu", 581)
    assert "address from" not in hover.markdown(results, "/ws/bfs.cu", 581)


def test_hover_names_a_called_functions_register_saves_and_restores():
    from reuselens.lsp_server import hover
    from reuselens.lsp_server.model import RunResults

    def node(pc: int, line: int, type_: str, **extra) -> dict:
        return {
            "id": pc // 16,
            "function": "$k$rec",
            "space": "local",
            "type": type_,
            "size": 4,
            "pc": pc,
            "bytes": 128,
            "executions": 1,
            "source": {"file": "/ws/rec.cu", "line": line},
            **extra,
        }

    nodes = [{"id": 0}, node(16, 10, "write", frame="save"), node(32, 20, "read", frame="restore")]
    nodes.append(node(48, 30, "read"))
    report = {"kernels": [{"id": "k0", "name": "k(int*)", "nodes": nodes, "edges": []}]}
    results = RunResults(report, "/r/report.json", "d", {})
    assert "local write 4 B register save |" in hover.markdown(results, "/ws/rec.cu", 10)
    assert "local read 4 B register restore |" in hover.markdown(results, "/ws/rec.cu", 20)
    assert "register" not in hover.markdown(results, "/ws/rec.cu", 30)


def test_file_links_become_references_defined_once():
    text = (
        "| a | [k.cu:3](file:///ws/k.cu#L3), [k.cu:9](file:///ws/k.cu#L9) |\n"
        "| b | [k.cu:3](file:///ws/k.cu#L3) |\n\nsee [docs](https://example.com/x)"
    )
    out = md.with_link_references(text)
    assert out == (
        "| a | [k.cu:3][1], [k.cu:9][2] |\n| b | [k.cu:3][1] |\n\nsee [docs](https://example.com/x)"
        "\n\n[1]: file:///ws/k.cu#L3\n[2]: file:///ws/k.cu#L9"
    )
    assert md.with_link_references("no links, \\[k.cu:3\\]") == "no links, \\[k.cu:3\\]"
