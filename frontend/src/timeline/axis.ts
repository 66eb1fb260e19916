// The time axis' ticks and their labels. Labels are in one unit for the whole axis, the largest in which
// the ticks' times are at least 1 ("1.63 s", "104.95 ms", never "1627450 µs"), with just the decimals
// the tick spacing needs.

import { type Range, tickStep, ticks } from "./nav";

const UNITS: [number, string][] = [
  [1e6, "s"],
  [1e3, "ms"],
  [1, "µs"],
  [1e-3, "ns"],
];
/** more decimals than this and the labels go down a unit ("1627.4505 ms", not "1.6274505 s") */
const MAX_DECIMALS = 6;
const CHAR_PX = 6.2;

/** Decimals needed to tell ticks `step` apart in a unit of `scale` µs. */
function decimalsFor(step: number, scale: number): number {
  return Math.max(0, Math.ceil(-Math.log10(step / scale) - 1e-9));
}

/** The labels of ticks at multiples of `step` (µs): one unit for all, the largest in which the largest
 * tick is at least 1, unless the step would need more than MAX_DECIMALS decimals there. */
export function tickLabels(times: number[], step: number): string[] {
  const top = times.reduce((m, t) => Math.max(m, Math.abs(t)), 0);
  let k = UNITS.findIndex(([scale]) => top >= scale * (1 - 1e-9));
  if (k < 0) k = UNITS.length - 1;
  while (k < UNITS.length - 1 && decimalsFor(step, UNITS[k]![0]) > MAX_DECIMALS) k++;
  const [scale, unit] = UNITS[k]!;
  const decimals = Math.min(MAX_DECIMALS, decimalsFor(step, scale));
  return times.map((t) => {
    const v = t / scale;
    return `${(Math.abs(v) < 0.5 * 10 ** -decimals ? 0 : v).toFixed(decimals)} ${unit}`;
  });
}

export interface AxisTick {
  t: number;
  label: string;
}

/** The ticks of a view `width` px wide: 1, 2 or 5 × 10^k µs apart, at least 90 px and at least a label's
 * width plus a margin apart. */
export function axisTicks(view: Range, width: number): { step: number; ticks: AxisTick[] } {
  let minPx = 90;
  for (;;) {
    const step = tickStep(view.t1 - view.t0, width, minPx);
    const times = ticks(view, step);
    const labels = tickLabels(times, step);
    const widest = labels.reduce((m, l) => Math.max(m, l.length), 0) * CHAR_PX + 16;
    if (widest <= minPx || minPx > width) return { step, ticks: times.map((t, i) => ({ t, label: labels[i]! })) };
    minPx = widest;
  }
}
