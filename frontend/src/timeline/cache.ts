// Window cache. The visible range is mapped to a tile of a power-of-two grid: tile width W = 2^level µs
// with the visible span ≤ W, and the window fetched covers three tiles around the view, at a resolution
// fixed by the level (so small pans and zooms within a level re-use the answer). Answers are kept in an
// LRU; while a finer answer is on its way the best cached answer covering the view is drawn.
//
// Only the tracks on screen (and a margin around them) are asked for: an entry remembers its track set,
// and an answer for a tile serves any later view of that tile whose visible tracks it holds (scrolling
// within the margin, collapsing a group) unless the server had to coarsen it and a smaller track set
// could get a finer one.

import type { Range } from "./nav";
import type { TlWindow } from "./api";

export interface Tile {
  key: string;
  level: number;
  index: number;
  /** relative µs */
  t0: number;
  t1: number;
  px: number;
}

/** Pixel widths are rounded up to a multiple of this, so resizing by a few pixels re-uses answers. */
const PX_QUANTUM = 256;
export const MAX_PX = 20000;

/** The tile to fetch for a view `width` CSS pixels wide (pixels per µs ≥ 2 × the screen's at worst). */
export function tileFor(v: Range, width: number, total: number): Tile {
  const span = Math.max(v.t1 - v.t0, 1e-6);
  const level = Math.ceil(Math.log2(span));
  const w = Math.pow(2, level);
  const index = Math.floor(v.t0 / w);
  const pxPerTile = Math.ceil(Math.max(width, 1) / PX_QUANTUM) * PX_QUANTUM * 2;
  let t0 = (index - 1) * w;
  let t1 = (index + 2) * w;
  // nothing outside the profile: cut the window (the cut is the same for a given tile)
  const lo = Math.min(0, v.t0);
  const hi = Math.max(total, v.t1);
  let px = pxPerTile * 3;
  if (t0 < lo || t1 > hi) {
    const a = Math.max(t0, lo);
    const b = Math.min(t1, hi);
    px = Math.max(1, Math.round((px * (b - a)) / (t1 - t0)));
    t0 = a;
    t1 = b;
  }
  px = Math.min(MAX_PX, px);
  return { key: `${level}:${index}:${pxPerTile}`, level, index, t0, t1, px };
}

/** Track ids as the `tracks=` parameter: ascending, runs of consecutive ids written as ranges ("0-4,9"). */
export function encodeTracks(ids: Iterable<number>): string {
  const sorted = [...new Set(ids)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(j > i ? `${sorted[i]}-${sorted[j]}` : `${sorted[i]}`);
    i = j + 1;
  }
  return parts.join(",");
}

export interface Entry {
  /** tile key and track set */
  key: string;
  tile: Tile;
  /** the tracks asked for; null: every track */
  tracks: ReadonlySet<number> | null;
  data: TlWindow | null;
  error: Error | null;
  controller: AbortController | null;
}

export class WindowCache {
  private readonly map = new Map<string, Entry>();
  constructor(private readonly limit = 24) {}

  get(key: string): Entry | undefined {
    const e = this.map.get(key);
    if (e) {
      this.map.delete(key);
      this.map.set(key, e);
    }
    return e;
  }

  /** The entry that serves tile `tileKey` for the tracks `need` (on screen) when the next request
   * would ask for `want` (⊇ need): a loaded answer holding every track of `need` (a coarsened one only
   * when it holds no more tracks than `want`: fewer could not be finer), else one on its way, else a
   * failed one (its error stays until the view changes tile). */
  find(tileKey: string, need: readonly number[], want: ReadonlySet<number> | null): Entry | undefined {
    let pending: Entry | undefined;
    let failed: Entry | undefined;
    for (const e of this.map.values()) {
      if (e.tile.key !== tileKey || !holds(e.tracks, need)) continue;
      if (e.data) {
        const wantSize = want ? want.size : Infinity;
        const size = e.tracks ? e.tracks.size : Infinity;
        if (!e.data.coarsened || size <= wantSize) return this.get(e.key);
      } else if (e.controller) pending ??= e;
      else if (e.error) failed ??= e;
    }
    const e = pending ?? failed;
    return e ? this.get(e.key) : undefined;
  }

  put(e: Entry): void {
    this.map.delete(e.key);
    this.map.set(e.key, e);
    while (this.map.size > this.limit) {
      const oldest = this.map.keys().next().value;
      if (oldest === undefined) break;
      this.map.get(oldest)?.controller?.abort();
      this.map.delete(oldest);
    }
  }

  delete(key: string): void {
    this.map.delete(key);
  }

  /** Abort every request still running except the one for `keep`, and forget those entries. */
  abortOthers(keep: string): void {
    for (const [k, e] of this.map) {
      if (k !== keep && e.data === null && e.controller) {
        e.controller.abort();
        this.map.delete(k);
      }
    }
  }

  /** The loaded answer to draw for a view: the finest one covering it (holding the tracks `need`
   * first), else the one overlapping most. */
  best(v: Range, base: number, need: readonly number[] = []): Entry | null {
    let best: Entry | null = null;
    let bestScore = -Infinity;
    for (const e of this.map.values()) {
      if (!e.data) continue;
      const a = e.data.start - base;
      const b = e.data.end - base;
      const overlap = Math.min(b, v.t1) - Math.max(a, v.t0);
      if (overlap <= 0) continue;
      const covers = a <= v.t0 && b >= v.t1;
      // covering answers first, then finer resolution; partial ones by overlap
      let score = covers ? 1e12 - Math.log2(Math.max(e.data.resolution, 1e-9)) : overlap / (v.t1 - v.t0);
      if (holds(e.tracks, need)) score += 1e13;
      if (score > bestScore) {
        bestScore = score;
        best = e;
      }
    }
    return best;
  }

  clear(): void {
    for (const e of this.map.values()) e.controller?.abort();
    this.map.clear();
  }

  get size(): number {
    return this.map.size;
  }
}

function holds(tracks: ReadonlySet<number> | null, need: readonly number[]): boolean {
  return tracks === null || need.every((t) => tracks.has(t));
}
