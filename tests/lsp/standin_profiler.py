"""Stand-in for `reuselens profile` in the language-server tests (reuselens.profiler.command).

Usage: standin_profiler.py --recorded RUN [--exit-code N] --run-dir D -- APP ARGV...
Runs the application like the real profiler would (same argv, cwd and environment), then writes the recorded
run RUN (report.json, run.json) into D. Like the real CLI it exits 0 on success and otherwise prints one
error line on stderr and exits non-zero.
"""

import argparse
import shutil
import subprocess
import sys
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--recorded", required=True)
    parser.add_argument("--run-dir", required=True)
    parser.add_argument("--exit-code", type=int, default=0, help="exit with this after writing the run")
    parser.add_argument("app", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    app = args.app[1:] if args.app[:1] == ["--"] else args.app
    print(f"profiling {' '.join(app)}", flush=True)
    code = subprocess.call(app)
    if code != 0:
        print(f"reuselens: error: the application exited with status {code}; no report written", file=sys.stderr)
        return 2
    out = Path(args.run_dir)
    out.mkdir(parents=True, exist_ok=True)
    shutil.copy(Path(args.recorded) / "run.json", out / "run.json")
    shutil.copy(Path(args.recorded) / "report.json", out / "report.json.tmp")
    (out / "report.json.tmp").replace(out / "report.json")
    if args.exit_code:
        print("reuselens: error: the application exited with status 1 (run is partial)", file=sys.stderr)
    return args.exit_code


if __name__ == "__main__":
    sys.exit(main())
