#!/usr/bin/env bash
# Session 45, call 3: the breadth set (benchmarks/realapps/breadth.json, BREADTH.md): public apps the timed suite
# does not use, each run natively and under `reuselens profile` from a user's install, one round; then
# benchmarks/breadth_check.py names every defect (the app's verdict or exit status changed, a partial run, errors
# in run.json or collector.log, no report, findings on no source line). The run directories come back without
# their modules (third-party builds stay out of git).
#   LIMIT=400 bash benchmarks/results/s45/call3/script.sh   (carry .whl and benchmarks/realapps/breadth-src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-400}
REPO=$PWD
stamp "clean install"
clean=$(timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1) || { echo "clean install failed"; exit 1; }
stamp "build and run the breadth set: native, full profile, 1 round"
timeout $((LIMIT - $(date +%s) + T0 - 40)) python3 benchmarks/realapps.py --manifest benchmarks/realapps/breadth.json \
  --src benchmarks/realapps/breadth-src --out /tmp/breadth --modes native,full --rounds 1 --timeout 60 --jobs 16 \
  --reuselens "$clean" > $OUT/breadth_realapps.txt 2>&1
echo "realapps.py exit $?"; grep -v "^round" $OUT/breadth_realapps.txt | tail -40
stamp "defects"
python3 benchmarks/breadth_check.py /tmp/breadth --json $OUT/breadth_check.json > $OUT/breadth_check.txt 2>&1
cat $OUT/breadth_check.txt
cp /tmp/breadth/realapps.json $OUT/breadth_realapps.json 2>/dev/null
(cd /tmp/breadth && find runs -type f \( -name collector.log -o -name run.json -o -name '*.log' -o -name report.json \) \
  -size -3M | tar czf $OUT/breadth_runs.tgz -T -)
stamp done
