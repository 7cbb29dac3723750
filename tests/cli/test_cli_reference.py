"""docs/cli.md is the CLI reference: every subcommand has its section, and every option of it appears there
(in its own table, or in the shared "Analysis options" table for the subcommands that take them)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from reuselens.cli.main import SUBCOMMANDS, build_parser

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def sections() -> dict[str, str]:
    """heading -> text up to the next '## ' heading."""
    parts = re.split(r"^## ", DOC.read_text(encoding="utf-8"), flags=re.M)
    return {part.splitlines()[0]: part for part in parts[1:]}


def subparsers() -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def options(parser: argparse.ArgumentParser) -> set[str]:
    return {opt for action in parser._actions for opt in action.option_strings if opt not in ("-h", "--help")}


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_every_option_of_every_subcommand_is_documented(name):
    by_heading = {heading.split()[1]: text for heading, text in sections().items() if heading.startswith("`reuselens ")}
    assert name in by_heading, f"docs/cli.md has no section for `reuselens {name}`"
    text = by_heading[name]
    if "and the analysis options" in text:
        text += sections()["Analysis options"]
    missing = sorted(opt for opt in options(subparsers()[name]) if f"`{opt}" not in text and f" {opt} " not in text)
    assert missing == [], f"reuselens {name}: options missing from docs/cli.md: {missing}"


def test_the_analysis_options_are_those_the_parsers_share():
    shared = set.intersection(*(options(subparsers()[n]) for n in ("analyze", "report", "graph", "diff", "demo")))
    table = sections()["Analysis options"]
    assert {opt for opt in shared if f"`{opt}" in table} == shared
