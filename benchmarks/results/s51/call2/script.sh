#!/usr/bin/env bash
# Session 51, call 2. Call 1 ran the release fence and the first wide-unit engine (one unit for a whole batch):
# GPU tests and fidelity passed, but mvt took no wide batch (its coalesced x1 vector would have fallen in one unit)
# and the fence's A/B never ran (the breadth check wanted Parboil's inputs). Now, on the final code (wide units per
# allocation, choose_wide_units), in the order of what decides most, as far as 300 s allow (two failed starts left
# 473 s of device time): GPU tests; mvt natively, fully profiled, and collected with REUSELENS_ENGINE_WIDE_UNITS=1
# vs 0 (two interleaved rounds); the fence's A/B, `collect` under the installed patch (release) vs acqrel (built
# here), two interleaved rounds, on shoc_bfs and pb_fdtd2d (call 1's short apps ran slower than session 49's); the
# fidelity tables; the eight short apps, one round; the fence's A/B on pb_corr, pb_covar, pb_gramschm (few warps);
# the other long apps; the findings against the answer key.
#   LIMIT=300 bash benchmarks/results/s51/call2/script.sh
#   (carry .whl, benchmarks/realapps/src, benchmarks/realapps/breadth-src/polybench-gpu,
#    benchmarks/realapps/breadth-src/cuda-samples)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-300}
left() { echo $((LIMIT - $(date +%s) + T0)); }
nvidia-smi --query-gpu=name --format=csv,noheader
gpu_tests
stamp "clean install"
timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1
[ -x /tmp/clean/bin/reuselens ] || { echo "clean install failed"; exit 1; }
inc=$(python3 -c 'import nvidia, pathlib; print(next((str(p) for p in (pathlib.Path(d) / "cu13" / "include" for d in nvidia.__path__) if (p / "sanitizer_patching.h").is_file()), ""))')
[ -n "$inc" ] || inc=/usr/local/cuda/compute-sanitizer/include
mkdir -p /tmp/pv
sed 's/fence.release.sys/fence.acq_rel.sys/' collector/native/src/patch.cu > /tmp/pv/acqrel.cu
nvcc --fatbin --keep-device-functions -Xptxas --compile-as-tools-patch -O3 -gencode arch=compute_90,code=sm_90 \
  -I"$inc" -Icollector/native/src -Ianalyzer/engine/include -o /tmp/pv/acqrel.fatbin /tmp/pv/acqrel.cu || exit 1
# ab TAG SECONDS VARIABLE VALUE_A VALUE_B REALAPPS-ARGS...: native once (modes $AB_FIRST if set), then `collect` with VARIABLE=VALUE_A and
# VALUE_B interleaved, two rounds on one build; VALUE "unset" leaves VARIABLE out of the environment.
ab() {
  local tag=$1 secs=$2 var=$3 a=$4 b=$5 round value name
  shift 5
  stamp "$tag: native, then collect with $var = $a / $b interleaved, 2 rounds"
  timeout "$secs" python3 benchmarks/realapps.py --out "/tmp/$tag" --build "/tmp/$tag-build" --rounds 1 \
    --modes "${AB_FIRST:-native}" --jobs 16 --reuselens /tmp/clean/bin/reuselens "$@" > "$OUT/$tag.txt" 2>&1
  grep "native \|full " "$OUT/$tag.txt"
  for round in 1 2; do
    for value in "$a" "$b"; do
      if [ "$value" = unset ]; then unset "$var"; else export "$var=$value"; fi
      name=${tag}_$(basename "$value")_$round
      timeout "$secs" python3 benchmarks/realapps.py --out "/tmp/$name" --build "/tmp/$tag-build" \
        --rounds 1 --modes collect --jobs 16 --reuselens /tmp/clean/bin/reuselens "$@" > "$OUT/$name.txt" 2>&1
      grep "collect " "$OUT/$name.txt" | sed "s/^/$(basename "$value") $round: /"
    done
  done
  unset "$var"
}
AB_FIRST=native,full ab mvt 60 REUSELENS_ENGINE_WIDE_UNITS 1 0 --src benchmarks/realapps/src --apps pb_mvt
[ "$(left)" -gt 40 ] && ab shortfence 20 REUSELENS_PATCH unset /tmp/pv/acqrel.fatbin --src benchmarks/realapps/src \
  --apps shoc_bfs,pb_fdtd2d
[ "$(left)" -gt 50 ] && fidelity_against_ncu
[ "$(left)" -gt 40 ] && short_suite 1
[ "$(left)" -gt 65 ] && ab fewwarps 30 REUSELENS_PATCH unset /tmp/pv/acqrel.fatbin \
  --manifest benchmarks/realapps/breadth.json --src benchmarks/realapps/breadth-src --timeout 60 \
  --apps pb_corr,pb_covar,pb_gramschm
if [ "$(left)" -gt 90 ]; then  # the long apps but mvt, which the A/B above has measured
  stamp "mergeSort, sortingNetworks, gemm: native, collect, full, one round, clean install"
  timeout $(($(left) - 10)) python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rl --rounds 1 \
    --modes native,collect,full --jobs 16 --reuselens /tmp/clean/bin/reuselens \
    --apps cs_mergeSort,pb_gemm,cs_sortingNetworks > "$OUT/realapps_long.txt" 2>&1
  grep -v "^build\|^round" "$OUT/realapps_long.txt" | tail -6
  cp /tmp/rl/realapps.json "$OUT/realapps_long.json" 2>/dev/null
fi
mkdir -p /tmp/rl/runs/r0 && ln -sfn /tmp/mvt/runs/r0/pb_mvt-full /tmp/rl/runs/r0/pb_mvt-full  # mvt's report too
[ -d /tmp/rf/runs/r0 ] && score_suite 0
mkdir -p "$OUT/logs"
for d in /tmp/mvt_*/runs/r0/*-collect /tmp/fewwarps_*/runs/r0/*-collect /tmp/shortfence_*/runs/r0/*-collect \
  /tmp/rl/runs/r0/*-collect /tmp/rf/runs/r0/*-collect; do
  [ -d "$d" ] || continue
  cp "$d/collector.log" "$OUT/logs/$(echo "$d" | cut -d/ -f3)-$(basename "$d").log"
done
grep -H "wide units" "$OUT"/logs/*.log | sed 's/:.*records as shadow segments; / /' | head -20
stamp done
