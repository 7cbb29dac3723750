#!/usr/bin/env bash
# Session 51, call 1: two changes on the GPU at once, the device budget allowing one call.
# (1) each record's leader fence a release (fence.release.sys on sm_90+, 208813a): fence.acq_rel.sys's acquire half is
#     CCTL.IVALL, the SM's L1 emptied on every record. A/B against `acqrel` (patch.cu with the old fence), built here,
#     on six few-warp breadth apps, two interleaved rounds on one build.
# (2) the engine's wider ownership units for row-walking batches (choose_unit_shift): A/B with
#     REUSELENS_ENGINE_WIDE_UNITS=0 on PolyBench mvt (collect, two interleaved rounds) and on benchmarks/engine.py's
#     rowwalk and strided patterns at 1 and 12 workers.
# Then the suite's figures on this exact code: the eight short apps (2 rounds) and the four long ones, native /
# collect / full, findings against the answer key; GPU tests and the fidelity tables first.
#   LIMIT=520 bash benchmarks/results/s51/call1/script.sh
#   (carry .whl, benchmarks/realapps/src, benchmarks/realapps/breadth-src/polybench-gpu,
#    benchmarks/realapps/breadth-src/cuda-samples)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-520}
nvidia-smi --query-gpu=name --format=csv,noheader
gpu_tests
fidelity_against_ncu
left() { echo $((LIMIT - $(date +%s) + T0)); }
stamp "engine.py rowwalk and strided, wide units on and off"
for pattern in rowwalk strided; do
  for wide in 1 0; do
    REUSELENS_ENGINE_WIDE_UNITS=$wide timeout 60 python3 benchmarks/engine.py --pattern $pattern --workers 1,12 \
      --blocks 4000 --repeat 2 > "$OUT/engine_${pattern}_wide$wide.txt" 2>&1
    grep -E "^warm|^  workers|slowest" "$OUT/engine_${pattern}_wide$wide.txt" | tail -4 | sed "s/^/$pattern wide=$wide: /"
  done
done
short_suite 2
long_apps 120
score_suite 1
inc=$(python3 -c 'import nvidia, pathlib; print(next((str(p) for p in (pathlib.Path(d) / "cu13" / "include" for d in nvidia.__path__) if (p / "sanitizer_patching.h").is_file()), ""))')
[ -n "$inc" ] || inc=/usr/local/cuda/compute-sanitizer/include
mkdir -p /tmp/pv
sed 's/fence.release.sys/fence.acq_rel.sys/' collector/native/src/patch.cu > /tmp/pv/acqrel.cu
nvcc --fatbin --keep-device-functions -Xptxas --compile-as-tools-patch -O3 -gencode arch=compute_90,code=sm_90 \
  -I"$inc" -Icollector/native/src -Ianalyzer/engine/include -o /tmp/pv/acqrel.fatbin /tmp/pv/acqrel.cu || exit 1
# ab TAG SECONDS VARIABLE VALUE_A VALUE_B REALAPPS-ARGS...: native once, then `collect` with VARIABLE=VALUE_A and
# VALUE_B interleaved, two rounds on one build; VARIABLE=unset leaves it out of the environment.
ab() {
  local tag=$1 secs=$2 var=$3 a=$4 b=$5 round value
  shift 5
  stamp "$tag: native, then collect with $var = $a / $b interleaved, 2 rounds"
  timeout "$secs" python3 benchmarks/realapps.py --out "/tmp/$tag" --build "/tmp/$tag-build" --rounds 1 \
    --modes native --jobs 16 --reuselens /tmp/clean/bin/reuselens "$@" > "$OUT/$tag.txt" 2>&1
  grep -v "^build" "$OUT/$tag.txt" | tail -8
  for round in 1 2; do
    for value in "$a" "$b"; do
      if [ "$value" = unset ]; then unset "$var"; else export "$var=$value"; fi
      timeout "$secs" python3 benchmarks/realapps.py --out "/tmp/${tag}_${value##*/}_$round" --build "/tmp/$tag-build" \
        --rounds 1 --modes collect --jobs 16 --reuselens /tmp/clean/bin/reuselens "$@" \
        > "$OUT/${tag}_${value##*/}_$round.txt" 2>&1
      grep "collect " "$OUT/${tag}_${value##*/}_$round.txt" | sed "s/^/${value##*/} $round: /"
    done
  done
  unset "$var"
}
[ "$(left)" -gt 100 ] && ab mvt 40 REUSELENS_ENGINE_WIDE_UNITS 1 0 --src benchmarks/realapps/src --apps pb_mvt
[ "$(left)" -gt 60 ] && ab fewwarps $(($(left) / 5)) REUSELENS_PATCH unset /tmp/pv/acqrel.fatbin \
  --manifest benchmarks/realapps/breadth.json --src benchmarks/realapps/breadth-src --timeout 60 \
  --apps pb_corr,pb_covar,pb_gramschm,pb_atax,pb_gesummv,cs_eigenvalues
mkdir -p "$OUT/logs"
for d in /tmp/rl/runs/r0/*-collect /tmp/mvt_*/runs/r0/*-collect /tmp/fewwarps_*/runs/r0/*-collect; do
  [ -d "$d" ] || continue
  cp "$d/collector.log" "$OUT/logs/$(echo "$d" | cut -d/ -f3)-$(basename "$d").log"
done
grep -h "wide units" "$OUT"/logs/*.log | sed 's/.*records as shadow segments; //' | sort | uniq -c | head
stamp done
