import { describe, expect, it } from "vitest";
import { findWith, readFindWith } from "../src/views/findWith";
import { launchOf, readKernelRow } from "../src/views/Kernel";

describe("row links to the timeline", () => {
  it("round-trip a row's keys", () => {
    const f = { input_shape: "[[2, 3], []]" };
    expect(readFindWith(findWith(f))).toEqual(f);
    expect(readFindWith(undefined)).toEqual({});
  });
  it("carry a kernel row's op and launch shape as the table shows them", () => {
    const row = readKernelRow({ name: "gemm", op_name: "", grid: "[1, 1, 1]", block: "[128, 1, 1]", regs: -1, shmem: 0, calls: 1, total_us: 1 });
    expect(launchOf(row)).toEqual({ op_name: "", grid: "[1, 1, 1]", block: "[128, 1, 1]", regs: "-1", shmem: "0" });
  });
});
