import { describe, expect, it } from "vitest";
import { BREAKDOWN, spliceCurve, executionSummary, meanOf, stepFigures, tensorCoreSlices, topSlices, visibleCategories } from "../src/views/shape";
import { readOpRow } from "../src/views/Operator";
import { readKernelRow } from "../src/views/Kernel";

describe("topSlices", () => {
  const rows = [
    { n: "a", v: 5 },
    { n: "b", v: 30 },
    { n: "c", v: 10 },
    { n: "d", v: 0 },
    { n: "e", v: 10 },
  ];
  it("keeps the n largest, ties by name, and sums the rest into Other", () => {
    expect(topSlices(rows, (r) => r.n, (r) => r.v, 2)).toEqual([
      { name: "b", value: 30 },
      { name: "c", value: 10 },
      { name: "Other (2)", value: 15 },
    ]);
  });
  it("drops zero values and adds no Other when everything fits", () => {
    expect(topSlices(rows, (r) => r.n, (r) => r.v, 10).map((s) => s.name)).toEqual(["b", "c", "e", "a"]);
  });
});

describe("step-time breakdown", () => {
  const steps = [
    { duration: 100, kernel: 0, memcpy: 0, memset: 0, communication: 0, runtime: 10, dataloader: 5, cpu_exec: 60, other: 25 },
    { duration: 200, kernel: 0, memcpy: 0, memset: 0, communication: 0, runtime: 30, dataloader: 15, cpu_exec: 100, other: 55 },
  ];
  it("hides GPU categories on a CPU-only trace and communication when absent", () => {
    expect(visibleCategories(steps, false).map((c) => c.key)).toEqual(["runtime", "dataloader", "cpu_exec", "other"]);
    expect(visibleCategories(steps, true).map((c) => c.key)).toEqual(["kernel", "memcpy", "memset", "runtime", "dataloader", "cpu_exec", "other"]);
  });
  it("averages per step and gives shares of the mean step time", () => {
    const avg = meanOf(steps, ["duration", ...BREAKDOWN.map((c) => c.key)]);
    // mean step 150 µs; runtime (10+30)/2 = 20 µs = 13.33 %; cpu_exec 80 µs = 53.33 %; other 40 µs
    const rows = executionSummary(avg, visibleCategories(steps, false));
    expect(rows.map((r) => [r.key, r.us])).toEqual([
      ["runtime", 20],
      ["dataloader", 10],
      ["cpu_exec", 80],
      ["other", 40],
    ]);
    expect(rows[0]?.pct).toBeCloseTo(13.333, 3);
    expect(rows.reduce((s, r) => s + r.pct, 0)).toBeCloseTo(100, 9);
  });
});

describe("tensorCoreSlices", () => {
  it("splits kernel time by tensor-core use", () => {
    expect(
      tensorCoreSlices([
        { total: 30, tcUsed: true },
        { total: 70, tcUsed: false },
        { total: 20, tcUsed: true },
      ]),
    ).toEqual([
      { name: "Using Tensor Cores", value: 50 },
      { name: "Not using Tensor Cores", value: 70, key: "other" },
    ]);
    expect(tensorCoreSlices([{ total: 1, tcUsed: true }], "Matrix Cores")[0]?.name).toBe("Using Matrix Cores");
    expect(tensorCoreSlices([])).toEqual([]);
  });
});

describe("stepFigures", () => {
  const by = {
    rank0: { steps: { "3": { computation: 10, overlap: 2 }, "4": { computation: 20, overlap: 4 } }, mean: { computation: 15, overlap: 3 } },
    rank1: { steps: { "3": { computation: 11, overlap: 1 } }, mean: { computation: 11, overlap: 1 } },
  };
  it("picks one step or the mean, and empty figures for a worker without that step", () => {
    expect(stepFigures(by, ["rank0", "rank1"], "all")).toEqual({ rank0: { computation: 15, overlap: 3 }, rank1: { computation: 11, overlap: 1 } });
    expect(stepFigures(by, ["rank0", "rank1"], "4")).toEqual({ rank0: { computation: 20, overlap: 4 }, rank1: {} });
  });
});

describe("row readers", () => {
  it("reads operator rows with ratios as percentages", () => {
    const r = readOpRow({ name: "aten::mm", input_shape: "[[2, 3], [3, 4]]", calls: 4, host_self_us: 10, host_total_us: 25, device_self_us: 8, device_total_us: 8, tc_self_ratio: 0.25, tc_total_ratio: 0.5, tc_eligible: true, has_call_stack: true });
    expect(r).toMatchObject({ name: "aten::mm", inputShape: "[[2, 3], [3, 4]]", calls: 4, hostSelf: 10, hostTotal: 25, deviceSelf: 8, tcSelfPct: 25, tcTotalPct: 50, tcEligible: true, hasStack: true });
  });
  it("reads kernel rows in the route's spelling", () => {
    const k = readKernelRow({ name: "volta_sgemm", calls: 4, total_us: 100, mean_us: 25, tc_used: false, grid: "[1, 2, 3]", regs: -1 });
    expect(k).toMatchObject({ name: "volta_sgemm", calls: 4, total: 100, mean: 25, tcUsed: false, grid: "[1, 2, 3]", regs: null });
  });
});

describe("spliceCurve", () => {
  it("replaces the zoomed range by the detailed points, keeps the rest", () => {
    const overview = { ts: [0, 10, 20, 30, 40], allocated: [1, 5, 9, 5, 1], reserved: [10, 10, 10, 10, 10] };
    const detail = { ts: [12, 13, 15, 19, 25], allocated: [5, 6, 7, 8, 9], reserved: [10, 10, 10, 10, 11] };
    expect(spliceCurve(overview, detail, 12, 25)).toEqual({
      ts: [0, 10, 12, 13, 15, 19, 25, 30, 40],
      allocated: [1, 5, 5, 6, 7, 8, 9, 5, 1],
      reserved: [10, 10, 10, 10, 10, 10, 11, 10, 10],
    });
  });
});
