import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { type ModuleNode, HOOK_PARTS, allParents, buildTree, icicle, pathTo, readHookStep, readModules, visibleRows } from "../src/views/moduleTree";
import { readRows } from "../src/views/Operator";

const doc = readFileSync(fileURLToPath(new URL("../../docs/api.md", import.meta.url)), "utf-8");

function example(route: string): unknown {
  const at = doc.indexOf("### `" + route);
  expect(at, `docs/api.md documents ${route}`).toBeGreaterThanOrEqual(0);
  const start = doc.indexOf("```json", at);
  return JSON.parse(doc.slice(start + 7, doc.indexOf("```", start + 7)));
}

function node(id: number, parent: number, name: string, host: number, device = 0, cls = ""): ModuleNode {
  return {
    id,
    parent,
    depth: 0,
    name,
    cls,
    kind: "forward",
    forward: -1,
    event: `nn.Module: ${name}`,
    thread: "1/1",
    occurrences: 1,
    host_total_us: host,
    host_self_us: 0,
    device_total_us: device,
    device_self_us: 0,
    step_share_pct: 0,
    longest_us: host,
  };
}

// Net(100) -> [A(40) -> [C(10)], B(20)];  Other(100) on its own
const NODES = [node(0, -1, "Net", 100, 10), node(1, 0, "A", 40, 10, "Linear"), node(2, 1, "C", 10), node(3, 0, "B", 20), node(4, -1, "Other", 100)];

describe("modules answer", () => {
  it("reads the docs example", () => {
    const a = readModules(example("modules?"));
    expect(a.tree).toBe("modules");
    expect(a.step).toBe("all");
    expect(a.has_device).toBe(true);
    expect(a.threads["100/100"]).toBe("thread 100 (python)");
    expect(a.nodes[1]).toMatchObject({ id: 1, parent: 0, name: "Linear_0", cls: "Linear", kind: "forward", forward: -1, host_total_us: 100, device_self_us: 50, longest_us: 100 });
    // Linear_0.backward under Net_0.backward, on the autograd thread, pointing at its forward node
    expect(a.nodes[3]).toMatchObject({ parent: 2, name: "Linear_0.backward", kind: "backward", forward: 1, event: "", thread: "100/200", host_total_us: 40 });
    expect(buildTree(a.nodes).map((r) => r.node.name)).toEqual(["Net_0", "Net_0.backward"]);
    expect(a.hook_steps).toEqual([]);
    const ops = readRows(example("modules/operators"));
    expect(ops[0]).toMatchObject({ name: "aten::linear", calls: 1, hostSelf: 75, hostTotal: 80, deviceSelf: 50 });
  });
});

describe("tree", () => {
  const roots = buildTree(NODES);
  it("builds the forest from the pre-order list", () => {
    expect(roots.map((r) => r.node.name)).toEqual(["Net", "Other"]);
    expect(roots[0]?.children.map((c) => c.node.name)).toEqual(["A", "B"]);
    expect(allParents(roots)).toEqual([0, 1]);
    expect(pathTo(NODES, 2).map((n) => n.name)).toEqual(["Net", "A", "C"]);
  });
  it("shows children of open nodes only", () => {
    expect(visibleRows(roots, new Set(), "").map((r) => r.node.name)).toEqual(["Net", "Other"]);
    expect(visibleRows(roots, new Set([0]), "").map((r) => [r.node.name, r.depth])).toEqual([
      ["Net", 0],
      ["A", 1],
      ["B", 1],
      ["Other", 0],
    ]);
  });
  it("search keeps matches and their ancestors, opened", () => {
    const rows = visibleRows(roots, new Set(), "c");
    expect(rows.map((r) => [r.node.name, r.match])).toEqual([
      ["Net", false],
      ["A", false],
      ["C", true],
    ]);
    expect(visibleRows(roots, new Set(), "linear").map((r) => r.node.name)).toEqual(["Net", "A"]); // by class
  });
});

describe("icicle", () => {
  const roots = buildTree(NODES);
  it("roots share the width by value; children by their share of the parent", () => {
    const bars = icicle(roots, "host", null);
    const at = (name: string) => bars.find((b) => b.node.name === name);
    expect(at("Net")).toMatchObject({ x: 0, w: 0.5, row: 0 });
    expect(at("Other")).toMatchObject({ x: 0.5, w: 0.5, row: 0 });
    expect(at("A")).toMatchObject({ x: 0, w: 0.2, row: 1 });
    expect(at("B")?.x).toBeCloseTo(0.2);
    expect(at("B")?.w).toBeCloseTo(0.1);
    expect(at("C")).toMatchObject({ x: 0, w: 0.05, row: 2 });
  });
  it("zoom: ancestors full width on top, the node full width below", () => {
    const bars = icicle(roots, "host", 1);
    expect(bars.map((b) => [b.node.name, b.row, b.x, b.w, b.ancestor])).toEqual([
      ["Net", 0, 0, 1, true],
      ["A", 1, 0, 1, false],
      ["C", 2, 0, 0.25, false],
    ]);
  });
  it("device metric and the minimum width", () => {
    const bars = icicle(roots, "device", null);
    expect(bars.map((b) => b.node.name)).toEqual(["Net", "A"]); // Other has no device time
    expect(icicle(roots, "host", null, 0.15).map((b) => b.node.name)).toEqual(["Net", "A", "Other"]);
  });
});

describe("hook steps", () => {
  it("reads the documented shape, every part present", () => {
    const doc = '{"number": 2, "name": "ProfilerStep#2", "duration_us": 1000.0, "parts": {"data_fetching": 10.0, "step": 300.0, "backward": 300.0, "optimizer": 200.0, "callbacks": 20.0, "other_hooks": 100.0, "outside_hooks": 70.0}}';
    const s = readHookStep(JSON.parse(doc));
    expect(s.number).toBe(2);
    expect(HOOK_PARTS.reduce((t, k) => t + s.parts[k], 0)).toBe(1000);
    expect(readHookStep({ number: 1, parts: {} }).parts.backward).toBe(0);
  });
});
