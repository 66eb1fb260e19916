// Track list → vertical layout: group headers, then each track's rows (one per nesting depth), with
// collapse state. Positions are CSS pixels from the top of the track area (before scrolling).

import type { TlGroup, TlTrack } from "./api";

export const GROUP_H = 22;
export const ROW_H = 17;
export const COUNTER_H = 34;
export const TRACK_PAD = 4;

export interface TrackPlace {
  track: TlTrack;
  /** top of the track's first row */
  y: number;
  h: number;
  /** rows drawn: all when expanded, only depth 0 when collapsed */
  rowsShown: number;
  collapsed: boolean;
}

export interface LayoutLine {
  kind: "group" | "track";
  key: string;
  y: number;
  h: number;
  label: string;
  collapsed: boolean;
  /** false for a one-row track: nothing to collapse */
  collapsible: boolean;
  group?: TlGroup;
  /** a group's event tracks (not counters): what its density strip shows while it is collapsed */
  members?: number[];
  place?: TrackPlace;
}

export interface Layout {
  lines: LayoutLine[];
  tracks: Map<number, TrackPlace>;
  height: number;
}

export const groupKey = (id: string) => `g:${id}`;
export const trackKey = (id: number) => `t:${id}`;

export function buildLayout(groups: TlGroup[], tracks: TlTrack[], collapsed: ReadonlySet<string>): Layout {
  const lines: LayoutLine[] = [];
  const places = new Map<number, TrackPlace>();
  let y = 0;
  const byGroup = new Map<string, TlTrack[]>();
  for (const t of tracks) {
    const list = byGroup.get(t.group) ?? [];
    list.push(t);
    byGroup.set(t.group, list);
  }
  // groups the track list names but the group list lacks still get a header
  const allGroups = [...groups];
  for (const g of byGroup.keys()) if (!groups.some((x) => x.id === g)) allGroups.push({ id: g, name: g, kind: "" });
  for (const g of allGroups) {
    const list = byGroup.get(g.id) ?? [];
    const gc = collapsed.has(groupKey(g.id));
    const members = list.filter((t) => t.kind !== "counter").map((t) => t.id);
    lines.push({ kind: "group", key: groupKey(g.id), y, h: GROUP_H, label: g.name, collapsed: gc, collapsible: list.length > 0, group: g, members });
    y += GROUP_H;
    if (gc) continue;
    for (const t of list) {
      const isCounter = t.kind === "counter";
      const tc = !isCounter && t.rows > 1 && collapsed.has(trackKey(t.id));
      const rowsShown = isCounter ? 1 : tc ? 1 : t.rows;
      const h = isCounter ? COUNTER_H : rowsShown * ROW_H + TRACK_PAD;
      const place: TrackPlace = { track: t, y: y + (isCounter ? 2 : TRACK_PAD / 2), h, rowsShown, collapsed: tc };
      places.set(t.id, place);
      lines.push({ kind: "track", key: trackKey(t.id), y, h, label: t.name, collapsed: tc, collapsible: !isCounter && t.rows > 1, place });
      y += h;
    }
  }
  return { lines, tracks: places, height: y };
}

/** The y of an event row's top, or null when the row is not drawn (collapsed away). */
export function rowY(layout: Layout, track: number, depth: number): number | null {
  const p = layout.tracks.get(track);
  if (!p || depth >= p.rowsShown) return null;
  return p.y + depth * ROW_H;
}

/** The line at y (track-area pixels), by binary search. */
export function lineAt(layout: Layout, y: number): LayoutLine | null {
  const ls = layout.lines;
  let lo = 0;
  let hi = ls.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const l = ls[mid];
    if (!l) break;
    if (y < l.y) hi = mid - 1;
    else if (y >= l.y + l.h) lo = mid + 1;
    else return l;
  }
  return null;
}

/** Track and depth at y, when y is on an event row. */
export function rowAt(layout: Layout, y: number): { track: number; depth: number } | null {
  const l = lineAt(layout, y);
  if (!l || l.kind !== "track" || !l.place) return null;
  const p = l.place;
  if (p.track.kind === "counter") return { track: p.track.id, depth: 0 };
  const d = Math.floor((y - p.y) / ROW_H);
  if (d < 0 || d >= p.rowsShown) return null;
  return { track: p.track.id, depth: d };
}

export function toggle(set: ReadonlySet<string>, key: string): Set<string> {
  const next = new Set(set);
  if (next.has(key)) next.delete(key);
  else next.add(key);
  return next;
}

/** Ids of the tracks whose lines overlap [y0, y1) (track-area pixels), in layout order. */
export function tracksIn(layout: Layout, y0: number, y1: number): number[] {
  const out: number[] = [];
  for (const l of layout.lines) {
    if (l.kind === "track" && l.place && l.y < y1 && l.y + l.h > y0) out.push(l.place.track.id);
  }
  return out;
}
