// The time axis' labels: one readable unit per axis, the decimals the tick spacing needs.
import { describe, expect, it } from "vitest";
import { axisTicks, tickLabels } from "../src/timeline/axis";

describe("axis labels", () => {
  it("uses the largest unit the ticks reach, never a 7-digit µs count", () => {
    expect(tickLabels([1620000, 1630000, 1640000], 10000)).toEqual(["1.62 s", "1.63 s", "1.64 s"]);
    expect(tickLabels([104900, 104950, 105000], 50)).toEqual(["104.90 ms", "104.95 ms", "105.00 ms"]);
    expect(tickLabels([210000, 210050], 50)).toEqual(["210.00 ms", "210.05 ms"]);
    expect(tickLabels([1627400, 1627450], 50)).toEqual(["1.62740 s", "1.62745 s"]);
    expect(tickLabels([0, 500, 1000, 1500], 500)).toEqual(["0.0 ms", "0.5 ms", "1.0 ms", "1.5 ms"]);
    expect(tickLabels([0, 200, 400], 200)).toEqual(["0 µs", "200 µs", "400 µs"]);
    expect(tickLabels([0.2, 0.25, 0.3], 0.05)).toEqual(["200 ns", "250 ns", "300 ns"]);
    expect(tickLabels([2e6, 3e6], 1e6)).toEqual(["2 s", "3 s"]);
  });
  it("goes down a unit rather than write more than 6 decimals", () => {
    expect(tickLabels([1627450.5, 1627451], 0.5)).toEqual(["1627.4505 ms", "1627.4510 ms"]);
  });
  it("writes no negative zero", () => {
    expect(tickLabels([-1e-12, 100], 100)).toEqual(["0 µs", "100 µs"]);
    expect(tickLabels([-20000, 0, 20000], 20000)).toEqual(["-20 ms", "0 ms", "20 ms"]);
  });
  it("spaces ticks wider than their labels", () => {
    for (const [t0, span] of [
      [0, 1e6],
      [1627000, 300],
      [1627450, 0.4],
      [90, 30],
    ] as const) {
      const { step, ticks } = axisTicks({ t0, t1: t0 + span }, 1000);
      expect(ticks.length).toBeGreaterThan(1);
      const px = (step / span) * 1000;
      for (const k of ticks) {
        expect(k.label).toMatch(/^-?\d+(\.\d+)? (s|ms|µs|ns)$/);
        expect(k.label.length * 6.2).toBeLessThan(px);
        expect(Number(k.label.split(" ")[0])).toBeLessThan(10000);
      }
      // labels tell the ticks apart
      expect(new Set(ticks.map((k) => k.label)).size).toBe(ticks.length);
    }
  });
});
