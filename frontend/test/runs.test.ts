import { describe, expect, it } from "vitest";
import { captureLabel, defaultWorker, fetchAllRuns, normalizeNames, normalizeRuns, workerEvicted, workerFailed } from "../src/api/runs";

const answer = {
  logdir: "samples",
  scan_error: null,
  scan_warnings: ["skipped ddp/loop: the same directory as ddp, already scanned"],
  loading: true,
  runs: [
    {
      name: "ddp",
      state: "loading",
      progress: { files_done: 1, files_total: 2, bytes_done: 100, bytes_total: 300 },
      files: [
        { file: "ddp/a_broken.pt.trace.json.gz", worker: "a_broken", span: "1", size: 5, status: "error" },
        { file: "ddp/rank0.pt.trace.json.gz", worker: "rank0", span: "1", size: 100, status: "ready" },
      ],
      errors: [{ file: "ddp/a_broken.pt.trace.json.gz", worker: "a_broken", span: "1", message: "not a valid trace: x" }],
      warnings: [{ file: "ddp/rank0.pt.trace.json.gz", worker: "rank0", span: "1", message: "bare N/A" }],
    },
  ],
};

describe("normalizeRuns", () => {
  it("reads the documented answer (docs/api.md)", () => {
    const a = normalizeRuns(answer);
    expect(a.scanning).toBe(true);
    expect(a.logdir).toBe("samples");
    expect(a.scanError).toBe("");
    expect(a.scanWarnings).toEqual(["skipped ddp/loop: the same directory as ddp, already scanned"]);
    expect(a.runs[0]).toMatchObject({
      name: "ddp",
      state: "loading",
      loading: true,
      filesDone: 1,
      filesTotal: 2,
      bytesDone: 100,
      bytesTotal: 300,
      errors: [{ file: "ddp/a_broken.pt.trace.json.gz", message: "not a valid trace: x" }],
      warnings: [{ file: "ddp/rank0.pt.trace.json.gz", message: "bare N/A" }],
    });
    expect(a.runs[0]?.version).toContain("ddp/rank0.pt.trace.json.gz:100:ready");
  });
  it("ignores what is not the documented shape", () => {
    expect(normalizeRuns(["a", "b"]).runs).toEqual([]);
    expect(normalizeRuns({ scan_warnings: "x" }).scanWarnings).toEqual([]);
    expect(normalizeRuns({ runs: [{ name: "x", files_done: 1 }] }).runs[0]?.filesDone).toBeNull();
  });
});

describe("default worker", () => {
  it("skips a worker whose files all failed, and marks it", () => {
    const run = normalizeRuns(answer).runs[0]!;
    expect(defaultWorker(run, ["a_broken", "rank0"])).toBe("rank0");
    expect(workerFailed(run, "a_broken")).toBe(true);
    expect(workerFailed(run, "rank0")).toBe(false);
  });
  it("marks a worker whose loaded files were all evicted for the memory budget", () => {
    const run = normalizeRuns({
      runs: [
        {
          name: "r",
          state: "ready",
          files: [
            { worker: "w0", span: "1", status: "ready", memory: "evicted" },
            { worker: "w0", span: "2", status: "error", memory: null },
            { worker: "w1", span: "1", status: "ready", memory: "resident" },
            { worker: "w2", span: "1", status: "ready", memory: "evicted" },
            { worker: "w2", span: "2", status: "ready", memory: "summary" },
          ],
        },
      ],
    }).runs[0]!;
    expect(run.files[0]?.memory).toBe("evicted");
    expect(run.files[1]?.memory).toBe("");
    expect(workerEvicted(run, "w0")).toBe(true);
    expect(workerEvicted(run, "w1")).toBe(false);
    expect(workerEvicted(run, "w2")).toBe(false); // one span still only summarized, not dropped
    expect(workerEvicted(run, "nobody")).toBe(false);
  });
  it("falls back to the first worker when none loaded yet", () => {
    const run = normalizeRuns({ runs: [{ name: "r", state: "loading", files: [] }] }).runs[0]!;
    expect(defaultWorker(run, ["w1", "w2"])).toBe("w1");
  });
});

describe("normalizeNames", () => {
  it("reads a list of strings", () => {
    expect(normalizeNames(["Overview", "Operator"])).toEqual(["Overview", "Operator"]);
    expect(normalizeNames({ spans: ["1"] })).toEqual([]);
  });
});

describe("a run's graph captures", () => {
  it("reads them and labels the run", () => {
    const run = normalizeRuns({
      runs: [{ name: "serve", state: "ready", files: [], captures: { files: ["bs_8.json.gz", "bs_32.json.gz"], batch_sizes: [8, 32], matched_replays: 3, unmatched: ["replay 4 (2 kernels): …"], merged: true } }],
    }).runs[0];
    expect(run?.captures).toEqual({ files: ["bs_8.json.gz", "bs_32.json.gz"], batchSizes: [8, 32], matchedReplays: 3, unmatched: ["replay 4 (2 kernels): …"], merged: true });
    expect(captureLabel(run!.captures!)).toBe("2 capture traces, batch sizes 8, 32");
    expect(captureLabel({ files: ["c.pt.trace.json"], batchSizes: [], matchedReplays: 0, unmatched: [], merged: false })).toBe("1 capture trace");
    expect(normalizeRuns({ runs: [{ name: "a" }] }).runs[0]?.captures).toBeNull();
  });
});

describe("fetchAllRuns", () => {
  it("joins the pages of a paged answer, a run cut between pages once", async () => {
    const file = (w: string) => ({ file: `big/${w}.pt.trace.json.gz`, worker: w, span: "1", size: 1, status: "ready" });
    const pages = [
      { logdir: "l", loading: false, offset: 0, next_offset: 2, runs: [{ name: "a", state: "ready", files: [file("a0")] }, { name: "big", state: "ready", files: [file("w0")], errors: [], warnings: [] }] },
      { logdir: "l", loading: true, offset: 2, next_offset: 4, runs: [{ name: "big", state: "ready", files_offset: 1, files: [file("w1"), file("w2")], warnings: [{ file: "big/w2.pt.trace.json.gz", message: "m" }] }] },
      { logdir: "l", loading: false, offset: 4, next_offset: null, runs: [{ name: "z", state: "ready", files: [file("z0")] }] },
    ];
    const asked: number[] = [];
    const a = await fetchAllRuns(async ({ offset }) => {
      asked.push(offset);
      return pages[asked.length - 1];
    });
    expect(asked).toEqual([0, 2, 4]);
    expect(a.runs.map((r) => r.name)).toEqual(["a", "big", "z"]);
    expect(a.runs[1]?.files.map((f) => f.worker)).toEqual(["w0", "w1", "w2"]);
    expect(a.runs[1]?.warnings).toEqual([{ file: "big/w2.pt.trace.json.gz", message: "m" }]);
    expect(a.scanning).toBe(true);
  });
});
