"""Reading a run directory's manifest (docs/run-directory.md).

Only this module parses run.json, so a change of the manifest's version is handled in one place.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reuselens.analyzer.engine_result import COUNT, DIMS, FUNCTION_ID
from reuselens.analyzer.errors import RunDirectoryError
from reuselens.analyzer.schema import (
    ANY,
    U32,
    Bool,
    Int,
    JsonError,
    List,
    Map,
    Maybe,
    Num,
    Obj,
    PathText,
    SchemaError,
    Str,
    check,
    decode,
)

RUN_FORMAT = "reuselens-run"
RUN_VERSION = 1
MANIFEST = "run.json"
REPORT = "report.json"
SOURCE_PREFIX_MAP = "source_prefix_map"

TEXT = Maybe(Str())
# Types and limits of every field a reader takes from run.json (docs/run-directory.md); which fields replay needs,
# and how they relate (threads per block, allocation ends), analyzer.replay_manifest checks on top.
RUN_SCHEMA = Obj(
    {
        "tool": Maybe(Map(ANY)),
        "command": Maybe(List(Str())),
        "cwd": Maybe(PathText()),
        "start_time": TEXT,
        "end_time": TEXT,
        "gpu": Maybe(Map(ANY)),
        "status": TEXT,
        "partial_reason": TEXT,
        "exit_code": Maybe(Int(-(1 << 31), (1 << 31) - 1)),
        "kernel_filter": Maybe(Map(ANY)),
        "modules": List(
            Obj(
                {"sha256": Str(128, nonempty=True), "path": Maybe(PathText(relative=True)), "arch": TEXT},
                required=("sha256",),
            )
        ),
        "functions": List(
            Obj(
                {"id": FUNCTION_ID, "module": Str(128), "name": Str(), "size": COUNT, "kernel": Bool()},
                required=("id", "name"),
            )
        ),
        "launches": List(
            Obj(
                {
                    "id": COUNT,
                    "function_id": FUNCTION_ID,
                    "kernel": TEXT,
                    "module": TEXT,
                    "grid": DIMS,
                    "block": DIMS,
                    "cluster": Maybe(List(Int(0, U32 - 1), length=3)),
                    "dynamic_shared_bytes": Maybe(Int(0, U32 - 1)),
                    "stream": Maybe(COUNT),
                    "instrumented": Bool(),
                    "graph_node": Bool(),
                    "records": Maybe(COUNT),
                    "trace": Maybe(PathText(relative=True)),
                    "status": TEXT,
                    "seconds": Maybe(Num(0)),
                }
            )
        ),
        "allocations": List(
            Obj(
                {
                    "address": COUNT,
                    "size": Maybe(COUNT),
                    "kind": TEXT,
                    "allocated_before_launch": Maybe(COUNT),
                    "freed_after_launch": Maybe(COUNT),
                }
            )
        ),
        "errors": List(Str()),
        SOURCE_PREFIX_MAP: Maybe(Map(PathText())),
    }
)


@dataclass(frozen=True)
class RunDirectory:
    path: Path
    manifest: dict[str, Any]

    @property
    def complete(self) -> bool:
        return self.manifest.get("status") == "complete"

    @property
    def report_path(self) -> Path:
        return self.path / REPORT

    def function_names(self) -> dict[int, str]:
        """function id (as carried by trace records) -> mangled name."""
        return {int(f["id"]): str(f["name"]) for f in self.manifest.get("functions", [])}

    def function_modules(self) -> dict[int, str]:
        """function id -> sha256 of the module that holds it."""
        return {int(f["id"]): str(f["module"]) for f in self.manifest.get("functions", [])}

    @property
    def source_prefix_map(self) -> dict[str, str]:
        """Build-tree prefix -> where those sources are now, recorded with the run (e.g. by `reuselens demo`)."""
        mapping = self.manifest.get(SOURCE_PREFIX_MAP) or {}
        if not isinstance(mapping, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in mapping.items()
        ):
            raise RunDirectoryError(f"{self.path / MANIFEST}: {SOURCE_PREFIX_MAP} must map path prefixes to paths")
        return dict(mapping)

    def module_path(self, sha256: str) -> Path:
        for i, module in enumerate(self.manifest.get("modules", [])):
            if module.get("sha256") == sha256:
                return inside_run(self.path, str(module.get("path", f"modules/{sha256}.cubin")), f"modules[{i}].path")
        return self.path / "modules" / f"{sha256}.cubin"


def inside_run(run_dir: str | Path, relative: str, field: str) -> Path:
    """run_dir/relative, refused unless it stays inside run_dir with symlinks resolved: run.json is data, and an
    absolute, `..` or linked path would make a reader open /dev/zero or any file on the machine."""
    root = Path(run_dir).resolve()
    path = (root / relative).resolve()
    if root not in path.parents:
        raise RunDirectoryError(f"{Path(run_dir) / MANIFEST}: {field} {relative!r} is outside the run directory")
    return path


def is_run_directory(path: str | Path) -> bool:
    return (Path(path) / MANIFEST).is_file()


def open_run(path: str | Path) -> RunDirectory:
    """Open and validate a run directory; raise RunDirectoryError with one clear sentence otherwise."""
    global _last_opened
    directory = Path(path).expanduser()
    if not directory.exists():
        raise RunDirectoryError(f"{directory}: no such directory")
    if not directory.is_dir():
        raise RunDirectoryError(f"{directory}: not a run directory (it is a file)")
    manifest_path = directory / MANIFEST
    if not manifest_path.is_file():
        raise RunDirectoryError(
            f"{directory}: not a run directory (no {MANIFEST}; create one with 'reuselens profile')"
        )
    try:
        text = manifest_path.read_bytes()
        key = (str(directory.resolve()), text)
        if _last_opened is not None and _last_opened[0] == key:
            return _last_opened[1]
        manifest = decode(text)
    except OSError as error:
        raise RunDirectoryError(f"{manifest_path}: unreadable run manifest ({error.strerror})") from None
    except JsonError as error:
        raise RunDirectoryError(f"{manifest_path}: unreadable run manifest ({error.detail})") from None
    run = _validated(directory, manifest)
    _last_opened = (key, run)
    return run


def remember_written(path: str | Path, text: str, manifest: Any) -> None:
    """Tell open_run what run.json at `path` holds, decoded, as its writer just wrote it (`reuselens profile` has
    the launcher's finished manifest in hand): open_run then checks the file's bytes against `text` instead of
    decoding it (a thousand-launch run.json: 4-8 ms). The manifest is validated here as open_run would; one
    that fails is not remembered, and open_run reports the problem when it reads the file."""
    global _last_opened
    directory = Path(path).expanduser()
    try:
        run = _validated(directory, manifest)
        key = (str(directory.resolve()), text.encode("utf-8"))
    except (RunDirectoryError, OSError):
        return
    _last_opened = (key, run)


def _validated(directory: Path, manifest: Any) -> RunDirectory:
    manifest_path = directory / MANIFEST
    if not isinstance(manifest, dict) or manifest.get("format") != RUN_FORMAT:
        raise RunDirectoryError(f"{manifest_path}: not a ReuseLens run manifest")
    version = manifest.get("version")
    if version != RUN_VERSION:
        raise RunDirectoryError(
            f"{manifest_path}: run format version {version} is not supported by this ReuseLens (reads {RUN_VERSION})"
        )
    try:
        check(manifest, RUN_SCHEMA)
    except SchemaError as error:
        raise RunDirectoryError(f"{manifest_path}: {error}") from None
    return RunDirectory(directory.resolve(), manifest)


# The run open_run validated last, with its run.json's bytes: `profile` opens the run it just wrote for the memory
# table and again for the report, and a thousand-launch run.json takes 10-20 ms to decode and check, where reading
# and comparing its bytes takes well under one. Readers treat the manifest as read-only.
_last_opened: tuple[tuple[str, bytes], RunDirectory] | None = None


def set_source_prefix_map(path: str | Path, mapping: dict[str, str]) -> None:
    """Record in the run's manifest where its build tree's sources are now (replaced atomically)."""
    run = open_run(path)
    manifest = dict(run.manifest, **{SOURCE_PREFIX_MAP: {**run.source_prefix_map, **mapping}})
    target = run.path / MANIFEST
    tmp = target.with_name(f"{MANIFEST}.tmp.{os.getpid()}")
    try:
        tmp.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, target)
    except OSError as error:
        raise RunDirectoryError(f"{target}: cannot rewrite the run manifest ({error.strerror or error})") from None
