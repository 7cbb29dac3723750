// Human units, identical to analyzer/units.py so the same quantity reads the same in the CLI, the hovers
// and the graph view.

/** Decimal units as Nsight Compute prints them: "4.2 MB", "512 B". */
export function formatBytes(count: number): string {
  let value = Number(count);
  for (const unit of ["B", "KB", "MB", "GB", "TB"]) {
    if (Math.abs(value) < 1000 || unit === "TB") {
      return unit === "B" ? `${Math.trunc(value)} B` : `${toFixedHalfEven(value, 1)} ${unit}`;
    }
    value /= 1000;
  }
  throw new Error("unreachable");
}

export function formatShare(fraction: number): string {
  const percent = 100 * fraction;
  return `${toFixedHalfEven(percent, percent > 0 && percent < 1 ? 1 : 0)}%`;
}

/** Python's format(value, ".Nf"): exact ties round to even, where JavaScript's toFixed rounds them up. */
export function toFixedHalfEven(value: number, digits: number): string {
  const scaled = value * 10 ** digits;
  if (Number.isInteger(scaled - 0.5)) {
    const lower = Math.floor(scaled);
    const even = lower % 2 === 0 ? lower : lower + 1;
    return (even / 10 ** digits).toFixed(digits);
  }
  return value.toFixed(digits);
}
