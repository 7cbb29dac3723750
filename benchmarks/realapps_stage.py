#!/usr/bin/env python3
"""Stage the third-party sources of the real-application benchmark (benchmarks/realapps.py).

Reads benchmarks/realapps/manifest.json and, for each source repository, copies the listed paths at the
pinned commit out of a local bare clone into DEST/<source>/ (git-ignored: third-party code never enters
our history). The device host has no network, so DEST travels with the working tree instead.

    python3 benchmarks/realapps_stage.py [--mirrors /work/.mirror] [--dest benchmarks/realapps/src]

A bare clone of owner/name is looked up as MIRRORS/owner+name/repo (the layout the session's `fetch` tool
produces) or MIRRORS/owner+name(.git); --git-dir SOURCE=PATH names one explicitly.

A source's optional fields, applied in this order after the copy: "generated" ({path: text}, files written in
place of a configure step), "patches" ([path, old, new], each `old` found exactly once) and "inputs" (a script
beside the manifest, run as `python SCRIPT DEST/<source>` with this interpreter, that writes the apps' input
files into the staged folder, e.g. parboil_inputs.py for Parboil, which ships no data sets). Apps name such
files in their args as {src}/<source>/..., which benchmarks/realapps.py resolves when it runs them. The size
limit counts the generated inputs too.
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "realapps" / "manifest.json"
DEFAULT_DEST = HERE / "realapps" / "src"
SIZE_LIMIT = 60 << 20
# Sources of the samples only: the repositories also hold documents and images whose blobs a partial clone
# may lack, and the apps need none of them.
SOURCE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".c", ".cpp", ".cc", ".inl")


class StageError(Exception):
    pass


def load_manifest(path: Path = MANIFEST) -> dict:
    manifest = json.loads(path.read_text())
    if manifest.get("format") != "reuselens-realapps-manifest" or manifest.get("version") != 1:
        raise StageError(f"{path}: not a version-1 realapps manifest")
    return manifest


def git(git_dir: Path, *args: str, binary: bool = False):
    done = subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True, text=not binary)
    if done.returncode != 0:
        err = done.stderr if not binary else done.stderr.decode(errors="replace")
        raise StageError(
            f"git {' '.join(args[:2])} in {git_dir}: {err.strip().splitlines()[-1] if err.strip() else 'failed'}"
        )
    return done.stdout


def find_git_dir(repo: str, mirrors: Path) -> Path:
    stem = repo.replace("/", "+")
    for candidate in (mirrors / stem / "repo", mirrors / stem, mirrors / f"{stem}.git"):
        if (candidate / "objects").is_dir():
            return candidate
    raise StageError(f"no bare clone of {repo} under {mirrors} (looked for {stem}/repo, {stem}, {stem}.git)")


def files_to_copy(git_dir: Path, commit: str, paths: list[str]) -> list[str]:
    listed = git(git_dir, "ls-tree", "-r", "--name-only", commit, "--", *paths).splitlines()
    chosen = [p for p in listed if p.endswith(SOURCE_SUFFIXES)]
    missing = [p for p in paths if not any(f == p or f.startswith(p.rstrip("/") + "/") for f in chosen)]
    if missing:
        raise StageError(f"{git_dir}: commit {commit[:12]} has no source files under {', '.join(missing)}")
    return chosen


def make_inputs(name: str, script: Path, target: Path) -> None:
    """Runs a source's input generator on its staged folder: the inputs then travel with the sources, and the
    apps find them wherever the staged tree lands. A subprocess, so that a generator's imports and globals stay
    out of this script."""
    done = subprocess.run([sys.executable, str(script), str(target)], capture_output=True, text=True)
    if done.returncode != 0:
        tail = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
        raise StageError(f"{name}: input generator {script} exited {done.returncode}: {tail}")


def stage_source(name: str, spec: dict, git_dir: Path, dest: Path, manifest_dir: Path = HERE / "realapps") -> int:
    target = dest / name
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    files = files_to_copy(git_dir, spec["commit"], spec["paths"])
    archive = git(git_dir, "archive", "--format=tar", spec["commit"], "--", *files, binary=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(target, filter="data")
    for rel, text in spec.get("generated", {}).items():
        (target / rel).write_text(text)
    for rel, old, new in spec.get("patches", []):
        path = target / rel
        body = path.read_text()
        if body.count(old) != 1:
            raise StageError(f"{name}/{rel}: patch expects exactly one {old!r}, found {body.count(old)}")
        path.write_text(body.replace(old, new))
    stamp = {"repo": spec["repo"], "commit": spec["commit"], "files": len(files)}
    if spec.get("inputs"):
        make_inputs(name, manifest_dir / spec["inputs"], target)
        stamp["inputs"] = spec["inputs"]
    (target / "STAGED.json").write_text(json.dumps(stamp, indent=1) + "\n")
    return sum(p.stat().st_size for p in target.rglob("*") if p.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mirrors", default="/work/.mirror", help="folder holding bare clones owner+name/")
    parser.add_argument("--git-dir", action="append", default=[], metavar="SOURCE=PATH")
    parser.add_argument("--dest", default=str(DEFAULT_DEST))
    parser.add_argument("--manifest", default=str(MANIFEST))
    args = parser.parse_args(argv)
    try:
        manifest = load_manifest(Path(args.manifest))
        explicit = dict(item.split("=", 1) for item in args.git_dir)
        dest = Path(args.dest)
        total = 0
        for name, spec in manifest["sources"].items():
            git_dir = Path(explicit[name]) if name in explicit else find_git_dir(spec["repo"], Path(args.mirrors))
            size = stage_source(name, spec, git_dir, dest, Path(args.manifest).resolve().parent)
            total += size
            print(f"{name:<14} {spec['repo']}@{spec['commit'][:12]}  {size / 2**20:6.2f} MiB -> {dest / name}")
        if total > SIZE_LIMIT:
            raise StageError(f"staged sources take {total / 2**20:.1f} MiB, over the {SIZE_LIMIT >> 20} MiB limit")
        print(f"total {total / 2**20:.2f} MiB")
    except (StageError, OSError, ValueError, KeyError) as failure:
        print(f"realapps_stage: {failure}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
