#!/usr/bin/env bash
# Session 29, call 6: the session's last code (the overlapped drain with the review's mends: exit waits for a launch
# another thread is finishing, a launch's seconds end when drained; the launcher catching stop signals from before
# the app's start). GPU tests, fidelity against ncu, the suite from a user's install (2 rounds), and per launch
# seconds in run.json against the collector.log lines.
#   bash benchmarks/results/h200-2026-12-04-s29/call6/script.sh
source benchmarks/device_call.sh
gpu_tests
fidelity_against_ncu
short_suite 2
stamp "transpose's run.json: per-launch seconds (begin to drained)"
python3 - /tmp/rf <<'PY'
import json, pathlib, statistics, sys
for run in sorted(pathlib.Path(sys.argv[1]).rglob("run.json")):
    if "cs_transpose" in str(run) and "full" in str(run):
        launches = json.loads(run.read_text())["launches"]
        s = [l["seconds"] for l in launches if l.get("instrumented")]
        print(run.parent.name, len(s), "launches; seconds median", f"{statistics.median(s):.6f}", "max", f"{max(s):.6f}",
              "statuses", sorted({l["status"] for l in launches}))
        break
PY
stamp done
