"""Stands in for `reuselens profile` in the end-to-end test (set as reuselens.profiler.command, which the server
calls as `CMD --run-dir D -- APP...`): runs the application like the profiler would, then writes the fixture
run of the fixed kernel (fixture_run.report with reps=1) into D. Exits non-zero, with one error line, when the
application fails, like the real CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import fixture_run  # noqa: E402


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[0] != "--run-dir" or argv[2] != "--":
        print("usage: standin_profiler.py --run-dir DIR -- APP [ARGS...]", file=sys.stderr)
        return 2
    run_dir, app = Path(argv[1]), argv[3:]
    status = subprocess.call(app)
    if status != 0:
        print(f"reuselens: error: the application exited with status {status}; no report written", file=sys.stderr)
        return 2
    fixture_run.write_run(run_dir, reps=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
