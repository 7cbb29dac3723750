"""End-to-end profiling through the real server: on-save re-profiling with a stand-in profiler that emits a
recorded run, cancellation by a newer save, crashing and hanging apps, build errors, workspace trust."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import time
from pathlib import Path

import pytest
from lsp_helpers import FIXTURES, STANDIN, lines_of, wait_until
from lsprotocol import types

pytestmark = [pytest.mark.asyncio, pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning")]

PY = sys.executable
STANDIN_RUN2 = [PY, str(STANDIN), "--recorded", str(FIXTURES / "run2")]
# The "application": records its pid (written whole, then renamed: a test that sees the file reads it at once),
# then sleeps while the flag file exists (so a test can hold a run).
APP = (
    "import os, sys, time, pathlib; d = pathlib.Path(sys.argv[1]); n = len(list(d.glob('pid*')));"
    "(d / f'.pid{n}').write_text(str(os.getpid())); os.replace(d / f'.pid{n}', d / f'pid{n}');"
    "[time.sleep(0.05) for _ in iter(lambda: (d / 'hold').exists(), False)]; print('app done')"
)


def app_argv(ws: Path) -> list[str]:
    return [PY, "-c", APP, str(ws / "appstate")]


def save(client, path: Path) -> None:
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(path.as_uri())))


def ended(client) -> list[str]:
    return [r[-1].message for r in client.progress_reports.values() if r and r[-1].kind == "end"]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie awaiting its reaper has stopped running
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


async def set_settings(client, ws: Path, **values) -> None:
    settings = {"pathPrefixMap": {"/build/app": str(ws)}, **values}
    client.set_configuration(settings, section="reuselens")
    applied = lambda: sum("settings applied" in m.message for m in client.log_messages)
    before = applied()
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"reuselens": settings}))
    await wait_until(lambda: applied() > before)


@pytest.fixture
def appstate(workspace):
    (workspace / "appstate").mkdir()
    return workspace / "appstate"


async def test_save_reprofiles_with_progress_stages(client, workspace, appstate):
    stencil = workspace / "stencil.cu"
    await wait_until(lambda: lines_of(client, stencil.as_uri()) == [15, 24, 24, 26])
    await set_settings(
        client,
        workspace,
        profileOnSave=True,
        **{"profile": {"command": app_argv(workspace)}, "profiler": {"command": STANDIN_RUN2}},
    )
    # WHEN a CUDA file is saved
    save(client, stencil)
    # THEN the app runs under the profiler and run2 is published (bank conflict and barrier gone)
    await wait_until(lambda: lines_of(client, stencil.as_uri()) == [24, 24])
    await wait_until(lambda: ended(client) == ["5 finding(s)"])
    (reports,) = client.progress_reports.values()
    assert reports[0].kind == "begin" and reports[0].cancellable and reports[0].title == "ReuseLens profile"
    assert [r.message for r in reports[1:-1]] == ["build", "run", "analyze", "map"]
    assert (appstate / "pid0").exists()
    # A second save gets a fresh progress token
    save(client, stencil)
    await wait_until(lambda: len(ended(client)) == 2)
    assert len(client.progress_reports) == 2
    diff = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="reuselens.compare"))
    assert len(diff["resolved"]) == 2
    # each finding's waste in its own unit: a bank conflict costs wavefronts, not bytes
    units = {f["pattern"]: (f["waste"], f["waste_unit"]) for f in diff["resolved"]}
    assert units["bank-conflict"] == (31 * 32768, "wavefronts")


async def test_newer_save_cancels_run_and_kills_its_process_group(client, workspace, appstate):
    await wait_until(lambda: (workspace / "lut.cu").as_uri() in client.diagnostics)
    await set_settings(
        client,
        workspace,
        profileOnSave=True,
        **{"profile": {"command": app_argv(workspace)}, "profiler": {"command": STANDIN_RUN2}},
    )
    (appstate / "hold").touch()
    save(client, workspace / "stencil.cu")
    await wait_until(lambda: (appstate / "pid0").exists())
    first = int((appstate / "pid0").read_text())
    assert alive(first)
    # WHEN the file is saved again while the first run is in flight
    (appstate / "hold").unlink()
    save(client, workspace / "stencil.cu")
    # THEN the first app (a grandchild of the server) is killed and the second run completes
    await wait_until(lambda: not alive(first), timeout=5)
    await wait_until(lambda: "5 finding(s)" in ended(client))
    assert sorted(ended(client)) == ["5 finding(s)", "cancelled"]
    assert (appstate / "pid1").exists()


async def test_cancel_from_progress_stops_the_run(client, workspace, appstate):
    await wait_until(lambda: (workspace / "lut.cu").as_uri() in client.diagnostics)
    await set_settings(
        client, workspace, **{"profile": {"command": app_argv(workspace)}, "profiler": {"command": STANDIN_RUN2}}
    )
    (appstate / "hold").touch()
    pending = asyncio.ensure_future(
        client.workspace_execute_command_async(types.ExecuteCommandParams(command="reuselens.profile"))
    )
    await wait_until(lambda: (appstate / "pid0").exists())
    (token,) = client.progress_reports
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    pid = int((appstate / "pid0").read_text())
    await wait_until(lambda: not alive(pid), timeout=5)
    assert (await asyncio.wait_for(pending, 5)) == {"status": "cancelled"}
    assert ended(client) == ["cancelled"]


async def test_crashing_app_reports_its_output_tail(client, workspace):
    stencil = workspace / "stencil.cu"
    await wait_until(lambda: lines_of(client, stencil.as_uri()) == [15, 24, 24, 26])
    crash = [PY, "-c", "import sys; print('CUDA error: an illegal memory access was encountered'); sys.exit(3)"]
    await set_settings(client, workspace, **{"profile": {"command": crash}, "profiler": {"command": STANDIN_RUN2}})
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="reuselens.profile"))
    assert result["status"] == "failed"
    assert result["message"].startswith(f"the application exited with status 3; no report written (profiling {PY} -c")
    assert result["message"].endswith("failed, exit 2)")
    assert "CUDA error: an illegal memory access was encountered" in result["tail"]
    await wait_until(
        lambda: any(m.type == types.MessageType.Error and "illegal memory access" in m.message for m in client.messages)
    )
    # the previous results stay in place
    assert lines_of(client, stencil.as_uri()) == [15, 24, 24, 26]


async def test_partial_run_is_shown_with_a_warning(client, workspace):
    stencil = workspace / "stencil.cu"
    await wait_until(lambda: lines_of(client, stencil.as_uri()) == [15, 24, 24, 26])
    await set_settings(
        client,
        workspace,
        **{"profile": {"command": [PY, "-c", "pass"]}, "profiler": {"command": [*STANDIN_RUN2, "--exit-code", "3"]}},
    )
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="reuselens.profile"))
    assert result["status"] == "partial"
    assert result["message"].startswith("the application exited with status 1 (run is partial) (profiling ")
    assert result["message"].endswith("failed, exit 3)")
    await wait_until(lambda: lines_of(client, stencil.as_uri()) == [24, 24])
    assert any(
        m.type == types.MessageType.Warning and "; showing the results of what ran." in m.message
        for m in client.messages
    )
    assert ended(client) == ["partial"]


async def test_hanging_app_is_stopped_at_the_timeout(client, workspace, appstate):
    await wait_until(lambda: (workspace / "lut.cu").as_uri() in client.diagnostics)
    await set_settings(
        client,
        workspace,
        timeoutSeconds=4,
        **{"profile": {"command": app_argv(workspace)}, "profiler": {"command": STANDIN_RUN2}},
    )
    (appstate / "hold").touch()
    started = time.monotonic()
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="reuselens.profile"))
    assert 4 <= time.monotonic() - started < 15
    assert result["message"] == "The profile command timed out after 4 s and was stopped."
    assert "profiling" in result["tail"]  # the profiler's own output, before it was stopped
    await wait_until(lambda: not alive(int((appstate / "pid0").read_text())), timeout=5)


BUILD_OUTPUT = (
    "import sys; print('stencil.cu(9): error: identifier \"TILEX\" is undefined');"
    "print('lut.cu:14:13: error: expected primary-expression before \\';\\' token');"
    "print('1 error detected in the compilation of \"stencil.cu\".'); sys.exit(1)"
)


async def test_build_errors_become_diagnostics_and_clear_after_a_good_build(client, workspace):
    stencil, lut = (workspace / "stencil.cu").as_uri(), (workspace / "lut.cu").as_uri()
    await wait_until(lambda: lines_of(client, stencil) == [15, 24, 24, 26])
    await set_settings(
        client,
        workspace,
        **{
            "profile": {"command": [PY, "-c", "pass"]},
            "build": {"command": [PY, "-c", BUILD_OUTPUT]},
            "profiler": {"command": STANDIN_RUN2},
        },
    )
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="reuselens.profile"))
    assert result["message"] == (
        '2 compiler error(s), the first at stencil.cu:9: identifier "TILEX" is undefined (the build failed, exit 1)'
    )
    build = lambda uri: [
        (d.range.start.line + 1, d.range.start.character, d.message)
        for d in client.diagnostics[uri]
        if d.source == "reuselens-build"
    ]
    await wait_until(lambda: build(stencil) and build(lut))
    assert build(stencil) == [(9, 4, 'identifier "TILEX" is undefined')]
    assert build(lut) == [(14, 12, "expected primary-expression before ';' token")]
    # WHEN the build succeeds again, THEN its diagnostics go and the new run's findings come
    await set_settings(
        client,
        workspace,
        **{
            "profile": {"command": [PY, "-c", "pass"]},
            "build": {"command": [PY, "-c", "pass"]},
            "profiler": {"command": STANDIN_RUN2},
        },
    )
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="reuselens.profile"))
    assert result["status"] == "ok"
    await wait_until(lambda: not build(stencil) and lines_of(client, stencil) == [24, 24])


async def test_real_nvcc_error_lands_on_its_line(client, workspace):
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not found on PATH")
    source = workspace / "stencil.cu"
    source.write_text(source.read_text().replace("int x = blockIdx.x * TILE", "int x = blockIdx.x * TILEX"))
    await set_settings(
        client,
        workspace,
        **{
            "profile": {"command": [PY, "-c", "pass"]},
            "build": {"command": [nvcc, "-arch=sm_90", "-c", "stencil.cu", "-o", "/dev/null"]},
            "profiler": {"command": STANDIN_RUN2},
        },
    )
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="reuselens.profile"))
    assert result["status"] == "failed"
    await wait_until(lambda: any(d.source == "reuselens-build" for d in client.diagnostics.get(source.as_uri(), [])))
    (d,) = [d for d in client.diagnostics[source.as_uri()] if d.source == "reuselens-build"]
    assert d.range.start.line + 1 == 9 and 'identifier "TILEX" is undefined' in d.message


@pytest.mark.lsp_init({})
async def test_untrusted_workspace_asks_before_running(client, workspace, appstate):
    await wait_until(lambda: (workspace / "lut.cu").as_uri() in client.diagnostics)
    await set_settings(
        client, workspace, **{"profile": {"command": app_argv(workspace)}, "profiler": {"command": STANDIN_RUN2}}
    )
    client.answer_title = "Do not run"
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="reuselens.profile"))
    assert result == {"status": "refused"}
    assert not (appstate / "pid0").exists()
    assert "asks to run" in client.shown_requests[0].message and STANDIN_RUN2[1] in client.shown_requests[0].message
    client.answer_title = "Run"
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="reuselens.profile"))
    assert result["status"] == "ok" and (appstate / "pid0").exists()
    # once confirmed, the same commands run without asking again in this session
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="reuselens.profile"))
    assert result["status"] == "ok" and len(client.shown_requests) == 2


@pytest.mark.lsp_init({"workspaceTrusted": False})
async def test_restricted_mode_ignores_allow_setting(client, workspace, appstate):
    await wait_until(lambda: (workspace / "lut.cu").as_uri() in client.diagnostics)
    await set_settings(
        client,
        workspace,
        allowWorkspaceCommands=True,
        **{"profile": {"command": app_argv(workspace)}, "profiler": {"command": STANDIN_RUN2}},
    )
    client.answer_title = "Do not run"
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="reuselens.profile"))
    assert result == {"status": "refused"} and len(client.shown_requests) == 1


@pytest.mark.lsp_init({})
async def test_workspace_level_allow_setting_does_not_skip_the_prompt(client, workspace, appstate):
    # a repository's own settings (answered through workspace/configuration) cannot trust that repository
    await wait_until(lambda: (workspace / "lut.cu").as_uri() in client.diagnostics)
    await set_settings(
        client,
        workspace,
        allowWorkspaceCommands=True,
        **{"profile": {"command": app_argv(workspace)}, "profiler": {"command": STANDIN_RUN2}},
    )
    client.answer_title = "Do not run"
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="reuselens.profile"))
    assert result == {"status": "refused"} and len(client.shown_requests) == 1
    assert not (appstate / "pid0").exists()


@pytest.mark.parametrize(
    "where",
    [
        pytest.param("init settings", marks=pytest.mark.lsp_init({"settings": {"allowWorkspaceCommands": True}})),
        pytest.param("init top level", marks=pytest.mark.lsp_init({"allowWorkspaceCommands": True})),
    ],
)
async def test_user_level_allow_setting_trusts_clients_without_workspace_trust(client, workspace, appstate, where):
    await wait_until(lambda: (workspace / "lut.cu").as_uri() in client.diagnostics)
    await set_settings(
        client, workspace, **{"profile": {"command": app_argv(workspace)}, "profiler": {"command": STANDIN_RUN2}}
    )
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="reuselens.profile"))
    assert result["status"] == "ok" and client.shown_requests == []


@pytest.mark.lsp_init({})
async def test_run_answer_does_not_cover_a_changed_environment_or_cwd(client, workspace, appstate):
    await wait_until(lambda: (workspace / "lut.cu").as_uri() in client.diagnostics)
    commands = {"profile": {"command": app_argv(workspace)}, "profiler": {"command": STANDIN_RUN2}}
    await set_settings(client, workspace, **commands)
    profile = lambda: client.workspace_execute_command_async(types.ExecuteCommandParams(command="reuselens.profile"))
    assert (await profile())["status"] == "ok" and len(client.shown_requests) == 1
    # WHEN the workspace then changes what the same argv resolves to, THEN the user is asked again
    client.answer_title = "Do not run"
    hijack = str(workspace / "bin") + os.pathsep + os.environ.get("PATH", "")
    await set_settings(client, workspace, **commands, **{"profile.env": {"PATH": hijack}})
    assert await profile() == {"status": "refused"} and len(client.shown_requests) == 2
    assert f"PATH={hijack}" in client.shown_requests[1].message
    await set_settings(client, workspace, **commands, **{"profile.cwd": str(appstate)})
    assert await profile() == {"status": "refused"} and len(client.shown_requests) == 3
    assert f"in {appstate}" in client.shown_requests[2].message
    assert not (appstate / "pid1").exists()


@pytest.mark.lsp_settings({"timeoutSeconds": "soon", "kernelFilter": "(", "profile": {"command": "make run"}})
async def test_bad_settings_give_a_message_and_defaults(client, workspace):
    # the valid pathPrefixMap still applies, so the run is published
    await wait_until(
        lambda: lines_of(client, (workspace / "lut.cu").as_uri()) == [14, 25]
    )  # line 11: streaming, not published
    await wait_until(lambda: any(m.type == types.MessageType.Warning for m in client.messages))
    text = next(m.message for m in client.messages if m.type == types.MessageType.Warning)
    assert "reuselens.timeoutSeconds must be a number; using the default 300" in text
    assert "reuselens.kernelFilter is not a valid regular expression" in text
    assert "reuselens.profile.command must be a list of strings (an argv); using the default []" in text
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="reuselens.profile"))
    assert result == {"status": "failed", "message": "no profile command"}
    # a bad value pushed later is also survived
    await set_settings(client, workspace, pathPrefixMap=["not", "a", "map"])
    await wait_until(lambda: any("reuselens.pathPrefixMap must be an object" in m.message for m in client.messages))
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier((workspace / "lut.cu").as_uri()), types.Position(13, 0))
    )
    assert hover is None  # default prefix map: /build/app paths no longer map into the workspace
    await wait_until(
        lambda: any(
            "7 finding(s) are in 2 source file(s) not found here (e.g. /build/app/lut.cu)" in m.message
            for m in client.messages
        )
    )
    assert lines_of(client, (workspace / "lut.cu").as_uri()) == []


async def test_real_profiler_cli_result_or_its_one_line_error(client, workspace):
    # The default profiler (`python -m reuselens profile ...`), no stand-in: without a GPU it fails
    # with the CLI's one-line error, which the server passes on verbatim; with one it profiles `true`.
    await wait_until(lambda: (workspace / "lut.cu").as_uri() in client.diagnostics)
    await set_settings(client, workspace, timeoutSeconds=60, **{"profile": {"command": ["true"]}})
    result = await asyncio.wait_for(
        client.workspace_execute_command_async(types.ExecuteCommandParams(command="reuselens.profile")), 200
    )
    if result["status"] == "ok":
        assert Path(result["report"]).is_file()
        return
    assert result["status"] == "failed"
    assert result["message"].endswith(" (profiling true failed, exit 2)")
    assert not result["message"].startswith("reuselens: ")
    assert "\n" not in result["message"] and "Traceback" not in result["tail"]


async def test_moving_the_run_directory_clears_and_then_follows_it(client, workspace):
    lut = (workspace / "lut.cu").as_uri()
    await wait_until(lambda: lines_of(client, lut) == [14, 25])  # line 11: streaming, not published
    other = workspace / "elsewhere" / "run"
    await set_settings(client, workspace, runDirectory=str(other))
    await wait_until(lambda: lines_of(client, lut) == [])
    # the directory does not exist yet; a run appearing there is picked up
    other.mkdir(parents=True)
    shutil.copy(FIXTURES / "run2" / "report.json", other / "report.json")
    await wait_until(lambda: lines_of(client, (workspace / "stencil.cu").as_uri()) == [24, 24])


def malformed_run(tmp_path: Path) -> Path:
    """run2 whose report passes the header check but whose kernels do not index (a line that is not a number)."""
    run = tmp_path / "malformed_run"
    shutil.copytree(FIXTURES / "run2", run)
    report = json.loads((run / "report.json").read_text())
    report["kernels"][0]["nodes"][1]["source"]["line"] = "eleven"
    (run / "report.json").write_text(json.dumps(report))
    return run


@pytest.mark.parametrize(
    "case, expected",
    [
        ("nul in argv", "Cannot start the profile command: argument 'pass\\x00' contains a NUL character."),
        ("= in env name", "Cannot start the profile command: environment variable name 'A=B' is not valid"),
        ("argv too long", "Cannot start the profile command: its arguments and environment are longer than the system"),
        ("missing cwd", "Cannot start the profile command: working directory"),
        ("run directory under a file", "Cannot create the run directory"),
        ("malformed report", "kernels[0].nodes[1].source.line: expected an integer"),
    ],
)
async def test_run_time_failures_end_the_progress_with_their_cause(client, workspace, tmp_path, case, expected):
    await wait_until(lambda: (workspace / "lut.cu").as_uri() in client.diagnostics)
    profiler, app, extra = STANDIN_RUN2, [PY, "-c", "pass"], {}
    if case == "nul in argv":
        app = [PY, "-c", "pass\0"]
    elif case == "= in env name":
        extra = {"profile.env": {"A=B": "1"}}
    elif case == "argv too long":
        app = [PY, "-c", "pass", "x" * 300_000]  # one argument above Linux's 128 KiB per-argument limit
    elif case == "missing cwd":
        extra = {"profile.cwd": str(workspace / "no-such-dir")}
    elif case == "run directory under a file":
        extra = {"runDirectory": str(workspace / "lut.cu" / "run")}
    else:
        profiler = [PY, str(STANDIN), "--recorded", str(malformed_run(tmp_path))]
    await set_settings(client, workspace, **{"profile": {"command": app}, "profiler": {"command": profiler}}, **extra)
    result = await asyncio.wait_for(
        client.workspace_execute_command_async(types.ExecuteCommandParams(command="reuselens.profile")), 30
    )
    assert result["status"] == "failed" and expected in result["message"], result
    await wait_until(lambda: ended(client) == ["failed"])
    await wait_until(lambda: any(m.type == types.MessageType.Error and expected in m.message for m in client.messages))
    # the server keeps serving
    hover = await asyncio.wait_for(
        client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier((workspace / "lut.cu").as_uri()), types.Position(13, 0))
        ),
        10,
    )
    assert hover is not None or case == "run directory under a file"
