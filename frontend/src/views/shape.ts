// Pure data shaping for the views (tested in test/shape.test.ts).

export interface Slice {
  name: string;
  value: number;
  /** A breakdown category key: the slice then takes that category's fixed colour (lib/colors.ts). */
  key?: string;
}

/**
 * The n largest positive values as pie slices, the rest summed into one "Other (k)" slice so the pie's
 * percentages stay shares of the whole. Ties break by name.
 */
export function topSlices<R>(rows: R[], name: (r: R) => string, value: (r: R) => number, n: number): Slice[] {
  const items = rows
    .map((r) => ({ name: name(r), value: value(r) }))
    .filter((s) => Number.isFinite(s.value) && s.value > 0)
    .sort((a, b) => b.value - a.value || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const head = items.slice(0, n);
  const rest = items.slice(n);
  if (rest.length) {
    head.push({ name: `Other (${rest.length})`, value: rest.reduce((s, x) => s + x.value, 0) });
  }
  return head;
}

export interface Category {
  key: string;
  label: string;
}

/** Step-time breakdown categories, in the order categories claim time (analysis/device/breakdown.py). */
export const BREAKDOWN: Category[] = [
  { key: "kernel", label: "Kernel" },
  { key: "memcpy", label: "Memcpy" },
  { key: "memset", label: "Memset" },
  { key: "communication", label: "Communication" },
  { key: "runtime", label: "Runtime" },
  { key: "dataloader", label: "DataLoader" },
  { key: "cpu_exec", label: "CPU Exec" },
  { key: "other", label: "Other" },
];

const GPU_KEYS = new Set(["kernel", "memcpy", "memset"]);

/**
 * Categories to draw: the GPU ones only when the GPU is used, Communication only when present; the
 * host ones always (an all-zero series still tells "none of this").
 */
export function visibleCategories(steps: Record<string, number>[], gpuUsed: boolean): Category[] {
  return BREAKDOWN.filter((c) => {
    if (GPU_KEYS.has(c.key)) return gpuUsed;
    if (c.key === "communication") return steps.some((s) => (s[c.key] ?? 0) > 0);
    return true;
  });
}

export interface SummaryRow {
  key: string;
  category: string;
  us: number;
  pct: number;
}

/** Execution summary: per-step mean time per category and its share of the mean step time. */
export function executionSummary(avg: Record<string, number>, cats: Category[]): SummaryRow[] {
  const total = avg.duration ?? cats.reduce((s, c) => s + (avg[c.key] ?? 0), 0);
  return cats.map((c) => {
    const us = avg[c.key] ?? 0;
    return { key: c.key, category: c.label, us, pct: total > 0 ? (100 * us) / total : 0 };
  });
}

/** Mean of each key over rows (0 for none). */
export function meanOf(rows: Record<string, number>[], keys: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of keys) out[k] = rows.length ? rows.reduce((s, r) => s + (r[k] ?? 0), 0) / rows.length : 0;
  return out;
}

/** Kernel time on matrix units (Tensor Cores, AMD Matrix Cores) vs not (rows: kernels with their
 * total time and whether they use them). */
export function tensorCoreSlices(rows: { total: number; tcUsed: boolean | null }[], units = "Tensor Cores"): Slice[] {
  let on = 0;
  let off = 0;
  let unknown = 0; // tcUsed null: the kernel's name does not say (Triton, custom kernels)
  for (const r of rows) {
    if (r.tcUsed === null) unknown += r.total;
    else if (r.tcUsed) on += r.total;
    else off += r.total;
  }
  if (on + off + unknown <= 0) return [];
  const out: Slice[] = [
    { name: `Using ${units}`, value: on },
    { name: `Not using ${units}`, value: off, key: "other" },
  ];
  if (unknown > 0) out.push({ name: "Name does not say", value: unknown });
  return out;
}

/**
 * Per-worker figures for one step, or the mean over steps ("all"), from
 * `{worker: {steps: {stepName: {legend: µs}}, mean: {legend: µs}}}`.
 */
export function stepFigures(byWorker: unknown, workers: string[], step: string): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  const o = (byWorker ?? {}) as Record<string, { steps?: Record<string, Record<string, number>>; mean?: Record<string, number> }>;
  for (const w of workers) {
    const entry = o[w];
    const vals = step === "all" ? entry?.mean : entry?.steps?.[step];
    out[w] = { ...(vals ?? {}) };
  }
  return out;
}

export interface CurvePoints {
  ts: number[];
  allocated: (number | null)[];
  reserved: (number | null)[];
}

/**
 * The overview curve with [start, end] replaced by the detail curve of that range (whose first point
 * is the level in force at start): points of the overview before start, every detail point, points of
 * the overview after end.
 */
export function spliceCurve(overview: CurvePoints, detail: CurvePoints, start: number, end: number): CurvePoints {
  const out: CurvePoints = { ts: [], allocated: [], reserved: [] };
  const push = (src: CurvePoints, i: number) => {
    out.ts.push(src.ts[i] as number);
    out.allocated.push(src.allocated[i] ?? null);
    out.reserved.push(src.reserved[i] ?? null);
  };
  overview.ts.forEach((t, i) => t < start && push(overview, i));
  detail.ts.forEach((t, i) => t >= start && t <= end && push(detail, i));
  overview.ts.forEach((t, i) => t > end && push(overview, i));
  return out;
}

export { type EvidenceRow, evidenceRows } from "./evidence";

/** The step chart's tooltip: the step's total, then each category's time and share of the step. */
export function stepTooltip(
  step: string,
  total: number | null,
  items: { seriesName: string; value: number }[],
  duration: (us: number) => string,
  host: number | null = null,
): string {
  const sum = total ?? items.reduce((s, x) => s + x.value, 0);
  const lines = items.map((x) => `${x.seriesName}: ${duration(x.value)} (${sum > 0 ? ((100 * x.value) / sum).toFixed(1) : "0.0"} %)`);
  // the step time runs to the end of the step's device work; the Trace view's ruler draws the host range
  const head = host === null ? [`Step ${step}: ${duration(sum)}`] : [`Step ${step}: ${duration(sum)} to the end of its device work`, `host range ${duration(host)} (as the Trace view's ruler)`];
  return [...head, ...lines].join("\n");
}
