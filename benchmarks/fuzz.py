"""Long fuzzing budget for every reader (issue #20, item 9): the harnesses of tests/fuzz/harnesses.py, which the
suite runs with a short budget, here with `--examples N` inputs each, plus the engine's C++ entry points under
AddressSanitizer and UndefinedBehaviorSanitizer (tests/engine/native/hostile_driver.cpp --fuzz).

    python benchmarks/fuzz.py --examples 20000 [--examples-for analyze_run_json=2000] [--harness NAME ...]
                              [--jobs 2] [--timeout 20] [--sanitized-rounds 20000]

Each harness runs in a child process, so a crash (a signal) is counted instead of ending the benchmark. Per input:
"ok" (accepted), "rejected" (one clean error line), a traceback (any exception, or a malformed error), or a hang
(longer than --timeout seconds). Prints one line of counts per harness and the first findings of each kind.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def child(name: str, examples: int, timeout: float, seed: int, progress: Path) -> None:
    """Run one harness for `examples` inputs, writing the counts to `progress` as it goes."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed

    from tests.fuzz.harnesses import HARNESSES

    harness = next(h for h in HARNESSES if h.name == name)
    harness.setup()
    counts = {"inputs": 0, "ok": 0, "rejected": 0, "tracebacks": 0, "hangs": 0, "crashes": 0}
    findings: list[str] = []
    signal.signal(signal.SIGALRM, _alarm)

    def save() -> None:
        progress.write_text(json.dumps({"counts": counts, "findings": findings}), encoding="utf-8")

    @hypothesis_seed(seed)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(harness.strategy)
    def fuzz(case):
        counts["inputs"] += 1
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            counts[harness.target(case)] += 1
        except Hang:
            counts["hangs"] += 1
            findings.append(f"hang: {repr(case)[:300]}")
        except BaseException as error:  # noqa: BLE001 - every exception is a finding to count, not to stop on
            if isinstance(error, KeyboardInterrupt):
                raise
            counts["tracebacks"] += 1
            if len(findings) < 20:
                where = traceback.extract_tb(error.__traceback__)[-1]
                findings.append(f"{type(error).__name__}: {str(error)[:300]} at {where.filename}:{where.lineno}")
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        if counts["inputs"] % 50 == 0:
            save()

    fuzz()
    save()


def run_harness(name: str, examples: int, timeout: float, seed: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        progress = Path(tmp) / "progress.json"
        started = time.monotonic()
        done = subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                name,
                "--examples",
                str(examples),
                "--timeout",
                str(timeout),
                "--seed",
                str(seed),
                "--progress",
                str(progress),
            ],
            capture_output=True,
            text=True,
        )
        result = (
            json.loads(progress.read_text())
            if progress.exists()
            else {
                "counts": {"inputs": 0, "ok": 0, "rejected": 0, "tracebacks": 0, "hangs": 0, "crashes": 0},
                "findings": [],
            }
        )
        if done.returncode != 0:  # killed by a signal (negative) or died outside a target: a crash
            result["counts"]["crashes"] += 1
            result["findings"].append(f"child exit {done.returncode}: {done.stderr[-1000:]}")
        result["seconds"] = time.monotonic() - started
        return result


def run_sanitized(rounds: int, chunk_rounds: int = 200) -> dict:
    """The engine's random extreme calls under ASan+UBSan: `rounds` engines in all, each with allocations, a
    launch and 100 records drawn from the edges of every field's range."""
    from tests.native_build import COMPILER, ENGINE_SOURCES, SANITIZER_ENV, build

    counts = {"inputs": 0, "refused": 0, "crashes": 0, "sanitizer_reports": 0}
    if COMPILER is None:
        return {"counts": counts, "findings": ["no C++ compiler"], "seconds": 0}
    started = time.monotonic()
    findings = []
    with tempfile.TemporaryDirectory() as tmp:
        driver = build(
            Path(tmp) / "hostile_driver",
            [REPO / "tests/engine/native/hostile_driver.cpp", *ENGINE_SOURCES],
            [REPO / "analyzer/engine/include"],
            "address,undefined",
        )
        env = dict(SANITIZER_ENV, ASAN_OPTIONS="abort_on_error=0:halt_on_error=1")
        seed = 0
        while counts["inputs"] < rounds:  # chunks, so that a sanitizer report names a short reproducible seed
            seed += 1
            chunk = min(chunk_rounds, rounds - counts["inputs"])
            done = subprocess.run(
                [str(driver), "--fuzz", str(seed), str(chunk)], capture_output=True, text=True, env=env
            )
            counts["inputs"] += chunk
            if done.returncode != 0 or done.stderr:
                counts["crashes" if done.returncode < 0 else "sanitizer_reports"] += 1
                findings.append(f"--fuzz {seed} {chunk}: {done.stderr[-2000:]}")
            elif done.stdout.startswith("ok "):
                counts["refused"] += int(done.stdout.split()[1])
    return {"counts": counts, "findings": findings, "seconds": time.monotonic() - started}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=1000, help="inputs per harness")
    parser.add_argument("--harness", action="append", help="only these harnesses (repeatable)")
    parser.add_argument(
        "--examples-for",
        action="append",
        default=[],
        metavar="NAME=N",
        help="a budget of its own for one harness (the `analyze` ones take ~0.2 s an input)",
    )
    parser.add_argument("--jobs", type=int, default=1, help="harnesses run at the same time")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds one input may take before a hang")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sanitized-rounds", type=int, default=0, help="engine calls under ASan/UBSan")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--progress", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.examples, args.timeout, args.seed, args.progress)
        return 0
    from tests.fuzz.harnesses import HARNESSES

    names = args.harness or [h.name for h in HARNESSES]
    budget = {name: args.examples for name in names}
    budget.update({k: int(v) for k, _, v in (item.partition("=") for item in args.examples_for)})
    total = {"inputs": 0, "tracebacks": 0, "hangs": 0, "crashes": 0}
    bad = 0
    with ThreadPoolExecutor(args.jobs) as pool:  # each harness's line as soon as it is done
        futures = {pool.submit(run_harness, n, budget[n], args.timeout, args.seed): n for n in names}
        for future in as_completed(futures):
            name, result = futures[future], future.result()
            c = result["counts"]
            print(
                f"{name:24} inputs {c['inputs']:7}  ok {c['ok']:7}  rejected {c['rejected']:7}  "
                f"tracebacks {c['tracebacks']}  hangs {c['hangs']}  crashes {c['crashes']}  "
                f"({result['seconds']:.0f} s)",
                flush=True,
            )
            for finding in result["findings"][:5]:
                print(f"    {finding}", flush=True)
            for key in total:
                total[key] += c[key]
            bad += c["tracebacks"] + c["hangs"] + c["crashes"]
    if args.sanitized_rounds:
        result = run_sanitized(args.sanitized_rounds)
        c = result["counts"]
        print(
            f"{'engine_asan_ubsan':24} inputs {c['inputs']:7}  refused {c['refused']:7}  "
            f"sanitizer reports {c['sanitizer_reports']}  crashes {c['crashes']}  ({result['seconds']:.0f} s)",
            flush=True,
        )
        for finding in result["findings"][:3]:
            print(f"    {finding}", flush=True)
        bad += c["sanitizer_reports"] + c["crashes"]
    print(
        f"{'total (Python harnesses)':24} inputs {total['inputs']:7}  tracebacks {total['tracebacks']}  "
        f"hangs {total['hangs']}  crashes {total['crashes']}",
        flush=True,
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
