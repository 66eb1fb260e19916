// The timeline's state and drawing, outside React: the view (time range), vertical scroll, collapse
// state, selection, search marks and the range selection live here and every change schedules one
// redraw on the next animation frame. Input is handled in pointer.ts and keys.ts (through InputHost).
// React owns the panels around it and hears about changes through the callbacks.

import { type TlLink, type TlPlace, type TlTracks, type TlWindow, itemId } from "./api";
import { type Entry, WindowCache, encodeTracks, tileFor } from "./cache";
import { type CriticalPath, drawCriticalPath } from "./criticalPath";
import { type Callbacks, type Detail, type Elements, type Hit, type InputHost, LABEL_W, listener } from "./input";
import { type KeyActions, attachKeys } from "./keys";
import { Layer } from "./layer";
import { type Layout, ROW_H, buildLayout, groupKey, rowAt, toggle, trackKey, tracksIn } from "./layout";
import { drawTrackLabels } from "./trackLabels";
import { type Range, centreKeepingZoom, centreOn, clampView, fitRange, formatTime, xToTime } from "./nav";
import { emptyWindow } from "./decode";
import { MINIMAP_H, drawMinimapBase } from "./minimap";
import { attachPointer } from "./pointer";
import {
  AXIS_H,
  type Palette,
  STEPS_H,
  Scratch,
  type Viewport,
  boxName,
  drawCounter,
  drawDensity,
  drawEvents,
  drawGrid,
  arrow,
  drawRuler,
  markColour,
  makePalette,
  outlineBoxes,
  setupCanvas,
} from "./render";

export type { Callbacks, Detail, Elements, Hit };
export { LABEL_W };

const MIN_LABEL_W = 120;
const MAX_LABEL_W = 640;
const LABEL_W_KEY = "torch-tb-profiler.timeline.labelWidth";

function readLabelW(): number {
  try {
    const v = Number(localStorage.getItem(LABEL_W_KEY));
    return Number.isFinite(v) && v >= MIN_LABEL_W && v <= MAX_LABEL_W ? v : LABEL_W;
  } catch {
    return LABEL_W;
  }
}
/** While something is drawn, a window is asked for once the view has stayed on its tile this long:
 * a fast pan or zoom draws cached answers and sends nothing until it settles. */
export const FETCH_DELAY_MS = 60;

/** `tracks`: the `tracks=` parameter (docs/api.md), null for every track */
export type FetchWindow = (startAbs: number, endAbs: number, px: number, tracks: string | null, signal: AbortSignal) => Promise<TlWindow>;

export class TimelineController implements InputHost, KeyActions {
  readonly base: number;
  readonly total: number;
  view: Range;
  scrollY = 0;
  collapsed = new Set<string>();
  layout: Layout;
  rangeMode = false;
  /** the label column's width (css px): dragged at its edge, remembered in the browser */
  labelW = readLabelW();

  private pal: Palette;
  private readonly cache = new WindowCache(16);
  private readonly scratch = new Scratch();
  private readonly labels = new Layer();
  private readonly minimapLayer = new Layer();
  drawn: TlWindow | null = null;
  private frame = 0;
  private cssW = 0;
  mainH = 0;
  private minimapData: TlWindow | null = null;
  private minimapCtl: AbortController | null = null;
  /** the tracks the drawn answer holds (null: all) */
  private drawnTracks: ReadonlySet<number> | null = null;
  private selection: { place: TlPlace; links: TlLink[] } | null = null;
  private marks: TlPlace[] = [];
  /** a step's critical path drawn over the tracks (Analysis view → "timeline"), and its bands drawn
   * in the last frame */
  private path: CriticalPath | null = null;
  pathBands = 0;
  private current: TlPlace | null = null;
  range: Range | null = null;
  /** the marked range (M): drawn across the tracks until removed */
  mark: Range | null = null;
  /** which of the range and the selected event F and M act on: the one chosen last */
  private picked: "range" | "event" | null = null;
  mouseX: number | null = null;
  private error: Error | null = null;
  private readonly cleanup: (() => void)[] = [];
  private lastState = "";
  /** the request waiting for the view to settle (key), and when it is due */
  private waiting: { key: string; timer: number; due: boolean } | null = null;
  /** the last frame: items in the drawn answer, boxes drawn, milliseconds spent drawing; and the
   * number of frames drawn so far */
  stats = { items: 0, boxes: 0, ms: 0, frames: 0, labelPaints: 0 };

