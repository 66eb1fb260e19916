import { describe, expect, it } from "vitest";
import { embeddedTwoDeep, jumpMessage, mapPath, parseFrame, parsePathRules, parseStack } from "../src/lib/source";

describe("parseFrame", () => {
  it("splits file, line and function", () => {
    expect(parseFrame("/home/u/train.py(123): forward")).toEqual({
      text: "/home/u/train.py(123): forward",
      file: "/home/u/train.py",
      line: 123,
      func: "forward",
    });
  });
  it("accepts a frame without function and paths with parentheses", () => {
    expect(parseFrame("C:\\proj (x)\\m.py(7)")).toMatchObject({ file: "C:\\proj (x)\\m.py", line: 7, func: "" });
  });
  it("leaves frames without a line as plain text", () => {
    expect(parseFrame("<built-in method conv2d>")).toMatchObject({ file: null, line: null });
    expect(parseFrame("torch/nn/functional.py: relu")).toMatchObject({ file: null });
  });
});

describe("parseStack", () => {
  it("splits legacy Call stack strings on ;", () => {
    const frames = parseStack("a.py(1): f;b.py(20): g; ;c");
    expect(frames.map((f) => [f.file, f.line])).toEqual([
      ["a.py", 1],
      ["b.py", 20],
      [null, null],
    ]);
  });
});

describe("jumpMessage", () => {
  it("sends a 0-based line", () => {
    expect(jumpMessage("a.py", 123)).toEqual({ filename: "a.py", line: 122 });
  });
  it("sends line 1 for a frame on line 1, since VS Code drops line 0", () => {
    expect(jumpMessage("a.py", 1)).toEqual({ filename: "a.py", line: 1 });
  });
});

describe("embeddedTwoDeep", () => {
  type W = { parent: W };
  const top: W = { parent: null as unknown as W };
  top.parent = top;
  const mid: W = { parent: top };
  const leaf: W = { parent: mid };
  it("is true two frames below the top (VS Code: plugin → TensorBoard → webview)", () => {
    expect(embeddedTwoDeep(leaf as unknown as Window)).toBe(true);
  });
  it("is false in TensorBoard in a browser tab and standalone", () => {
    expect(embeddedTwoDeep(mid as unknown as Window)).toBe(false);
    expect(embeddedTwoDeep(top as unknown as Window)).toBe(false);
  });
});

describe("path prefix mapping", () => {
  const rules = parsePathRules("/workspace/=/home/me/proj/; /workspace/lib/ = /opt/lib/\nbad line\n=nothing");
  it("parses FROM=TO rules, skipping malformed ones", () => {
    expect(rules).toEqual([
      { from: "/workspace/", to: "/home/me/proj/" },
      { from: "/workspace/lib/", to: "/opt/lib/" },
    ]);
  });
  it("applies the longest matching prefix, leaves other paths alone", () => {
    expect(mapPath("/workspace/train.py", rules)).toBe("/home/me/proj/train.py");
    expect(mapPath("/workspace/lib/x.py", rules)).toBe("/opt/lib/x.py");
    expect(mapPath("/usr/lib/python3/y.py", rules)).toBe("/usr/lib/python3/y.py");
  });
});
