#!/usr/bin/env bash
# Session 57, call 1 (one call for everything: the device refuses many starts): the session's rules on the GPU, most
# needed first. The GPU tests; the second breadth set's apps the rules change (cuda-samples interval and newdelete:
# called functions' register saves, analyzer/frame_saves.py; Tango SqueezeNet and ResNet: per-thread working sets and
# per-block scalars; AlexNet and ResNet: statements over several lines) natively and under `profile` from a user's
# clean install, and what their reports now say; then the suite (short apps one round, long apps one round) and its
# findings against the answer key; then where a short app's time goes under `--no-analyze` (launcher_phases.py).
#   bash benchmarks/results/s57/call1/script.sh
#   (carry .whl, benchmarks/realapps/src and benchmarks/realapps/breadth2-src)
source benchmarks/device_call.sh
nvidia-smi --query-gpu=name --format=csv,noheader
elapsed() { echo $(($(date +%s) - T0)); }
gpu_tests
stamp "clean install"
timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1
BREADTH_MANIFEST=benchmarks/realapps/breadth2.json BREADTH_SRC=benchmarks/realapps/breadth2-src breadth_set 150 \
  --apps cs_interval,cs_newdelete,tango_squeezenet,tango_resnet,tango_alexnet
stamp "what the changed rules say"
python3 - /tmp/breadth/runs/r0 <<'PY' | tee "$OUT/changed_rules.txt"
import json, pathlib, sys
for report in sorted(pathlib.Path(sys.argv[1]).glob("*-full/report.json")):
    data = json.loads(report.read_text())
    for kernel in data["kernels"]:
        frames = {}
        for n in kernel["nodes"]:
            if n.get("frame"):
                frames[n["frame"]] = frames.get(n["frame"], 0) + 1
        counts = {}
        for f in kernel["findings"]:
            key = (f["pattern"], f["severity"], f["fix"]["kind"])
            counts[key] = counts.get(key, 0) + 1
        print(f"{report.parent.name} {kernel['name'][:50]}: frame nodes {frames}")
        print(f"    findings {sorted(counts.items())}")
        for f in kernel["findings"]:
            m = f["metrics"]
            lines = {n["source"].get("statement_line") for n in kernel["nodes"] if n["id"] in f["pcs"] and n.get("source")}
            if "frame_restores" in m or "bytes_per_block" in m or "bytes_per_thread" in m or lines - {None}:
                print(f"    {f['pattern']} {f['severity']} fix={f['fix']['kind']}: {f['message'][:220]}")
PY
[ "$(elapsed)" -lt 330 ] && short_suite 1
[ "$(elapsed)" -lt 420 ] && long_apps $((520 - $(elapsed)))
[ -d /tmp/rf/runs/r0 ] && score_suite 0
# the short apps' collector logs under --no-analyze (per-launch waits and drains), for where their time goes
(cd /tmp/rf/runs/r0 2>/dev/null && tar czf "$OUT/collect_logs.tgz" */collector.log */run.json 2>/dev/null)
if [ "$(elapsed)" -lt 540 ]; then
  stamp "launcher phases, --no-analyze, cs_reduction"
  mkdir -p /tmp/phases && (cd /tmp/phases && timeout 45 \
    python3 "$DEVICE_CALL_REPO/benchmarks/launcher_phases.py" --rounds 3 --mode no-analyze \
    -- /tmp/rf/build/cs_reduction $(manifest_args cs_reduction)) > "$OUT/phases_reduction.txt" 2>&1
  tail -30 "$OUT/phases_reduction.txt"
fi
stamp done
