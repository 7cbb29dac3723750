#!/usr/bin/env bash
# Session 54, call 1 (session 53 call 1 unchanged: it never ran): the GPU run of the final code that session 51 never got (wide units per allocation, 9206c79's
# first look and 21774a5's mends), with this session's replay_shared_groups index (0912efc). In the order of what a
# closing note must answer: GPU tests; fidelity against ncu; the eight short apps and the four long apps (one round
# each, native / collect / full, a user's clean install); the findings against the answer key; then, as far as LIMIT
# allows, mvt collected with the wide units off (paired with the long apps' run, on) and the release fence against
# acq_rel on shoc_bfs and fdtd2d.
#   LIMIT=300 bash benchmarks/results/s54/call1/script.sh
#   (carry .whl, benchmarks/realapps/src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-420}
left() { echo $((LIMIT - $(date +%s) + T0)); }
nvidia-smi --query-gpu=name --format=csv,noheader
gpu_tests
[ "$(left)" -gt 60 ] && fidelity_against_ncu
[ "$(left)" -gt 60 ] && short_suite 1
[ "$(left)" -gt 60 ] && long_apps $(($(left) - 10))
[ -d /tmp/rf/runs/r0 ] && score_suite 0
stamp "the SASS decoder of address_origin.py against nvdisasm on the suite's modules"
timeout 60 python3 benchmarks/sass_decoder_check.py /tmp/rf/runs/r0/*-full/modules /tmp/rl/runs/r0/*-full/modules \
  > "$OUT/sass_decoder_check.txt" 2>&1
tail -1 "$OUT/sass_decoder_check.txt"
collect_once() {  # collect_once NAME APP [VAR=VALUE]: one `profile --no-analyze` of APP, its collect line printed
  local name=$1 app=$2
  shift 2
  env "$@" timeout 60 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out "/tmp/$name" \
    --build /tmp/ab-build --rounds 1 --modes collect --jobs 16 --reuselens /tmp/clean/bin/reuselens --apps "$app" \
    > "$OUT/$name.txt" 2>&1
  grep "collect " "$OUT/$name.txt" | sed "s/^/$name: /"
}
if [ "$(left)" -gt 45 ] && [ -x /tmp/clean/bin/reuselens ]; then
  stamp "mvt collected with wide units off, then on"
  collect_once mvt_wide0 pb_mvt REUSELENS_ENGINE_WIDE_UNITS=0
  collect_once mvt_wide1 pb_mvt REUSELENS_ENGINE_WIDE_UNITS=1
fi
if [ "$(left)" -gt 40 ] && [ -x /tmp/clean/bin/reuselens ]; then
  stamp "release fence (installed) vs acq_rel, shoc_bfs and fdtd2d, 2 rounds"
  inc=$(python3 -c 'import nvidia, pathlib; print(next((str(p) for p in (pathlib.Path(d) / "cu13" / "include" for d in nvidia.__path__) if (p / "sanitizer_patching.h").is_file()), ""))')
  [ -n "$inc" ] || inc=/usr/local/cuda/compute-sanitizer/include
  mkdir -p /tmp/pv
  sed 's/fence.release.sys/fence.acq_rel.sys/' collector/native/src/patch.cu > /tmp/pv/acqrel.cu
  if nvcc --fatbin --keep-device-functions -Xptxas --compile-as-tools-patch -O3 -gencode arch=compute_90,code=sm_90 \
    -I"$inc" -Icollector/native/src -Ianalyzer/engine/include -o /tmp/pv/acqrel.fatbin /tmp/pv/acqrel.cu; then
    for round in 1 2; do
      for app in shoc_bfs pb_fdtd2d; do
        [ "$(left)" -gt 10 ] || break
        collect_once "fence_release_${app}_$round" "$app"
        collect_once "fence_acqrel_${app}_$round" "$app" REUSELENS_PATCH=/tmp/pv/acqrel.fatbin
      done
    done
  fi
fi
mkdir -p "$OUT/logs"
for d in /tmp/rl/runs/r0/*-collect /tmp/rf/runs/r0/*-collect /tmp/mvt_wide*/runs/r0/*-collect; do
  [ -d "$d" ] || continue
  cp "$d/collector.log" "$OUT/logs/$(echo "$d" | cut -d/ -f3)-$(basename "$d").log"
done
grep -H "wide units" "$OUT"/logs/*.log | sed 's/:.*records as shadow segments; / /' | head -20
stamp done
