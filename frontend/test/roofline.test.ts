import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { readCardMfu } from "../src/views/Overview";
import { readRoofline, roofLine } from "../src/views/Roofline";

const doc = readFileSync(fileURLToPath(new URL("../../docs/api.md", import.meta.url)), "utf-8");

function example(route: string): unknown {
  const at = doc.indexOf("### `" + route);
  const start = doc.indexOf("```json", at);
  return JSON.parse(doc.slice(start + 7, doc.indexOf("```", start + 7)).replace(/…/g, ""));
}

describe("the roofline answer through its readers", () => {
  it("reads the documented example", () => {
    const m = readRoofline(example("roofline"));
    expect(m.device).toMatchObject({ name: "NVIDIA H100 80GB HBM3", matched: "H100 SXM", tbps: 3.35, how: "name" });
    expect(m.device.peaks).toEqual({ bf16: 989.5 });
    expect(m.rows[0]).toMatchObject({ name: "aten::mm", dtype: "bf16", calls: 1, flops: 1073741824, bound: "memory", timeLost: 9.8, source: "model" });
    expect(m.mfu).toBe(0.0109);
    expect(readCardMfu(example("roofline"))).toEqual({ device: 0, value: 0.0109, dtype: "bf16", reason: "" });
  });
  it("draws a roof as the bandwidth line up to the ridge point, then the peak", () => {
    // 989.5 TFLOP/s at 3.35 TB/s: ridge at 295.4 FLOP/byte
    const pts = roofLine(989.5, 3.35, 1, 1000);
    expect(pts[0]).toEqual([1, 3.35]);
    expect(pts[1]?.[0]).toBeCloseTo(295.373, 3);
    expect(pts[1]?.[1]).toBeCloseTo(989.5, 6);
    expect(pts[2]).toEqual([1000, 989.5]);
  });
  it("shows no MFU on the card when no FLOPs are known", () => {
    expect(readCardMfu({ mfu: { mean: null, known_flops_share: null } })).toBeNull();
  });
});