  constructor(
    readonly tracks: TlTracks,
    readonly el: Elements,
    private readonly fetchWindow: FetchWindow,
    readonly cb: Callbacks,
    dark: boolean,
    initial: Range | null,
  ) {
    this.base = tracks.start;
    this.total = Math.max(tracks.end - tracks.start, 1e-3);
    this.view = initial ? clampView(initial, this.total) : fitRange(0, this.total, this.total, 0.01);
    this.layout = buildLayout(tracks.groups, tracks.tracks, this.collapsed);
    this.pal = makePalette(dark, getComputedStyle(document.documentElement));
    this.listen();
    this.resize();
    this.fetchMinimap();
  }

  destroy(): void {
    cancelAnimationFrame(this.frame);
    if (this.waiting) window.clearTimeout(this.waiting.timer);
    this.cache.clear();
    this.minimapCtl?.abort();
    for (const f of this.cleanup) f();
  }

  // ---- state setters (from React) ----

  setTheme(dark: boolean): void {
    this.pal = makePalette(dark, getComputedStyle(document.documentElement));
    this.redraw();
  }

  setView(v: Range, notify = true): void {
    this.view = clampView(v, this.total);
    if (notify) this.cb.onView(this.view);
    this.redraw();
  }

  fit(): void {
    this.setView(fitRange(0, this.total, this.total, 0.01));
  }

  setSelection(place: TlPlace | null, links: TlLink[] = []): void {
    if (place && place.id !== this.selection?.place.id) this.picked = "event";
    this.selection = place ? { place, links } : null;
    this.redraw();
  }

  setMarks(marks: TlPlace[], current: TlPlace | null): void {
    this.marks = marks;
    this.current = current;
    this.redraw();
  }

  setPath(path: CriticalPath | null): void {
    this.path = path;
    this.redraw();
  }

  setRange(r: Range | null): void {
    this.range = r;
    if (r) this.picked = "range";
    this.redraw();
  }

  setMark(r: Range | null): void {
    this.mark = r;
    this.redraw();
  }

  /** The selection F and M act on (relative µs): the range or the selected event, the one chosen last. */
  selectedSpan(): Range | null {
    const p = this.selection?.place;
    const ev = p ? { t0: p.start - this.base, t1: p.start - this.base + p.dur } : null;
    if (this.picked === "event" && ev) return ev;
    return this.range ?? ev;
  }

  zoomToSelection(): void {
    const s = this.selectedSpan();
    if (s) this.setView(fitRange(s.t0, s.t1, this.total, 0.05));
  }

  /** Mark the selection; M on the marked range itself (or with nothing selected) removes the mark. */
  toggleMark(): void {
    const s = this.selectedSpan();
    const m = this.mark;
    const same = !!s && !!m && Math.abs(s.t0 - m.t0) < 1e-3 && Math.abs(s.t1 - m.t1) < 1e-3;
    this.setMark(s && !same ? s : null);
    this.cb.onMark?.(this.mark);
  }

  /** Bring an event (absolute times) into the view: centred at ~5× its width, fitted with a margin,
   * or just panned to when off screen; and scroll its row into sight. */
  /** Bring an event into view: "centre" zoomed around it, "keep" centred at the current zoom (fitted
   * when wider), "fit" fitted to it, "pan" only when off screen. */
  reveal(p: TlPlace, mode: "centre" | "keep" | "fit" | "pan" = "centre"): void {
    const start = p.start - this.base;
    if (mode === "centre") this.setView(centreOn(start, p.dur, this.view, this.total));
    else if (mode === "keep") this.setView(centreKeepingZoom(start, p.dur, this.view, this.total));
    else if (mode === "fit") this.setView(fitRange(start, start + p.dur, this.total, 0.25));
    else if (start > this.view.t1 || start + p.dur < this.view.t0) {
      const span = this.view.t1 - this.view.t0;
      this.setView({ t0: start + p.dur / 2 - span / 2, t1: start + p.dur / 2 + span / 2 });
    }
    this.scrollToRow(p.track, p.depth);
  }

