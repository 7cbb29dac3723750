"""Session 49: the address operands on a recorded report, without a GPU. Call 2's alignedTypes report (recorded on
the GPU host) with the CUBIN built here from the same source and flags (nvcc 13.0.88 from PyPI: the same PCs, checked
instruction by instruction against nvdisasm), its findings before and after analyzer/operands.py attaches `address`.

    python benchmarks/results/s49/align_check.py REPORT_JSON CUBIN
"""

import copy
import json
import sys

from reuselens.analyzer.lineinfo.cubin import CubinLineTable
from reuselens.analyzer.operands import attach_operands
from reuselens.analyzer.patterns import find_report_findings

report, cubin = json.load(open(sys.argv[1])), open(sys.argv[2], "rb").read()


class Mapper:
    def table(self, module):
        return CubinLineTable(cubin)


kernels = report["kernels"]
for kernel in kernels:
    kernel.pop("findings", None)
before = find_report_findings(copy.deepcopy(kernels), report.get("settings"), report["run"].get("gpu"))
attach_operands(Mapper(), kernels)
after = find_report_findings(kernels, report.get("settings"), report["run"].get("gpu"))
print(sum("address" in n for k in kernels for n in k["nodes"]), "nodes with an address")
for kernel, old, new in zip(kernels, before, after):
    if not (old or new):
        continue
    print(kernel["name"][:40])
    for label, findings in (("  before", old), ("  after ", new)):
        for f in findings:
            if f["pattern"] == "poor-coalescing":
                print(label, f["severity"], f["message"][:120])
