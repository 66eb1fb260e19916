// The timeline's pure parts: binary window decoding, zoom/pan math, the time axis, the track layout and
// the window cache's tiles.
import { describe, expect, it } from "vitest";
import { itemId } from "../src/timeline/api";
import { type Entry, WindowCache, encodeTracks, tileFor } from "../src/timeline/cache";
import { DecodeError, decodeWindow, encodeWindow } from "../src/timeline/decode";
import { COUNTER_H, GROUP_H, ROW_H, TRACK_PAD, buildLayout, groupKey, rowAt, rowY, trackKey, tracksIn } from "../src/timeline/layout";
import { MIN_SPAN, centreOn, clampView, formatTime, pan, tickStep, ticks, timeToX, xToTime, zoomAt } from "../src/timeline/nav";
import { boxName, colorOf, counterValueAt, drawCounter, fitText, isMixed, makePalette, MEMCPY, MEMSET } from "../src/timeline/render";
import { parseFind, timelineStatus } from "../src/views/Trace";

const header = {
  start_us: 1000,
  end_us: 2000,
  px: 500,
  resolution_us: 2,
  names: ["aten::mm", "12 events"],
  kinds: ["op", "dev"],
  counters: { "9": { ts: [1000, 1500], values: [0.5, 0.7] } },
};

describe("binary window", () => {
  it("decodes every column over the buffer", () => {
    const buf = encodeWindow(header, [
      { start: 1100.5, dur: 0.25, row: 17, name: 0, count: 1, track: 0, depth: 2, kind: 0 },
      { start: 1500, dur: 30, row: -1, name: 1, count: 12, major: 0, track: 5, depth: 0, kind: 1 },
      { start: 1700, dur: 1, row: 3, name: 0, count: 1, track: 65535, depth: 7, kind: 1 },
    ]);
    const w = decodeWindow(buf);
    expect(w).toMatchObject({ start: 1000, end: 2000, px: 500, resolution: 2, coarsened: false, count: 3, names: header.names, kinds: header.kinds });
    expect(decodeWindow(encodeWindow({ ...header, coarsened: true }, [])).coarsened).toBe(true);
    expect([...w.startUs]).toEqual([1100.5, 1500, 1700]);
    expect([...w.durUs]).toEqual([0.25, 30, 1]);
    expect([...w.row]).toEqual([17, -1, 3]);
    expect([...w.name]).toEqual([0, 1, 0]);
    expect([...w.cnt]).toEqual([1, 12, 1]);
    expect([...w.major]).toEqual([0, 0, 0]);
    expect([...w.track]).toEqual([0, 5, 65535]);
    expect([...w.depth]).toEqual([2, 0, 7]);
    expect([...w.kind]).toEqual([0, 1, 1]);
    // views, not copies
    expect(w.startUs.buffer).toBe(buf);
    expect(w.kind.buffer).toBe(buf);
    expect(itemId(w, 0)).toBe("op:17");
    expect(itemId(w, 1)).toBeNull();
    expect(itemId(w, 2)).toBe("dev:3");
    expect([...(w.counters.get(9)?.values ?? [])]).toEqual([0.5, 0.7]);
  });
  it("pads the header to 8 bytes", () => {
    const buf = encodeWindow({ ...header, names: ["x"] }, []);
    const h = new DataView(buf).getUint32(4, true);
    expect((8 + h) % 8).toBe(0);
    expect(decodeWindow(buf).count).toBe(0);
  });
  it("rejects what is not a window", () => {
    expect(() => decodeWindow(new TextEncoder().encode('{"error": "x"}').buffer as ArrayBuffer)).toThrow(DecodeError);
    const buf = encodeWindow(header, [{ start: 1, dur: 1, row: 1, name: 0, count: 1, track: 0, depth: 0, kind: 0 }]);
    expect(() => decodeWindow(buf.slice(0, buf.byteLength - 4))).toThrow(/expected/);
  });
});

