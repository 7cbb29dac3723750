"""Pattern thresholds (docs/settings.md, `reuselens.thresholds.*`): defaults are the paper's values.

THRESHOLDS is the one home of every threshold: its settings key, default, valid range, CLI option and help.
The CLI's options, the language server's settings defaults and its profiler argv derive from it, and a test
checks vscode-extension/package.json and docs/settings.md against it.

The canonical names are the camelCase ones of docs/settings.md; the snake_case spellings that report.json's
`settings` object uses are accepted as aliases so a report's own settings can be fed back in.
"""

from __future__ import annotations

import math
from collections import namedtuple

from reuselens.analyzer.errors import SettingsError

TYPE_CHECKING = False  # typing itself is not imported at run time: every `reuselens` start reads this module
if TYPE_CHECKING:
    from typing import Any


class Threshold(namedtuple("Threshold", "key default check expected option help_template alias", defaults=(None,))):
    """One threshold: `key` names it in settings (reuselens.thresholds.<key>) and in report.json; `default`; `check`,
    the valid values (a callable on a float); `expected`, the valid range as the error sentence ends ("expected
    <expected>"); `option`, the analysing subcommands' command-line option; `help_template`, its --help text with
    {default} filled in from `default`; `alias`, the snake_case spelling report.json's `settings` uses where it
    differs. (A named tuple: `dataclasses` and `typing` would add 5-10 ms to every start.)"""

    __slots__ = ()

    @property
    def help(self) -> str:
        return self.help_template.format(default=f"{self.default:g}")


THRESHOLDS: tuple[Threshold, ...] = (
    # hierarchical reuse: r(l) > delta (paper 3.3 I, "δ = 0.8")
    Threshold(
        "delta",
        0.8,
        lambda x: 0 < x <= 1,
        "a number in (0, 1]",
        "--delta",
        "hierarchical-reuse threshold on r(l) (paper 3.3; default {default})",
    ),
    # streaming: W_out(v, Cold)/W_total(v) > 0.95 (paper 3.3 IV)
    Threshold(
        "streaming",
        0.95,
        lambda x: 0 < x <= 1,
        "a number in (0, 1]",
        "--streaming",
        "cold share above which a PC is streaming (default {default})",
    ),
    Threshold(
        "coalescing",
        1.5,
        lambda x: x >= 1,
        "a number >= 1 (R_coal is 1 for perfect coalescing)",
        "--coalescing",
        "R_coal above which coalescing is poor (default {default})",
    ),
    Threshold(
        "bankConflict",
        1.5,
        lambda x: x >= 1,
        "a number >= 1 (R_conf is 1 without conflicts)",
        "--bank-conflict",
        "R_conf above which a bank conflict is reported (default {default})",
        alias="bank_conflict",
    ),
    # C_const of paper 3.3 IV: the 64 KB __constant__ bank
    Threshold(
        "constantCapacityBytes",
        65536,
        lambda x: x > 0 and float(x).is_integer(),
        "a whole number of bytes > 0",
        "--constant-capacity",
        "__constant__ capacity in bytes (default {default})",
        alias="constant_capacity_bytes",
    ),
    # value redundancy (value-mode runs, issue 19): the share of a PC's loads (stores, lanes) that must be redundant
    Threshold(
        "valueRedundancy",
        0.5,
        lambda x: 0 < x <= 1,
        "a number in (0, 1]",
        "--value-redundancy",
        "share of a PC's accesses that must be value-redundant for a finding (runs with --values; default {default})",
        alias="value_redundancy",
    ),
    # drop traffic findings below 1% of the kernel's traffic
    Threshold(
        "minShare",
        0.01,
        lambda x: 0 <= x <= 1,
        "a number in [0, 1]",
        "--min-share",
        "drop findings below this share of kernel traffic (default {default})",
        alias="min_share",
    ),
)

BY_KEY: dict[str, Threshold] = {threshold.key: threshold for threshold in THRESHOLDS}
DEFAULT_SETTINGS: dict[str, float] = {threshold.key: threshold.default for threshold in THRESHOLDS}
ALIASES: dict[str, str] = {threshold.alias: threshold.key for threshold in THRESHOLDS if threshold.alias}


def resolve_settings(settings: dict[str, Any] | None) -> dict[str, float]:
    """DEFAULT_SETTINGS overridden by `settings`; raises SettingsError naming the first bad entry."""
    if settings is None:
        return dict(DEFAULT_SETTINGS)
    if not isinstance(settings, dict):
        raise SettingsError(f"pattern settings must be an object of thresholds, not {type(settings).__name__}")
    resolved = dict(DEFAULT_SETTINGS)
    for name, value in settings.items():
        threshold = BY_KEY.get(ALIASES.get(name, name))
        if threshold is None:
            known = ", ".join(DEFAULT_SETTINGS)
            raise SettingsError(f"unknown threshold {name!r}; known thresholds: {known}")
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or not threshold.check(value)
        ):
            raise SettingsError(f"threshold {name} = {value!r} is invalid: expected {threshold.expected}")
        resolved[threshold.key] = float(value)
    return resolved
