"""One reader per on-disk format, each checking `format` (a trace: its magic) and `version`, each error worded once.

run.json: analyzer.rundir.open_run; traces: analyzer.replay.read_trace; analysis.json: analyzer.engine_result.load;
report.json: analyzer.report.load / parse (the language server reads the bytes and calls parse). The last test
keeps a second JSON reader from creeping back into the libraries or the CLI.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from engine_records import records, write_trace

from reuselens.analyzer import _engine, engine_result, report
from reuselens.analyzer.errors import ReportError, RunDirectoryError, TraceError
from reuselens.analyzer.replay import read_trace
from reuselens.analyzer.rundir import open_run
from reuselens.lsp_server import report_source

REPO = Path(__file__).resolve().parents[2]
PACKAGE_DIRS = ("analyzer", "collector", "lsp_server", "reuselens")
# Files allowed to call json.load/json.loads, and what each reads.
JSON_READERS = {
    "analyzer/schema.py": "decode(): the text of run.json, report.json and analysis.json for their one readers "
    "(rundir, report, engine_result), which check what it gives against their schemas",
    "analyzer/engine_result.py": "the engine binding's result",
    "reuselens/cli/demo.py": "the packaged demo's build.json (where its sources were built; not a run format)",
    # The writer re-reading what its own tool library wrote, to finish the run: it checks nothing and reports
    # nothing to a user (the collector imports nothing of the analyzer; docs/architecture.md).
    "collector/manifest.py": "run.json, read back by its writer",
    "collector/library_cache.py": "the launcher's cache of tool libraries that loaded (~/.cache/reuselens), not a "
    "run format: whatever it cannot read only means probing the library again",
}
# json.load(s), or a decoder of one's own (JSONDecoder, raw_decode: the launcher's member-by-member read-back)
JSON_CALL = re.compile(r"\bjson\s*\.\s*loads?\s*\(|\bfrom\s+json\s+import\b|\bJSONDecoder\s*\(|\.raw_decode\s*\(")


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _expected(tmp_path: Path, message: str, text: str) -> str:
    """The full message: the file's path, then the reader's wording with the JSON decoder's own words for {json}."""
    try:
        json.loads(text)
        decoder_error = ""
    except ValueError as error:
        decoder_error = str(error)
    return f"{tmp_path}/" + message.replace("{json}", decoder_error)


def _run_dir(tmp_path: Path, text: str) -> Path:
    _write(tmp_path / "run.json", text)
    return tmp_path


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"format": "other", "version": 1}', "run.json: not a ReuseLens run manifest"),
        (
            '{"format": "reuselens-run", "version": 2}',
            "run.json: run format version 2 is not supported by this ReuseLens (reads 1)",
        ),
        ("{not json", "run.json: unreadable run manifest ({json})"),
    ],
    ids=["wrong format", "wrong version", "not JSON"],
)
def test_run_reader(tmp_path, text, message):
    with pytest.raises(RunDirectoryError) as error:
        open_run(_run_dir(tmp_path, text))
    assert str(error.value) == _expected(tmp_path, message, text)


@pytest.mark.parametrize(
    "header, message",
    [
        ({"magic": b"NOTATRC\0"}, "x.rltrace: not a ReuseLens trace (bad magic)"),
        ({"version": 4}, "x.rltrace: trace format version 4, this build reads versions 1 to 3; re-record it"),
    ],
    ids=["wrong format", "wrong version"],
)
def test_trace_reader(tmp_path, header, message):
    """A trace is binary: its magic stands for `format`, and "not JSON" is "not a trace header"."""
    with pytest.raises(TraceError) as error:
        read_trace(write_trace(tmp_path / "x.rltrace", records([]), **header))
    assert str(error.value) == f"{tmp_path}/{message}"


def test_trace_reader_short_header(tmp_path):
    with pytest.raises(TraceError) as error:
        read_trace(_write(tmp_path / "x.rltrace", "RLTRACE"))
    assert str(error.value) == f"{tmp_path}/x.rltrace: truncated trace header (7 of 64 bytes)"


@pytest.mark.parametrize(
    "text, message",
    [
        (
            '{"format": "other", "version": 2, "kernels": []}',
            "analysis.json: not a version-2 ReuseLens engine result; delete it to replay traces",
        ),
        (
            '{"format": "reuselens-engine", "version": 3, "kernels": []}',
            "analysis.json: not a version-2 ReuseLens engine result; delete it to replay traces",
        ),
        ("[1,", "analysis.json: unreadable online analysis ({json}); delete it to replay traces"),
    ],
    ids=["wrong format", "wrong version", "not JSON"],
)
def test_analysis_reader(tmp_path, text, message):
    with pytest.raises(TraceError) as error:
        engine_result.load(_write(tmp_path / "analysis.json", text))
    assert str(error.value) == _expected(tmp_path, message, text)


def test_engine_binding_writes_the_version_the_reader_reads():
    assert _engine.JSON_VERSION == engine_result.VERSION


REPORT_ERRORS = [
    (
        '{"format": "other", "version": 1, "kernels": []}',
        "report.json: not a ReuseLens report (format is not 'reuselens-report')",
    ),
    (
        '{"format": "reuselens-report", "version": 3, "kernels": []}',
        "report.json: report version 3, this build reads versions 1, 2",
    ),
    ("{", "report.json: not readable as JSON ({json})"),
]
REPORT_IDS = ["wrong format", "wrong version", "not JSON"]


@pytest.mark.parametrize("text, message", REPORT_ERRORS, ids=REPORT_IDS)
def test_report_reader(tmp_path, text, message):
    with pytest.raises(ReportError) as error:
        report.load(_write(tmp_path / "report.json", text))
    assert str(error.value) == _expected(tmp_path, message, text)


@pytest.mark.parametrize("text, message", REPORT_ERRORS, ids=REPORT_IDS)
def test_server_reads_reports_through_the_analyzer(tmp_path, text, message):
    """The server reads the bytes under its own limits but words a bad report as the CLI does."""
    with pytest.raises(ReportError) as error:
        report_source.load(_write(tmp_path / "report.json", text))
    assert str(error.value) == _expected(tmp_path, message, text)


def test_no_second_json_reader():
    """Each format has its one reader: any other json.load(s) in the libraries or the CLI is a second one."""
    found = []
    for folder in PACKAGE_DIRS:
        for path in sorted((REPO / folder).rglob("*.py")):
            relative = path.relative_to(REPO).as_posix()
            if relative in JSON_READERS:
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if JSON_CALL.search(line):
                    found.append(f"{relative}:{number}: {line.strip()}")
    assert found == [], "JSON parsed outside the format readers:\n" + "\n".join(found)


def test_allowed_readers_exist():
    """The allow-list names files that are there and do read JSON (a stale entry would hide nothing)."""
    for relative in JSON_READERS:
        assert JSON_CALL.search((REPO / relative).read_text(encoding="utf-8")), relative
