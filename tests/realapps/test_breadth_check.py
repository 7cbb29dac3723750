"""benchmarks/breadth_check.py on a realapps.py output folder built here: a clean app shows no defect, and each kind
of defect (a verdict that changed, an exit status that changed, a partial run, a collector error, findings on no
source line, a build failure) is named for the app that has it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import breadth_check  # noqa: E402

PLACED = {"id": 1, "source": {"file": "/src/app.cu", "line": 12}}
UNPLACED = {"id": 2, "source": None}


def make_app(
    out: Path,
    name: str,
    *,
    native_log: str,
    full_log: str,
    native_rc: int = 0,
    full_rc: int = 0,
    status: str = "complete",
    collector: str = "",
    nodes=(PLACED,),
    no_launch: bool = False,
    graph_only: bool = False,
    graph_nodes: int = 0,
    pcs=(1,),
) -> tuple[dict, dict]:
    runs = out / "runs" / "r0"
    run_dir = runs / f"{name}-full"
    run_dir.mkdir(parents=True)
    (runs / f"{name}-native.log").write_text(native_log)
    (runs / f"{name}-full.log").write_text(full_log)
    (run_dir / "run.json").write_text(
        json.dumps(
            {
                "status": status,
                "partial_reason": "killed" if status != "complete" else None,
                "errors": [],
                "launches": [] if no_launch else [{"kernel": "k", "instrumented": not graph_only}],
                "collector": {"graph_kernel_nodes": 4 if graph_only else graph_nodes},
            }
        )
    )
    (run_dir / "collector.log").write_text(
        collector or "[    0.1] reuselens collector 0.1.0\n[    0.5] exit: 3 launches\n"
    )
    kernel = {
        "name": "k",
        "nodes": list(nodes),
        "findings": [{"pattern": "uncoalesced", "severity": "warning", "pcs": list(pcs)}],
    }
    (run_dir / "report.json").write_text(json.dumps({"kernels": [kernel]}))
    row = {"app": name, "native_s": 0.3, "full_s": 0.6, "full_ratio": 2.0, "records": 1000}
    steps = {
        "native": [{"rc": native_rc, "wall_s": 0.3, "log": str(runs / f"{name}-native.log")}],
        "full": [{"rc": full_rc, "wall_s": 0.6, "log": str(runs / f"{name}-full.log")}],
    }
    return row, steps


def write_result(out: Path, apps: list[tuple[dict, dict]], failed_builds=()) -> None:
    rows = [row for row, _ in apps] + [{"app": n, "failed": "build failed: x.cu: error"} for n in failed_builds]
    (out / "realapps.json").write_text(json.dumps({"apps": rows, "steps": {row["app"]: steps for row, steps in apps}}))


def test_clean_app_has_no_defect_and_timings_do_not_count(tmp_path, capsys):
    native = "Starting...\nProcessing time: 1.23 ms\nResult = PASS\n"
    full = (
        "reuselens: warning: a launcher message while the app runs, not the app's error\n"
        "Starting...\nProcessing time: 9.87 ms\nResult = PASS\n"
        "run written to rl\n1 kernel configuration(s) analysed\n  error-prone finding table line\n"
    )
    write_result(tmp_path, [make_app(tmp_path, "good", native_log=native, full_log=full)])
    assert breadth_check.main([str(tmp_path), "--json", str(tmp_path / "b.json")]) == 0
    facts = json.loads((tmp_path / "b.json").read_text())["apps"][0]
    assert facts["defects"] == [] and facts["findings"] == 1 and facts["unplaced"] == 0
    assert "1 apps, 0 with defects" in capsys.readouterr().out


def test_each_defect_is_named(tmp_path, capsys):
    apps = [
        make_app(tmp_path, "verdict", native_log="Test passed\n", full_log="Test FAILED\n"),
        make_app(tmp_path, "status", native_log="ok\n", full_log="ok\n", full_rc=1),
        make_app(tmp_path, "partial", native_log="ok\n", full_log="ok\n", status="partial"),
        make_app(
            tmp_path,
            "collector",
            native_log="ok\n",
            full_log="ok\n",
            collector="[    0.3] error: kernel k (sanitizerStreamSynchronize) failed\n",
        ),
        make_app(tmp_path, "unplaced", native_log="ok\n", full_log="ok\n", nodes=(UNPLACED,), pcs=(2,)),
        make_app(tmp_path, "nolaunch", native_log="ok\n", full_log="ok\n", no_launch=True),
        make_app(tmp_path, "graphs", native_log="ok\n", full_log="ok\n", graph_only=True),
        make_app(tmp_path, "mostlygraphs", native_log="ok\n", full_log="ok\n", graph_nodes=1389),
        make_app(tmp_path, "nativefails", native_log="FAILED\n", full_log="FAILED\n", native_rc=1, full_rc=1),
        make_app(tmp_path, "appnote", native_log="note: GPU sum = 3\n", full_log="note: GPU sum = 4\n"),
    ]
    write_result(tmp_path, apps, failed_builds=["nobuild"])
    assert breadth_check.main([str(tmp_path), "--json", str(tmp_path / "b.json")]) == 1
    defects = {a["app"]: " | ".join(a["defects"]) for a in json.loads((tmp_path / "b.json").read_text())["apps"]}
    assert "verdict differs" in defects["verdict"] and "Test passed" in defects["verdict"]
    assert "exit status 1 under the profiler, 0 natively" in defects["status"]
    assert "run partial: killed" in defects["partial"]
    assert "collector.log: [    0.3] error: kernel k" in defects["collector"]
    assert "1 of 1 findings on no source line" in defects["unplaced"]
    assert "no kernel launch seen" in defects["nolaunch"]
    assert "no launch instrumented (4 CUDA graph kernel nodes" in defects["graphs"]
    assert "1389 CUDA graph kernel nodes not instrumented against 1 instrumented launches" in defects["mostlygraphs"]
    assert "native run exits 1" in defects["nativefails"]
    assert "GPU sum = 3" in defects["appnote"]  # the app's own "note:" lines count
    assert "not run: build failed" in defects["nobuild"]
    assert "11 apps, 11 with defects" in capsys.readouterr().out


def test_unreadable_folder_is_an_error(tmp_path, capsys):
    assert breadth_check.main([str(tmp_path)]) == 2
    assert "realapps.json" in capsys.readouterr().err


def test_breadth_manifest_is_apart_from_the_timed_suite():
    import realapps

    suite = realapps.load_manifest(realapps.MANIFEST)
    breadth = realapps.load_manifest(ROOT / "benchmarks" / "realapps" / "breadth.json")
    names = [a["name"] for a in breadth["apps"]]
    assert len(names) == len(set(names)) >= 20
    assert not set(names) & {a["name"] for a in suite["apps"]}
    assert not {(a["source"], a["dir"], tuple(a["files"])) for a in breadth["apps"]} & {
        (a["source"], a["dir"], tuple(a["files"])) for a in suite["apps"]
    }
    for name, spec in breadth["sources"].items():  # one pinned commit per repository, as the suite's
        if name in suite["sources"]:  # (Parboil is the breadth set's alone)
            assert spec["commit"] == suite["sources"][name]["commit"]
    assert breadth["compile"] == suite["compile"]
    for app in breadth["apps"]:
        assert app["source"] in breadth["sources"] and app["files"] and app["why"]
