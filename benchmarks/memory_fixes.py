"""Peak device memory before and after a memory-waste fix on real applications (issue 18), predicted against
measured.

For each fix of MEMORY_FIXES: build the app of benchmarks/realapps/manifest.json as realapps.py does, plus `-g`
(the allocation lines come from the host DWARF), and a copy of its sources with the fix applied; run the original
twice and the fixed build once and require the same output and exit status; profile the original with
`reuselens profile --intra-object` (the object-level patterns, and the intra-object ones from the element maps)
and take the findings the fix answers (pattern and allocation line), their
peak reductions alone and together (patterns.peak_reduction_together); then measure the peak device memory of
each build natively, `--runs` times interleaved: NVML's used memory of the GPU sampled on a thread while the app
runs, minus what was in use just before it started (the app's CUDA context is in both, so the difference of the
two builds is the saving).

    python3 benchmarks/memory_fixes.py --src benchmarks/realapps/src --out /tmp/mf [--fixes NAME,...] [--json F]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import realapp_fixes
import realapps
from program_steps import StepError, build, run_to_end, same_output

HERE = Path(__file__).resolve().parent
MB = 1e6


@dataclass(frozen=True)
class MemoryFix:
    name: str
    app: str
    file: str  # relative to the app's source tree (manifest "source")
    patterns: tuple[str, ...]
    sites: tuple[int, ...]  # the allocation lines (in `file`) of the findings the fix answers
    why: str
    function: str = ""
    patch: tuple[realapp_fixes.Replacement, ...] = ()
    # A fix that is a setting, not a source change: the app is `command` (no build), the fix is `env` added to
    # its environment, and the findings are those whose allocation frame names `site_module`.
    command: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    base_env: tuple[tuple[str, str], ...] = ()
    site_module: str = ""


R = realapp_fixes.Replacement
MEMORY_FIXES = (
    MemoryFix(
        name="mergeSort_buffers_in_source_arrays",
        app="cs_mergeSort",
        file="Samples/0_Introduction/mergeSort/main.cpp",
        patterns=("redundant_allocation",),
        sites=(76, 77),
        why="d_SrcKey/d_SrcVal are last read by the first kernel (mergeSortShared) before d_BufKey/d_BufVal are "
        "first written by the merge stages, and all four have N elements: the merge stages can use the source "
        "arrays as their ping-pong buffers (validation reads the host copies)",
        function="main",
        patch=(
            R("    checkCudaErrors(cudaMalloc((void **)&d_BufKey, N * sizeof(uint)));\n", ""),
            R("    checkCudaErrors(cudaMalloc((void **)&d_BufVal, N * sizeof(uint)));\n", ""),
            R(
                "mergeSort(d_DstKey, d_DstVal, d_BufKey, d_BufVal, d_SrcKey, d_SrcVal, N, DIR);",
                "mergeSort(d_DstKey, d_DstVal, d_SrcKey, d_SrcVal, d_SrcKey, d_SrcVal, N, DIR);",
            ),
            R("    checkCudaErrors(cudaFree(d_BufVal));\n", ""),
            R("    checkCudaErrors(cudaFree(d_BufKey));\n", ""),
        ),
    ),
    MemoryFix(
        name="bfs_uiuc_frontier_queues_sized_to_the_input",
        app="shoc_bfs_uiuc",
        file="src/cuda/level1/bfs/BFS.cu",
        patterns=("overallocation",),
        sites=(407, 408),
        why="the two frontier queues hold one entry per vertex, but no level of this graph reaches half the vertices "
        "(the kernels touched 47.6% of each queue): the queues are sized to half the vertex count, and the initial "
        "frontier copy to that size. Enough for this input only: a general fix grows the queues when a level "
        "outgrows them",
        function="RunTest2",
        patch=(
            R(
                "    CUDA_SAFE_CALL(cudaMalloc(&d_frontier,sizeof(frontier_type)*numVerts));\n"
                "    CUDA_SAFE_CALL(cudaMalloc(&d_frontier2,sizeof(frontier_type)*numVerts));\n",
                "    const unsigned int frontier_capacity = numVerts / 2;\n"
                "    CUDA_SAFE_CALL(cudaMalloc(&d_frontier,sizeof(frontier_type)*frontier_capacity));\n"
                "    CUDA_SAFE_CALL(cudaMalloc(&d_frontier2,sizeof(frontier_type)*frontier_capacity));\n",
            ),
            R(
                "sizeof(frontier_type)*numVerts , cudaMemcpyHostToDevice",
                "sizeof(frontier_type)*frontier_capacity , cudaMemcpyHostToDevice",
            ),
            R(
                "sizeof(frontier_type)*numVerts, cudaMemcpyHostToDevice",
                "sizeof(frontier_type)*frontier_capacity, cudaMemcpyHostToDevice",
            ),
        ),
    ),
    MemoryFix(
        name="pytorch_step_cublas_default_workspace",
        app="pytorch_memory_step",
        file="",
        patterns=("unused_allocation",),
        sites=(),
        why="each cuBLAS handle (the forward thread's and autograd's) allocates its default workspace, 64 MiB on "
        "this GPU, which no kernel touches because PyTorch hands cuBLAS a workspace of its own; "
        "CUBLAS_WORKSPACE_CONFIG sizes cuBLAS's default workspace",
        command=(sys.executable, str(HERE / "pytorch_memory_step.py"), "3"),
        base_env=(("PYTORCH_CUDA_ALLOC_CONF", "backend:cudaMallocAsync"),),
        env=(("CUBLAS_WORKSPACE_CONFIG", ":0:0"),),
        site_module="libcublas",
    ),
)


@functools.cache
def _nvml_gpu0() -> tuple[Any, Any]:
    """NVML, initialised once for all the measurements, and GPU 0's handle."""
    import pynvml  # nvidia-ml-py, on the GPU machine's image

    pynvml.nvmlInit()
    return pynvml, pynvml.nvmlDeviceGetHandleByIndex(0)


