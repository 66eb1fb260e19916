import { describe, expect, it } from "vitest";
import { mergeState, parseQuery, toQuery } from "../src/lib/urlState";

describe("URL state", () => {
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