describe("zoom and pan", () => {
  const total = 1000;
  it("zooming at the cursor keeps the time under it in place", () => {
    const v = { t0: 100, t1: 300 };
    const width = 800;
    const x = 600;
    const t = xToTime(v, width, x);
    for (const f of [0.5, 0.8, 1.25]) {
      const z = zoomAt(v, f, t, total);
      expect(timeToX(z, width, t)).toBeCloseTo(x, 6);
      expect(z.t1 - z.t0).toBeCloseTo(200 * f, 6);
    }
  });
  it("clamps to the profile (with a small margin) and to the narrowest span", () => {
    expect(clampView({ t0: -500, t1: -400 }, total)).toEqual({ t0: -20, t1: 80 });
    expect(clampView({ t0: 950, t1: 1100 }, total)).toEqual({ t0: 870, t1: 1020 });
    expect(clampView({ t0: -5000, t1: 5000 }, total)).toEqual({ t0: -20, t1: 1020 });
    const z = zoomAt({ t0: 10, t1: 10.02 }, 0.01, 10.01, total);
    expect(z.t1 - z.t0).toBeCloseTo(MIN_SPAN, 9);
    expect(pan({ t0: 0, t1: 100 }, 2000, total)).toEqual({ t0: 920, t1: 1020 });
  });
  it("centres an event at least 5 times its duration wide", () => {
    const v = centreOn(500, 10, { t0: 0, t1: 2000 }, 2000);
    expect(v.t1 - v.t0).toBeCloseTo(50);
    expect((v.t0 + v.t1) / 2).toBeCloseTo(505);
    // a view already wide enough (but not much wider) is kept
    const w = centreOn(500, 10, { t0: 0, t1: 100 }, total);
    expect(w.t1 - w.t0).toBeCloseTo(100);
  });
});

describe("time axis", () => {
  it("ticks are 1, 2 or 5 × 10^k, at least minPx apart", () => {
    expect(tickStep(1000, 1000, 90)).toBe(100);
    expect(tickStep(1000, 1000, 150)).toBe(200);
    expect(tickStep(1000, 1000, 300)).toBe(500);
    expect(tickStep(0.5, 1000, 100)).toBeCloseTo(0.05);
    expect(ticks({ t0: 0.5, t1: 3.2 }, 1)).toEqual([1, 2, 3]);
  });
  it("formats times in ns, µs, ms, s", () => {
    expect(formatTime(0.5)).toBe("500 ns");
    expect(formatTime(12.5)).toBe("12.5 µs");
    expect(formatTime(1234.6)).toBe("1.235 ms");
    expect(formatTime(2.5e6)).toBe("2.5 s");
  });
});

describe("layout", () => {
  const groups = [
    { id: "p:1", name: "Process 1", kind: "host" },
    { id: "d:0", name: "GPU 0", kind: "device" },
  ];
  const t = (id: number, group: string, kind: string, rows: number) => ({ id, group, kind, name: `t${id}`, rows, extraRows: 0, moved: 0, events: 1, unit: "", max: 1 });
  const tracks = [t(0, "p:1", "thread", 3), t(1, "p:1", "thread", 1), t(5, "d:0", "stream", 1), t(9, "d:0", "counter", 1)];
  it("stacks groups, tracks and rows", () => {
    const l = buildLayout(groups, tracks, new Set());
    expect(l.lines.map((x) => x.key)).toEqual(["g:p:1", "t:0", "t:1", "g:d:0", "t:5", "t:9"]);
    const h0 = 3 * ROW_H + TRACK_PAD;
    const h1 = ROW_H + TRACK_PAD;
    expect(l.height).toBe(GROUP_H * 2 + h0 + h1 * 2 + COUNTER_H);
    expect(rowY(l, 0, 2)).toBe(GROUP_H + TRACK_PAD / 2 + 2 * ROW_H);
    expect(rowAt(l, GROUP_H + TRACK_PAD / 2 + ROW_H + 1)).toEqual({ track: 0, depth: 1 });
    expect(rowAt(l, 1)).toBeNull(); // a group header
    expect(l.lines.find((x) => x.key === "t:1")?.collapsible).toBe(false);
  });
  it("lists the tracks in a band of the track area", () => {
    const l = buildLayout(groups, tracks, new Set());
    const h0 = 3 * ROW_H + TRACK_PAD;
    expect(tracksIn(l, 0, 1)).toEqual([]); // the group header only
    expect(tracksIn(l, 0, GROUP_H + 1)).toEqual([0]);
    expect(tracksIn(l, GROUP_H + h0, GROUP_H + h0 + 1)).toEqual([1]);
    expect(tracksIn(l, -100, l.height + 100)).toEqual([0, 1, 5, 9]);
    expect(tracksIn(buildLayout(groups, tracks, new Set([groupKey("p:1")])), 0, l.height)).toEqual([5, 9]);
  });
  it("collapses a track to its first row and a group to its header", () => {
    const l = buildLayout(groups, tracks, new Set([trackKey(0), groupKey("d:0")]));
    expect(l.tracks.get(0)?.rowsShown).toBe(1);
    expect(rowY(l, 0, 1)).toBeNull();
    expect(l.tracks.has(5)).toBe(false);
    expect(l.lines.map((x) => x.key)).toEqual(["g:p:1", "t:0", "t:1", "g:d:0"]);
    expect(l.height).toBe(GROUP_H * 2 + 2 * (ROW_H + TRACK_PAD));
  });
});

