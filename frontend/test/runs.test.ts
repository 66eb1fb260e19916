import { describe, expect, it } from "vitest";
import { normalizeNames, normalizeRuns } from "../src/api/runs";

describe("normalizeRuns", () => {
  it("reads the documented answer (docs/api.md)", () => {
    const a = normalizeRuns({
      logdir: "samples",
      scan_error: null,
      loading: true,
      runs: [
        {
          name: "ddp",
          state: "loading",
          progress: { files_done: 1, files_total: 2, bytes_done: 100, bytes_total: 300 },
          files: [{ file: "ddp/rank0.pt.trace.json.gz", worker: "rank0", span: "1", size: 100, status: "ready" }],
          errors: [{ file: "ddp/rank1.pt.trace.json.gz", worker: "rank1", span: "1", message: "not a valid trace: x" }],
          warnings: [{ file: "ddp/rank0.pt.trace.json.gz", worker: "rank0", span: "1", message: "bare N/A" }],
        },
      ],
    });
    expect(a.scanning).toBe(true);
    expect(a.logdir).toBe("samples");
    expect(a.scanError).toBe("");
    expect(a.runs[0]).toMatchObject({
      name: "ddp",
      state: "loading",
      loading: true,
      filesDone: 1,
      filesTotal: 2,
      bytesDone: 100,
      bytesTotal: 300,
      errors: [{ file: "ddp/rank1.pt.trace.json.gz", message: "not a valid trace: x" }],
      warnings: [{ file: "ddp/rank0.pt.trace.json.gz", message: "bare N/A" }],
    });
    expect(a.runs[0]?.version).toContain("ddp/rank0.pt.trace.json.gz:100:ready");
  });
  it("reads progress and per-file errors", () => {
    const a = normalizeRuns({
      runs: [
        {
          name: "r",
          loading: true,
          files_done: 1,
          files_total: 3,
          bytes_done: 10,
          bytes_total: 30,
          errors: [{ file: "w.pt.trace.json", message: "truncated JSON at byte 12" }],
        },
      ],
    });
    expect(a.runs[0]).toMatchObject({
      name: "r",
      loading: true,
      filesDone: 1,
      filesTotal: 3,
      bytesDone: 10,
      bytesTotal: 30,
      errors: [{ file: "w.pt.trace.json", message: "truncated JSON at byte 12" }],
    });
  });
  it("accepts a plain list of names", () => {
    expect(normalizeRuns(["a", "b"]).runs.map((r) => [r.name, r.loading])).toEqual([
      ["a", false],
      ["b", false],
    ]);
  });
  it("infers loading from the file counts", () => {
    expect(normalizeRuns({ runs: [{ name: "x", files_done: 2, files_total: 2 }] }).runs[0]?.loading).toBe(false);
    expect(normalizeRuns({ runs: [{ name: "x", files_done: 1, files_total: 2 }] }).runs[0]?.loading).toBe(true);
  });
});

describe("normalizeNames", () => {
  it("reads strings, objects with names and wrapped lists", () => {
    expect(normalizeNames(["Overview", "Operator"])).toEqual(["Overview", "Operator"]);
    expect(normalizeNames([{ name: "worker0" }])).toEqual(["worker0"]);
    expect(normalizeNames({ spans: ["1", "2"] })).toEqual(["1", "2"]);
  });
});
