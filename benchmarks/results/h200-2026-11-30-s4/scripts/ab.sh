#!/usr/bin/env bash
# One-off A/B: main's queue vs ring-prefault (working tree), overhead apps, drain attribution.
set -uo pipefail
export PYTHONUNBUFFERED=1
OUTDIR=${OUT:-/tmp/ab-out}; mkdir -p "$OUTDIR"
exec > >(tee "$OUTDIR/ab_log.txt") 2>&1
cd "$(dirname "$0")/.."
ROOT=$PWD; export PYTHONPATH=$ROOT
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl && export PYTHONPATH=$ROOT:/tmp/site
rm -rf /tmp/ovh_*
stamp build
(cmake -S collector/native -B build/dev-branch -DCMAKE_BUILD_TYPE=Release >/tmp/c1.txt 2>&1 && cmake --build build/dev-branch -j8 >/tmp/b1.txt 2>&1 || { tail -30 /tmp/c1.txt /tmp/b1.txt; }) &
P1=$!
(cmake -S scratch/main/collector/native -B build/dev-main -DCMAKE_BUILD_TYPE=Release >/tmp/c2.txt 2>&1 && cmake --build build/dev-main -j8 >/tmp/b2.txt 2>&1 || { tail -30 /tmp/c2.txt /tmp/b2.txt; }) &
P2=$!
make -C tests/gpu BUILD="$ROOT/build/gpu" -j16 >/tmp/make.txt 2>&1 || tail -20 /tmp/make.txt
wait $P1; wait $P2
ls build/dev-branch/*.so build/dev-main/*.so || exit 1
APPS=vecadd_1M,matmul_256,stencil_20
ovh() { # name lib [env...]
  local name=$1 lib=$2; shift 2
  stamp "overhead $name"
  env "$@" REUSELENS_COLLECTOR_LIB=$ROOT/$lib timeout 90 python3 benchmarks/overhead.py --build build/gpu --apps $APPS --repeat 2 --work /tmp/ovh_$name --json "$OUTDIR/ab_$name.json" 2>&1 | grep -E 'vecadd|matmul|stencil|median' 
}
B=build/dev-branch/libreuselens_collector.so
ovh main1 build/dev-main/libreuselens_collector.so
ovh c1 $B REUSELENS_QUEUE_COPY_THREADS=1
ovh c2 $B REUSELENS_QUEUE_COPY_THREADS=2
ovh c4 $B REUSELENS_QUEUE_COPY_THREADS=4
ovh c8 $B REUSELENS_QUEUE_COPY_THREADS=8
ovh main2 build/dev-main/libreuselens_collector.so
ovh c4b $B REUSELENS_QUEUE_COPY_THREADS=4
ovh c1b $B REUSELENS_QUEUE_COPY_THREADS=1
ovh off $B REUSELENS_ONLINE_ANALYSIS=0
stamp "drain attribution (branch runs)"
for d in c1 c2 c4 c8 c4b c1b off; do echo "-- $d"; grep -rh 'drain thread' /tmp/ovh_$d | grep -E ' (856064|131072) records' | head -4; done
stamp "queue_drain main vs branch"
python3 scratch/main/benchmarks/queue_drain.py --repeat 2 --engine-ns 30,80 2>&1 | sed 's/^/main   /'
python3 benchmarks/queue_drain.py --repeat 2 --engine-ns 30,80 --copy-threads 1,2,4,8 2>&1 | sed 's/^/branch /'
stamp done