class PeakSampler:
    """NVML's used device memory of GPU 0, sampled on a thread; peak() is the largest sample minus the baseline
    taken before start()."""

    def __init__(self) -> None:
        self._nvml, self._handle = _nvml_gpu0()
        self._stop = threading.Event()
        self._top = self.baseline = 0
        self.samples = 0

    def _used(self) -> int:
        return int(self._nvml.nvmlDeviceGetMemoryInfo(self._handle).used)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._top = max(self._top, self._used())
            self.samples += 1

    def __enter__(self) -> PeakSampler:
        self.baseline = min(self._used() for _ in range(20))
        self._top = self.baseline
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def peak(self) -> int:
        return self._top - self.baseline


def measure_peak(argv: list[str], cwd: Path, timeout: float, env: dict[str, str]) -> dict[str, Any]:
    with PeakSampler() as sampler:
        t0 = time.perf_counter()
        done = subprocess.run(argv, cwd=cwd, capture_output=True, timeout=timeout, env=env)
        wall = time.perf_counter() - t0
    return {"peak_bytes": sampler.peak(), "samples": sampler.samples, "wall_s": wall, "rc": done.returncode}


def predicted(fix: MemoryFix, run_dir: Path) -> dict[str, Any]:
    from reuselens.analyzer.memory.analysis import analyze_run, site
    from reuselens.analyzer.memory.patterns import peak_reduction_together

    analysis = analyze_run(run_dir)
    timeline = analysis.timeline
    file_name = Path(fix.file).name

    def answers(finding) -> bool:
        frame = site(timeline.objects[finding.object_id])
        if finding.pattern not in fix.patterns or frame is None:
            return False
        if fix.site_module:
            return fix.site_module in frame.function
        return frame.file is not None and Path(frame.file).name == file_name and frame.line in fix.sites

    chosen = [f for f in analysis.findings if answers(f)]
    return {
        "peak_bytes": analysis.peak.bytes,
        "findings": [
            {
                "pattern": f.pattern,
                "object": f.object_id,
                "site": _site_text(site(timeline.objects[f.object_id])),
                "bytes": f.bytes,
                "peak_reduction": f.peak_reduction,
            }
            for f in chosen
        ],
        "together_bytes": peak_reduction_together(timeline, chosen) if chosen else 0,
    }


def _site_text(frame) -> str:
    return f"{Path(frame.file).name}:{frame.line}" if frame.file else frame.function


def apply_fix(text: str, fix: MemoryFix) -> str:
    """The source `text` with the fix's patch applied (realapp_fixes.apply_patch: each replacement must occur
    exactly as often as it says, inside the fix's function)."""
    as_fix = realapp_fixes.Fix(
        name=fix.name,
        app=fix.app,
        file=fix.file,
        kernel="",
        patterns=fix.patterns,
        lines=fix.sites,
        why=fix.why,
        function=fix.function,
        patch=fix.patch,
    )
    return realapp_fixes.apply_patch(text, as_fix)


def prepare(fix: MemoryFix, manifest: dict[str, Any], args: argparse.Namespace, out: Path):
    """(command before, command after, environment before, environment after)."""
    base = {**os.environ, **dict(fix.base_env)}
    if fix.command:
        return list(fix.command), list(fix.command), base, {**base, **dict(fix.env)}
    app = dict(next(a for a in manifest["apps"] if a["name"] == fix.app))
    app["flags"] = [*app.get("flags", []), "-g"]
    src = Path(args.src).resolve()
    original = out / "original" / fix.app
    build(realapps.build_command(manifest, app, src, original), what=f"nvcc {fix.app}", cwd=original.parent)
    tree = out / "fixed" / app["source"]
    if tree.exists():
        shutil.rmtree(tree)
    shutil.copytree(src / app["source"], tree, ignore=shutil.ignore_patterns("STAGED.json"))
    path = tree / fix.file
    path.write_text(apply_fix(path.read_text(), fix))
    fixed = out / "fixed" / f"{fix.app}_fixed"
    build(realapps.build_command(manifest, app, tree.parent, fixed), what=f"nvcc {fix.app} (fixed)", cwd=fixed.parent)
    argv = [str(a) for a in app.get("args", [])]
    return [str(original), *argv], [str(fixed), *argv], base, base


