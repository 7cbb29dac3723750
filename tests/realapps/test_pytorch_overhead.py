"""benchmarks/pytorch_overhead.py without a GPU or PyTorch: a stand-in loop script, native mode only, timed per
round and summarised in its JSON; a failing mode makes the script exit non-zero."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))
pytorch_overhead = importlib.import_module("pytorch_overhead")


def test_native_rounds_are_timed_and_summarised(tmp_path, capsys):
    script = tmp_path / "loop.py"
    script.write_text("import sys, time\ntime.sleep(0.001 * int(sys.argv[1]))\nprint('loss 0.1')\n")
    code = pytorch_overhead.main(
        ["--out", str(tmp_path / "out"), "--modes", "native", "--rounds", "2", "--steps", "5", "--script", str(script)]
    )
    assert code == 0
    result = json.loads((tmp_path / "out" / "pytorch_overhead.json").read_text())
    assert (result["format"], result["version"], result["steps"]) == ("reuselens-pytorch-overhead", 1, 5)
    assert len(result["modes"]["native"]) == 2 and all(s["rc"] == 0 for s in result["modes"]["native"])
    assert result["summary"]["native"]["wall_s"] > 0.005
    assert "PyTorch loop, 5 steps:" in capsys.readouterr().out


def test_a_failing_loop_makes_the_benchmark_fail(tmp_path):
    script = tmp_path / "loop.py"
    script.write_text("raise SystemExit(4)\n")
    code = pytorch_overhead.main(
        ["--out", str(tmp_path / "out"), "--modes", "native", "--rounds", "1", "--script", str(script)]
    )
    assert code == 2
