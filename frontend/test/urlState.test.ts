import { describe, expect, it } from "vitest";
import { mergeState, parseQuery, parseTabHash, sameState, toQuery, toTabHash } from "../src/lib/urlState";

describe("URL state", () => {
  it("compares selections by keys and values, not by order or escaping", () => {
    expect(sameState(parseTabHash("#pytorch_profiler&view=Operator&run=a%20b"), { run: "a b", view: "Operator" })).toBe(true);
    expect(sameState({ run: "a", span: "" }, { run: "a" })).toBe(true);
    expect(sameState({ run: "a", span: "1" }, { run: "a" })).toBe(false);
    expect(sameState({ run: "a" }, { run: "b" })).toBe(false);
  });
  it("round-trips a selection with special characters", () => {
    const state = { run: "run a&b/ü", view: "Operator", worker: "rank0", span: "2" };
    const q = toQuery(state);
    expect(q.startsWith("?")).toBe(true);
    expect(parseQuery(q)).toEqual(state);
  });
  it("removes keys patched to null or empty, keeps the others", () => {
    expect(mergeState({ run: "a", span: "2", mstart: "1" }, { span: null, mstart: "", view: "Memory" })).toEqual({
      run: "a",
      view: "Memory",
    });
  });
  it("writes nothing for an empty selection", () => {
    expect(toQuery({})).toBe("");
    expect(toQuery({ run: "" })).toBe("");
  });
});

describe("TensorBoard's address", () => {
  it("round-trips a selection after the tab name", () => {
    const state = { run: "run a&b/ü", view: "Operator", worker: "rank=0" };
    const hash = toTabHash(state);
    expect(hash.startsWith("#pytorch_profiler&run=")).toBe(true);
    expect(parseTabHash(hash)).toEqual(state);
  });
  it("reads nothing from another tab or a bare tab", () => {
    expect(parseTabHash("#scalars&run=a")).toEqual({});
    expect(parseTabHash("#pytorch_profiler")).toEqual({});
    expect(parseTabHash("")).toEqual({});
  });
  it("skips malformed pieces", () => {
    expect(parseTabHash("#pytorch_profiler&run=%E0%A4%A&view=Memory&junk")).toEqual({ view: "Memory" });
  });
});