def profile_objects(command: list[str], env: dict[str, str], run_dir: Path, args: argparse.Namespace) -> Path:
    if run_dir.exists():
        shutil.rmtree(run_dir)
    reuselens = realapps.reuselens_command(args.reuselens)
    profile = run_to_end(
        [*reuselens, "profile", "--intra-object", "--no-analyze", "--run-dir", str(run_dir), "--", *command],
        timeout=4 * args.timeout,
        what="reuselens profile --intra-object",
        cwd=run_dir.parent,
        env=env,
    )
    if profile.status != 0:
        tail = (profile.stderr or profile.stdout).strip().splitlines()[-1:]
        raise StepError(f"reuselens profile --intra-object: exit {profile.status}: {tail}")
    return run_dir


def run_fix(fix: MemoryFix, manifest: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    out = Path(args.out).resolve() / fix.name
    out.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"name": fix.name, "app": fix.app, "why": fix.why}
    try:
        before_cmd, after_cmd, before_env, after_env = prepare(fix, manifest, args, out)
        runs = [
            run_to_end(before_cmd, timeout=args.timeout, what=f"run {fix.app}", cwd=out, env=before_env)
            for _ in range(2)
        ]
        after = run_to_end(after_cmd, timeout=args.timeout, what=f"run {fix.app} (fixed)", cwd=out, env=after_env)
        same, why = same_output((runs[0].stdout, runs[1].stdout), after.stdout)
        result["output_same"] = same and runs[0].status == after.status == 0
        if not result["output_same"]:
            result["output_difference"] = why or f"exit status {runs[0].status} -> {after.status}"
        result["predicted"] = predicted(fix, profile_objects(before_cmd, before_env, out / "run", args))
        # The fixed build's own tracked peak: how much of the measured change the objects ReuseLens sees explain.
        from reuselens.analyzer.memory.analysis import analyze_run

        after_run = profile_objects(after_cmd, after_env, out / "run_fixed", args)
        result["predicted"]["fixed_run_peak_bytes"] = analyze_run(after_run).peak.bytes
        before, after_peaks = [], []
        for _ in range(args.runs):
            before.append(measure_peak(before_cmd, out, args.timeout, before_env))
            after_peaks.append(measure_peak(after_cmd, out, args.timeout, after_env))
        result["measured"] = {"before": before, "after": after_peaks}
        b = statistics.median(r["peak_bytes"] for r in before)
        a = statistics.median(r["peak_bytes"] for r in after_peaks)
        result["measured_reduction_bytes"] = b - a
        result["measured_before_bytes"], result["measured_after_bytes"] = b, a
    except (StepError, realapp_fixes.FixRefused, OSError, subprocess.TimeoutExpired, ValueError) as error:
        result["error"] = str(error)
    return result


def format_fix(r: dict[str, Any]) -> str:
    if "error" in r:
        return f"{r['name']}: ERROR {r['error']}"
    p = r["predicted"]
    each = ", ".join(f"{f['pattern']} at {f['site']} -{f['peak_reduction'] / MB:.1f} MB" for f in p["findings"])
    measured = r["measured_reduction_bytes"]
    ratio = f"{measured / p['together_bytes']:.3f}" if p["together_bytes"] else "-"
    return (
        f"{r['name']} ({r['app']}): output {'same' if r['output_same'] else 'DIFFERENT: ' + r['output_difference']}\n"
        f"  predicted: as-run peak {p['peak_bytes'] / MB:.1f} MB of tracked objects; findings: {each or 'none'}; "
        f"together -{p['together_bytes'] / MB:.1f} MB; the fixed build's own run: peak "
        f"{p['fixed_run_peak_bytes'] / MB:.1f} MB of tracked objects\n"
        f"  measured (NVML, median of {len(r['measured']['before'])}): peak above the idle GPU "
        f"{r['measured_before_bytes'] / MB:.1f} -> {r['measured_after_bytes'] / MB:.1f} MB, "
        f"-{measured / MB:.1f} MB (measured/predicted {ratio})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", required=True, help="the staged sources (realapps_stage.py)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--manifest", default=str(HERE / "realapps" / "manifest.json"))
    parser.add_argument("--fixes", help="comma-separated fix names (default: all)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--reuselens", help="the reuselens command (default: the installed one)")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    manifest = realapps.load_manifest(Path(args.manifest))
    wanted = set(args.fixes.split(",")) if args.fixes else None
    fixes = [f for f in MEMORY_FIXES if wanted is None or f.name in wanted]
    if wanted and len(fixes) != len(wanted):
        raise SystemExit(f"memory_fixes: unknown fixes {sorted(wanted - {f.name for f in fixes})}")
    results = []
    for fix in fixes:
        results.append(run_fix(fix, manifest, args))
        print(format_fix(results[-1]), flush=True)
    if args.json:
        Path(args.json).write_text(
            json.dumps({"format": "reuselens-memory-fixes", "version": 1, "results": results}, indent=1)
        )
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
