"""Short, derandomized fuzz budgets for every reader (issue #20, item 9); benchmarks/fuzz.py runs the same
harnesses (tests/fuzz/harnesses.py) with a long budget. An input may be accepted or refused with one clean
line; a traceback, a crash or another exit code fails."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from tests.fuzz.harnesses import HARNESSES

# Examples per harness: the CLI `analyze` harnesses map sources with nvdisasm (~0.4 s an accepted input), the
# others take milliseconds; together they stay within about a minute on two cores.
BUDGET = {
    "settings": 300,
    "server_report": 150,
    "cli_report": 100,
    "trace_replay": 100,
    "analyze_run_json": 40,
    "analyze_analysis_json": 40,
}


@pytest.mark.parametrize("harness", HARNESSES, ids=lambda h: h.name)
def test_hostile_input_is_accepted_or_refused_in_one_line(harness):
    harness.setup()

    @settings(
        max_examples=BUDGET[harness.name],
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(harness.strategy)
    def fuzz(case):
        assert harness.target(case) in ("ok", "rejected")

    fuzz()
