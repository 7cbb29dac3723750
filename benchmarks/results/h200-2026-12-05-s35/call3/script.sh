#!/usr/bin/env bash
# Session 35, call 3: real launches to profile the engine on, off the GPU host. Calls 1 and 2 found the PyTorch
# loop's block step unmoved by sessions 34-35's closed forms (171-185 CPU-s against session 32's 164), so the
# synthetic SGEMM patterns those were tuned on do not stand for its launches; and mergeSort is the suite's worst app
# (12.96x collect). This call records both and cuts slices of them (launch_slice.py, 12 blocks each).
# 1. The PyTorch loop, one step, every launch traced (engine off): per kernel function, its launches and trace bytes;
#    a slice of each of the six heaviest functions' largest launch.
# 2. cuda-samples mergeSort: its launches' records from a collect run, then its two largest launches traced alone
#    and sliced.
# 3. The engine alone on this host, on the heaviest PyTorch slice and mergeSort's largest, at 1 and 12 workers.
# 4. cuda-samples sortingNetworks profiled, its report and analysis brought back (why 5 MB for 45 findings).
#   bash benchmarks/results/h200-2026-12-05-s35/call3/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
W=/tmp/s35c3
mkdir -p $W/slices
stamp "PyTorch loop, one step, traced"
REUSELENS_ONLINE_ANALYSIS=0 timeout 150 reuselens profile --no-analyze --traces --run-dir $W/pt -- \
  python3 benchmarks/pytorch_memory_step.py 1 > $W/pt.txt 2>&1
tail -2 $W/pt.txt | cut -c1-300
cat > $W/pick.py <<'PY'
"""Per kernel function of a run: launches and warp records (collector.log's launch lines); print the largest launch
with a trace of each of the top N functions."""
import collections, json, re, sys
from pathlib import Path
from reuselens.analyzer import replay_manifest
from reuselens.analyzer.rundir import MANIFEST, open_run
run = open_run(Path(sys.argv[1]))
top = int(sys.argv[2])
records = {int(m[1]): int(m[2]) for m in re.finditer(r"launch (\d+): (\d+) records", (run.path / "collector.log").read_text())}
names = {f["id"]: f.get("name", "?") for f in json.loads((run.path / MANIFEST).read_text()).get("functions", [])}
by_fn = collections.defaultdict(list)
for launch in replay_manifest.launches(run.path / MANIFEST, run.manifest):
    by_fn[launch.function_id].append((records.get(launch.id, 0), launch.id, launch.grid, launch.block, bool(launch.trace)))
rows = sorted(by_fn.items(), key=lambda kv: -sum(x[0] for x in kv[1]))
total = max(1, sum(x[0] for v in by_fn.values() for x in v))
with open(sys.argv[3], "w") as out:
    for fn, v in rows:
        big = max(v)
        n = sum(x[0] for x in v)
        print(f"{n / total:6.1%} {len(v):4d} launches {n / 1e6:8.2f} M rec  largest {big[1]} ({big[0]:,}) grid {big[2]}"
              f" block {big[3]}  {names.get(fn, fn)[:110]}", file=out)
for fn, v in rows[:top]:
    traced = [x for x in v if x[4]]
    if traced:
        print(max(traced)[1])
PY
python3 $W/pick.py $W/pt 6 $OUT/pt_functions.txt > $W/pt_ids.txt; cat $OUT/pt_functions.txt | head -20 | cut -c1-200
i=0
for id in $(cat $W/pt_ids.txt); do
  timeout 60 python3 benchmarks/launch_slice.py $W/pt --launch $id --blocks 12 --out $W/slices/pt_${i}_launch$id 2>&1 | tail -1
  i=$((i + 1))
done
stamp "mergeSort: build, then collect for its launches' records"
timeout 120 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/ms --rounds 1 --modes native \
  --apps cs_mergeSort > $W/ms_build.txt 2>&1 || tail -5 $W/ms_build.txt
(cd /tmp/ms/build && timeout 60 reuselens profile --no-analyze --run-dir $W/ms -- ./cs_mergeSort > $W/ms.txt 2>&1)
grep -E "launch [0-9]+:" $W/ms/collector.log | sed -E 's/.*launch ([0-9]+): ([0-9]+) records.*/\2 \1/' | sort -rn \
  > $W/ms_launches.txt
head -5 $W/ms_launches.txt; cp $W/ms/collector.log $OUT/ms_collector.log
for id in $(head -2 $W/ms_launches.txt | cut -d' ' -f2); do
  stamp "mergeSort launch $id traced alone"
  rm -rf $W/ms_t
  (cd /tmp/ms/build && REUSELENS_ONLINE_ANALYSIS=0 timeout 90 reuselens profile --no-analyze --traces \
    --launch-range $id:$((id + 1)) --run-dir $W/ms_t -- ./cs_mergeSort > $W/ms_t.txt 2>&1) || tail -3 $W/ms_t.txt
  timeout 90 python3 benchmarks/launch_slice.py $W/ms_t --launch $id --blocks 12 --out $W/slices/ms_launch$id 2>&1 | tail -1
  python3 $W/pick.py $W/ms_t 1 /dev/stdout | head -2
done
ls -la $W/slices
(cd $W/slices && tar czf $OUT/slices.tgz .)
for f in $(ls $W/slices/pt_0_*.json $W/slices/ms_*.json 2>/dev/null | head -2); do  # the engine alone on this host
  name=$(basename $f .json)
  stamp "engine.py --slice $name, 1 and 12 workers"
  timeout 25 python3 benchmarks/engine.py --slice $W/slices/$name --workers 1,12 --repeat 1 > $W/engine_$name.txt 2>&1
  grep -E "^  workers|slowest" $W/engine_$name.txt | cut -c1-150
done
(cd $W && tar czf $OUT/engine_slices.tgz engine_*.txt)
stamp "sortingNetworks, profiled: its report and analysis (3.6 MB and 1.4 MB in call 2) to read"
timeout 120 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/ms --rounds 1 --modes native \
  --apps cs_sortingNetworks > $W/sn_build.txt 2>&1 || tail -5 $W/sn_build.txt
(cd /tmp/ms/build && timeout 90 reuselens profile --run-dir $W/sn -- ./cs_sortingNetworks > $W/sn.txt 2>&1) || tail -3 $W/sn.txt
(cd $W/sn && tar czf $OUT/sn_report.tgz report.json analysis.json run.json collector.log) && ls -la $OUT/sn_report.tgz
stamp done
