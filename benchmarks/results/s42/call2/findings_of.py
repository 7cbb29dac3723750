"""Prints a run's findings in one line (count, then kernel:id sorted) and writes them with each kernel's graph size
to the JSON file named second: for comparing the findings of runs of the same app under different engines.
    python3 findings_of.py RUN OUT.json"""

import json
import sys

report = json.load(open(f"{sys.argv[1]}/report.json"))
kernels = [
    {
        "name": k.get("name"),
        "records": k.get("records"),
        "nodes": k.get("nodes"),
        "edges": k.get("edges"),
        "findings": sorted(f["id"] for f in k.get("findings", [])),
    }
    for k in report["kernels"]
]
json.dump(kernels, open(sys.argv[2], "w"), indent=1)
ids = sorted(f"{(k['name'] or '?')[:24]}:{i}" for k in kernels for i in k["findings"])
print(len(ids), [(k["name"][:24], len(k["nodes"]), len(k["edges"]), len(k["findings"])) for k in kernels])
