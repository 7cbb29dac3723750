"""Human-readable quantities, the same everywhere a user reads them (CLI, messages, hovers)."""

from __future__ import annotations


def format_bytes(count: float) -> str:
    """Decimal units, as Nsight Compute prints them: 4.2 MB, 512 B."""
    value = float(count)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(value) < 1000 or unit == "TB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


def format_share(fraction: float) -> str:
    percent = 100.0 * fraction
    if 0 < percent < 1:
        return f"{percent:.1f}%"
    return f"{percent:.0f}%"


def format_waste(amount: float, basis: str) -> str:
    """A finding's waste in its own unit (waste.basis): bank conflicts waste wavefronts, the rest bytes."""
    if basis == "wavefronts":
        return f"{int(round(amount)):,} wavefronts"
    return format_bytes(amount)
