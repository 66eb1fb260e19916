// The views' readers against the examples of docs/api.md: when a documented field is renamed or
// reshaped, these fail (the views read the API through these functions only).
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { normalizeNames, normalizeRuns } from "../src/api/runs";
import { readAggregate, readEvent, readPlace, readSearch, readTracks, readWindowJson } from "../src/timeline/api";
import { readCriticalPath } from "../src/timeline/criticalPath";
import { readDistributed } from "../src/views/Distributed";
import { readKernelRows, readKernelTotals, readMatrixUnits } from "../src/views/Kernel";
import { readModules } from "../src/views/moduleTree";
import { readCurve, readDevices, readEvents, readStats } from "../src/views/Memory";
import { readPage, readRows, readStacks } from "../src/views/Operator";
import { readOverview } from "../src/views/Overview";

const doc = readFileSync(fileURLToPath(new URL("../../docs/api.md", import.meta.url)), "utf-8");

/** The first ```json block after the heading "### `<route>" (placeholders "…" removed). */
function example(route: string): unknown {
  const at = doc.indexOf("### `" + route);
  expect(at, `docs/api.md documents ${route}`).toBeGreaterThanOrEqual(0);
  const start = doc.indexOf("```json", at);
  const end = doc.indexOf("```", start + 7);
  const text = doc
    .slice(start + 7, end)
    .replace(/\[…\]/g, "[]")
    .replace(/,\s*…\s*\]/g, "]");
  return JSON.parse(text);
}

