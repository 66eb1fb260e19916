// Chart axes at round values: ticks 1, 2, 2.5 or 5 × 10^n of one unit apart, labelled in that unit
// ("0 MiB, 250 MiB, 500 MiB", "0, 0.5, 1, 1.5 GiB"), not wherever the chart library's decimal steps land.

const BYTE_UNITS = ["B", "KiB", "MiB", "GiB", "TiB"] as const;
const NICE = [1, 2, 2.5, 5, 10];

export interface RoundAxis {
  min: number;
  max: number;
  /** tick spacing, in bytes */
  interval: number;
  unit: string;
  /** the label of a tick value (bytes) */
  label: (v: number) => string;
}

/** A step of 1, 2, 2.5 or 5 × 10^n at least `raw`. */
export function niceStep(raw: number): number {
  if (!(raw > 0) || !Number.isFinite(raw)) return 1;
  const p = 10 ** Math.floor(Math.log10(raw));
  for (const m of NICE) if (m * p >= raw * (1 - 1e-9)) return m * p;
  return 10 * p;
}

function decimalsOf(step: number): number {
  for (let d = 0; d < 10; d++) if (Math.abs(Math.round(step * 10 ** d) - step * 10 ** d) < 1e-6) return d;
  return 10;
}

/** A byte axis over [lo, hi] with about `target` intervals, in the binary unit of the larger end. */
export function byteAxis(lo: number, hi: number, target = 5): RoundAxis {
  const a = Number.isFinite(lo) ? Math.min(lo, 0) : 0;
  const b = Number.isFinite(hi) ? Math.max(hi, a) : a;
  const top = Math.max(Math.abs(a), Math.abs(b));
  let k = 0;
  while (k < BYTE_UNITS.length - 1 && top >= 1024 ** (k + 1)) k++;
  const scale = 1024 ** k;
  const step = k === 0 ? Math.max(1, niceStep((b - a) / target)) : niceStep((b - a) / scale / target);
  let min = Math.floor(a / scale / step + 1e-9) * step;
  let max = Math.ceil(b / scale / step - 1e-9) * step;
  if (Math.abs(min) < 1e-12) min = 0;
  if (max <= min) max = min + step;
  const decimals = decimalsOf(step);
  const unit = BYTE_UNITS[k]!;
  return {
    min: min * scale,
    max: max * scale,
    interval: step * scale,
    unit,
    label: (v: number) => {
      const x = v / scale;
      return `${(Math.abs(x) < step * 1e-6 ? 0 : x).toFixed(decimals)} ${unit}`;
    },
  };
}
