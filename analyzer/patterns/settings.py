"""Pattern thresholds (docs/settings.md, `reuselens.thresholds.*`): defaults are the paper's values.

The canonical names are the camelCase ones of docs/settings.md; the snake_case spellings that report.json's
`settings` object uses are accepted as aliases so a report's own settings can be fed back in.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from reuselens.analyzer.errors import SettingsError

DEFAULT_SETTINGS: dict[str, float] = {
    "delta": 0.8,                   # hierarchical reuse: r(l) > delta (paper 3.3 I, "δ = 0.8")
    "streaming": 0.95,              # streaming: W_out(v, Cold)/W_total(v) > 0.95 (paper 3.3 IV)
    "coalescing": 1.5,              # poor coalescing: R_coal(v) > 1.5
    "bankConflict": 1.5,            # bank conflict: R_conf(v) > 1.5
    "constantCapacityBytes": 65536,  # C_const of paper 3.3 IV: the 64 KB __constant__ bank
    "minShare": 0.01,               # drop traffic findings below 1% of the kernel's traffic
}

ALIASES = {
    "bank_conflict": "bankConflict",
    "constant_capacity_bytes": "constantCapacityBytes",
    "min_share": "minShare",
}

# name -> (check, sentence describing the valid range)
_CHECKS: dict[str, tuple[Callable[[float], bool], str]] = {
    "delta": (lambda x: 0 < x <= 1, "a number in (0, 1]"),
    "streaming": (lambda x: 0 < x <= 1, "a number in (0, 1]"),
    "coalescing": (lambda x: x >= 1, "a number >= 1 (R_coal is 1 for perfect coalescing)"),
    "bankConflict": (lambda x: x >= 1, "a number >= 1 (R_conf is 1 without conflicts)"),
    "constantCapacityBytes": (lambda x: x > 0 and float(x).is_integer(), "a whole number of bytes > 0"),
    "minShare": (lambda x: 0 <= x <= 1, "a number in [0, 1]"),
}


def resolve_settings(settings: dict[str, Any] | None) -> dict[str, float]:
    """DEFAULT_SETTINGS overridden by `settings`; raises SettingsError naming the first bad entry."""
    if settings is None:
        return dict(DEFAULT_SETTINGS)
    if not isinstance(settings, dict):
        raise SettingsError(f"pattern settings must be an object of thresholds, not {type(settings).__name__}")
    resolved = dict(DEFAULT_SETTINGS)
    for name, value in settings.items():
        key = ALIASES.get(name, name)
        if key not in _CHECKS:
            known = ", ".join(DEFAULT_SETTINGS)
            raise SettingsError(f"unknown threshold {name!r}; known thresholds: {known}")
        check, expected = _CHECKS[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or not check(value):
            raise SettingsError(f"threshold {name} = {value!r} is invalid: expected {expected}")
        resolved[key] = float(value)
    return resolved
