import { describe, expect, it } from "vitest";
import { CATEGORY_COLORS, OTHER_GREY, distinctColor, legendParts, middleEllipsis, sliceColors } from "../src/lib/colors";
import { memoryTooltip } from "../src/views/memoryTooltip";
import { BREAKDOWN, evidenceRows, stepTooltip } from "../src/views/shape";
import { topPie } from "../src/views/Operator";

describe("colours", () => {
  it("give every breakdown category its own fixed colour, Other grey", () => {
    const colors = BREAKDOWN.map((c) => CATEGORY_COLORS[c.key]);
    expect(colors.every(Boolean)).toBe(true);
    expect(new Set(colors).size).toBe(BREAKDOWN.length);
    expect(CATEGORY_COLORS.other).toBe(OTHER_GREY);
  });
  it("keep a category's colour whatever the slices around it", () => {
    const a = sliceColors([{ name: "CPU Exec", key: "cpu_exec" }]);
    const b = sliceColors([{ name: "Kernel", key: "kernel" }, { name: "Runtime", key: "runtime" }, { name: "CPU Exec", key: "cpu_exec" }]);
    expect(a[0]).toBe(b[2]);
  });
  it("give 31 slices 30 distinct colours and a grey Other", () => {
    const slices = [...Array.from({ length: 30 }, (_, i) => ({ name: `op${i}` })), { name: "Other (12)" }];
    const colors = sliceColors(slices);
    expect(new Set(colors.slice(0, 30)).size).toBe(30);
    expect(colors[30]).toBe(OTHER_GREY);
    expect(colors.slice(0, 30)).not.toContain(OTHER_GREY);
    expect(distinctColor(25)).toMatch(/^hsl\(/);
  });
});

describe("middleEllipsis", () => {
  it("keeps both ends so that names with a long common prefix stay apart", () => {
    const names = ["aten::cudnn_convolution_backward_input", "aten::cudnn_convolution_backward_weight", "aten::cudnn_convolution_backward_bias_x"];
    const cut = names.map((n) => middleEllipsis(n, 30));
    expect(new Set(cut).size).toBe(3);
    expect(cut.every((c) => c.length === 30 && c.includes("…"))).toBe(true);
    expect(middleEllipsis("aten::mm", 30)).toBe("aten::mm");
  });
});

describe("evidenceRows", () => {
  const fmt = { duration: (us: number) => `${us} µs`, percent: (p: number) => `${p.toFixed(1)} %`, bytes: (b: number) => `${b} B`, number: (n: number) => n.toFixed(2) };
  it("labels what each figure is, with units, and quotes names", () => {
    const rows = evidenceRows({ dataloader_us: 1200, step_us: 4000, share: 0.3, kernels: [{ name: "k", calls: 3 }], backend: "gloo", gpus: [0, 1] }, fmt);
    expect(rows).toEqual([
      { key: "DataLoader time per step (mean)", value: "1200 µs" },
      { key: "Step time (mean)", value: "4000 µs" },
      { key: "Share of step time", value: "30.0 %" },
      { key: "Kernels › #1 › Name", value: "“k”", find: "kernel:k" },
      { key: "Kernels › #1 › Calls", value: "3", find: "kernel:k" },
      { key: "Backend", value: "“gloo”" },
      { key: "GPUs", value: "0, 1" },
    ]);
  });
  it("formats µs inside a key, sizes, totals and per-device utilizations", () => {
    const rows = evidenceRows(
      { copies: 12, bytes: 115607040, us_in_steps: 11492, launch_us_per_step: 5836.5, kernel_us: 591532, gpus: { "0": 23.26 }, mean_blocks_per_sm: 0.054, kernels: [{ name: "k", share: 0.2 }] },
      fmt,
      "MTIA",
    );
    expect(rows).toEqual([
      { key: "Pageable copies (total)", value: "12" },
      { key: "Total size copied", value: "115607040 B" },
      { key: "Total copy time in steps", value: "11492 µs" },
      { key: "Launch time per step", value: "5836.5 µs" },
      { key: "Total kernel time", value: "591532 µs" },
      { key: "MTIA 0 utilization", value: "23.3 %" },
      { key: "Mean blocks per SM", value: "0.05" },
      { key: "Kernels › #1 › Name", value: "“k”", find: "kernel:k" },
      { key: "Kernels › #1 › Share of kernel time", value: "20.0 %", find: "kernel:k" },
    ]);
    // a key no rule writes yet: its words, µs read as time
    expect(evidenceRows({ queue_wait_us: 5 }, fmt)).toEqual([{ key: "Queue wait time", value: "5 µs" }]);
  });
  it("links the kernels and operators it names to the timeline", () => {
    const rows = evidenceRows(
      { top: [{ name: "aten::item", idle_overlap_us: 5 }], calls: { cudaDeviceSynchronize: { count: 2, us: 9 } }, top_ops: { "aten::copy_": 4 } },
      fmt,
    );
    expect(rows).toEqual([
      { key: "Top › #1 › Name", value: "“aten::item”", find: "any:aten::item" },
      { key: "Top › #1 › Overlap with device idle time (total)", value: "5 µs", find: "any:aten::item" },
      { key: "Synchronizing calls › cudaDeviceSynchronize › Calls", value: "2", find: "any:cudaDeviceSynchronize" },
      { key: "Synchronizing calls › cudaDeviceSynchronize › Total time", value: "9 µs", find: "any:cudaDeviceSynchronize" },
      // the issuing operators' synchronizing time: µs, not a bare number
      { key: "Synchronizing time by issuing operator (total) › aten::copy_", value: "4 µs", find: "any:aten::copy_" },
    ]);
  });
});

describe("topPie", () => {
  it("adds the rest of every row as a grey Other slice", () => {
    const data = {
      total_rows: 5,
      top: { host_total_us: [{ name: "a", host_total_us: 50 }, { name: "b", host_total_us: 30 }] },
      totals: { host_total_us: 100 },
    };
    expect(topPie(data, "host_total_us", 2)).toEqual([
      { name: "a", value: 50 },
      { name: "b", value: 30 },
      { name: "Other (3)", value: 20 },
    ]);
  });
});

describe("stepTooltip", () => {
  it("starts with the step total and gives each category's share of it", () => {
    const text = stepTooltip("3", 200, [{ seriesName: "Kernel", value: 150 }, { seriesName: "Other", value: 50 }], (us) => `${us} µs`);
    expect(text.split("\n")).toEqual(["Step 3: 200 µs", "Kernel: 150 µs (75.0 %)", "Other: 50 µs (25.0 %)"]);
  });
});

describe("legendParts", () => {
  it("keeps the tail from where a name first differs from the others", () => {
    const a = "aten::cudnn_convolution_backward_input_nchw_implicit_gemm";
    const b = "aten::cudnn_convolution_backward_weight_nchw_implicit_gemm";
    const [pa, pb, pc] = legendParts([a, b, "aten::mm"]);
    expect(pa).toEqual({ head: "aten::cudnn_convolution_backward_", tail: "input_nchw_implicit_gemm" });
    expect(pb?.tail).toBe("weight_nchw_implicit_gemm");
    expect(pc).toEqual({ head: "aten::mm", tail: "" }); // short: nothing to cut
    // differing only at the end: at least the last 12 characters stay
    const [x, y] = legendParts(["prefix_that_is_long_enough_v1", "prefix_that_is_long_enough_v2"]);
    expect(x?.tail).toBe("ng_enough_v1");
    expect(y?.tail).toBe("ng_enough_v2");
  });
});

describe("memoryTooltip", () => {
  it("gives the time and every series with units", () => {
    const text = memoryTooltip(
      [
        { seriesName: "Allocated", value: [158.2, 1536] },
        { seriesName: "Reserved", value: [158.2, null] },
      ],
      (us) => `${us / 1000} ms`,
      (b) => `${b / 1024} KiB`,
    );
    expect(text).toBe("at 158.2 ms\nAllocated: 1.5 KiB\nReserved: –");
  });
});
