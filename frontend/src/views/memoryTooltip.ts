// The Memory curve's tooltip: the time with its unit, then each series' value as a size.

export interface CurvePoint {
  seriesName: string;
  /** [x in ms, bytes] */
  value: unknown;
}

/** "at 158.20 ms\nAllocated: 1.50 MiB\nReserved: 2.00 MiB" (x is in ms on the chart's axis). */
export function memoryTooltip(items: CurvePoint[], duration: (us: number) => string, bytes: (b: number) => string): string {
  const first = items[0]?.value;
  const ms = Array.isArray(first) && typeof first[0] === "number" ? first[0] : null;
  const lines = items.map((it) => {
    const y = Array.isArray(it.value) ? it.value[1] : it.value;
    return `${it.seriesName}: ${typeof y === "number" ? bytes(y) : "–"}`;
  });
  return [...(ms === null ? [] : [`at ${duration(ms * 1000)}`]), ...lines].join("\n");
}
