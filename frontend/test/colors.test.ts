import { describe, expect, it } from "vitest";
import { CATEGORY_COLORS, OTHER_GREY, distinctColor, middleEllipsis, sliceColors } from "../src/lib/colors";
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
  it("formats by unit suffix and quotes names", () => {
    const rows = evidenceRows({ dataloader_us: 1200, step_us: 4000, share: 0.3, kernels: [{ name: "k", calls: 3 }], backend: "gloo", gpus: [0, 1] }, fmt);
    expect(rows).toEqual([
      { key: "dataloader", value: "1200 µs" },
      { key: "step", value: "4000 µs" },
      { key: "share", value: "30.0 %" },
      { key: "kernels › #1 › name", value: "“k”", find: "kernel:k" },
      { key: "kernels › #1 › calls", value: "3.00", find: "kernel:k" },
      { key: "backend", value: "“gloo”" },
      { key: "gpus", value: "0.00, 1.00" },
    ]);
  });
  it("links the kernels and operators it names to the timeline", () => {
    const rows = evidenceRows(
      { top: [{ name: "aten::item", idle_overlap_us: 5 }], calls: { cudaDeviceSynchronize: { count: 2, us: 9 } }, top_ops: { "aten::copy_": 4 } },
      fmt,
    );
    expect(rows.map((r) => [r.key, r.find])).toEqual([
      ["top › #1 › name", "any:aten::item"],
      ["top › #1 › idle overlap", "any:aten::item"],
      ["calls › cudaDeviceSynchronize › count", "any:cudaDeviceSynchronize"],
      ["calls › cudaDeviceSynchronize › us", "any:cudaDeviceSynchronize"],
      ["top ops › aten::copy_", "any:aten::copy_"],
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
