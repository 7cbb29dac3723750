"""The machine's own parallel ceiling, to read the engine's scaling against: speed-up of N threads on a compute
loop and on a streaming memory read (benchmarks/native/parallel_ceiling.cpp, built here with the system C++
compiler), plus the CPU topology the speed-up depends on (SMT siblings, cgroup CPU quota).

Usage: python benchmarks/parallel_ceiling.py [--threads 16]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent


def topology() -> list[str]:
    lines = [f"CPUs usable: {len(os.sched_getaffinity(0))} (os.cpu_count {os.cpu_count()})"]
    cpu = pathlib.Path("/sys/devices/system/cpu")
    siblings = sorted({p.read_text().strip() for p in cpu.glob("cpu[0-9]*/topology/thread_siblings_list")})
    lines.append(f"SMT sibling groups: {len(siblings)} ({' '.join(siblings[:16])}{' ...' if len(siblings) > 16 else ''})")
    for path in ("/sys/fs/cgroup/cpu.max", "/sys/fs/cgroup/cpuset.cpus.effective"):
        p = pathlib.Path(path)
        if p.exists():
            lines.append(f"{path}: {p.read_text().strip()}")
    model = next((ln.split(":", 1)[1].strip() for ln in pathlib.Path("/proc/cpuinfo").read_text().splitlines()
                  if ln.startswith("model name")), "unknown")
    lines.append(f"model: {model}; load average {os.getloadavg()[0]:.1f}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    args = ap.parse_args()
    cxx = shutil.which(os.environ.get("CXX", "g++")) or shutil.which("c++")
    if not cxx:
        print("parallel_ceiling: no C++ compiler found (set CXX)", file=sys.stderr)
        return 1
    print("\n".join(topology()))
    with tempfile.TemporaryDirectory() as tmp:
        exe = pathlib.Path(tmp) / "parallel_ceiling"
        subprocess.run([cxx, "-O2", "-std=c++17", "-pthread", str(HERE / "native" / "parallel_ceiling.cpp"),
                        "-o", str(exe)], check=True)
        return subprocess.run([str(exe), str(args.threads)]).returncode


if __name__ == "__main__":
    sys.exit(main())