describe("window cache", () => {
  it("fetches three tiles around the view at a resolution fixed by the level", () => {
    const t = tileFor({ t0: 300, t1: 500 }, 1000, 10000);
    // span 200 → tile width 256; the view starts in tile 1
    expect(t.level).toBe(8);
    expect(t.index).toBe(1);
    expect(t.t0).toBe(0);
    expect(t.t1).toBe(768);
    expect(t.t0).toBeLessThanOrEqual(300);
    expect(t.t1).toBeGreaterThanOrEqual(500);
    // finer than the screen: µs per pixel ≤ the view's
    expect((t.t1 - t.t0) / t.px).toBeLessThanOrEqual(200 / 1000);
  });
  it("re-uses the tile for small pans and zooms", () => {
    const a = tileFor({ t0: 300, t1: 500 }, 1000, 10000);
    expect(tileFor({ t0: 310, t1: 510 }, 1000, 10000).key).toBe(a.key);
    expect(tileFor({ t0: 300, t1: 480 }, 1000, 10000).key).toBe(a.key);
    expect(tileFor({ t0: 300, t1: 500 }, 1010, 10000).key).toBe(a.key);
    expect(tileFor({ t0: 300, t1: 400 }, 1000, 10000).key).not.toBe(a.key);
  });
  it("stays inside the profile and within 20000 px", () => {
    const t = tileFor({ t0: 0, t1: 10000 }, 4000, 10000);
    expect(t.t0).toBe(0);
    expect(t.t1).toBe(10000);
    expect(t.px).toBeLessThanOrEqual(20000);
  });
  it("draws the finest loaded answer that covers the view", () => {
    const c = new WindowCache(3);
    const win = (start: number, end: number, resolution: number) => ({ ...decodeWindow(encodeWindow({ start_us: start, end_us: end, resolution_us: resolution }, [])) });
    const tile = (key: string) => ({ key, level: 0, index: 0, t0: 0, t1: 0, px: 1 });
    const entry = (key: string, data: Entry["data"], controller: AbortController | null = null, tracks: number[] | null = null): Entry => ({
      key,
      tile: tile(key),
      tracks: tracks && new Set(tracks),
      data,
      error: null,
      controller,
    });
    c.put(entry("coarse", win(100, 2100, 10)));
    c.put(entry("fine", win(600, 900, 0.5), null, [1]));
    c.put(entry("pending", null, new AbortController()));
    expect(c.best({ t0: 550, t1: 750 }, 100)?.key).toBe("fine");
    expect(c.best({ t0: 100, t1: 750 }, 100)?.key).toBe("coarse");
    // the answer holding the tracks on screen first
    expect(c.best({ t0: 550, t1: 750 }, 100, [1, 2])?.key).toBe("coarse");
    c.abortOthers("fine");
    expect(c.get("pending")).toBeUndefined();
    c.put(entry("a", null));
    c.put(entry("b", null));
    expect(c.size).toBe(3);
  });
  it("writes track sets as ids and ranges", () => {
    expect(encodeTracks([9, 0, 1, 2, 3, 4, 2, 7])).toBe("0-4,7,9");
    expect(encodeTracks([5])).toBe("5");
    expect(encodeTracks([])).toBe("");
  });
  it("serves a tile from an answer holding the tracks on screen, unless a smaller set could be finer", () => {
    const c = new WindowCache(8);
    const tile = { key: "8:1:2560", level: 8, index: 1, t0: 0, t1: 768, px: 7680 };
    const answer = (coarsened: boolean) => decodeWindow(encodeWindow({ start_us: 0, end_us: 768, resolution_us: 0.1, coarsened }, []));
    const put = (key: string, tracks: number[] | null, data: Entry["data"], controller: AbortController | null = null) => {
      const e: Entry = { key, tile, tracks: tracks && new Set(tracks), data, error: null, controller };
      c.put(e);
      return e;
    };
    expect(c.find(tile.key, [0], null)).toBeUndefined();
    const wide = put("wide", [0, 1, 2, 3, 4, 5], answer(false));
    // scrolled or collapsed: the tracks on screen are still in the answer
    expect(c.find(tile.key, [2, 3], new Set([1, 2, 3, 4]))).toBe(wide);
    // scrolled past it: not served (another tile neither)
    expect(c.find(tile.key, [5, 6], new Set([4, 5, 6, 7]))).toBeUndefined();
    expect(c.find("9:0:2560", [2], null)).toBeUndefined();
    // coarsened with more tracks than the next request would ask for: ask again (fewer may be finer)
    const coarse = put("coarse", [0, 1, 2, 3, 4, 5, 6, 7, 8], answer(true));
    c.delete(wide.key);
    expect(c.find(tile.key, [7], new Set([6, 7, 8]))).toBeUndefined();
    expect(c.find(tile.key, [7], new Set([0, 1, 2, 3, 4, 5, 6, 7, 8]))).toBe(coarse);
    // a request on its way serves (no second request), a finished one wins over it
    const pending = put("pending", [6, 7, 8], null, new AbortController());
    expect(c.find(tile.key, [7], new Set([6, 7, 8]))).toBe(pending);
    pending.data = answer(true);
    pending.controller = null;
    expect(c.find(tile.key, [7], new Set([6, 7, 8]))).toBe(pending);
    // null: every track
    expect(put("all", null, answer(false)) && c.find(tile.key, [42], new Set([42]))?.key).toBe("all");
  });
});

