"""The machine's own parallel ceiling, to read the engine's scaling against: speed-up of N threads on a compute
loop and on a streaming memory read (benchmarks/native/parallel_ceiling.cpp, built here with the system C++
compiler), plus the CPU topology the speed-up depends on (SMT siblings, cgroup CPU quota).

Usage: python benchmarks/parallel_ceiling.py [--threads 16]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from native_build import NoCompiler, built  # noqa: E402


def topology() -> list[str]:
    lines = [f"CPUs usable: {len(os.sched_getaffinity(0))} (os.cpu_count {os.cpu_count()})"]
    cpu = pathlib.Path("/sys/devices/system/cpu")
    siblings = sorted({p.read_text().strip() for p in cpu.glob("cpu[0-9]*/topology/thread_siblings_list")})
    lines.append(
        f"SMT sibling groups: {len(siblings)} ({' '.join(siblings[:16])}{' ...' if len(siblings) > 16 else ''})"
    )
    for path in ("/sys/fs/cgroup/cpu.max", "/sys/fs/cgroup/cpuset.cpus.effective"):
        p = pathlib.Path(path)
        if p.exists():
            lines.append(f"{path}: {p.read_text().strip()}")
    model = next(
        (
            ln.split(":", 1)[1].strip()
            for ln in pathlib.Path("/proc/cpuinfo").read_text().splitlines()
            if ln.startswith("model name")
        ),
        "unknown",
    )
    lines.append(f"model: {model}; load average {os.getloadavg()[0]:.1f}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    args = ap.parse_args()
    print("\n".join(topology()))
    try:
        with built("parallel_ceiling", [HERE / "native" / "parallel_ceiling.cpp"]) as exe:
            return subprocess.run([str(exe), str(args.threads)]).returncode
    except NoCompiler as e:
        print(e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
