// What the timeline draws: merged boxes in the colour of their major name, search marks outlined beside
// the boxes (not over them), a collapsed group's density strip.
import { describe, expect, it } from "vitest";
import type { TlGroup, TlTrack } from "../src/timeline/api";
import { decodeWindow, encodeWindow } from "../src/timeline/decode";
import { ROW_H, buildLayout, groupKey, tracksIn } from "../src/timeline/layout";
import { Scratch, colorOf, drawDensity, drawEvents, makePalette, outlineBoxes } from "../src/timeline/render";

interface Op {
  op: string;
  style: string;
  args: number[];
}

/** A 2D context that records the fills and strokes made with it. */
function recorder(): { ctx: CanvasRenderingContext2D; ops: Op[] } {
  const ops: Op[] = [];
  const noop = () => undefined;
  const state = { fillStyle: "", strokeStyle: "", lineWidth: 1, font: "", textBaseline: "" };
  const ctx = {
    ...state,
    save: noop,
    restore: noop,
    beginPath: noop,
    rect: noop,
    clip: noop,
    fillText: noop,
    drawImage: noop,
    fillRect(...args: number[]) {
      ops.push({ op: "fillRect", style: String(this.fillStyle), args });
    },
    strokeRect(...args: number[]) {
      ops.push({ op: "strokeRect", style: String(this.strokeStyle), args });
    },
  };
  return { ctx: ctx as unknown as CanvasRenderingContext2D, ops };
}

const pal = makePalette(false, null);
const track = (id: number, group: string, kind = "stream"): TlTrack => ({ id, group, kind, name: `t${id}`, rows: 1, extraRows: 0, moved: 0, events: 1, unit: "", max: 0 });
const groups: TlGroup[] = [
  { id: "d:0", name: "GPU 0", kind: "device" },
  { id: "d:1", name: "GPU 1", kind: "device" },
];
const tracks = [track(0, "d:0"), track(1, "d:1"), track(2, "d:1", "counter")];

describe("merged boxes", () => {
  it("are filled in the colour of the name covering most of them, not grey", () => {
    const w = decodeWindow(
      encodeWindow({ start_us: 0, end_us: 1000, px: 100, resolution_us: 10, names: ["", "aten::mm", "sgemm"], kinds: ["dev"] }, [
        { start: 100, dur: 300, row: -1, name: 0, count: 40, major: 2, track: 0, depth: 0, kind: 0 },
        { start: 500, dur: 100, row: 7, name: 1, count: 1, track: 0, depth: 0, kind: 0 },
      ]),
    );
    const layout = buildLayout(groups, tracks, new Set());
    const { ctx, ops } = recorder();
    const vp = { view: { t0: 0, t1: 1000 }, base: 0, x0: 0, width: 1000, height: 400, scrollY: 0 };
    expect(drawEvents(ctx, w, layout, vp, pal, new Scratch())).toBe(2);
    const fills = ops.filter((o) => o.op === "fillRect");
    const box = fills.find((o) => o.args[0] === 100);
    expect(box?.style).toBe(pal.fills[colorOf("sgemm")]);
    expect(box?.style).not.toBe(pal.merged);
    expect(fills.find((o) => o.args[0] === 500)?.style).toBe(pal.fills[colorOf("aten::mm")]);
  });
});

describe("search marks", () => {
  it("are outlined outside the boxes, neighbours on a row joined into one outline", () => {
    const { ctx, ops } = recorder();
    const boxes = [
      { x: 100, y: 20, w: 1 },
      { x: 101.5, y: 20, w: 1 },
      { x: 103, y: 20, w: 2 },
      { x: 300, y: 20, w: 40 },
      { x: 100.5, y: 37, w: 1 },
    ];
    expect(outlineBoxes(ctx, boxes, pal.accent)).toBe(3);
    const rects = ops.filter((o) => o.op === "strokeRect");
    expect(rects.map((o) => o.style)).toEqual([pal.accent, pal.accent, pal.accent]);
    // 1 px lines on whole pixels outside: they never reach into a box's [x, x + w) × [y + 0.5, y + ROW_H - 1)
    for (const [x, y, w, h] of rects.map((o) => o.args) as [number, number, number, number][]) {
      const inside = boxes.filter((b) => b.y === y + 0.5 && b.x >= x && b.x + b.w <= x + w);
      expect(inside.length).toBeGreaterThan(0);
      for (const b of inside) {
        expect(x + 0.5).toBeLessThanOrEqual(b.x);
        expect(x + w - 0.5).toBeGreaterThanOrEqual(b.x + b.w);
        expect(y + 0.5).toBeLessThanOrEqual(b.y + 0.5);
        expect(y + h - 0.5).toBeGreaterThanOrEqual(b.y + ROW_H - 1);
      }
    }
    expect(rects[0]!.args).toEqual([99.5, 19.5, 6, ROW_H]);
  });
});

describe("collapsed groups", () => {
  it("know their event tracks (not counters), and ask for none of them", () => {
    const layout = buildLayout(groups, tracks, new Set([groupKey("d:1")]));
    expect(layout.lines.filter((l) => l.kind === "group").map((l) => l.members)).toEqual([[0], [1]]);
    expect(tracksIn(layout, 0, 1000)).toEqual([0]); // collapsing keeps the answers small
  });
  it("draw a density strip of their events", () => {
    const w = decodeWindow(
      encodeWindow({ start_us: 0, end_us: 100, px: 100, resolution_us: 1, names: ["k"], kinds: ["dev"] }, [
        { start: 10, dur: 20, row: 1, name: 0, count: 1, track: 1, depth: 0, kind: 0 },
        { start: 20, dur: 5, row: -1, name: 0, count: 3, track: 1, depth: 1, kind: 0 },
        { start: 60, dur: 10, row: 2, name: 0, count: 1, track: 0, depth: 0, kind: 0 }, // another group
      ]),
    );
    const { ctx, ops } = recorder();
    const vp = { view: { t0: 0, t1: 100 }, base: 0, x0: 200, width: 100, height: 400, scrollY: 0 };
    drawDensity(ctx, w, [1], 50, 16, vp, "grey");
    const bars = ops.filter((o) => o.op === "fillRect");
    const xs = bars.map((o) => o.args[0]! - 200);
    expect(Math.min(...xs)).toBe(10);
    expect(Math.max(...xs)).toBe(29);
    // two rows busy at 20..25: the tallest bars, full height; one row elsewhere: half
    const h = (x: number) => bars.find((o) => o.args[0] === 200 + x)?.args[3];
    expect(h(22)).toBe(16);
    expect(h(12)).toBe(8);
    expect(bars.every((o) => o.args[1]! + o.args[3]! === 66)).toBe(true);
  });
});
