#!/usr/bin/env bash
# Session 50, call 1: each record's fence a release only (fence.release.sys on sm_90+), no longer fence.acq_rel.sys,
# whose acquire half is CCTL.IVALL: the SM's L1 data cache emptied on every record. Few-warp kernels (pb_corr,
# gramschmidt: 7-11x with the engine idle; session 45 ruled out the fence's scope) are where it should show.
# The GPU tests and the fidelity tables on the new patch; then A/B against `acqrel` (patch.cu with its record fence
# back to fence.acq_rel.sys, as it was), built here: six few-warp breadth apps, then the eight short apps if time is
# left, natively and collected under each fence, two interleaved rounds (the device budget, spent by refused starts,
# allowed no more).
#   git apply benchmarks/results/s50/release_fence.patch   (first: the change this call measures; not on main)
#   LIMIT=300 bash benchmarks/results/s50/call1/script.sh
#   (carry .whl, benchmarks/realapps/src, benchmarks/realapps/breadth-src/polybench-gpu,
#    benchmarks/realapps/breadth-src/cuda-samples)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-300}
grep -q "fence.release.sys" collector/native/src/patch.cu || { echo "apply benchmarks/results/s50/release_fence.patch first"; exit 1; }
nvidia-smi --query-gpu=name --format=csv,noheader
gpu_tests
fidelity_against_ncu
inc=$(python3 -c 'import nvidia, pathlib; print(next((str(p) for p in (pathlib.Path(d) / "cu13" / "include" for d in nvidia.__path__) if (p / "sanitizer_patching.h").is_file()), ""))')
[ -n "$inc" ] || inc=/usr/local/cuda/compute-sanitizer/include
mkdir -p /tmp/pv
sed 's/fence.release.sys/fence.acq_rel.sys/' collector/native/src/patch.cu > /tmp/pv/acqrel.cu
grep -c "fence.release.sys" /tmp/pv/acqrel.cu collector/native/src/patch.cu
cuobjdump -ptx "$(python3 -c 'import reuselens, pathlib; print(next(pathlib.Path(reuselens.__file__).parent.rglob("reuselens_patch.fatbin")))')" 2>/dev/null \
  | grep -c "fence.release.sys" | sed "s/^/fence.release.sys in the installed patch's PTX: /"
nvcc --fatbin --keep-device-functions -Xptxas --compile-as-tools-patch -O3 -gencode arch=compute_90,code=sm_90 \
  -I"$inc" -Icollector/native/src -Ianalyzer/engine/include -o /tmp/pv/acqrel.fatbin /tmp/pv/acqrel.cu || exit 1
stamp "clean install"
timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1
[ -x /tmp/clean/bin/reuselens ] || { echo "clean install failed"; exit 1; }
ab() {  # ab TAG SECONDS REALAPPS-ARGS...: native, then collect under the new patch and under acqrel, interleaved,
  # two rounds (one build, shared)
  local tag=$1 secs=$2 round variant
  shift 2
  stamp "$tag: native, then collect (release) and collect (acqrel) interleaved, 2 rounds"
  timeout "$secs" python3 benchmarks/realapps.py --out "/tmp/$tag" --build "/tmp/$tag-build" --rounds 1 \
    --modes native --jobs 16 --reuselens /tmp/clean/bin/reuselens "$@" > "$OUT/$tag.txt" 2>&1
  grep -v "^build" "$OUT/$tag.txt" | tail -10
  for round in 1 2; do
    for variant in release acqrel; do
      if [ $variant = acqrel ]; then export REUSELENS_PATCH=/tmp/pv/acqrel.fatbin; else unset REUSELENS_PATCH; fi
      timeout "$secs" python3 benchmarks/realapps.py --out "/tmp/${tag}_${variant}_$round" --build "/tmp/$tag-build" \
        --rounds 1 --modes collect --jobs 16 --reuselens /tmp/clean/bin/reuselens "$@" \
        > "$OUT/${tag}_${variant}_$round.txt" 2>&1
      grep "collect " "$OUT/${tag}_${variant}_$round.txt" | sed "s/^/$variant $round: /"
    done
  done
  unset REUSELENS_PATCH
}
ab fewwarps 40 --manifest benchmarks/realapps/breadth.json --src benchmarks/realapps/breadth-src --timeout 60 \
  --apps pb_corr,pb_covar,pb_gramschm,pb_atax,pb_gesummv,cs_eigenvalues
left=$((LIMIT - $(date +%s) + T0 - 15))
[ "$left" -gt 70 ] && ab short $((left / 5)) --src benchmarks/realapps/src \
  --apps cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
mkdir -p "$OUT/logs"
for d in /tmp/*/runs/r0/*-collect; do
  [ -d "$d" ] || continue
  cp "$d/collector.log" "$OUT/logs/$(echo "$d" | cut -d/ -f3)-$(basename "$d").log"
done
python3 benchmarks/launch_waits.py /tmp/short_release_1/runs/r0/*-collect /tmp/short_acqrel_1/runs/r0/*-collect 2>&1 | tail -20
stamp done
