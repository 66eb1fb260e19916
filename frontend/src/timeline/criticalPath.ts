// One step's critical path drawn over the timeline (the `timeline/critical_path` route, docs/api.md;
// definition in docs/metrics.md "Critical path"): each segment as a band along the row of the event it
// lies on, coloured by its kind, and a connector where the path moves from one row to another.

import { arr, get, isObj, num, str } from "../lib/pick";

export const PATH_KINDS = ["host", "launch", "device", "sync", "idle"] as const;
export type PathKind = (typeof PATH_KINDS)[number];

export interface PathSegment {
  kind: PathKind;
  name: string;
  /** absolute µs on the trace's clock */
  start: number;
  end: number;
  /** the row it lies on; null when it lies on none (segments merged past the answer's limit) */
  track: number | null;
  depth: number | null;
}

export interface CriticalPath {
  step: number;
  start: number;
  end: number;
  boundBy: string;
  byKind: Record<PathKind, number>;
  segments: PathSegment[];
}

function kindOf(v: string): PathKind {
  return (PATH_KINDS as readonly string[]).includes(v) ? (v as PathKind) : "host";
}

export function readCriticalPath(d: unknown): CriticalPath {
  const byKind = Object.fromEntries(PATH_KINDS.map((k) => [k, num(get(d, "by_kind"), k) ?? 0])) as Record<PathKind, number>;
  const segments = arr(get(d, "segments"))
    .filter(isObj)
    .map((s) => ({
      kind: kindOf(str(s, "kind")),
      name: str(s, "name"),
      start: num(s, "start_us") ?? 0,
      end: num(s, "end_us") ?? 0,
      track: num(s, "track"),
      depth: num(s, "depth"),
    }));
  return { step: num(d, "step") ?? 0, start: num(d, "start_us") ?? 0, end: num(d, "end_us") ?? 0, boundBy: str(d, "bound_by"), byKind, segments };
}

/** Where the path is drawn: x of an absolute time, the top of a row (null when hidden or collapsed). */
export interface PathGeometry {
  x(t: number): number;
  rowTop(track: number, depth: number): number | null;
  rowH: number;
  /** the drawing area's left edge, width and height (css px) */
  left: number;
  width: number;
  height: number;
}

export interface PathBox {
  kind: PathKind;
  x: number;
  y: number;
  w: number;
  h: number;
}

/** The bands of the segments that overlap the area, and the connectors (x, y from, y to) where
 * consecutive drawn segments lie on different rows. */
export function pathShapes(path: CriticalPath, g: PathGeometry): { boxes: PathBox[]; links: [number, number, number][] } {
  const boxes: PathBox[] = [];
  const links: [number, number, number][] = [];
  let prev: { y: number; end: number } | null = null;
  for (const s of path.segments) {
    const top = s.track === null || s.depth === null ? null : g.rowTop(s.track, s.depth);
    if (top === null) {
      prev = null;
      continue;
    }
    const y = top + 1;
    const a = g.x(s.start);
    const b = g.x(s.end);
    if (prev && prev.y !== y && prev.end === s.start) {
      const lx = g.x(s.start);
      if (lx >= g.left && lx <= g.left + g.width) links.push([lx, prev.y + g.rowH / 2, y + g.rowH / 2]);
    }
    prev = { y, end: s.end };
    if (b < g.left || a > g.left + g.width || y + g.rowH < 0 || y > g.height) continue;
    const x0 = Math.max(a, g.left - 2);
    const x1 = Math.min(b, g.left + g.width + 2);
    boxes.push({ kind: s.kind, x: x0, y, w: Math.max(2, x1 - x0), h: g.rowH - 2 });
  }
  return { boxes, links };
}

/** Colours per kind: the band's outline and its translucent fill. */
export function pathColour(kind: PathKind, dark: boolean, fill: boolean): string {
  const rgb: Record<PathKind, string> = {
    host: dark ? "120,200,255" : "0,110,200",
    launch: dark ? "255,190,90" : "200,120,0",
    device: dark ? "255,110,110" : "200,30,30",
    sync: dark ? "210,140,255" : "130,40,190",
    idle: dark ? "180,180,180" : "110,110,110",
  };
  return `rgba(${rgb[kind]},${fill ? 0.28 : 0.95})`;
}

/** Draws the path; answers the number of bands drawn. */
export function drawCriticalPath(ctx: CanvasRenderingContext2D, path: CriticalPath, g: PathGeometry, dark: boolean): number {
  const { boxes, links } = pathShapes(path, g);
  ctx.save();
  ctx.lineWidth = 2;
  for (const b of boxes) {
    ctx.fillStyle = pathColour(b.kind, dark, true);
    ctx.fillRect(b.x, b.y, b.w, b.h);
    ctx.strokeStyle = pathColour(b.kind, dark, false);
    ctx.strokeRect(b.x + 1, b.y + 1, Math.max(1, b.w - 2), b.h - 2);
  }
  ctx.strokeStyle = dark ? "rgba(255,255,255,0.8)" : "rgba(0,0,0,0.75)";
  ctx.setLineDash([3, 2]);
  ctx.lineWidth = 1.5;
  for (const [x, y0, y1] of links) {
    ctx.beginPath();
    ctx.moveTo(x, y0);
    ctx.lineTo(x, y1);
    ctx.stroke();
  }
  ctx.restore();
  return boxes.length;
}
