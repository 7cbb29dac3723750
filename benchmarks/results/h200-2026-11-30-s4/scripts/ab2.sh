#!/usr/bin/env bash
set -uo pipefail
export PYTHONUNBUFFERED=1
cd "$(dirname "$0")/.."; ROOT=$PWD; export PYTHONPATH=$ROOT:/tmp/site
rm -rf /tmp/ovh2_*
APPS=vecadd_1M,matmul_256,stencil_20
B=build/dev-branch/libreuselens_collector.so
ovh() { local name=$1 lib=$2; shift 2; echo "== $name $*"
  env "$@" REUSELENS_COLLECTOR_LIB=$ROOT/$lib timeout 90 python3 benchmarks/overhead.py --build build/gpu --apps $APPS --repeat 2 --work /tmp/ovh2_$name --json "$OUT/ab2_$name.json" 2>&1 | grep -E '^(vecadd|matmul|stencil)' | awk '{print $1, $10, $11}'
  grep -rh 'drain thread' /tmp/ovh2_$name | grep -E ' 856064 records' | head -2 | cut -c13-; }
ovh c4n2 $B REUSELENS_QUEUE_COPY_THREADS=4
ovh c4n4 $B REUSELENS_QUEUE_COPY_THREADS=4 REUSELENS_BUFFERS=4
ovh c4n8 $B REUSELENS_QUEUE_COPY_THREADS=4 REUSELENS_BUFFERS=8
ovh c8n4 $B REUSELENS_QUEUE_COPY_THREADS=8 REUSELENS_BUFFERS=4
ovh off_n4 $B REUSELENS_ONLINE_ANALYSIS=0 REUSELENS_BUFFERS=4
ovh c4n2b $B REUSELENS_QUEUE_COPY_THREADS=4
ovh c4n4b $B REUSELENS_QUEUE_COPY_THREADS=4 REUSELENS_BUFFERS=4
ovh offb $B REUSELENS_ONLINE_ANALYSIS=0
