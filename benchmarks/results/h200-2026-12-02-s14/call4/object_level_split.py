"""Session 14 experiment: split the object-level collector's cost inside the app (not committed)."""
import os, re, shutil, statistics, subprocess, sys, time
from pathlib import Path
lib = subprocess.run([sys.executable, "-c", "from reuselens.collector.launcher import find_tool_library as f; print(f())"],
                     capture_output=True, text=True).stdout.strip()
build = Path(sys.argv[1]); rounds = int(sys.argv[2])
apps = {"pb_lu": [], "cs_transpose": ["-dimX=256", "-dimY=256"], "shoc_sort": ["-s", "1", "--passes", "1"], "cs_reduction": ["--n=1048576"]}
def env_for(step, rd):
    env = dict(os.environ)
    if step == "native": return env
    if step == "preload": env.update(LD_PRELOAD=lib); return env
    shutil.rmtree(rd, ignore_errors=True); rd.mkdir(parents=True)
    env.update(LD_PRELOAD=lib, CUDA_INJECTION64_PATH=lib, REUSELENS_RUN_DIR=str(rd), REUSELENS_OBJECT_LEVEL="1",
               SANITIZER_DISABLE_PARALLEL_LAUNCHES="1")
    if step == "attached": env["REUSELENS_KERNEL_REGEX"] = "^$"
    if step == "inject_only": env.pop("LD_PRELOAD")
    return env
steps = ["native", "preload", "attached", "injected", "inject_only"]
for app, args in apps.items():
    res = {s: [] for s in steps}; logs = {s: [] for s in steps}
    for r in range(rounds):
        for s in steps:
            rd = Path(f"/tmp/exp/{app}-{s}")
            env = env_for(s, rd)
            t0 = time.time()
            p = subprocess.run([str(build / app), *args], env=env, cwd=build, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wall = time.time() - t0
            res[s].append(wall)
            log = rd / "collector.log"
            if s in ("attached", "injected", "inject_only") and log.exists():
                ts = [float(m.group(1)) for m in re.finditer(r"^\[\s*([0-9.]+)\]", log.read_text(), re.M)]
                rj = rd / "run.json"
                logs[s].append((ts[0], ts[-1], rj.stat().st_mtime - t0))
    print(f"--- {app}")
    for s in steps:
        line = f"  {s:12s} wall {statistics.median(res[s])*1000:7.1f} ms"
        if logs[s]:
            first = statistics.median(x[0] for x in logs[s]); last = statistics.median(x[1] for x in logs[s])
            rj = statistics.median(x[2] for x in logs[s])
            line += f"  log first {first*1000:6.1f}  last {last*1000:6.1f}  run.json final at {rj*1000:6.1f} ms after spawn"
        print(line)
