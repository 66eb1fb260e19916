import { describe, expect, it } from "vitest";
import { kernelTopSlices, readKernelTotals } from "../src/views/Kernel";
import { tensorCoreSlices } from "../src/views/shape";

describe("kernel pies from one page of the kernels answer", () => {
  const answer = {
    rows: [],
    top: [
      { name: "gemm", total_us: 100 },
      { name: "relu", total_us: 30 },
    ],
    kernel_count: 5,
    totals: { total_us: 150, tc_us: 100, tc_unknown_us: 20 },
  };
  it("reads the top list, the kernel count and the totals", () => {
    expect(readKernelTotals(answer)).toEqual({
      top: [
        { name: "gemm", total: 100 },
        { name: "relu", total: 30 },
      ],
      count: 5,
      total: 150,
      tc: 100,
      tcUnknown: 20,
    });
    expect(readKernelTotals({ totals: { total_us: 1, tc_us: null } }).tc).toBeNull();
  });
  it("puts the kernels past the top into one Other slice: 150 − 130 = 20 µs of 3 kernels", () => {
    expect(kernelTopSlices(readKernelTotals(answer))).toEqual([
      { name: "gemm", value: 100 },
      { name: "relu", value: 30 },
      { name: "Other (3)", value: 20 },
    ]);
  });
  it("has no Other slice when the top holds every kernel", () => {
    const all = readKernelTotals({ ...answer, kernel_count: 2, totals: { total_us: 130, tc_us: 100 } });
    expect(kernelTopSlices(all).map((s) => s.name)).toEqual(["gemm", "relu"]);
  });
});

describe("matrix-unit pie", () => {
  it("shows the kernels whose names do not say as their own slice (the share is a lower bound)", () => {
    const rows = [
      { total: 30, tcUsed: true },
      { total: 50, tcUsed: false },
      { total: 20, tcUsed: null },
    ];
    expect(tensorCoreSlices(rows, "Matrix Cores")).toEqual([
      { name: "Using Matrix Cores", value: 30 },
      { name: "Not using Matrix Cores", value: 50, key: "other" },
      { name: "Name does not say", value: 20 },
    ]);
    expect(tensorCoreSlices(rows.slice(0, 2)).map((s) => s.name)).toEqual(["Using Tensor Cores", "Not using Tensor Cores"]);
  });
});
