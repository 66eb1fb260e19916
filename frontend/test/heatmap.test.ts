import { describe, expect, it } from "vitest";
import { cellColor, valueRange } from "../src/components/Heatmap";

describe("heatmap colours", () => {
  it("runs from light at the smallest value to dark at the largest", () => {
    expect(cellColor(200, 200, 300)).toBe("rgb(239, 243, 255)");
    expect(cellColor(300, 200, 300)).toBe("rgb(8, 48, 107)");
    // 240 of 200..300 is 40 %: 239 - 231 * 0.4 = 146.6, 243 - 195 * 0.4 = 165, 255 - 148 * 0.4 = 195.8
    expect(cellColor(240, 200, 300)).toBe("rgb(147, 165, 196)");
    expect(cellColor(5, 5, 5)).toBe("rgb(239, 243, 255)"); // all equal: the light end
  });
  it("takes the range over the values that exist", () => {
    expect(valueRange([[200, null], [300, 240]])).toEqual([200, 300]);
    expect(valueRange([[null], []])).toEqual([0, 0]);
  });
});
