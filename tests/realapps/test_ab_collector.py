"""benchmarks/ab_collector.py without a GPU: the order of each pair alternates between apps and rounds, pairs are
the runs made back to back (a failed run breaks only its own pair), and the builds it is given are checked."""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))
ab = importlib.import_module("ab_collector")


def test_each_build_goes_first_as_often_over_apps_and_rounds():
    firsts = [ab.order(app, rnd)[0] for app in range(4) for rnd in range(4)]
    assert firsts.count(0) == firsts.count(1) == 8
    # one app: the order swaps every round; one round: every app
    assert [ab.order(0, r) for r in range(3)] == [(0, 1), (1, 0), (0, 1)]
    assert [ab.order(a, 1) for a in range(3)] == [(1, 0), (0, 1), (1, 0)]


def test_pairs_are_the_runs_made_together_and_a_failure_drops_only_its_pair():
    # round 1 drifted slow for both builds: its pair still says B is 10% faster
    row = ab.pair_summary([2.0, 4.0, 2.2], [1.8, 3.6, None])
    assert row["pairs"] == 2
    assert row["ratio_median"] == pytest.approx(0.9)
    assert row["ratio_min"] == pytest.approx(0.9) and row["ratio_max"] == pytest.approx(0.9)
    assert row["a_median_s"] == pytest.approx(2.2) and row["b_median_s"] == pytest.approx(2.7)
    none = ab.pair_summary([None], [1.0])
    assert none["pairs"] == 0 and none["ratio_median"] is None and none["a_median_s"] is None


def test_builds_are_a_library_that_exists_or_the_installed_one(tmp_path, monkeypatch):
    lib = tmp_path / "libreuselens_collector.so"
    lib.write_bytes(b"")
    assert ab.parse_build(f"old={lib}") == ("old", str(lib.resolve()), {})
    assert ab.parse_build("new=installed") == ("new", None, {})
    for bad in ("old", "=x", f"old={tmp_path / 'missing.so'}", "q=installed,QUEUE=1", "q=installed,REUSELENS_X"):
        with pytest.raises(argparse.ArgumentTypeError):
            ab.parse_build(bad)
    monkeypatch.setenv("REUSELENS_COLLECTOR_LIB", "/somewhere/else.so")
    assert "REUSELENS_COLLECTOR_LIB" not in ab.build_env(None)  # the installed one, whatever this shell says
    assert ab.build_env(str(lib))["REUSELENS_COLLECTOR_LIB"] == str(lib)


def test_a_side_may_be_the_same_library_under_other_settings():
    name, library, settings = ab.parse_build("q128=installed,REUSELENS_ENGINE_QUEUE_BYTES=134217728,REUSELENS_X=")
    assert (name, library) == ("q128", None)
    assert settings == {"REUSELENS_ENGINE_QUEUE_BYTES": "134217728", "REUSELENS_X": ""}
    env = ab.build_env(library, settings)
    assert env["REUSELENS_ENGINE_QUEUE_BYTES"] == "134217728" and "REUSELENS_COLLECTOR_LIB" not in env


def test_a_setting_the_launcher_replaces_is_refused():
    """REUSELENS_BUFFERS and the like never reach the app through the environment: the launcher sets them from its
    own options, so a side with one would silently run the other side's configuration."""
    for var in ("REUSELENS_BUFFERS", "REUSELENS_BUFFER_BYTES", "REUSELENS_VALUES"):
        with pytest.raises(argparse.ArgumentTypeError, match="would not reach the app"):
            ab.parse_build(f"b=installed,{var}=8")
