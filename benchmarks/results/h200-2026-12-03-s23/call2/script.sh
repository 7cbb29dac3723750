#!/usr/bin/env bash
# Session 23, call 2: lent buffers with eight of them, so that the GPU comes back to a lent buffer only eight
# generations later (call 1: with two, LU's launches waited for the engine to give theirs back).
# Paired on the eight short apps, 3 rounds, against the copy (REUSELENS_LEND_BUFFERS=0, 2 x 16 MiB as before):
# lending with 8 x 16 MiB (128 MiB pinned), and with 8 x 4 MiB (32 MiB pinned, as the copy's 2 x 16 MiB).
# Keeps the collector.log of pb_lu and shoc_bfs of round 0 for each side.
# Run from the repository root with .whl/ and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-03-s23/call2/script.sh
source benchmarks/device_call.sh
SHORT=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 1 --modes native --jobs 16 --apps $SHORT > /dev/null 2>&1
mkdir -p /tmp/logs
for B in lend8x16=installed,REUSELENS_BUFFERS=8,REUSELENS_BUFFER_BYTES=16777216 lend8x4=installed,REUSELENS_BUFFERS=8,REUSELENS_BUFFER_BYTES=4194304; do
  N=${B%%=*}
  stamp "paired: copy / $N"
  timeout 220 python3 benchmarks/ab_collector.py --a copy=installed,REUSELENS_LEND_BUFFERS=0 --b $B --apps $SHORT --rounds 3 --out /tmp/ab_$N --build /tmp/rv/build 2>&1 | grep -v "^round \|^build "
  cp /tmp/ab_$N/ab_collector.json $OUT/ab_$N.json
  for a in pb_lu shoc_bfs; do for s in copy $N; do cp /tmp/ab_$N/runs/r0/$a-$s/collector.log /tmp/logs/$N-$a-$s.log; done; done
done
grep -h "context .*buffers of\|exit: engine" /tmp/logs/*.log | cut -c1-250
tar czf $OUT/logs.tgz -C /tmp logs
stamp done