describe("docs/api.md examples through the readers", () => {
  it("timeline/critical_path", () => {
    const c = readCriticalPath(example("timeline/critical_path"));
    expect(c).toMatchObject({ step: 3, start: 1700000000000000, end: 1700000000001000 });
    expect(c.byKind).toEqual({ host: 700, launch: 20, device: 20, sync: 260, idle: 0 });
    expect(c.boundBy).toMatch(/^Host-bound/);
    expect(c.segments[0]).toEqual({ kind: "sync", name: "cudaStreamSynchronize", start: 1700000000000120, end: 1700000000000380, track: 0, depth: 1 });
    expect(c.segments[1]).toMatchObject({ kind: "device", track: 2, depth: 0 });
  });
  it("runs", () => {
    const a = normalizeRuns(example("runs"));
    expect(a.runs[0]).toMatchObject({ name: "ddp_gloo_2ranks", state: "ready", filesDone: 2, filesTotal: 2, bytesTotal: 239037 });
    expect(a.runs[0]?.errors[0]?.message).toMatch(/^not a valid trace/);
    expect(a.runs[0]?.warnings).toHaveLength(1);
  });
  it("name lists", () => {
    expect(normalizeNames(["1", "2"])).toEqual(["1", "2"]);
  });
  it("overview", () => {
    const o = readOverview(example("overview"));
    expect(o.deviceType).toBe("GPU");
    expect(o.matrixUnits).toBe("Tensor Cores");
    expect(o.workers).toBe(1);
    expect(o.cats.map((c) => c.key)).toEqual(["kernel", "memcpy", "memset", "runtime", "dataloader", "cpu_exec", "other"]);
    expect(o.steps[0]).toMatchObject({ number: 1, duration: 1000, kernel: 400, cpu_exec: 90, other: 500 });
    expect(o.stepTime).toBe(1000);
    expect(o.summary.find((r) => r.key === "kernel")).toMatchObject({ us: 400, pct: 40 });
    expect(o.gpus[0]).toMatchObject({ id: 0, name: "Tesla V100-SXM2-16GB", utilization: 40, smEfficiency: 40, occupancy: 25, tensorCore: 0 });
    expect(o.recommendations[0]).toMatchObject({ id: "low_gpu_utilization", title: "Low GPU utilization" });
    expect(o.distributed).toMatchObject({ backend: "nccl", world_size: 2 });
  });
  it("operators and their stacks", () => {
    const rows = readRows(example("operators?"));
    expect(readPage(example("operators?"))).toEqual({ offset: 0, limit: 10000, total: 2, matched: 2 });
    expect(rows[0]).toMatchObject({ name: "aten::mm", inputShape: "[[2, 3], [3, 4]]", calls: 1, hostSelf: 290, hostTotal: 300, deviceSelf: 400, deviceTotal: 400, tcEligible: true, hasStack: true, tcSelfPct: 0 });
    const stacks = readStacks(example("operators/stack"));
    expect(stacks[0]?.calls).toBe(1);
    expect(stacks[0]?.frames[0]).toMatchObject({ file: "model.py", line: 12, func: "forward" });
  });
  it("kernels", () => {
    expect(readMatrixUnits(example("kernels"))).toBe("Tensor Cores");
    expect(readPage(example("kernels"))).toEqual({ offset: 0, limit: 10000, total: 1, matched: 1 });
    expect(readKernelTotals(example("kernels"))).toEqual({ top: [{ name: "volta_sgemm_128x64_nn", total: 400 }], count: 1, total: 400, tc: 0, tcUnknown: 0 });
    const k = readKernelRows(example("kernels"))[0];
    expect(k).toMatchObject({ name: "volta_sgemm_128x64_nn", operator: "aten::mm", grid: "[1, 1, 1]", regs: 32, shmem: 0, calls: 1, total: 400, mean: 400, blocksPerSm: 2, occupancy: 25, tcUsed: false, opTcEligible: true });
  });
  it("memory", () => {
    expect(readDevices(example("memory/devices"))[0]).toMatchObject({ device: "GPU0", records: 8220, hasTotals: true, peak: 12500, total: 16945512448 });
    const c = readCurve(example("memory/curve"));
    // t0 is origin_ts (the profile start the timeline counts from), not the first record's time
    expect(c).toMatchObject({ t0: 1700000000000000, peak: 12500, peakReserved: 22000, relative: false, hasTotals: true });
    const e = readEvents(example("memory/events"));
    expect(e).toMatchObject({ total: 5, hasAddresses: true });
    expect(e.rows[0]).toMatchObject({ operator: "aten::conv2d (aten::empty)", bytes: 1000, duration: 75 });
    expect(readStats(example("memory/stats"))[0]).toMatchObject({ name: "aten::conv2d", calls: 1, sizeIncrease: 500, allocCount: 2, allocSize: 1500 });
  });
  it("distributed", () => {
    const d = readDistributed(example("distributed"));
    expect(d.names).toEqual(["rank0"]);
    expect(d.job).toBe("");
    expect(d.jobs).toEqual([{ name: "", workers: 2 }]);
    expect(d.steps).toEqual(["2", "3", "4"]);
    expect(d.comm.rank0?.[0]).toMatchObject({ collective: "all_reduce", calls: 2, totalBytes: 8000000, totalLatency: 750, algbw: 10.67 });
    expect(d.stragglers[0]).toMatchObject({ worker: "rank1", timesLast: 1, totalWait: 100 });
    expect(d.gpus[0]).toMatchObject({ node: "node0", process: "Process 1000", gpu: "GPU0", name: "NVIDIA H100", memory: 85899345920, cc: "9.0", sms: 132 });
    expect(d.roundCount).toBe(2);
    expect(d.rounds[0]).toMatchObject({ collective: "all_reduce", group: "0", seq: 0, step: "1", lastWorker: "rank1", wait: 100, ranks: 2 });
    expect(d.groups[0]).toMatchObject({ name: "0", description: "default_pg", backend: "cuda:nccl", size: 2, ranks: "0, 1" });
    expect(d.heatSteps).toEqual(["2"]);
    expect(d.heatCells.computation).toEqual([[200]]);
    expect(d.heatCells.synchronizing).toEqual([[100]]);
    expect(d.distribution[0]).toMatchObject({ metric: "computation", min: 200, median: 200, p95: 200, max: 200 });
    expect(d.distribution[0]?.highest[0]).toEqual({ worker: "rank0", rank: 0, value: 200 });
    expect(d.rankRows[0]).toMatchObject({ worker: "rank0", rank: 0, values: { computation: 200, synchronizing: 100, transferring: 300 } });
    expect(d.jobCollectives[0]).toMatchObject({ collective: "all_reduce", ranks: 1, calls: 2, latMedian: 750, busbwMedian: 10.67 });
    expect(d.jobCollectives[0]?.lowest[0]?.worker).toBe("rank0");
  });
  it("timeline", () => {
    const t = readTracks(example("timeline/tracks"));
    expect(t).toMatchObject({ start: 1700000000000.0, end: 1700000123456.0, eventCount: 120345, moved: 3 });
    expect(t.groups.map((g) => g.id)).toEqual(["p:1234", "d:0"]);
    expect(t.tracks[0]).toMatchObject({ id: 0, group: "p:1234", kind: "thread", rows: 9, extraRows: 1, moved: 3 });
    expect(t.tracks[2]).toMatchObject({ id: 9, kind: "counter", unit: "ratio", max: 1 });
    expect(t.steps[0]).toMatchObject({ number: 5, start: 1700000000100.0, end: 1700000010100.0 });
    const w = readWindowJson(example("timeline?"));
    expect(w).toMatchObject({ start: 1, end: 2, px: 2000, resolution: 0.0005, count: 2 });
    expect(w.names[w.name[1] ?? 0]).toBe("12 events");
    expect([...w.cnt]).toEqual([1, 12]);
    expect(w.names[w.major[1] ?? 0]).toBe("volta_sgemm_128x64_nn");
    expect(w.names[w.major[0] ?? 0]).toBe("aten::mm");
    expect([...w.row]).toEqual([17, -1]);
    expect(w.kinds[w.kind[0] ?? 0]).toBe("op");
    expect([...(w.counters.get(9)?.values ?? [])]).toEqual([0.5, 0.7]);
    const e = readEvent(example("timeline/event"));
    expect(e).toMatchObject({ id: "dev:12", kind: "dev", name: "volta_sgemm_128x64_nn", category: "kernel", track: 5, start: 1.5, dur: 120, self: null });
    expect(e.args).toContainEqual(["grid", "[80, 1, 1]"]);
    expect(e.args).toContainEqual(["correlation", "3412"]);
    expect(e.links[0]).toMatchObject({ relation: "launched by", id: "rt:40", name: "cudaLaunchKernel", track: 0, depth: 4, start: 1.2, dur: 5 });
  });
  it("timeline search, longest and aggregate (documented inline)", () => {
    const s = readSearch({ query: "mm", total: 1234, truncated: true, matches: [{ id: "op:1", track: 0, depth: 2, start_us: 5, dur_us: 1, name: "aten::mm" }] });
    expect(s).toMatchObject({ total: 1234, truncated: true });
    expect(s.matches[0]).toMatchObject({ id: "op:1", track: 0, depth: 2, start: 5, dur: 1, name: "aten::mm" });
    expect(readPlace({ id: "dev:3", track: 5, depth: 0, start_us: 7, dur_us: 2, name: "k" })).toMatchObject({ id: "dev:3", start: 7, dur: 2 });
    const a = readAggregate({ start_us: 1, end_us: 2, events: 321, rows: [{ name: "aten::mm", count: 2, total_us: 10, self_us: null, mean_us: 5 }] });
    expect(a.events).toBe(321);
    expect(a.rows[0]).toMatchObject({ name: "aten::mm", count: 2, total: 10, self: null, mean: 5 });
    // every field readSearch/readAggregate use is named in docs/api.md
    for (const field of ['"query"', '"total"', '"truncated"', '"matches"', '"events"', '"rows"', '"total_us"', '"self_us"', '"mean_us"'])
      expect(doc.slice(doc.indexOf("### `timeline/search")), field).toContain(field);
  });
  it("modules", () => {
    const m = readModules(example("modules"));
    expect(m).toMatchObject({ tree: "modules", source: "nn.Module", step: "all", has_modules: true, has_device: true, main_thread: "100/100" });
    expect(m.threads["100/200"]).toBe("thread 200");
    expect(m.steps[0]).toMatchObject({ number: 1, name: "ProfilerStep#1", duration_us: 1000 });
    expect(m.nodes).toHaveLength(4);
    expect(m.nodes[1]).toMatchObject({ id: 1, parent: 0, name: "Linear_0", cls: "Linear" });
    expect(m.nodes[3]).toMatchObject({ id: 3, parent: 2, name: "Linear_0.backward", kind: "backward", forward: 1, event: "", thread: "100/200" });
    expect(m.nodes[0]).toMatchObject({ host_total_us: 600, host_self_us: 500, device_total_us: 115, device_self_us: 65, step_share_pct: 60, longest_us: 600, occurrences: 1 });
  });
});