describe("drawing helpers", () => {
  it("colours by name, memcpy and memset apart", () => {
    expect(colorOf("aten::mm")).toBe(colorOf("aten::mm"));
    expect(colorOf("Memcpy HtoD (Pageable -> Device)")).toBe(MEMCPY);
    expect(colorOf("Memset (Device)")).toBe(MEMSET);
  });
  it("names boxes of mixed names", () => {
    expect(isMixed("")).toBe(true);
    expect(isMixed("12 events")).toBe(true);
    expect(isMixed("aten::mm")).toBe(false);
    expect(boxName("", 1200)).toBe("1,200 events");
    expect(boxName("aten::mm", 3)).toBe("aten::mm");
  });
  it("fits labels", () => {
    expect(fitText("aten::convolution", 1000)).toBe("aten::convolution");
    expect(fitText("aten::convolution", 40)).toMatch(/…$/);
    expect(fitText("x", 5)).toBe("");
  });
  it("reads a counter's value at a time", () => {
    const s = { ts: Float64Array.from([10, 20, 30]), values: Float64Array.from([1, 2, 3]) };
    expect(counterValueAt(s, 5)).toBeNull();
    expect(counterValueAt(s, 10)).toBe(1);
    expect(counterValueAt(s, 25)).toBe(2);
    expect(counterValueAt(s, 99)).toBe(3);
  });
  it("reads Show-in-timeline links", () => {
    expect(parseFind("kernel:volta_sgemm")).toEqual({ kind: "kernel", name: "volta_sgemm", at: null });
    expect(parseFind("op:aten::mm")).toEqual({ kind: "op", name: "aten::mm", at: null });
    expect(parseFind("aten::mm")).toEqual({ kind: "any", name: "aten::mm", at: null });
    expect(parseFind("at:op:1700000000000123.5")).toEqual({ kind: "op", name: "", at: 1700000000000123.5 });
    expect(parseFind("at:op:")).toBeNull();
    expect(parseFind("at:row:5")).toBeNull();
    expect(parseFind(undefined)).toBeNull();
  });
});