  scrollToRow(track: number, depth: number): void {
    this.expandFor(track, depth);
    const tp = this.layout.tracks.get(track);
    if (!tp) return;
    const y = tp.y + Math.min(depth, tp.rowsShown - 1) * ROW_H;
    if (y < this.scrollY + 10 || y + ROW_H > this.scrollY + this.mainH - 10) this.setScroll(y - this.mainH / 3);
  }

  /** Open the group and track an event is in, when collapsed away. */
  private expandFor(track: number, depth: number): void {
    const t = this.tracks.tracks.find((x) => x.id === track);
    if (!t) return;
    const keys = [groupKey(t.group), ...(depth > 0 ? [trackKey(t.id)] : [])].filter((k) => this.collapsed.has(k));
    if (!keys.length) return;
    for (const k of keys) this.collapsed = toggle(this.collapsed, k);
    this.layout = buildLayout(this.tracks.groups, this.tracks.tracks, this.collapsed);
  }

  setLabelW(w: number): void {
    const next = Math.round(Math.max(MIN_LABEL_W, Math.min(w, this.cssW - 200, MAX_LABEL_W)));
    if (next === this.labelW) return;
    this.labelW = next;
    try {
      localStorage.setItem(LABEL_W_KEY, String(next));
    } catch {
      // storage refused (private mode): the width lasts for this page
    }
    this.redraw();
  }

  toggleKey(key: string): void {
    this.collapsed = toggle(this.collapsed, key);
    this.layout = buildLayout(this.tracks.groups, this.tracks.tracks, this.collapsed);
    this.setScroll(this.scrollY);
  }

  // ---- geometry ----

  get areaW(): number {
    return Math.max(1, this.cssW - this.labelW);
  }

  /** The trace time (absolute µs) at `x` css px from the left of the tracks or ruler canvas; null over
   * the label column. */
  timeAtX(x: number): number | null {
    return x < this.labelW ? null : this.base + xToTime(this.view, this.areaW, x - this.labelW);
  }

  /** The client x of a trace time (absolute µs), and the client y of an event row's middle (null when
   * the row is not drawn): the test hook's geometry. */
  clientX(t: number): number {
    return this.el.main.getBoundingClientRect().left + LABEL_W + ((t - this.base - this.view.t0) / (this.view.t1 - this.view.t0)) * this.areaW;
  }

  clientRowY(track: number, depth: number): number | null {
    const y = this.rowTop(track, depth);
    return y === null ? null : this.el.main.getBoundingClientRect().top + y + ROW_H / 2;
  }

  private vp(height: number): Viewport {
    return { view: this.view, base: this.base, x0: this.labelW, width: this.areaW, height, scrollY: this.scrollY };
  }

  setScroll(y: number): void {
    this.scrollY = Math.max(0, Math.min(y, this.layout.height - this.mainH + 8));
    this.redraw();
  }

  resize(): void {
    const w = Math.floor(this.el.root.clientWidth);
    const h = Math.floor(this.el.main.parentElement?.clientHeight ?? 400);
    if (w === this.cssW && h === this.mainH) return;
    const fetchMini = this.cssW !== 0 && Math.abs(w - this.cssW) > 200;
    this.cssW = w;
    this.mainH = h;
    this.setScroll(this.scrollY);
    if (fetchMini) this.fetchMinimap();
  }

  /** Where an event is drawn (client coordinates of its box's centre), when it is. */
  locate(id: string): { x: number; y: number } | null {
    const w = this.drawn;
    if (!w) return null;
    const at = id.lastIndexOf(":");
    const kind = w.kinds.indexOf(id.slice(0, at));
    const row = Number(id.slice(at + 1));
    if (kind < 0) return null;
    for (let i = 0; i < w.count; i++) {
      if (w.row[i] !== row || w.kind[i] !== kind) continue;
      const y = this.rowTop(w.track[i]!, w.depth[i]!);
      if (y === null) return null;
      const scale = this.areaW / (this.view.t1 - this.view.t0);
      let a = (w.startUs[i]! - this.base - this.view.t0) * scale;
      let b = a + w.durUs[i]! * scale;
      a = Math.max(a, 0);
      b = Math.min(b, this.areaW);
      if (b < a || y < 0 || y + ROW_H > this.mainH) return null;
      const r = this.el.main.getBoundingClientRect();
      return { x: r.left + this.labelW + (a + b) / 2, y: r.top + y + ROW_H / 2 };
    }
    return null;
  }

