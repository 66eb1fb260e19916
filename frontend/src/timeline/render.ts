// Canvas 2D drawing of the timeline. Events are bucketed by colour (one fillStyle per colour, then
// fillRect per box), only rows inside the visible band are touched, and labels are drawn only on boxes
// wide enough to hold a few characters.

import type { TlSeries, TlStep, TlWindow } from "./api";
import { type Layout, ROW_H } from "./layout";
import { axisTicks } from "./axis";
import type { Range } from "./nav";

export interface Palette {
  dark: boolean;
  bg: string;
  fg: string;
  muted: string;
  border: string;
  panel: string;
  accent: string;
  /** hashed event colours, and the text colour drawn on them */
  fills: string[];
  text: string;
  memcpy: string;
  memset: string;
  /** events without a name: grey, striped (the strip; the colour without a DOM) */
  merged: string;
  mergedStrip: HTMLCanvasElement | null;
  /** stripes drawn over a box of several events, in the colour of the name covering most of it */
  hatchStrip: HTMLCanvasElement | null;
  stepA: string;
  stepB: string;
  counter: string;
  counterLine: string;
  shade: string;
}

const HUES = 20;
export const MEMCPY = HUES;
export const MEMSET = HUES + 1;
export const MERGED = HUES + 2;
export const NCOLORS = HUES + 3;

