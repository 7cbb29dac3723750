#!/usr/bin/env bash
# Session 43, call 4. Call 3's sortingNetworks took 15.8 s under `profile` against 12.2 s under `--no-analyze` (session
# 42: 11.9 against 10.5; mergeSort and mvt 0.3 s apart): its whole profile with the launcher's phases timed, then
# its run directory brought back (traces are off; analysis.json, run.json, the modules) so that the post-run work
# can be taken apart on the development machine, and benchmarks/postrun.py on it here.
#   LIMIT=170 bash benchmarks/results/s43/call4/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-170}
REPO=$PWD
left() { [ $(($(date +%s) - T0)) -lt $((LIMIT - $1)) ]; }
timeout 100 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rf --check-only --jobs 16 \
  --apps cs_sortingNetworks > $OUT/build.txt 2>&1 || tail -5 $OUT/build.txt
cd /tmp/rf/build || exit 1
stamp "sortingNetworks: the launcher's phases (reuse profile, 1 round)"
timeout 60 python3 $REPO/benchmarks/launcher_phases.py --rounds 1 -- ./cs_sortingNetworks 2>&1 | grep -v "^run written" | tee $OUT/phases_sn.txt | tail -40
if left 40; then
  stamp "sortingNetworks: one profile into /tmp/sn, brought back"
  rm -rf /tmp/sn
  /usr/bin/time -v reuselens profile --run-dir /tmp/sn -- ./cs_sortingNetworks > $OUT/profile_sn.txt 2> $OUT/time_sn.txt
  grep -E "Elapsed|Maximum resident" $OUT/time_sn.txt
  du -sh /tmp/sn; ls -la /tmp/sn | head -20
  tar czf $OUT/sn_run.tgz -C /tmp sn
  ls -la $OUT/sn_run.tgz
fi
if left 25; then
  stamp "postrun.py on it"
  cd $REPO && timeout $((LIMIT - $(date +%s) + T0 - 5)) python3 benchmarks/postrun.py --repeat 3 /tmp/sn 2>&1 | tail -8
fi
stamp done
