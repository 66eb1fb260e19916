// Typed readers for the timeline routes (docs/api.md, "Timeline (the Trace view)"). The views read the
// answers through these functions only; test/apiDoc.test.ts runs them over the documented examples.

import { arr, get, isObj, num, str } from "../lib/pick";
import type { Frame } from "../lib/source";
import { readFrames } from "../lib/source";

export interface TlGroup {
  id: string;
  name: string;
  kind: "host" | "device" | string;
}

export interface TlTrack {
  id: number;
  group: string;
  kind: "thread" | "stream" | "counter" | string;
  name: string;
  rows: number;
  extraRows: number;
  moved: number;
  events: number;
  unit: string;
  max: number;
}

export interface TlStep {
  number: number;
  name: string;
  /** the host range (ProfilerStep#N) */
  start: number;
  end: number;
  /** the step extended to the end of its device work (the Overview's step time); null when not given */
  deviceStart: number | null;
  deviceEnd: number | null;
}

export interface TlTracks {
  start: number;
  end: number;
  eventCount: number;
  moved: number;
  kinds: string[];
  groups: TlGroup[];
  tracks: TlTrack[];
  steps: TlStep[];
}

export function readTracks(d: unknown): TlTracks {
  const tracks = arr(d, "tracks").map((t) => {
    const kind = str(t, "kind");
    return {
      id: num(t, "id") ?? 0,
      group: str(t, "group"),
      kind,
      name: str(t, "name"),
      rows: kind === "counter" ? 1 : Math.max(1, num(t, "rows") ?? 1),
      extraRows: num(t, "extra_rows") ?? 0,
      moved: num(t, "moved") ?? 0,
      events: num(t, "events") ?? 0,
      unit: str(t, "unit"),
      max: num(t, "max") ?? 0,
    };
  });
  return {
    start: num(d, "start_us") ?? 0,
    end: num(d, "end_us") ?? 0,
    eventCount: num(d, "event_count") ?? 0,
    moved: num(d, "moved") ?? tracks.reduce((s, t) => s + t.moved, 0),
    kinds: arr(d, "kinds").map(String),
    groups: arr(d, "groups").map((g) => ({ id: str(g, "id"), name: str(g, "name"), kind: str(g, "kind") })),
    tracks,
    steps: arr(d, "steps").map((s) => ({
      number: num(s, "number") ?? 0,
      name: str(s, "name"),
      start: num(s, "start_us") ?? 0,
      end: num(s, "end_us") ?? 0,
      deviceStart: num(s, "device_start_us") ?? null,
      deviceEnd: num(s, "device_end_us") ?? null,
    })),
  };
}

/** Counter series of one track: times (absolute µs) and values, the last point before the window first. */
export interface TlSeries {
  ts: Float64Array;
  values: Float64Array;
}

export function readCounters(d: unknown): Map<number, TlSeries> {
  const out = new Map<number, TlSeries>();
  const c = get(d, "counters");
  if (!isObj(c)) return out;
  for (const [k, v] of Object.entries(c)) {
    const ts = arr(v, "ts").map(Number);
    const values = arr(v, "values").map(Number);
    const n = Math.min(ts.length, values.length);
    out.set(Number(k), { ts: Float64Array.from(ts.slice(0, n)), values: Float64Array.from(values.slice(0, n)) });
  }
  return out;
}

/** One window answer, as columns (the binary format's layout; the JSON answer is converted to it). */
export interface TlWindow {
  start: number;
  end: number;
  px: number;
  resolution: number;
  /** the server coarsened `resolution` beyond (end − start) / px to stay under its cap on items */
  coarsened: boolean;
  count: number;
  names: string[];
  kinds: string[];
  counters: Map<number, TlSeries>;
  startUs: Float64Array;
  durUs: Float32Array;
  row: Int32Array;
  name: Uint32Array;
  cnt: Uint32Array;
  /** per box, the name (index into names) covering most of its time: its colour */
  major: Uint32Array;
  track: Uint16Array;
  depth: Uint16Array;
  kind: Uint8Array;
}