  /** The client y of the middle of a label line ("g:<group id>" or "t:<track id>"), when on screen. */
  labelY(key: string): number | null {
    const l = this.layout.lines.find((x) => x.key === key);
    if (!l) return null;
    const y = l.y - this.scrollY + Math.min(l.h, 18) / 2;
    if (y < 0 || y > this.mainH) return null;
    return this.el.main.getBoundingClientRect().top + y;
  }

  private rowTop(track: number, depth: number): number | null {
    const p = this.layout.tracks.get(track);
    if (!p || depth >= p.rowsShown) return null;
    return p.y + depth * ROW_H - this.scrollY;
  }

  /** The event under (x, y) (main canvas CSS pixels). */
  hitTest(x: number, y: number): Hit | null {
    const w = this.drawn;
    if (!w || x < this.labelW) return null;
    const r = rowAt(this.layout, y + this.scrollY);
    if (!r) return null;
    const tp = this.layout.tracks.get(r.track);
    if (!tp || tp.track.kind === "counter") return null;
    const t = this.base + xToTime(this.view, this.areaW, x - this.labelW);
    const tol = (2 * (this.view.t1 - this.view.t0)) / this.areaW;
    let best = -1;
    let bestDist = Infinity;
    for (let i = 0; i < w.count; i++) {
      if (w.track[i] !== r.track || w.depth[i] !== r.depth) continue;
      const s = w.startUs[i]!;
      const e = s + w.durUs[i]!;
      const dist = t < s ? s - t : t > e ? t - e : 0;
      if (dist <= tol && dist < bestDist) {
        best = i;
        bestDist = dist;
        if (dist === 0) break;
      }
    }
    if (best < 0) return null;
    return {
      index: best,
      id: itemId(w, best),
      name: boxName(w.names[w.name[best]!] ?? "", w.cnt[best]!),
      start: w.startUs[best]!,
      dur: w.durUs[best]!,
      count: w.cnt[best]!,
      track: r.track,
      depth: r.depth,
    };
  }

  // ---- data ----

  /** Tracks on screen, and those within one screen height of it (what a request asks for). */
  private wantedTracks(): { need: number[]; want: number[] } {
    const top = this.scrollY;
    const bottom = this.scrollY + this.mainH;
    return { need: tracksIn(this.layout, top, bottom), want: tracksIn(this.layout, top - this.mainH, bottom + this.mainH) };
  }

  private ensureData(need: number[], want: number[]): Entry | undefined {
    const tile = tileFor(this.view, this.areaW, this.total);
    const all = want.length >= this.tracks.tracks.length;
    const wantSet = all ? null : new Set(want);
    let e = this.cache.find(tile.key, need, wantSet);
    if (!e) {
      const param = all ? null : encodeTracks(want);
      const key = `${tile.key}|${param ?? "*"}`;
      if (this.drawn && want.length && !this.settled(key)) return undefined;
      const controller = new AbortController();
      const entry: Entry = { key, tile, tracks: wantSet, data: null, error: null, controller };
      this.cache.put(entry);
      e = entry;
      if (!want.length) {
        // nothing on screen to ask for (every group collapsed): an empty answer
        entry.controller = null;
        entry.data = emptyWindow(this.base + tile.t0, this.base + tile.t1, tile.px);
        return entry;
      }
      this.fetchWindow(this.base + tile.t0, this.base + tile.t1, tile.px, param, controller.signal).then(
        (data) => {
          entry.data = data;
          entry.controller = null;
          this.error = null;
          this.redraw();
        },
        (err: unknown) => {
          if (controller.signal.aborted) return;
          entry.controller = null;
          entry.error = err instanceof Error ? err : new Error(String(err));
          this.error = entry.error;
          this.redraw();
        },
      );
    }
    this.cache.abortOthers(e.key);
    return e;
  }

