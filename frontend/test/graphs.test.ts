import { describe, expect, it } from "vitest";
import { readOpRow } from "../src/views/Operator";
import { readGraphs } from "../src/views/Overview";
import { readEvent } from "../src/timeline/api";
import { timelineParams } from "../src/views/Trace";

describe("graph replays in the Overview and the Operator view", () => {
  it("reads the overview's graphs note (docs/api.md)", () => {
    expect(readGraphs(null)).toBeNull();
    const g = readGraphs({
      replays: 1,
      replayed_share: 0.9,
      attributed_device_us: 100,
      unattributed_device_us: 12,
      text: "…",
      captures: [
        { file: "bs_32_rank0.json.gz", batch_size: 32, mode: "FULL", matched_replays: 1, leftover_launches: 2, rank: 0, used: true },
        { file: "bs_32_rank1.json.gz", batch_size: 32, mode: "FULL", matched_replays: 0, leftover_launches: 0, rank: 1, used: false },
      ],
      unmatched: ["replay 2 (3 kernels): ambiguous"],
    });
    expect(g).toEqual({
      text: "…",
      replays: 1,
      replayedShare: 90,
      attributed: 100,
      unattributed: 12,
      captures: [
        { file: "bs_32_rank0.json.gz", batchSize: 32, mode: "FULL", matched: 1, leftovers: 2, rank: 0, used: true },
        { file: "bs_32_rank1.json.gz", batchSize: 32, mode: "FULL", matched: 0, leftovers: 0, rank: 1, used: false },
      ],
      unmatched: ["replay 2 (3 kernels): ambiguous"],
    });
  });
  it("reads an operator row's replay fields, with defaults for older answers", () => {
    const row = readOpRow({ name: "graph replay", kind: "graph_replay", calls: 25, replayed_calls: 25, replayed_device_us: 149919.8 });
    expect([row.kind, row.replayedCalls, row.replayedDevice]).toEqual(["graph_replay", 25, 149919.8]);
    const old = readOpRow({ name: "aten::mm", calls: 1 });
    expect([old.kind, old.replayedCalls, old.replayedDevice]).toEqual(["op", 0, 0]);
  });
});

describe("inference steps in the Overview", () => {
  it("reads and words the inference summary", async () => {
    const { readInference, inferenceLine } = await import("../src/views/Overview");
    expect(readInference(null)).toBeNull();
    const i = readInference({ steps: { prefill: 0, decode: 2, mixed: 1 }, context_tokens: 8155, generation_tokens: 37, us_per_token: 37.56 });
    expect(i).toEqual({ prefill: 0, decode: 2, mixed: 1, contextTokens: 8155, generationTokens: 37, usPerToken: 37.56 });
    expect(inferenceLine(i!)).toMatch(/^2 decode steps, 1 mixed step · 8,155 context \+ 37 generation tokens · 37\.\d+ µs per token$/);
  });
});

describe("graph replays in the Kernel view", () => {
  it("reads a kernel row's replayed calls and time, 0 for older answers", async () => {
    const { readKernelRow } = await import("../src/views/Kernel");
    const k = readKernelRow({ name: "gemm", calls: 145, total_us: 5782.3, replayed_calls: 145, replayed_device_us: 5782.3 });
    expect([k.replayedCalls, k.replayed]).toEqual([145, 5782.3]);
    expect(readKernelRow({ name: "old", calls: 1 }).replayedCalls).toBe(0);
  });
});

describe("a replayed kernel's capture link", () => {
  const kernel = { id: "dev:4", name: "gemm", kind: "dev", category: "kernel", track: 3, depth: 0, start_us: 10, dur_us: 2, self_us: null, args: {}, frames: [], links: [] };
  it("reads the capture trace and the launch to open, and nothing when absent or incomplete", () => {
    expect(readEvent({ ...kernel, capture: { file: "bs_32_rank0.json.gz", launch: "rt:2" } }).capture).toEqual({ file: "bs_32_rank0.json.gz", launch: "rt:2" });
    expect(readEvent(kernel).capture).toBeNull();
    expect(readEvent({ ...kernel, capture: { file: "bs_32_rank0.json.gz" } }).capture).toBeNull();
  });
  it("adds the capture to the timeline routes' parameters only while one is shown", () => {
    const p = { run: "r", worker: "w", span: null, state: {} };
    expect(timelineParams(p)).toEqual({ run: "r", worker: "w" });
    expect(timelineParams({ ...p, span: "2", state: { capture: "c.json" } })).toEqual({ run: "r", worker: "w", span: "2", capture: "c.json" });
  });
});
