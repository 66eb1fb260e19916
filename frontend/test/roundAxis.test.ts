import { describe, expect, it } from "vitest";
import { byteAxis, niceStep } from "../src/lib/roundAxis";

const ticksOf = (ax: ReturnType<typeof byteAxis>) => {
  const out: string[] = [];
  for (let v = ax.min; v <= ax.max + ax.interval * 1e-6; v += ax.interval) out.push(ax.label(v));
  return out;
};

describe("round axes", () => {
  it("steps 1, 2, 2.5 or 5 × 10^n", () => {
    expect([0.3, 1, 1.2, 2.2, 3, 7, 12, 24, 0.04].map(niceStep)).toEqual([0.5, 1, 2, 2.5, 5, 10, 20, 25, 0.05]);
  });
  it("ticks memory at round values of one unit", () => {
    const mib = 1024 ** 2;
    const gib = 1024 ** 3;
    expect(ticksOf(byteAxis(0, 1.5 * gib))).toEqual(["0.0 GiB", "0.5 GiB", "1.0 GiB", "1.5 GiB"]);
    expect(ticksOf(byteAxis(0, 780 * mib))).toEqual(["0 MiB", "200 MiB", "400 MiB", "600 MiB", "800 MiB"]);
    expect(ticksOf(byteAxis(0, 101305344))).toEqual(["0 MiB", "20 MiB", "40 MiB", "60 MiB", "80 MiB", "100 MiB"]);
    expect(ticksOf(byteAxis(0, 121634816))).toEqual(["0 MiB", "25 MiB", "50 MiB", "75 MiB", "100 MiB", "125 MiB"]);
    expect(ticksOf(byteAxis(0, 3))).toEqual(["0 B", "1 B", "2 B", "3 B"]);
    expect(ticksOf(byteAxis(0, 0))).toEqual(["0 B", "1 B"]);
  });
  it("reaches below zero for a relative curve", () => {
    const ax = byteAxis(-300 * 1024, 900 * 1024);
    expect(ax.min).toBeLessThanOrEqual(-300 * 1024);
    expect(ax.max).toBeGreaterThanOrEqual(900 * 1024);
    expect(ticksOf(ax)).toEqual(["-500 KiB", "-250 KiB", "0 KiB", "250 KiB", "500 KiB", "750 KiB", "1000 KiB"]);
  });
});
