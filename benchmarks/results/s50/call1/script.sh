#!/usr/bin/env bash
# Session 50, call 1: where a record's time goes on the GPU when few warps run (pb_corr, gramschmidt: 7-11x with the
# engine idle; session 45 ruled out the fence). benchmarks/record_latency.cu natively, under the shipped patch, under
# its packed records off, under floor/components (benchmarks/patch_variants) and two variants of patch.cu built here:
# `constdiv` (the buffer geometry as compile-time constants: no 64-bit division by a runtime value) and `gpufence`
# (each record's release fence at GPU scope), `release` (each record's fence a release only, fence.release.sys: no L1
# invalidation, CCTL.IVALL, which fence.acq_rel emits). Then the eight short apps natively and collected, one round, with
# their collector.logs, to split a short app's overhead.
#   LIMIT=420 bash benchmarks/results/s50/call1/script.sh   (carry .whl, benchmarks/realapps/src, benchmarks/realapps/breadth-src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-420}
nvidia-smi --query-gpu=name --format=csv,noheader
stamp "microbenchmark and patch variants"
nvcc -O3 -lineinfo -arch=sm_90 -o /tmp/record_latency benchmarks/record_latency.cu || exit 1
bash benchmarks/patch_variants/build.sh /tmp/pv || exit 1
inc=$(python3 -c 'import nvidia, pathlib; print(next((str(p) for p in (pathlib.Path(d) / "cu13" / "include" for d in nvidia.__path__) if (p / "sanitizer_patching.h").is_file()), ""))')
[ -n "$inc" ] || inc=/usr/local/cuda/compute-sanitizer/include
mk() {  # mk NAME: /tmp/pv/NAME.cu (a copy of patch.cu) into /tmp/pv/NAME.fatbin
  nvcc --fatbin --keep-device-functions -Xptxas --compile-as-tools-patch -O3 -gencode arch=compute_90,code=sm_90 \
    -I"$inc" -Icollector/native/src -Ianalyzer/engine/include -o "/tmp/pv/$1.fatbin" "/tmp/pv/$1.cu"
}
sed -e 's/s->capacity/524286ull/g' -e 's/s->nbuf/2u/g' collector/native/src/patch.cu > /tmp/pv/constdiv.cu
perl -0pe 's/release_fence_system\(\);\n    commit\(s, t, record_slots \* slots\);/asm volatile("fence.acq_rel.gpu;" ::: "memory");\n    commit(s, t, record_slots * slots);/' \
  collector/native/src/patch.cu > /tmp/pv/gpufence.cu
perl -0pe 's/release_fence_system\(\);\n    commit\(s, t, record_slots \* slots\);/asm volatile("fence.release.sys;" ::: "memory");\n    commit(s, t, record_slots * slots);/' \
  collector/native/src/patch.cu > /tmp/pv/release.cu
grep -c "fence.acq_rel.gpu" /tmp/pv/gpufence.cu; grep -c "fence.release.sys" /tmp/pv/release.cu
mk constdiv && mk gpufence && mk release || exit 1
ls /tmp/pv/*.fatbin
shipped=$(python3 -c 'import reuselens, pathlib; print(next(pathlib.Path(reuselens.__file__).parent.rglob("reuselens_patch.fatbin")))')
echo "shipped patch: $shipped"
run_variant() {  # run_variant LABEL ENV... -- ARGS
  local label=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  rm -rf /tmp/rlrun
  local line
  line=$(env "${envs[@]}" timeout 60 reuselens profile --no-analyze --run-dir /tmp/rlrun -- /tmp/record_latency "$@" 2>&1 | grep "per load")
  local recs
  recs=$(python3 -c 'import json; d=json.load(open("/tmp/rlrun/run.json")); print(sum(l.get("records",0) for l in d["launches"]))' 2>/dev/null)
  echo "$label | $* | $line | records $recs"
}
for cfg in "1 32 20000" "16 32 20000" "16 32 20000 scatter" "132 256 400" "132 256 400 scatter" "1056 256 100"; do
  stamp "config $cfg"
  echo "native | $cfg | $(timeout 30 /tmp/record_latency $cfg)"
  run_variant shipped -- $cfg
  run_variant unpacked REUSELENS_PACKED_RECORDS=0 -- $cfg
  run_variant constdiv REUSELENS_PATCH=/tmp/pv/constdiv.fatbin -- $cfg
  run_variant gpufence REUSELENS_PATCH=/tmp/pv/gpufence.fatbin -- $cfg
  run_variant release REUSELENS_PATCH=/tmp/pv/release.fatbin -- $cfg
  for v in floor components_1 components_3 components_7 components_15; do
    run_variant $v REUSELENS_PATCH=/tmp/pv/$v.fatbin -- $cfg
  done
done | tee "$OUT/record_latency.txt"
stamp "clean install"
timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1
stamp "eight short apps and four few-warp breadth apps: native, collect, collect under the release variant"
apps=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
bapps=pb_corr,pb_covar,pb_gramschm,cs_eigenvalues
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rf \
  --rounds 1 --modes native,collect --jobs 16 --reuselens /tmp/clean/bin/reuselens --apps $apps > "$OUT/short.txt" 2>&1
grep -v "^build" "$OUT/short.txt" | tail -12
REUSELENS_PATCH=/tmp/pv/release.fatbin timeout 100 python3 benchmarks/realapps.py --src benchmarks/realapps/src \
  --out /tmp/rfr --rounds 1 --modes collect --jobs 16 --reuselens /tmp/clean/bin/reuselens --apps $apps \
  > "$OUT/short_release.txt" 2>&1
grep -v "^build" "$OUT/short_release.txt" | tail -12
timeout 120 python3 benchmarks/realapps.py --manifest benchmarks/realapps/breadth.json \
  --src benchmarks/realapps/breadth-src --out /tmp/bd --modes native,collect --rounds 1 --timeout 60 --jobs 16 \
  --reuselens /tmp/clean/bin/reuselens --apps $bapps > "$OUT/few_warps.txt" 2>&1
grep -v "^build" "$OUT/few_warps.txt" | tail -8
REUSELENS_PATCH=/tmp/pv/release.fatbin timeout 90 python3 benchmarks/realapps.py --manifest benchmarks/realapps/breadth.json \
  --src benchmarks/realapps/breadth-src --out /tmp/bdr --modes collect --rounds 1 --timeout 60 --jobs 16 \
  --reuselens /tmp/clean/bin/reuselens --apps $bapps > "$OUT/few_warps_release.txt" 2>&1
grep -v "^build" "$OUT/few_warps_release.txt" | tail -8
mkdir -p "$OUT/logs"
for d in /tmp/rf/runs/r0/*-collect /tmp/rfr/runs/r0/*-collect /tmp/bd/runs/r0/*-collect /tmp/bdr/runs/r0/*-collect; do
  [ -d "$d" ] || continue
  tag=$(echo "$d" | cut -d/ -f3)
  cp "$d/collector.log" "$OUT/logs/$tag-$(basename "$d").log"
done
python3 benchmarks/launch_waits.py /tmp/rf/runs/r0/*-collect 2>&1 | tail -14
stamp done
