"""The answer-key scorer (benchmarks/answer_key.py, benchmarks/score_findings.py) on small synthetic reports,
and the key itself (tests/realapps/answer_key.json): known pattern ids, consistent controls, and, where the
real-application sources are staged, files and lines that exist and hold code."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from reuselens.analyzer.patterns import PATTERNS

ROOT = Path(__file__).resolve().parents[2]
KEY_PATH = ROOT / "tests" / "realapps" / "answer_key.json"
SRC = ROOT / "benchmarks" / "realapps" / "src"
MANIFEST = ROOT / "benchmarks" / "realapps" / "manifest.json"


def _load(name: str, filename: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / filename)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def ak():
    return _load("answer_key", "answer_key.py")


@pytest.fixture(scope="module")
def cli(ak):
    return _load("score_findings_under_test", "score_findings.py")


KEY = {
    "format": "reuselens-answer-key",
    "version": 1,
    "equivalent_patterns": [{"patterns": ["hierarchical-reuse-block", "hierarchical-reuse-grid"], "why": "x"}],
    "apps": {
        "app": {
            "expected": [
                {
                    "id": "naive",
                    "kernel": "naive(",
                    "file": "t.cu",
                    "line": 10,
                    "pattern": "poor-coalescing",
                    "primary": True,
                    "why": "x",
                },
                {
                    "id": "tile",
                    "kernel": "tiled",
                    "file": "t.cu",
                    "line": 20,
                    "pattern": "hierarchical-reuse-block",
                    "primary": True,
                    "why": "x",
                },
                {
                    "id": "acc",
                    "kernel": "naive(",
                    "file": "t.cu",
                    "line": 12,
                    "statement_lines": [11, 12],
                    "pattern": "redundant-raw",
                    "primary": False,
                    "why": "x",
                    "alternatives": [{"pattern": "hierarchical-reuse-block", "scope": "thread"}],
                },
                {
                    "id": "helper",
                    "kernel": "tiled",
                    "file": "t.cu",
                    "line": 25,
                    "pattern": "bank-conflict",
                    "primary": False,
                    "why": "x",
                },
            ],
            "controls": [
                {"kernel": "good", "file": "t.cu", "lines": "all", "why": "x"},
                {"kernel": "naive(", "file": "t.cu", "lines": [14], "why": "x"},
                {"kernel": "tiled", "file": "t.cu", "lines": [20], "patterns": ["poor-coalescing"], "why": "x"},
            ],
            "acceptable": [
                {"kernel": "naive(", "file": "t.cu", "lines": [16], "patterns": ["broadcasting"], "why": "x"},
            ],
        }
    },
}


def node(node_id, file, line, inline=()):
    source = (
        None
        if file is None
        else {"file": file, "line": line, "inline": [{"function": "f", "file": f, "line": n} for f, n in inline]}
    )
    return {"id": node_id, "source": source}


def finding(pattern, pcs, severity="warning", scope=None, **extra):
    return {"id": f"{pattern}@{pcs}", "pattern": pattern, "pcs": pcs, "severity": severity, "scope": scope, **extra}


def report(*kernels):
    return {
        "format": "reuselens-report",
        "version": 1,
        "kernels": [{"name": name, "nodes": nodes, "findings": findings} for name, nodes, findings in kernels],
    }


NODES = [
    node(0, None, None),
    node(1, "/build/t.cu", 10),
    node(2, "/build/t.cu", 11),
    node(3, "/build/t.cu", 14),
    node(4, "/build/t.cu", 20),
    node(5, "/build/other.cu", 10),
    node(6, "/build/t.cu", 16),
    node(7, "/inc/helper.h", 40, inline=[("/inc/helper.h", 40), ("/build/t.cu", 25)]),
]


def test_a_finding_of_the_right_pattern_on_the_right_line_is_found(ak):
    s = ak.score_app(KEY, "app", report(("naive(float*)", NODES, [finding("poor-coalescing", [1])])))
    assert (s["primary_found"], s["primary_expected"], s["recall_primary"]) == (1, 2, 0.5)
    assert (s["warnings"], s["warnings_precise"], s["precision"], s["control_fp"]) == (1, 1, 1.0, 0)


@pytest.mark.parametrize(
    "kernel, pattern, pc",
    [
        ("naive(float*)", "bank-conflict", 1),  # wrong pattern
        ("naive(float*)", "poor-coalescing", 2),  # line 11, not 10
        ("naive(float*)", "poor-coalescing", 5),  # line 10 of another file
        ("naive2(float*)", "poor-coalescing", 1),  # another kernel ("naive(" is not in "naive2(")
    ],
)
def test_pattern_line_file_and_kernel_must_all_agree(ak, kernel, pattern, pc):
    s = ak.score_app(KEY, "app", report((kernel, NODES, [finding(pattern, [pc])])))
    assert s["primary_found"] == 0
    assert s["precision"] == 0.0 and s["unexpected_warnings"][0]["pattern"] == pattern


def test_equivalent_patterns_alternatives_and_statement_lines(ak):
    s = ak.score_app(
        KEY,
        "app",
        report(
            ("tiled(float*)", NODES, [finding("hierarchical-reuse-grid", [4])]),  # declared equivalent
            (
                "naive(float*)",
                NODES,
                [finding("hierarchical-reuse-block", [2], scope="thread")],
            ),  # alternative, line 11
        ),
    )
    assert s["found"] == 2 and s["missed_primary"] == ["naive"]
    wrong_scope = ak.score_app(
        KEY, "app", report(("naive(float*)", NODES, [finding("hierarchical-reuse-block", [2], scope="block")]))
    )
    assert wrong_scope["found"] == 0


def test_a_finding_in_an_inlined_helper_sits_on_the_call_site_too(ak):
    s = ak.score_app(KEY, "app", report(("tiled(float*)", NODES, [finding("bank-conflict", [7])])))
    assert s["found"] == 1 and "helper" not in s["missed_secondary"]


def test_warnings_on_controls_count_as_false_positives_information_does_not(ak):
    s = ak.score_app(
        KEY,
        "app",
        report(
            ("good(float*)", NODES, [finding("redundant-rar", [5]), finding("streaming-access", [5], "information")]),
            ("naive(float*)", NODES, [finding("bank-conflict", [3])]),
            ("tiled(float*)", NODES, [finding("poor-coalescing", [4]), finding("hierarchical-reuse-block", [4])]),
        ),
    )
    assert s["control_fp"] == 3  # whole kernel, listed line, listed line with a listed pattern
    assert s["warnings"] == 4 and s["warnings_precise"] == 1  # only the expected hierarchical finding


def test_acceptable_findings_count_as_precise_but_not_as_recall(ak):
    s = ak.score_app(KEY, "app", report(("naive(float*)", NODES, [finding("broadcasting", [6])])))
    assert (s["precision"], s["found"]) == (1.0, 0)


def test_unplaced_findings_are_counted_and_never_match(ak):
    s = ak.score_app(
        KEY,
        "app",
        report(("naive(float*)", NODES, [finding("poor-coalescing", [0]), finding("poor-coalescing", [], "hint")])),
    )
    assert (s["unplaced"], s["unplaced_warnings"], s["found"], s["precision"]) == (2, 1, 0, 0.0)


def test_a_barrier_finding_sits_on_its_barrier_line(ak):
    key = json.loads(json.dumps(KEY))
    key["apps"]["app"]["expected"].append(
        {
            "id": "sync",
            "kernel": "tiled",
            "file": "t.cu",
            "line": 30,
            "pattern": "removable-barrier",
            "primary": False,
            "why": "x",
        }
    )
    barrier = {"function": "f", "pc": 64, "kind": "block", "source": {"file": "/build/t.cu", "line": 30}}
    s = ak.score_app(
        key, "app", report(("tiled(float*)", NODES, [finding("removable-barrier", [], "information", barrier=barrier)]))
    )
    assert s["found"] == 1 and s["unplaced"] == 0


def test_the_cli_finds_the_realapps_run_layout_and_always_exits_0(ak, cli, tmp_path, capsys):
    (tmp_path / "key.json").write_text(json.dumps(KEY))
    for rnd, pcs in ((0, [2]), (1, [1])):  # the latest round is the one scored
        run = tmp_path / "out" / "runs" / f"r{rnd}" / "app-full"
        run.mkdir(parents=True)
        (run / "report.json").write_text(
            json.dumps(report(("naive(float*)", NODES, [finding("poor-coalescing", pcs)])))
        )
    assert (
        cli.main(
            [
                "--key",
                str(tmp_path / "key.json"),
                "--runs",
                str(tmp_path / "out"),
                "--json",
                str(tmp_path / "score.json"),
            ]
        )
        == 0
    )
    scores = json.loads((tmp_path / "score.json").read_text())
    assert scores["format"] == "reuselens-answer-key-score"
    assert scores["overall"]["primary_found"] == 1 and scores["overall"]["apps_scored"] == 1
    assert "OVERALL" in capsys.readouterr().out
    assert cli.main(["--key", str(tmp_path / "key.json"), "--runs", str(tmp_path / "none")]) == 0


def test_an_unreadable_key_is_one_line_on_stderr(cli, tmp_path, capsys):
    (tmp_path / "key.json").write_text('{"format": "something-else"}')
    assert cli.main(["--key", str(tmp_path / "key.json"), "--runs", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a version-1 reuselens-answer-key" in err


def test_check_key_rejects_unknown_patterns_and_controls_that_swallow_expected_items(ak):
    assert ak.check_key(KEY, PATTERNS) == []
    bad = json.loads(json.dumps(KEY))
    bad["apps"]["app"]["expected"][0]["pattern"] = "poor-coalesing"
    bad["apps"]["app"]["controls"].append({"kernel": "tiled", "file": "t.cu", "lines": "all", "why": "x"})
    problems = ak.check_key(bad, PATTERNS)
    assert any("unknown pattern 'poor-coalesing'" in p for p in problems)
    assert any("covers expected item tile" in p for p in problems)


# ---- the real key ----------------------------------------------------------------------------------------------


def test_the_answer_key_is_consistent(ak):
    key = ak.load_key(KEY_PATH)
    assert ak.check_key(key, PATTERNS) == []
    manifest = json.loads(MANIFEST.read_text())
    assert set(key["apps"]) == {app["name"] for app in manifest["apps"]}
    primaries = sum(item["primary"] for spec in key["apps"].values() for item in spec["expected"])
    assert primaries >= 20


def test_the_answer_key_points_at_code_in_the_staged_sources(ak):
    if not SRC.is_dir():
        pytest.skip(
            f"{SRC} is absent (third-party sources are staged by benchmarks/realapps_stage.py, never "
            "committed); the key's files and lines are checked where they are staged"
        )
    key = ak.load_key(KEY_PATH)
    assert ak.check_key_sources(key, json.loads(MANIFEST.read_text()), SRC) == []


def test_the_source_check_catches_a_line_without_code(ak, tmp_path):
    app_dir = tmp_path / "src" / "suite" / "app"
    app_dir.mkdir(parents=True)
    (app_dir / "t.cu").write_text("// header\n\nx[i] = y[i];\n")
    manifest = {"apps": [{"name": "app", "source": "suite", "dir": "app"}]}
    key = {
        "apps": {
            "app": {
                "expected": [
                    {"id": "a", "kernel": "k", "file": "t.cu", "line": 1, "pattern": "poor-coalescing"},
                    {"id": "b", "kernel": "k", "file": "t.cu", "line": 3, "pattern": "poor-coalescing"},
                    {"id": "c", "kernel": "k", "file": "t.cu", "line": 9, "pattern": "poor-coalescing"},
                    {"id": "d", "kernel": "k", "file": "missing.cu", "line": 1, "pattern": "poor-coalescing"},
                ]
            }
        }
    }
    problems = ak.check_key_sources(key, manifest, tmp_path / "src")
    assert len(problems) == 3
    assert "t.cu:1 holds no code" in problems[0] and "past the end" in problems[1] and "missing.cu" in problems[2]