/** The `format=json` answer as columns (used by scripts and tests; the page asks for `format=bin`). */
export function readWindowJson(d: unknown): TlWindow {
  const items = arr(d, "items");
  const n = items.length;
  const names: string[] = [];
  const nameIdx = new Map<string, number>();
  const kinds: string[] = [];
  const kindIdx = new Map<string, number>();
  const w: TlWindow = {
    start: num(d, "start_us") ?? 0,
    end: num(d, "end_us") ?? 0,
    px: num(d, "px") ?? 0,
    resolution: num(d, "resolution_us") ?? 0,
    coarsened: get(d, "coarsened") === true,
    count: n,
    names,
    kinds,
    counters: readCounters(d),
    startUs: new Float64Array(n),
    durUs: new Float32Array(n),
    row: new Int32Array(n),
    name: new Uint32Array(n),
    cnt: new Uint32Array(n),
    major: new Uint32Array(n),
    track: new Uint16Array(n),
    depth: new Uint16Array(n),
    kind: new Uint8Array(n),
  };
  const nameCode = (nm: string): number => {
    let ni = nameIdx.get(nm);
    if (ni === undefined) {
      ni = names.push(nm) - 1;
      nameIdx.set(nm, ni);
    }
    return ni;
  };
  items.forEach((it, i) => {
    const ni = nameCode(str(it, "name"));
    const major = get(it, "major");
    const id = get(it, "id");
    let row = -1;
    let kind = "";
    if (typeof id === "string") {
      const at = id.lastIndexOf(":");
      kind = id.slice(0, at);
      row = Number(id.slice(at + 1));
    }
    let ki = kindIdx.get(kind);
    if (ki === undefined) {
      ki = kinds.push(kind) - 1;
      kindIdx.set(kind, ki);
    }
    w.startUs[i] = num(it, "start_us") ?? 0;
    w.durUs[i] = num(it, "dur_us") ?? 0;
    w.row[i] = row;
    w.name[i] = ni;
    w.cnt[i] = num(it, "count") ?? 1;
    w.major[i] = typeof major === "string" ? nameCode(major) : ni;
    w.track[i] = num(it, "track") ?? 0;
    w.depth[i] = num(it, "depth") ?? 0;
    w.kind[i] = ki;
  });
  return w;
}

/** The id of item i of a window ("<kind>:<row>"), null for a merged box. */
export function itemId(w: TlWindow, i: number): string | null {
  const row = w.row[i] ?? -1;
  if (row < 0) return null;
  return `${w.kinds[w.kind[i] ?? 0] ?? ""}:${row}`;
}

/** Where an event sits: what search, longest and links answer. */
export interface TlPlace {
  id: string;
  name: string;
  track: number;
  depth: number;
  start: number;
  dur: number;
}

export function readPlace(d: unknown): TlPlace {
  return {
    id: str(d, "id"),
    name: str(d, "name"),
    track: num(d, "track") ?? 0,
    depth: num(d, "depth") ?? 0,
    start: num(d, "start_us") ?? 0,
    dur: num(d, "dur_us") ?? 0,
  };
}

export interface TlLink extends TlPlace {
  relation: string;
}

export interface TlEvent extends TlPlace {
  kind: string;
  category: string;
  self: number | null;
  args: [string, string][];
  frames: Frame[];
  links: TlLink[];
  /** a replayed kernel whose capture was merged: the capture trace and the id of its launch call there */
  capture: { file: string; launch: string } | null;
}

export function readEvent(d: unknown): TlEvent {
  const args = get(d, "args");
  return {
    ...readPlace(d),
    kind: str(d, "kind"),
    category: str(d, "category"),
    self: num(d, "self_us"),
    args: isObj(args)
      ? Object.entries(args).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)] as [string, string])
      : [],
    frames: readFrames(get(d, "frames") ?? []),
    links: arr(d, "links").map((l) => ({ ...readPlace(l), relation: str(l, "relation") })),
    capture: readCaptureLink(get(d, "capture")),
  };
}

function readCaptureLink(c: unknown): { file: string; launch: string } | null {
  if (!isObj(c)) return null;
  const file = str(c, "file");
  const launch = str(c, "launch");
  return file && launch ? { file, launch } : null;
}

export interface TlSearch {
  query: string;
  total: number;
  /** the rank of `matches[0]` among all matches (in start-time order) */
  offset: number;
  /** the rank of the first match at or after the `from_us` asked for (`total` when none); null unasked */
  fromRank: number | null;
  truncated: boolean;
  matches: TlPlace[];
}

export function readSearch(d: unknown): TlSearch {
  const matches = arr(d, "matches").map(readPlace);
  return {
    query: str(d, "query"),
    total: num(d, "total") ?? matches.length,
    offset: num(d, "offset") ?? 0,
    fromRank: num(d, "from_rank") ?? null,
    truncated: get(d, "truncated") === true,
    matches,
  };
}

export interface TlAggRow {
  name: string;
  count: number;
  total: number;
  self: number | null;
  mean: number;
}

export interface TlAggregate {
  start: number;
  end: number;
  events: number;
  rows: TlAggRow[];
}

export function readAggregate(d: unknown): TlAggregate {
  return {
    start: num(d, "start_us") ?? 0,
    end: num(d, "end_us") ?? 0,
    events: num(d, "events") ?? 0,
    rows: arr(d, "rows").map((r) => {
      const count = num(r, "count") ?? 0;
      const total = num(r, "total_us") ?? 0;
      return { name: str(r, "name"), count, total, self: num(r, "self_us"), mean: num(r, "mean_us") ?? (count ? total / count : 0) };
    }),
  };
}
