import { describe, expect, it } from "vitest";
import { waterfallBars } from "../src/api/diff";

describe("waterfallBars", () => {
  it("stacks the parts from the running sum and ends with the total", () => {
    const bars = waterfallBars({
      metric: "device_self_us",
      total_delta_us: -150,
      items: [
        { name: "DataLoader", kind: "category", delta_us: -200 },
        { name: "aten::mm", kind: "operator", delta_us: 30 },
      ],
      other_us: 20,
    });
    expect(bars).toEqual([
      { name: "DataLoader", start: 0, end: -200, focus: "cat:DataLoader" },
      { name: "aten::mm", start: -200, end: -170, focus: "op:aten::mm" },
      { name: "Rest (unlisted)", start: -170, end: -150, focus: "rest" },
      { name: "Step time change", start: 0, end: -150, total: true, focus: "total" },
    ]);
  });
  it("is empty when the step time cannot be compared", () => {
    expect(waterfallBars({ metric: "host_self_us", total_delta_us: null, items: [], other_us: null })).toEqual([]);
  });
});
