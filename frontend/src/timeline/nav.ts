// Pure zoom/pan math and the time axis. A view is a time range [t0, t1] in µs relative to the profile's
// start; the profile spans [0, total].

export interface Range {
  t0: number;
  t1: number;
}

/** The narrowest view: 10 ns (events are recorded with 1 ns at best). */
export const MIN_SPAN = 0.01;

/** Keep a view inside [0, total] (margin: 2 % of the total on each side), at least MIN_SPAN wide. */
export function clampView(v: Range, total: number): Range {
  const margin = total * 0.02;
  const lo = -margin;
  const hi = total + margin;
  let span = Math.max(MIN_SPAN, Math.min(v.t1 - v.t0, hi - lo));
  if (!Number.isFinite(span)) span = hi - lo;
  let t0 = Number.isFinite(v.t0) ? v.t0 : lo;
  if (t0 < lo) t0 = lo;
  if (t0 + span > hi) t0 = hi - span;
  return { t0, t1: t0 + span };
}

/** Zoom by `factor` (< 1 zooms in) keeping the time `at` at the same place on the screen. */
export function zoomAt(v: Range, factor: number, at: number, total: number): Range {
  const span = v.t1 - v.t0;
  const f = Math.max(MIN_SPAN / span, factor);
  const t0 = at - (at - v.t0) * f;
  const t1 = at + (v.t1 - at) * f;
  return clampView({ t0, t1 }, total);
}

export function pan(v: Range, dt: number, total: number): Range {
  return clampView({ t0: v.t0 + dt, t1: v.t1 + dt }, total);
}

/** A view showing [a, b] with `pad` of its width on each side. */
export function fitRange(a: number, b: number, total: number, pad = 0.05): Range {
  const w = Math.max(b - a, MIN_SPAN);
  return clampView({ t0: a - w * pad, t1: b + w * pad }, total);
}

/** A view centred on an event at the current zoom; when the event is wider than the window, a view
 * fitted to it (with a margin). Stepping through search matches, as Perfetto does. */
export function centreKeepingZoom(start: number, dur: number, current: Range, total: number): Range {
  const span = current.t1 - current.t0;
  const w = dur <= span ? span : Math.max(dur * 1.1, MIN_SPAN);
  const mid = start + dur / 2;
  return clampView({ t0: mid - w / 2, t1: mid + w / 2 }, total);
}

/** A view centred on an event, `times` × its duration wide (never narrower than 1 µs); the current
 * width is kept when it is up to 20 times that (stepping through search matches keeps one zoom). */
export function centreOn(start: number, dur: number, current: Range, total: number, times = 5): Range {
  const span = current.t1 - current.t0;
  const want = Math.max(dur * times, 1);
  const w = span >= want && span <= want * 20 ? span : want;
  const mid = start + dur / 2;
  return clampView({ t0: mid - w / 2, t1: mid + w / 2 }, total);
}

export const timeToX = (v: Range, width: number, t: number) => ((t - v.t0) / (v.t1 - v.t0)) * width;
export const xToTime = (v: Range, width: number, x: number) => v.t0 + (x / width) * (v.t1 - v.t0);

/** A tick spacing of 1, 2 or 5 × 10^k µs giving at least `minPx` pixels between ticks. */
export function tickStep(span: number, width: number, minPx = 90): number {
  const raw = (span / Math.max(width, 1)) * minPx;
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

/** The ticks (multiples of step) inside [t0, t1]. */
export function ticks(v: Range, step: number): number[] {
  const out: number[] = [];
  const first = Math.ceil(v.t0 / step);
  for (let k = first; k * step <= v.t1 && out.length < 1000; k++) out.push(k * step);
  return out;
}

/** A time (µs) for labels and the details panel: ns, µs, ms or s with 3 significant digits or so. */
export function formatTime(us: number): string {
  const a = Math.abs(us);
  if (a === 0) return "0";
  if (a < 1) return `${+(us * 1e3).toPrecision(3)} ns`;
  if (a < 1e3) return `${+us.toPrecision(4)} µs`;
  if (a < 1e6) return `${+(us / 1e3).toPrecision(4)} ms`;
  return `${+(us / 1e6).toPrecision(4)} s`;
}