describe("status line", () => {
  it("says when the server coarsened the drawn answer", () => {
    expect(timelineStatus("ready", { resolution: 2, coarsened: false })).toBe("");
    expect(timelineStatus("loading", null)).toBe("loading…");
    expect(timelineStatus("ready", { resolution: 2, coarsened: true })).toMatch(/^coarsened: events under 2(\.0+)? µs merged/);
    expect(timelineStatus("loading", { resolution: 2000, coarsened: true })).toMatch(/^loading… \(coarsened: events under 2(\.0+)? ms/);
  });
});

describe("drawCounter", () => {
  /** A context that records the path's vertices (the drawing itself is checked in chromium, e2e). */
  function recorder() {
    const points: [number, number][] = [];
    const noop = () => undefined;
    const ctx = {
      save: noop, restore: noop, beginPath: noop, rect: noop, clip: noop, closePath: noop, fill: noop, stroke: noop,
      moveTo: (x: number, y: number) => points.push([x, y]),
      lineTo: (x: number, y: number) => points.push([x, y]),
      fillStyle: "", strokeStyle: "", lineWidth: 1,
    };
    return { ctx: ctx as unknown as CanvasRenderingContext2D, points };
  }
  const pal = makePalette(false, null);

  it("keeps a few vertices per pixel column however long the series, with each column's extremes", () => {
    const n = 200_000; // 200 samples per pixel over 1000 px
    const ts = new Float64Array(n).map((_, i) => i);
    const values = new Float64Array(n).map((_, i) => (i % 200 === 50 ? 1 : i % 200 === 150 ? 0 : 0.5));
    const { ctx, points } = recorder();
    const vp = { view: { t0: 0, t1: n }, base: 0, x0: 0, width: 1000, height: 100, scrollY: 0 };
    drawCounter(ctx, { ts, values }, 1, 0, 100, vp, pal);
    expect(points.length).toBeLessThanOrEqual(6 * 1000 + 10);
    const ys = new Set(points.map(([, y]) => y));
    expect(ys.has(2)).toBe(true); // value 1: the top (y + h - (h - 2))
    expect(ys.has(100)).toBe(true); // value 0: the bottom
  });

  it("draws only the points around the view: one before it, through one after it", () => {
    const ts = new Float64Array([0, 10, 20, 30, 40, 50]);
    const values = new Float64Array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6]);
    const { ctx, points } = recorder();
    const vp = { view: { t0: 25, t1: 35 }, base: 0, x0: 0, width: 100, height: 50, scrollY: 0 };
    drawCounter(ctx, { ts, values }, 1, 0, 50, vp, pal);
    const yOf = (v: number) => 50 - v * 48;
    // the level in force at the start (0.3, from t=20), the step at t=30 to 0.4, the point at t=40 (0.5)
    expect(points.map(([, y]) => y)).toEqual([50, yOf(0.3), yOf(0.3), yOf(0.4), yOf(0.4), yOf(0.5), yOf(0.5), 50]);
    expect(points[0]![0]).toBe(-2); // t=20 is before the view: at the left edge
  });
});
