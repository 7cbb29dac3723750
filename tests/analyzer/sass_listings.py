"""The recorded CUBINs with nvdisasm's listings of them, for the tests of decoders that read machine code."""

from __future__ import annotations

import gzip
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data"


def listed_cubins() -> list[tuple[Path, str]]:
    """(CUBIN, its listing) for tests/data/cubins (sm_80, sm_89, sm_90, sm_120, relocatable device code) and
    tests/data/sass (loops, structure members, gathers, volatile accesses, double-precision indices; sm_90)."""
    found = [
        (path, gzip.open(path.with_name(path.name.replace(".cubin", ".gi.txt.gz")), "rt").read())
        for path in sorted((DATA / "cubins").glob("*.cubin"))
    ]
    for name in ("loops", "elements", "gathers", "volatile", "doubles"):
        found.append((DATA / "sass" / f"{name}.sm_90.cubin", (DATA / "sass" / f"{name}.sm_90.sass").read_text()))
    return found


class OneCubinMapper:
    """The source mapper's CUBIN side for the decoder tests: `cubin` is module "m"; any other module is unknown, as a
    run's missing or unreadable CUBIN is."""

    def __init__(self, cubin: Path) -> None:
        self.cubin = cubin

    def table(self, module: str):
        from reuselens.analyzer.errors import ReuseLensError
        from reuselens.analyzer.lineinfo.cubin import CubinLineTable

        if module != "m":
            raise ReuseLensError("no CUBIN here")
        return CubinLineTable(self.cubin.read_bytes())