/** A stable 32-bit FNV-1a hash of a name. */
export function hashName(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Colour slot of a name: memcpy and memset have their own, the rest hash into HUES slots. */
export function colorOf(name: string): number {
  if (name.startsWith("Memcpy") || name.startsWith("memcpy")) return MEMCPY;
  if (name.startsWith("Memset") || name.startsWith("memset")) return MEMSET;
  return hashName(name) % HUES;
}

function cssVar(style: CSSStyleDeclaration, name: string, fallback: string): string {
  return style.getPropertyValue(name).trim() || fallback;
}

const STRIPE = 6; // px between diagonal stripes
const STRIP_W = 4096;

/** A row-high strip of diagonal stripes over `background` (transparent when null), copied onto merged
 * boxes with drawImage: software canvases (headless chromium, no GPU) fill a CanvasPattern several
 * times slower than they copy pixels. null where there is no DOM (unit tests). */
function stripes(background: string | null, stroke: string): HTMLCanvasElement | null {
  if (typeof document === "undefined") return null;
  const c = document.createElement("canvas");
  c.width = STRIP_W + STRIPE;
  c.height = ROW_H;
  const g = c.getContext("2d");
  if (!g) return null;
  if (background) {
    g.fillStyle = background;
    g.fillRect(0, 0, c.width, c.height);
  }
  g.strokeStyle = stroke;
  g.lineWidth = 1.5;
  g.beginPath();
  for (let x = -ROW_H; x < c.width + ROW_H; x += STRIPE) {
    g.moveTo(x, ROW_H);
    g.lineTo(x + ROW_H, 0);
  }
  g.stroke();
  return c;
}

/** Copy a stripe strip onto [x, x + w) × [y, y + h): whole pixels, stripes aligned across boxes. */
function blitStripes(ctx: CanvasRenderingContext2D, strip: HTMLCanvasElement, x: number, y: number, w: number, h: number): void {
  let dx = Math.round(x);
  const dy = Math.round(y);
  let left = Math.max(1, Math.round(x + w) - dx);
  while (left > 0) {
    const n = Math.min(left, STRIP_W);
    const sx = (((dx + dy) % STRIPE) + STRIPE) % STRIPE;
    ctx.drawImage(strip, sx, 0, n, h, dx, dy, n, h);
    dx += n;
    left -= n;
  }
}

export function makePalette(dark: boolean, style: CSSStyleDeclaration | null): Palette {
  const v = (n: string, f: string) => (style ? cssVar(style, n, f) : f);
  // hues spread over the circle, skipping the greens that mark memcpy/memset
  const fills = Array.from({ length: HUES }, (_, i) => {
    const hue = (i * 137.5) % 360;
    const h = hue >= 85 && hue <= 150 ? (hue + 70) % 360 : hue;
    return dark ? `hsl(${h.toFixed(0)} 42% 40%)` : `hsl(${h.toFixed(0)} 62% 76%)`;
  });
  const mergedStrip = stripes(dark ? "#3c4046" : "#cfd4da", dark ? "#6b7078" : "#98a0a9");
  const hatchStrip = stripes(null, dark ? "rgba(0,0,0,0.45)" : "rgba(255,255,255,0.7)");
  return {
    dark,
    bg: v("--bg", dark ? "#1e1f22" : "#ffffff"),
    fg: v("--fg", dark ? "#e6e6e6" : "#1f2328"),
    muted: v("--muted", dark ? "#9aa4ae" : "#59636e"),
    border: v("--border", dark ? "#3a3d42" : "#d1d9e0"),
    panel: v("--panel", dark ? "#26282c" : "#f6f8fa"),
    accent: v("--accent", dark ? "#ff9950" : "#d8590f"),
    fills,
    text: dark ? "#f2f2f2" : "#1b1f24",
    memcpy: dark ? "#2f8f4e" : "#6cc48a",
    memset: dark ? "#6f8f2a" : "#b5d66b",
    merged: dark ? "#55595f" : "#b8bec6",
    mergedStrip,
    hatchStrip,
    stepA: dark ? "#2b2f36" : "#eef1f4",
    stepB: dark ? "#34393f" : "#e2e7ec",
    counter: dark ? "rgba(108,182,255,0.35)" : "rgba(9,105,218,0.25)",
    counterLine: dark ? "#6cb6ff" : "#0969da",
    shade: dark ? "rgba(255,153,80,0.16)" : "rgba(216,89,15,0.12)",
  };
}

export interface Viewport {
  /** the view in µs relative to `base` (absolute µs of the profile start) */
  view: Range;
  base: number;
  /** event area: x from `x0` to `x0 + width`, y from 0 to `height` (CSS pixels) */
  x0: number;
  width: number;
  height: number;
  scrollY: number;
}

/** Per-window scratch arrays, reused across frames. */
export class Scratch {
  vis = new Int32Array(0);
  col = new Uint8Array(0);
  order = new Int32Array(0);
  colorsFor: TlWindow | null = null;
  nameColor = new Uint8Array(0);

  ensure(w: TlWindow): void {
    if (this.vis.length < w.count) {
      this.vis = new Int32Array(w.count);
      this.col = new Uint8Array(w.count);
      this.order = new Int32Array(w.count);
    }
    if (this.colorsFor !== w) {
      this.colorsFor = w;
      this.nameColor = Uint8Array.from(w.names, (n) => (isMixed(n) ? MERGED : colorOf(n)));
    }
  }
}

const TEXT_MIN_PX = 30;
const CHAR_PX = 6.2;

/** Draw the window's boxes; returns how many were drawn. */
export function drawEvents(ctx: CanvasRenderingContext2D, w: TlWindow, layout: Layout, vp: Viewport, pal: Palette, s: Scratch): number {
  s.ensure(w);
  const { view, base, x0, width, height, scrollY } = vp;
  const scale = width / (view.t1 - view.t0);
  const left = base + view.t0;
  // track id → place, as arrays for the hot loop
  let maxId = 0;
  for (const id of layout.tracks.keys()) maxId = Math.max(maxId, id);
  const ty = new Float64Array(maxId + 1).fill(NaN);
  const tRows = new Uint16Array(maxId + 1);
  for (const [id, p] of layout.tracks) {
    if (p.track.kind === "counter") continue;
    ty[id] = p.y - scrollY;
    tRows[id] = p.rowsShown;
  }
  const { startUs, durUs, track, depth, cnt, major } = w;
  const counts = new Int32Array(NCOLORS + 1);
  let nv = 0;
  for (let i = 0; i < w.count; i++) {
    const t = track[i]!;
    if (t > maxId) continue;
    const top = ty[t]!;
    if (top !== top) continue; // NaN: track not drawn
    const d = depth[i]!;
    if (d >= tRows[t]!) continue;
    const y = top + d * ROW_H;
    if (y + ROW_H < 0 || y > height) continue;
    const a = (startUs[i]! - left) * scale;
    const b = a + durUs[i]! * scale;
    if (b < 0 || a > width) continue;
    const c = s.nameColor[major[i]!]!; // a merged box: the colour of the name covering most of it
    s.vis[nv] = i;
    s.col[nv] = c;
    counts[c + 1]!++;
    nv++;
  }
  for (let c = 1; c <= NCOLORS; c++) counts[c]! += counts[c - 1]!;
  for (let k = 0; k < nv; k++) {
    const c = s.col[k]!;
    s.order[counts[c]!++] = s.vis[k]!;
  }
  // counts[c] is now the end of colour c's run
  ctx.save();
  ctx.beginPath();
  ctx.rect(x0, 0, width, height);
  ctx.clip();
  let k = 0;
  for (let c = 0; c < NCOLORS; c++) {
    const end = counts[c]!;
    if (k === end) continue;
    ctx.fillStyle = c === MERGED ? pal.merged : c === MEMCPY ? pal.memcpy : c === MEMSET ? pal.memset : pal.fills[c]!;
    const strip = c === MERGED ? pal.mergedStrip : null;
    for (; k < end; k++) {
      const i = s.order[k]!;
      const t = track[i]!;
      const y = ty[t]! + depth[i]! * ROW_H;
      let a = (startUs[i]! - left) * scale;
      let b = a + durUs[i]! * scale;
      if (a < -2) a = -2;
      if (b > width + 2) b = width + 2;
      const bw = b - a < 1 ? 1 : b - a;
      if (strip) blitStripes(ctx, strip, x0 + a, y + 1, bw, ROW_H - 2);
      else ctx.fillRect(x0 + a, y + 0.5, bw, ROW_H - 1.5);
    }
  }
  // boxes of several events: light stripes over their colour
  const hatch = pal.hatchStrip;
  for (let k2 = 0; hatch && k2 < nv; k2++) {
    const i = s.vis[k2]!;
    if (cnt[i]! <= 1 || s.col[k2] === MERGED) continue;
    let a = (startUs[i]! - left) * scale;
    let b = a + durUs[i]! * scale;
    if (a < -2) a = -2;
    if (b > width + 2) b = width + 2;
    blitStripes(ctx, hatch, x0 + a, ty[track[i]!]! + depth[i]! * ROW_H + 1, b - a < 1 ? 1 : b - a, ROW_H - 2);
  }
  // labels on wide boxes
  ctx.font = "11px system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
  ctx.textBaseline = "middle";
  for (let k2 = 0; k2 < nv; k2++) {
    const i = s.vis[k2]!;
    let a = (startUs[i]! - left) * scale;
    let b = a + durUs[i]! * scale;
    if (a < 0) a = 0;
    if (b > width) b = width;
    const bw = b - a;
    if (bw < TEXT_MIN_PX) continue;
    const y = ty[track[i]!]! + depth[i]! * ROW_H;
    ctx.fillStyle = s.col[k2] === MERGED ? pal.fg : pal.text;
    const label = fitText(boxName(w.names[w.name[i]!] ?? "", cnt[i]!), bw - 6);
    if (label) ctx.fillText(label, x0 + a + 3, y + ROW_H / 2);
  }
  ctx.restore();
  return nv;
}

/** A collapsed group's density strip: per pixel column, the time its tracks' events cover there (all
 * rows summed), scaled to the busiest column, drawn as bars up from the bottom of [y, y + h). */
export function drawDensity(ctx: CanvasRenderingContext2D, w: TlWindow, members: number[], y: number, h: number, vp: Viewport, colour: string): void {
  const { view, base, x0, width } = vp;
  const cols = Math.max(1, Math.ceil(width));
  const bins = new Float64Array(cols);
  let maxId = 0;
  for (const t of members) maxId = Math.max(maxId, t);
  const member = new Uint8Array(maxId + 1);
  for (const t of members) member[t] = 1;
  const scale = width / (view.t1 - view.t0);
  const left = base + view.t0;
  for (let i = 0; i < w.count; i++) {
    const t = w.track[i]!;
    if (t > maxId || !member[t]) continue;
    const a0 = (w.startUs[i]! - left) * scale;
    const b0 = a0 + Math.max(w.durUs[i]! * scale, 0.05); // an instant still shows
    if (b0 <= 0 || a0 >= cols) continue;
    let a = Math.max(0, a0);
    const b = Math.min(cols, b0);
    while (a < b) {
      const k = Math.floor(a);
      const next = Math.min(b, k + 1);
      bins[k]! += next - a;
      a = next;
    }
  }
  let max = 0;
  for (const v of bins) max = Math.max(max, v);
  if (!(max > 0)) return;
  ctx.fillStyle = colour;
  for (let k = 0; k < cols; k++) {
    const bh = (bins[k]! / max) * h;
    if (bh > 0) ctx.fillRect(x0 + k, y + h - bh, 1, bh);
  }
}

/** Outline boxes (search matches; x, y of a row's top, w in css px) without covering them: on each row,
 * boxes closer than 3 px are joined into one span, outlined just outside it (the sides beside it, the top
 * and bottom in the gaps between rows). Returns the number of spans outlined. */
export function outlineBoxes(ctx: CanvasRenderingContext2D, boxes: { x: number; y: number; w: number }[], colour: string): number {
  const sorted = [...boxes].sort((p, q) => p.y - q.y || p.x - q.x);
  ctx.strokeStyle = colour;
  ctx.lineWidth = 1;
  let spans = 0;
  for (let k = 0; k < sorted.length; ) {
    const first = sorted[k]!;
    let end = first.x + Math.max(first.w, 1);
    let j = k + 1;
    while (j < sorted.length && sorted[j]!.y === first.y && sorted[j]!.x <= end + 3) {
      end = Math.max(end, sorted[j]!.x + Math.max(sorted[j]!.w, 1));
      j++;
    }
    // boxes fill [x, x + w) × [y + 0.5, y + ROW_H - 1): a crisp 1 px line in the pixel column before
    // and after the span, and in the free pixel rows above and below it
    const left = Math.floor(first.x) - 0.5;
    const top = Math.round(first.y) - 0.5;
    ctx.strokeRect(left, top, Math.ceil(end) + 0.5 - left, ROW_H);
    spans++;
    k = j;
  }
  return spans;
}

/** A box of events with different names: the binary answer names it "" (the JSON "<n> events"). It is
 * drawn in the colour of its `major` name (the one covering most of its time). */
export function isMixed(name: string): boolean {
  return name === "" || /^\d+ events$/.test(name);
}

/** The name to show for a box. */
export function boxName(name: string, count: number): string {
  return name === "" && count > 1 ? `${count.toLocaleString("en-US")} events` : name;
}

/** Truncate a label to about `px` pixels (an estimate: no measureText per box). */
export function fitText(s: string, px: number): string {
  const n = Math.floor(px / CHAR_PX);
  if (n < 2) return "";
  return s.length <= n ? s : `${s.slice(0, n - 1)}…`;
}

/** A counter track as a filled step chart, scaled 0..max. */
export function drawCounter(ctx: CanvasRenderingContext2D, series: TlSeries, max: number, y: number, h: number, vp: Viewport, pal: Palette): void {
  const { view, base, x0, width } = vp;
  const { ts, values } = series;
  const n = ts.length;
  if (n === 0) return;
  const scale = width / (view.t1 - view.t0);
  let top = max;
  if (!(top > 0)) {
    top = 1e-12;
    for (let i = 0; i < n; i++) if (values[i]! > top) top = values[i]!;
  }
  const yOf = (v: number) => y + h - (Math.max(0, Math.min(v, top)) / top) * (h - 2);
  const xOf = (t: number) => Math.min(width + 2, Math.max(-2, (t - base - view.t0) * scale));
  // only the points that matter: the last one at or before the view's start through the first one at or
  // after its end (a cached coarser window can hold many more), and per pixel column at most its
  // entering value, its extremes and its last value: the path stays a few vertices per pixel, whatever
  // the series' length (a long path costs software canvases more than all the boxes)
  const lo = Math.max(0, bisect(ts, base + view.t0, true) - 1);
  const hi = Math.min(n - 1, bisect(ts, base + view.t1, false));
  ctx.save();
  ctx.beginPath();
  ctx.rect(x0, y, width, h);
  ctx.clip();
  ctx.beginPath();
  let x = xOf(ts[lo]!);
  let col = Math.round(x);
  let py = yOf(values[lo]!);
  let lowest = py;
  let highest = py;
  ctx.moveTo(x0 + x, y + h);
  ctx.lineTo(x0 + x, py);
  for (let i = lo + 1; i <= hi; i++) {
    x = xOf(ts[i]!);
    const v = yOf(values[i]!);
    const c = Math.round(x);
    if (c === col) {
      if (v < lowest) lowest = v;
      if (v > highest) highest = v;
      py = v;
      continue;
    }
    if (lowest !== highest) {
      ctx.lineTo(x0 + col, lowest);
      ctx.lineTo(x0 + col, highest);
      ctx.lineTo(x0 + col, py);
    }
    ctx.lineTo(x0 + x, py);
    ctx.lineTo(x0 + x, v);
    col = c;
    lowest = highest = py = v;
  }
  if (lowest !== highest) {
    ctx.lineTo(x0 + col, lowest);
    ctx.lineTo(x0 + col, highest);
    ctx.lineTo(x0 + col, py);
  }
  ctx.lineTo(x0 + width + 2, py);
  ctx.lineTo(x0 + width + 2, y + h);
  ctx.closePath();
  ctx.fillStyle = pal.counter;
  ctx.fill();
  ctx.strokeStyle = pal.counterLine;
  ctx.lineWidth = 1;
  ctx.stroke();
  ctx.restore();
}

/** The first index of sorted `a` whose value is >= `t` (`after`: > `t`); a.length when none. */
export function bisect(a: Float64Array, t: number, after: boolean): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! < t || (after && a[mid] === t)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The counter's value at absolute time t (the last point at or before t). */
export function counterValueAt(series: TlSeries, t: number): number | null {
  const i = bisect(series.ts, t, true) - 1; // the last sample at or before t
  return i < 0 ? null : (series.values[i] ?? null);
}

export const STEPS_H = 18;
export const AXIS_H = 20;

/** The step ruler (top band) and the time axis under it; returns the axis' labels, in order. */
export function drawRuler(ctx: CanvasRenderingContext2D, steps: TlStep[], vp: Viewport, cssW: number, pal: Palette, label: string): string[] {
  const { view, base, x0, width } = vp;
  ctx.fillStyle = pal.panel;
  ctx.fillRect(0, 0, cssW, STEPS_H + AXIS_H);
  const scale = width / (view.t1 - view.t0);
  ctx.save();
  ctx.beginPath();
  ctx.rect(x0, 0, width, STEPS_H + AXIS_H);
  ctx.clip();
  ctx.font = "11px system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
  ctx.textBaseline = "middle";
  steps.forEach((st, k) => {
    const a = (st.start - base - view.t0) * scale;
    const b = (st.end - base - view.t0) * scale;
    if (b < 0 || a > width) return;
    ctx.fillStyle = k % 2 ? pal.stepB : pal.stepA;
    ctx.fillRect(x0 + a, 1, Math.max(1, b - a), STEPS_H - 2);
    ctx.fillStyle = pal.fg;
    const text = fitText(`Step ${st.number}`, Math.min(b, width) - Math.max(a, 0) - 6);
    if (text) ctx.fillText(text, x0 + Math.max(a, 0) + 3, STEPS_H / 2);
    ctx.fillStyle = pal.border;
    ctx.fillRect(x0 + a, 0, 1, STEPS_H);
  });
  const axis = axisTicks(view, width).ticks;
  ctx.fillStyle = pal.muted;
  ctx.strokeStyle = pal.border;
  ctx.beginPath();
  for (const { t, label: text } of axis) {
    const x = Math.round(x0 + (t - view.t0) * scale) + 0.5;
    ctx.moveTo(x, STEPS_H + AXIS_H - 6);
    ctx.lineTo(x, STEPS_H + AXIS_H);
    ctx.fillText(text, x + 3, STEPS_H + AXIS_H / 2 - 2);
  }
  ctx.stroke();
  ctx.restore();
  ctx.fillStyle = pal.muted;
  ctx.fillText(label, 6, STEPS_H / 2);
  ctx.fillStyle = pal.border;
  ctx.fillRect(0, STEPS_H + AXIS_H - 1, cssW, 1);
  return axis.map((a) => a.label);
}

/** Vertical grid lines at the axis ticks, behind the events. */
export function drawGrid(ctx: CanvasRenderingContext2D, vp: Viewport, pal: Palette): void {
  const { view, x0, width, height } = vp;
  const scale = width / (view.t1 - view.t0);
  ctx.fillStyle = pal.dark ? "rgba(255,255,255,0.05)" : "rgba(0,0,0,0.05)";
  for (const { t } of axisTicks(view, width).ticks) ctx.fillRect(Math.round(x0 + (t - view.t0) * scale), 0, 1, height);
}

export function setupCanvas(c: HTMLCanvasElement, cssW: number, cssH: number): CanvasRenderingContext2D | null {
  const dpr = window.devicePixelRatio || 1;
  const w = Math.max(1, Math.round(cssW * dpr));
  const h = Math.max(1, Math.round(cssH * dpr));
  if (c.width !== w || c.height !== h) {
    c.width = w;
    c.height = h;
    c.style.width = `${cssW}px`;
    c.style.height = `${cssH}px`;
  }
  // opaque: every canvas here paints its whole area, and an opaque one is cheaper to composite (~10 %
  // of a drag frame's browser CPU on a software canvas)
  const ctx = c.getContext("2d", { alpha: false });
  if (!ctx) return null;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return ctx;
}

/** The mark's colours (blue: apart from the orange range selection): its band, or its edges. */
export function markColour(dark: boolean, fill: boolean): string {
  if (fill) return dark ? "rgba(110,170,255,0.16)" : "rgba(30,100,210,0.10)";
  return dark ? "rgba(110,170,255,0.9)" : "rgba(30,100,210,0.85)";
}

/** A curved arrow from (ax, ay) to (bx, by), arriving horizontally (the selection's flows). */
export function arrow(ctx: CanvasRenderingContext2D, ax: number, ay: number, bx: number, by: number): void {
  const mx = (ax + bx) / 2;
  ctx.beginPath();
  ctx.moveTo(ax, ay);
  ctx.bezierCurveTo(mx, ay, mx, by, bx, by);
  ctx.stroke();
  // the curve arrives horizontally
  const a = bx >= ax ? 0 : Math.PI;
  ctx.beginPath();
  ctx.moveTo(bx, by);
  ctx.lineTo(bx - 7 * Math.cos(a - 0.4), by - 7 * Math.sin(a - 0.4));
  ctx.lineTo(bx - 7 * Math.cos(a + 0.4), by - 7 * Math.sin(a + 0.4));
  ctx.closePath();
  ctx.fill();
}
