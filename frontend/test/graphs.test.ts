import { describe, expect, it } from "vitest";
import { readOpRow } from "../src/views/Operator";
import { readGraphs } from "../src/views/Overview";

describe("graph replays in the Overview and the Operator view", () => {
  it("reads the overview's graphs note (docs/api.md)", () => {
    expect(readGraphs(null)).toBeNull();
    const g = readGraphs({
      replays: 1,
      replayed_share: 0.9,
      attributed_device_us: 100,
      unattributed_device_us: 12,
      text: "…",
      captures: [{ file: "bs_32_rank0.json.gz", batch_size: 32, mode: "FULL", matched_replays: 1, leftover_launches: 2 }],
      unmatched: ["replay 2 (3 kernels): ambiguous"],
    });
    expect(g).toEqual({
      text: "…",
      replays: 1,
      replayedShare: 90,
      attributed: 100,
      unattributed: 12,
      captures: [{ file: "bs_32_rank0.json.gz", batchSize: 32, mode: "FULL", matched: 1, leftovers: 2 }],
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