  /** Whether the request `key` may go now: true once it has been wanted for FETCH_DELAY_MS. */
  private settled(key: string): boolean {
    const w = this.waiting;
    if (w?.key === key) {
      if (!w.due) return false;
      this.waiting = null;
      return true;
    }
    if (w) window.clearTimeout(w.timer);
    const next = { key, due: false, timer: 0 };
    next.timer = window.setTimeout(() => {
      next.due = true;
      this.redraw();
    }, FETCH_DELAY_MS);
    this.waiting = next;
    return false;
  }

  private fetchMinimap(): void {
    this.minimapCtl?.abort();
    const ctl = new AbortController();
    this.minimapCtl = ctl;
    const px = Math.min(4000, Math.max(200, Math.ceil(this.areaW / 256) * 256));
    this.fetchWindow(this.base, this.base + this.total, px, null, ctl.signal).then(
      (w) => {
        this.minimapData = w;
        this.redraw();
      },
      () => undefined,
    );
  }

  // ---- drawing ----

  redraw(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.draw();
    });
  }

  private draw(): void {
    const began = performance.now();
    const { need, want } = this.wantedTracks();
    const entry = this.ensureData(need, want);
    const best = entry?.data ? entry : this.cache.best(this.view, this.base, need);
    this.drawn = best?.data ?? null;
    this.drawnTracks = best?.tracks ?? null;
    const boxes = this.drawMain();
    this.drawRulerCanvas();
    this.drawMinimap();
    this.stats = { items: this.drawn?.count ?? 0, boxes, ms: performance.now() - began, frames: this.stats.frames + 1, labelPaints: this.labels.paints };
    const ready = !!entry?.data && this.drawn === entry.data;
    const state = ready ? "ready" : "loading";
    const err = entry?.error ?? null;
    const detail = this.drawn ? { resolution: this.drawn.resolution, coarsened: this.drawn.coarsened } : null;
    const sig = `${state}|${err?.message ?? ""}|${detail?.coarsened ?? ""}|${detail?.resolution ?? ""}`;
    this.el.root.dataset.state = state;
    this.el.root.dataset.coarsened = detail?.coarsened ? "true" : "false";
    if (sig !== this.lastState) {
      this.lastState = sig;
      this.cb.onState(state, err, detail);
    }
  }

  private drawMain(): number {
    const ctx = setupCanvas(this.el.main, this.cssW, this.mainH);
    if (!ctx) return 0;
    let boxes = 0;
    const pal = this.pal;
    const H = this.mainH;
    const vp = this.vp(H);
    ctx.fillStyle = pal.bg;
    ctx.fillRect(0, 0, this.cssW, H);
    // group header bands and track separators
    const lines = this.layout.lines;
    for (const l of lines) {
      const y = l.y - this.scrollY;
      if (y + l.h < 0 || y > H) continue;
      if (l.kind === "group") {
        ctx.fillStyle = pal.panel;
        ctx.fillRect(0, y, this.cssW, l.h);
      }
      ctx.fillStyle = pal.border;
      ctx.fillRect(0, y + l.h - 1, this.cssW, 1);
    }
    drawGrid(ctx, vp, pal);
    const w = this.drawn;
    if (w) {
      boxes = drawEvents(ctx, w, this.layout, vp, pal, this.scratch);
      for (const [id, tp] of this.layout.tracks) {
        if (tp.track.kind !== "counter") continue;
        const s = w.counters.get(id);
        const y = tp.y - this.scrollY;
        if (!s || y + tp.h < 0 || y > H) continue;
        drawCounter(ctx, s, tp.track.max, y, tp.h - 5, vp, pal);
      }
    }
    // a collapsed group's density strip: from the drawn answer when it holds the group's tracks, else
    // from the overview's answer (collapsing never asks for more events: the answer stays small)
    const density = pal.dark ? "rgba(154,164,174,0.55)" : "rgba(89,99,110,0.45)";
    for (const l of lines) {
      const y = l.y - this.scrollY;
      if (l.kind !== "group" || !l.collapsed || !l.members?.length || y + l.h < 0 || y > H) continue;
      const held = this.drawnTracks;
      const src = w && (held === null || l.members.every((t) => held.has(t))) ? w : this.minimapData;
      if (src) drawDensity(ctx, src, l.members, y + 3, l.h - 6, vp, density);
    }
    this.drawOverlays(ctx, vp);
    // the label column changes with the scroll, the layout, the theme and the size, not with the view
    // nor with the events drawn (a window answer arriving mid-drag must not draw it again)
    const deps = [this.layout, this.pal, this.scrollY];
    this.labels.draw(ctx, deps, this.labelW, H, (c) => drawTrackLabels(c, this.layout, this.scrollY, this.labelW, H, this.pal));
    if (this.error) {
      ctx.fillStyle = pal.accent;
      ctx.font = "12px system-ui, sans-serif";
      ctx.fillText(`Could not load this window: ${this.error.message}`, this.labelW + 8, 16);
    }
    // scrollbar hint
    if (this.layout.height > H) {
      const th = Math.max(20, (H / this.layout.height) * H);
      const ty = (this.scrollY / (this.layout.height - H + 8)) * (H - th);
      ctx.fillStyle = pal.dark ? "rgba(255,255,255,0.25)" : "rgba(0,0,0,0.22)";
      ctx.fillRect(this.cssW - 5, ty, 4, th);
    }
    return boxes;
  }

  private boxOf(p: { track: number; depth: number; start: number; dur: number }): { x: number; y: number; w: number } | null {
    const y = this.rowTop(p.track, p.depth);
    if (y === null) return null;
    const scale = this.areaW / (this.view.t1 - this.view.t0);
    const x = this.labelW + (p.start - this.base - this.view.t0) * scale;
    return { x, y, w: Math.max(1, p.dur * scale) };
  }

  private pathGeometry(vp: Viewport) {
    const scale = vp.width / (this.view.t1 - this.view.t0);
    return {
      x: (t: number) => this.labelW + (t - this.base - this.view.t0) * scale,
      rowTop: (track: number, depth: number) => this.rowTop(track, depth),
      rowH: ROW_H,
      left: this.labelW,
      width: vp.width,
      height: vp.height,
    };
  }

  private drawOverlays(ctx: CanvasRenderingContext2D, vp: Viewport): void {
    const pal = this.pal;
    ctx.save();
    ctx.beginPath();
    ctx.rect(this.labelW, 0, vp.width, vp.height);
    ctx.clip();
    if (this.mark) {
      const scale = vp.width / (this.view.t1 - this.view.t0);
      const a = this.labelW + (this.mark.t0 - this.view.t0) * scale;
      const b = this.labelW + (this.mark.t1 - this.view.t0) * scale;
      ctx.fillStyle = markColour(pal.dark, true);
      ctx.fillRect(a, 0, Math.max(1, b - a), vp.height);
      ctx.fillStyle = markColour(pal.dark, false);
      ctx.fillRect(a - 1, 0, 2, vp.height);
      ctx.fillRect(b - 1, 0, 2, vp.height);
    }
    if (this.range) {
      const scale = vp.width / (this.view.t1 - this.view.t0);
      const a = this.labelW + (this.range.t0 - this.view.t0) * scale;
      const b = this.labelW + (this.range.t1 - this.view.t0) * scale;
      ctx.fillStyle = pal.shade;
      ctx.fillRect(a, 0, b - a, vp.height);
      ctx.fillStyle = pal.accent;
      ctx.fillRect(a, 0, 1, vp.height);
      ctx.fillRect(b - 1, 0, 1, vp.height);
    }
    this.pathBands = this.path ? drawCriticalPath(ctx, this.path, this.pathGeometry(vp), pal.dark) : 0;
    if (this.marks.length) {
      const lo = this.base + this.view.t0;
      const hi = this.base + this.view.t1;
      const boxes: { x: number; y: number; w: number }[] = [];
      for (const m of this.marks) {
        if (m.start > hi || m.start + m.dur < lo) continue;
        const b = this.boxOf(m);
        if (b && b.y + ROW_H >= 0 && b.y <= vp.height) boxes.push(b);
      }
      outlineBoxes(ctx, boxes, pal.accent);
    }
    if (this.current) {
      const b = this.boxOf(this.current);
      if (b) {
        // outside the box, as the marks
        ctx.strokeStyle = pal.accent;
        ctx.lineWidth = 2;
        ctx.strokeRect(b.x - 1.5, b.y - 0.5, Math.max(b.w, 1) + 3, ROW_H + 0.5);
      }
    }
    if (this.selection) {
      const sel = this.boxOf(this.selection.place);
      ctx.strokeStyle = pal.fg;
      ctx.lineWidth = 2;
      if (sel) ctx.strokeRect(sel.x - 1, sel.y, Math.max(sel.w, 2) + 2, ROW_H - 1);
      // flows to linked events
      if (sel) {
        ctx.strokeStyle = pal.accent;
        ctx.fillStyle = pal.accent;
        ctx.lineWidth = 1.5;
        for (const l of this.selection.links) {
          const b = this.boxOf(l);
          if (!b) continue;
          const fromSel = l.start >= this.selection.place.start;
          const [ax, ay, bx, by] = fromSel
            ? [sel.x, sel.y + ROW_H / 2, b.x, b.y + ROW_H / 2]
            : [b.x, b.y + ROW_H / 2, sel.x, sel.y + ROW_H / 2];
          arrow(ctx, ax, ay, bx, by);
        }
      }
    }
    ctx.restore();
  }

  private drawRulerCanvas(): void {
    const ctx = setupCanvas(this.el.ruler, this.cssW, STEPS_H + AXIS_H);
    if (!ctx) return;
    const vp = this.vp(STEPS_H + AXIS_H);
    const ticks = JSON.stringify(drawRuler(ctx, this.tracks.steps, vp, this.cssW, this.pal, this.tracks.steps.length ? "Steps" : ""));
    // the axis' labels, for tests and screen readers
    if (this.el.root.dataset.ticks !== ticks) this.el.root.dataset.ticks = ticks;
    ctx.fillStyle = this.pal.muted;
    ctx.font = "11px system-ui, sans-serif";
    ctx.fillText(`${formatTime(this.view.t1 - this.view.t0)} shown`, 6, STEPS_H + AXIS_H / 2);
    const scale = vp.width / (this.view.t1 - this.view.t0);
    for (const [r, colour] of [[this.mark, markColour(this.pal.dark, true)], [this.range, this.pal.shade]] as const) {
      if (!r) continue;
      const a = Math.max(this.labelW, this.labelW + (r.t0 - this.view.t0) * scale);
      const b = Math.min(this.cssW, this.labelW + (r.t1 - this.view.t0) * scale);
      if (b > a) {
        ctx.fillStyle = colour;
        ctx.fillRect(a, 0, b - a, STEPS_H + AXIS_H);
      }
    }
  }

  private drawMinimap(): void {
    const ctx = setupCanvas(this.el.minimap, this.cssW, MINIMAP_H);
    if (!ctx) return;
    // the density and utilization change with the answer, the theme and the size, not with the view
    this.minimapLayer.draw(ctx, [this.minimapData, this.pal, this.labelW], this.cssW, MINIMAP_H, (c) =>
      drawMinimapBase(c, this.minimapData, { pal: this.pal, cssW: this.cssW, areaW: this.areaW, labelW: this.labelW, total: this.total, base: this.base, tracks: this.tracks.tracks }),
    );
    const pal = this.pal;
    const W = this.areaW;
    // the visible window
    const a = this.labelW + (this.view.t0 / this.total) * W;
    const b = this.labelW + (this.view.t1 / this.total) * W;
    ctx.fillStyle = pal.shade;
    ctx.fillRect(a, 0, Math.max(2, b - a), MINIMAP_H);
    ctx.strokeStyle = pal.accent;
    ctx.lineWidth = 1.5;
    ctx.strokeRect(a, 1, Math.max(2, b - a), MINIMAP_H - 2);
  }

  // ---- input ----

  private listen(): void {
    const on = listener(this.cleanup);
    const ro = new ResizeObserver(() => this.resize());
    ro.observe(this.el.root);
    if (this.el.main.parentElement) ro.observe(this.el.main.parentElement);
    this.cleanup.push(() => ro.disconnect());
    attachPointer(this, on);
    attachKeys(this, on, this.cleanup);
  }
}
