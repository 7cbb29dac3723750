"""What `reuselens profile` does after the application exits stays small (docs/engine.md "Post-run cost"): no
nvdisasm in the analysis (SASS is looked up when a hover asks, analyzer/sass_lookup.py), no heavy module
imported by start-up, and none left to import once the preloaded analysis modules are in."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reuselens.analyzer.lineinfo.sass import find_nvdisasm
from reuselens.analyzer.sass_lookup import RunSass

RUNS = Path(__file__).resolve().parents[1] / "data" / "runs"


def _python(code: str) -> list[str]:
    """Run `code` in a fresh interpreter (sys.modules as a user's process has it); its stdout lines."""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_cli_start_up_imports_no_heavy_module():
    # WHEN the console script builds its parser (every subcommand registered), as each `reuselens` start does
    loaded = _python(
        "import sys; from reuselens.cli.main import build_parser; build_parser(); "
        "print(*[m for m in ('networkx', 'numpy', 'rich', 'cxxfilt', 'reuselens.analyzer.lineinfo') "
        "if m in sys.modules])"
    )
    # THEN none of the modules that only some commands need is loaded yet
    assert loaded == []


def test_profile_start_up_loads_only_its_own_parser_and_no_analysis():
    # WHEN `reuselens profile ...` builds its parser (only the subcommand that runs is registered)
    loaded = _python(
        "import sys; from reuselens.cli.main import build_parser, chosen_subcommand; "
        "build_parser(chosen_subcommand(['-v', 'profile', '--', 'app'])).parse_args(['profile', '--', 'app']); "
        "print(*sorted(m for m in sys.modules if m.startswith(('reuselens.analyzer.patterns.registry', "
        "'reuselens.analyzer.pipeline', 'reuselens.analyzer.rederive', 'reuselens.analyzer.reporters', "
        "'reuselens.cli.analyze', 'reuselens.cli.memory', 'reuselens.cli.summary', 'reuselens.lsp_server'))))"
    )
    # THEN the analysis, its reporters and the other subcommands are left for the preload while the app runs
    assert loaded == []


def test_analysis_of_an_online_run_needs_no_numpy_and_preloading_leaves_nothing_to_import(tmp_path):
    # GIVEN a run whose engine ran online (analysis.json is there), as `reuselens profile` leaves it
    run = tmp_path / "pattern_suite"
    shutil.copytree(RUNS / "pattern_suite", run)
    (run / "report.json").unlink(missing_ok=True)
    # WHEN the analysis modules are imported first (as profile does while the app runs), then the run analysed
    new = _python(
        "import sys; from reuselens.analyzer import pipeline; pipeline.import_analysis_modules(); "
        f"before = set(sys.modules); pipeline.build_report({str(run)!r}); "
        "print(*sorted(m for m in set(sys.modules) - before if m.startswith(('reuselens', 'networkx', 'numpy'))))"
    )
    # THEN the analysis imports nothing more (the preload list is complete), and neither numpy (trace replay) nor
    # networkx (the graph metrics come from the kernel's edges: a large kernel's two networkx graphs were most of
    # its analysis) at all
    assert new == []
    alone = _python(
        f"import sys; from reuselens.analyzer import pipeline; pipeline.build_report({str(run)!r}); "
        "print(*sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'networkx')))"
    )
    assert alone == []


def test_report_has_no_sass_and_the_lookup_gives_each_instruction_its_text(tmp_path):
    from reuselens.analyzer.lineinfo import SourceMapper
    from reuselens.analyzer.pipeline import build_report

    if find_nvdisasm() is None:
        pytest.skip("nvdisasm not found (pip install nvidia-cuda-nvdisasm): SASS text is not checked")
    run = tmp_path / "microbench"
    shutil.copytree(RUNS / "microbench", run)
    # WHEN the run is analysed
    report = build_report(run)
    assert json.loads((run / "report.json").read_text())["kernels"] == report["kernels"]
    # THEN report.json carries no SASS (nvdisasm is not run after the app's exit) ...
    nodes = [(kernel, node) for kernel in report["kernels"] for node in kernel["nodes"] if node.get("pc") is not None]
    assert nodes and not any("sass" in node for _, node in nodes)
    # ... and the lookup the server uses gives every memory instruction the text nvdisasm prints for it
    lookup, mapper = RunSass(run, report["kernels"]), SourceMapper.from_run(run)
    texts = {(kernel["module"], node["function"], node["pc"]): lookup.text(kernel, node) for kernel, node in nodes}
    assert all(texts.values())
    assert texts == {key: mapper.sass(*key) for key in texts}
    assert any(text.startswith(("LDG", "STG", "LDS", "STS")) for text in texts.values())


def test_sass_lookup_keeps_the_text_of_older_reports_and_is_quiet_without_a_run(tmp_path):
    # GIVEN a report of an earlier build (SASS in its nodes) away from any run directory
    kernel = {
        "module": "ab" * 32,
        "nodes": [
            {"id": 1, "function": "_Z1kv", "pc": 16, "sass": "LDG.E R2, [R2] ;"},
            {"id": 2, "function": "_Z1kv", "pc": 32},
        ],
    }
    lookup = RunSass(tmp_path / "nowhere", [kernel])
    # THEN its text is used as it is, and an instruction without one has none (no error, no nvdisasm)
    assert lookup.text(kernel, kernel["nodes"][0]) == "LDG.E R2, [R2] ;"
    assert lookup.text(kernel, kernel["nodes"][1]) is None
    lookup.prepare_all()


def test_the_lookup_says_why_there_is_no_sass(tmp_path, monkeypatch):
    # GIVEN a recorded run on a machine without nvdisasm
    from reuselens.analyzer.lineinfo import sass
    from reuselens.analyzer.pipeline import build_report

    monkeypatch.setattr(sass, "find_nvdisasm", lambda: None)
    run = tmp_path / "microbench"
    shutil.copytree(RUNS / "microbench", run)
    report = build_report(run)
    kernel = report["kernels"][0]
    node = next(n for n in kernel["nodes"] if n.get("pc") is not None)
    # WHEN an instruction's SASS is asked for
    lookup = RunSass(run, report["kernels"])
    # THEN there is none, and the lookup says why (the hover shows it where the SASS would be)
    assert lookup.text(kernel, node) is None
    assert lookup.why_missing() == ["nvdisasm not found; install it (pip install nvidia-cuda-nvdisasm) to see SASS"]


def test_the_command_ends_without_teardown_and_loses_no_output(tmp_path):
    # WHEN `python -m reuselens` writes a long document to a pipe and ends with os._exit (no interpreter teardown)
    run = tmp_path / "microbench"
    shutil.copytree(RUNS / "microbench", run)
    done = subprocess.run(
        [sys.executable, "-m", "reuselens", "report", str(run), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    # THEN every byte of it arrived, and the exit status is the command's
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["format"] == "reuselens-findings" and len(document["findings"]) > 10
    # and a failing command still says why in one line and exits 2
    failed = subprocess.run(
        [sys.executable, "-m", "reuselens", "report", str(tmp_path / "nowhere")], capture_output=True, text=True
    )
    assert failed.returncode == 2 and failed.stderr.count("\n") == 1


def test_the_object_level_preload_opens_the_program_for_the_memory_report(tmp_path, monkeypatch):
    # GIVEN a program found on PATH, as `reuselens profile --object-level -- app` names it
    from reuselens.analyzer.memory import symbols
    from reuselens.cli import profile as profile_cli

    program = tmp_path / "bin" / "alloc_inline"
    program.parent.mkdir()
    shutil.copy(Path(__file__).resolve().parents[1] / "data" / "host_inline" / "alloc_inline", program)
    monkeypatch.setenv("PATH", str(program.parent))
    # WHEN the preload thread runs while the app does
    thread = profile_cli._import_analysis_while_the_app_runs(memory=True, program="alloc_inline")
    thread.start()
    thread.join()
    # THEN the program's symbols are read, waiting for the memory report's symbolizer; a name that is no program
    # opens nothing and raises nothing (the launcher says why it cannot start it)
    assert str(program.resolve()) in symbols._OPENED_AHEAD
    module = symbols._take_opened_ahead(str(program))
    assert module is not None
    module.stream.close()
    profile_cli._import_memory_analysis_modules("no-such-program-here")
    assert not symbols._OPENED_AHEAD


def test_the_object_level_preload_leaves_the_memory_report_nothing_to_import(tmp_path):
    # GIVEN an object-level run, as `reuselens profile --object-level` leaves it when the app exits
    run = tmp_path / "objects"
    shutil.copytree(RUNS.parent / "memory_runs" / "memory_waste_objects", run)
    # WHEN the preload's imports are done first (while the app runs), then the memory table and the report written
    new = _python(
        "import sys, io, contextlib; from reuselens.cli import profile; profile._import_memory_analysis_modules(); "
        "before = set(sys.modules); from reuselens.cli.memory import write_report; "
        "from reuselens.analyzer.pipeline import build_report; "
        f"out = io.StringIO(); contextlib.redirect_stdout(out).__enter__(); write_report({str(run)!r}); "
        f"build_report({str(run)!r}); sys.__stdout__.write(' '.join(sorted(set(sys.modules) - before)))"
    )
    # THEN nothing is left to import after the app's exit
    assert new == []


def test_profile_reaches_the_apps_start_without_logging_typing_or_dataclasses():
    # WHEN `reuselens profile` has built its parser and loaded the launcher, all it needs to start the app
    # (modules the interpreter's own start-up loads, such as an environment's .pth hooks, are not the CLI's)
    loaded = _python(
        "import sys; at_start = set(sys.modules); from reuselens.cli.main import build_parser; "
        "build_parser('profile').parse_args(['profile', '--', 'app']); import reuselens.collector.launcher, "
        "reuselens.cli.progress; print(*[m for m in ('logging', 'dataclasses', 'inspect', 'typing', 'ctypes.util') "
        "if m in sys.modules and m not in at_start])"
    )
    # THEN the modules only the analysis needs (15-20 ms of start-up together) are left for the preload while the app
    # runs
    assert loaded == []


def test_the_console_scripts_main_starts_the_app_without_configuring_logging(tmp_path):
    # WHEN the console script's main() runs `reuselens profile -- app` up to the launcher's start of the app (the
    # launcher stands in: it reports what is loaded at that moment and ends the process)
    loaded = _python(
        "import os, sys; at_start = set(sys.modules); import reuselens.collector.launcher as launcher\n"
        "def start(*args, **kwargs):\n"
        "    print(*[m for m in ('logging', 'dataclasses', 'typing') if m in sys.modules and m not in at_start])\n"
        "    sys.stdout.flush(); os._exit(0)\n"
        "launcher.profile = start\n"
        "from reuselens.cli.main import main\n"
        f"main(['profile', '--object-level', '--run-dir', {str(tmp_path / 'run')!r}, '--', 'app'])"
    )
    # THEN logging is still left to the preload (the app's command line, profile's positional `command`, once
    # overwrote the subcommand's name in the parsed arguments, and main() configured logging before the start)
    assert loaded == []


def test_a_profile_without_analysis_ends_without_loading_the_findings_table(tmp_path):
    # WHEN `reuselens profile --no-analyze` finishes after an app that failed (the launcher stands in, returning the
    # summary of a complete run whose app exited with status 3)
    out = _python(
        "import sys; import reuselens.collector.launcher as launcher\n"
        "def finished(argv, run_dir, **kwargs):\n"
        "    return launcher.RunSummary(run_dir=run_dir, status='complete', partial_reason=None, exit_code=3)\n"
        "launcher.profile = finished\n"
        "from reuselens.cli.main import main\n"
        f"code = main(['profile', '--no-analyze', '--run-dir', {str(tmp_path / 'run')!r}, '--', 'app'])\n"
        "print(code, *[m for m in ('reuselens.cli.summary', 'reuselens.analyzer.reportview') if m in sys.modules])"
    )
    # THEN it passes the app's status on without importing the findings table's modules (16 ms on the H200 host
    # after the app's exit, only to word the app's failure)
    assert out == ["3"]


def test_a_manifest_the_writer_hands_over_is_not_decoded_again_and_a_bad_one_is_not_taken(tmp_path, monkeypatch):
    from reuselens.analyzer import rundir
    from reuselens.collector.manifest import json_lines

    run = tmp_path / "run"
    shutil.copytree(RUNS.parent / "memory_runs" / "memory_waste_objects", run)
    manifest = json.loads((run / "run.json").read_text())
    text = json_lines(manifest)
    (run / "run.json").write_text(text)
    # WHEN the launcher's writer hands its manifest over, open_run does not decode the file
    rundir.remember_written(run, text, manifest)
    monkeypatch.setattr(rundir, "decode", lambda raw: pytest.fail("decoded again"))
    assert rundir.open_run(run).manifest is manifest
    # ... until the file changes under it, when it is decoded as ever
    monkeypatch.undo()
    (run / "run.json").write_text(text.replace('"status": "complete"', '"status": "partial"', 1))
    assert rundir.open_run(run).manifest["status"] == "partial"
    # AND a manifest that is no run manifest is not remembered: open_run reports the file's own problem
    rundir.remember_written(run, "{}", {"format": "something else"})
    (run / "run.json").write_text("{}")
    with pytest.raises(rundir.RunDirectoryError, match="not a ReuseLens run manifest"):
        rundir.open_run(run)


def test_the_post_run_benchmark_times_every_phase(tmp_path):
    # WHEN benchmarks/postrun.py measures a recorded run with findings (its child wraps the timed functions as their
    # modules load; the lazy patterns package once sent that hook into an import without end)
    out = tmp_path / "postrun.txt"
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "postrun.py"
    done = subprocess.run(
        [sys.executable, str(script), "--repeat", "1", "--out", str(out), str(RUNS / "pattern_suite")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    # THEN both rows are there, and the phases that do work on this run were timed (not left at 0)
    lines = out.read_text().splitlines()
    header = next(line for line in lines if line.startswith("run "))
    columns = header.split()
    for mode in ("analyze", "profile"):
        row = next(line for line in lines if line.startswith(f"pattern_suite {mode}")).split()
        figures = dict(zip(columns[1:], (float(x) for x in row[2:]), strict=True))
        for phase in ("read", "graph", "patterns", "lines", "write"):
            assert figures[phase] > 0, (mode, phase, figures)
