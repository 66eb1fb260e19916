import { describe, expect, it } from "vitest";
import { stepAt, stepTitle } from "../src/timeline/steps";
import { stepTooltip } from "../src/views/shape";

const us = (v: number) => `${v} µs`;
const step = { number: 5, name: "ProfilerStep#5", start: 1000, end: 2000, deviceStart: 1000, deviceEnd: 2300 };

describe("step times in both senses", () => {
  it("the ruler's hover names the host range and the device-extended time", () => {
    expect(stepAt([step], 1500)).toBe(step);
    expect(stepAt([step], 2100)).toBeNull();
    expect(stepTitle(step, us)).toBe(
      "Step 5: 1000 µs host range (ProfilerStep#5, drawn here) · 1300 µs from its start to the end of its device work (the Overview's step time)",
    );
    expect(stepTitle({ ...step, deviceStart: null, deviceEnd: null }, us)).toBe("Step 5: 1000 µs host range (ProfilerStep#5, drawn here)");
  });
  it("the Overview's tooltip gives the host range too", () => {
    const text = stepTooltip("5", 1300, [{ seriesName: "Kernel", value: 1300 }], us, 1000);
    expect(text.split("\n").slice(0, 2)).toEqual(["Step 5: 1300 µs to the end of its device work", "host range 1000 µs (as the Trace view's ruler)"]);
  });
});
