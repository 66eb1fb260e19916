// The critical path overlay's geometry (src/timeline/criticalPath.ts): which bands are drawn where,
// and where the path's connectors go, on a hand-placed layout.
import { describe, expect, it } from "vitest";
import { type CriticalPath, type PathGeometry, pathShapes, readCriticalPath } from "../src/timeline/criticalPath";

const ROW = 20;
/** 1 px per µs from t = 1000 at x = 100; track 0 rows at y 0, 20, 40…; track 1 at y 100; track 9 hidden */
const geometry: PathGeometry = {
  x: (t) => 100 + (t - 1000),
  rowTop: (track, depth) => (track === 0 ? depth * ROW : track === 1 ? 100 + depth * ROW : null),
  rowH: ROW,
  left: 100,
  width: 500,
  height: 300,
};

function path(segments: [string, number, number, number | null, number | null][]): CriticalPath {
  return readCriticalPath({
    step: 1,
    start_us: 1000,
    end_us: 1600,
    segments: segments.map(([kind, start_us, end_us, track, depth]) => ({ kind, name: "", start_us, end_us, track, depth })),
  });
}

describe("critical path overlay", () => {
  it("draws each placed segment on its row, with a connector where the row changes", () => {
    const p = path([
      ["host", 1000, 1050, 0, 0],
      ["launch", 1050, 1060, 0, 2],
      ["device", 1060, 1200, 1, 0],
      ["idle", 1200, 1210, 1, 0],
    ]);
    const { boxes, links } = pathShapes(p, geometry);
    expect(boxes).toEqual([
      { kind: "host", x: 100, y: 1, w: 50, h: 18 },
      { kind: "launch", x: 150, y: 41, w: 10, h: 18 },
      { kind: "device", x: 160, y: 101, w: 140, h: 18 },
      { kind: "idle", x: 300, y: 101, w: 10, h: 18 },
    ]);
    // host row 0 → launch row 2 at x 150; launch → device (track 1) at x 160; device → idle: same row
    expect(links).toEqual([
      [150, 11, 51],
      [160, 51, 111],
    ]);
  });

  it("skips segments on no row or a hidden row, and clips to the area", () => {
    const p = path([
      ["host", 500, 1020, 0, 0], // starts left of the area
      ["device", 1020, 1100, null, null], // merged: on no row
      ["sync", 1100, 1200, 9, 0], // on a collapsed track
      ["host", 1200, 2000, 0, 0], // ends right of it
    ]);
    const { boxes, links } = pathShapes(p, geometry);
    expect(boxes).toEqual([
      { kind: "host", x: 98, y: 1, w: 22, h: 18 },
      { kind: "host", x: 300, y: 1, w: 302, h: 18 },
    ]);
    expect(links).toEqual([]); // no connector across a segment that is not drawn
  });

  it("draws nothing for segments outside the window, and reads unknown kinds as host", () => {
    const p = path([["weird", 3000, 4000, 0, 0]]);
    expect(p.segments[0]?.kind).toBe("host");
    expect(pathShapes(p, geometry).boxes).toEqual([]);
  });
});
