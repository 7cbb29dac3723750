import json
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


def _materialize(name: str, target: Path) -> Path:
    """Copy a fixture report, pointing its source paths at the fixture sources."""
    text = (FIXTURES / name).read_text(encoding="utf-8").replace("SRC/", f"{FIXTURES.as_posix()}/")
    path = target / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def before_report(tmp_path: Path) -> Path:
    return _materialize("before.json", tmp_path)


@pytest.fixture
def after_report(tmp_path: Path) -> Path:
    return _materialize("after.json", tmp_path)


@pytest.fixture
def run_dir_with_report(tmp_path: Path, before_report: Path) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text(
        json.dumps(
            {
                "format": "reuselens-run",
                "version": 1,
                "status": "complete",
                "modules": [],
                "functions": [],
                "launches": [],
            }
        )
    )
    before_report.rename(run / "report.json")
    return run
