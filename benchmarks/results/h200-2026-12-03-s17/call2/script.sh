#!/usr/bin/env bash
# Session 17, call 2: where the PyTorch loop's engine time goes: per-kernel records of a 2-step loop, one traced
# launch of each of the three kernels with the most records, replayed at 1 worker under perf.
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; exit 1; }
which perf nvdisasm; 
stamp "pytorch 2 steps collect"
timeout 100 reuselens profile --no-analyze --run-dir /tmp/p2 -- python3 benchmarks/pytorch_memory_step.py 2 2>&1 | tail -2
python3 - > /tmp/pick.txt <<'PY'
import json, collections, subprocess
run = json.load(open('/tmp/p2/run.json'))
by = collections.defaultdict(list)
for l in run['launches']:
    by[l['kernel']].append(l)
rows = sorted(by.items(), key=lambda kv: -sum(l.get('records') or 0 for l in kv[1]))
import sys
for k, ls in rows:
    name = subprocess.run(['c++filt'], input=k, capture_output=True, text=True).stdout.strip()[:110]
    print(f"# {sum(l.get('records') or 0 for l in ls):>12,} {len(ls):>4} grid {ls[-1]['grid']} block {ls[-1]['block']} smem {ls[-1]['dynamic_shared_bytes']} {name}", file=sys.stderr)
for k, ls in rows[:3]:
    print(ls[-1]['id'])
PY
cat /tmp/pick.txt
i=0
for L in $(cat /tmp/pick.txt); do
  i=$((i+1))
  stamp "trace launch $L"
  timeout 60 reuselens profile --no-analyze --traces --launch-range $L:$((L+1)) --run-dir /tmp/tg$i -- python3 benchmarks/pytorch_memory_step.py 2 > /dev/null 2>&1
  du -sh /tmp/tg$i/traces; ls /tmp/tg$i/modules | head -3
  timeout 60 python3 benchmarks/replay_speed.py /tmp/tg$i --workers 1,12 --repeat 2 2>&1 | tail -6
  timeout 60 perf record -q -g -o /tmp/perf$i.data python3 benchmarks/replay_speed.py /tmp/tg$i --workers 1 --repeat 1 > /dev/null 2>&1
  perf report -i /tmp/perf$i.data --stdio --no-children --percent-limit 0.7 2>/dev/null | grep -v "^$" | head -120 > $OUT/perf$i.txt
  perf report -i /tmp/perf$i.data --stdio --no-children --sort sym -g none --percent-limit 0.3 2>/dev/null | grep -v "^$\|^#" | head -40
  rm -f /tmp/tg$i/modules/*.cubin
  tar cf - -C /tmp tg$i | python3 -c "import sys,zstandard;sys.stdout.buffer.write(zstandard.ZstdCompressor(level=12,threads=8).compress(sys.stdin.buffer.read()))" > /tmp/tg$i.tar.zst
  ls -la /tmp/tg$i.tar.zst; [ $(stat -c %s /tmp/tg$i.tar.zst) -lt 16000000 ] && cp /tmp/tg$i.tar.zst $OUT/
done
stamp done
