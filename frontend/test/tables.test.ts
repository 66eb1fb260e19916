// Issue 24 items 16, 17, 19: the module tree sorts within parents, every non-obvious column has its
// definition on hover, library frames are recognised and absolute frames link to vscode://.
import { describe, expect, it } from "vitest";
import { COLUMN_HELP, headerTitle, help } from "../src/lib/columnHelp";
import { type Frame, isLibraryFrame, parseFrame, vscodeUrl } from "../src/lib/source";
import { columnsFor, readKernelRow } from "../src/views/Kernel";
import { treeColumns } from "../src/views/Module";
import { type ModuleNode, buildTree, readModules, sortTree, visibleRows } from "../src/views/moduleTree";
import { operatorColumns } from "../src/views/Operator";
import { columns as roofColumns } from "../src/views/Roofline";

/** Headers that say what they are (names, counts, extremes): no definition needed. */
const OBVIOUS = new Set(["Operator", "Kernel", "Module", "Class", "Input dims", "Calls", "Max", "Min", "Occurrences"]);

function undefinedHeaders(cols: { header: string; tooltip?: string }[]): string[] {
  return cols.filter((c) => !c.tooltip && !OBVIOUS.has(c.header)).map((c) => c.header);
}

describe("column definitions", () => {
  it("explain every non-obvious operator column, in the device's units", () => {
    const cols = operatorColumns(true, true, undefined, "Matrix Cores", true);
    expect(undefinedHeaders(cols)).toEqual([]);
    const tc = cols.find((c) => c.id === "tc_eligible");
    expect(tc?.header).toBe("MC eligible");
    expect(tc?.tooltip).toContain("Matrix Cores");
    expect(tc?.tooltip).not.toContain("{units}");
  });
  it("explain every non-obvious kernel column (blocks per SM, est. occupancy, TC used…)", () => {
    const row = readKernelRow({
      name: "k", op_name: "aten::mm", grid: "[1, 1, 1]", block: "[128, 1, 1]", regs: 32, shmem: 0, tc_used: true, op_tc_eligible: true,
      calls: 1, total_us: 5, mean_us: 5, max_us: 5, min_us: 5, mean_blocks_per_sm: 0.5, mean_achieved_occupancy_pct: 12, replayed_calls: 1, replayed_device_us: 5,
    });
    const cols = columnsFor([row], true, "Tensor Cores", () => undefined);
    expect(cols.map((c) => c.id)).toEqual(expect.arrayContaining(["blocks_per_sm", "occupancy", "tc_used", "op_tc"]));
    expect(undefinedHeaders(cols)).toEqual([]);
    expect(cols.find((c) => c.id === "blocks_per_sm")?.tooltip).toContain("SM");
    expect(cols.find((c) => c.id === "occupancy")?.tooltip).toContain("occupancy");
  });
  it("explain the module tree's and the roofline's columns", () => {
    const a = readModules({ tree: "modules", has_device: true, nodes: [] });
    expect(undefinedHeaders(treeColumns(a, true).filter((c) => c.id !== "thread"))).toEqual([]);
    expect(treeColumns(a, false).find((c) => c.id === "step_share")?.tooltip).toBe(COLUMN_HELP.step_share);
    expect(undefinedHeaders(roofColumns(true, () => undefined))).toEqual([]);
    expect(undefinedHeaders(roofColumns(false, () => undefined))).toEqual([]);
  });
  it("put the definition before the sort hint", () => {
    expect(headerTitle(help("kernel_mean"))).toBe("Total ÷ calls\n(click to sort)");
    expect(headerTitle(undefined)).toBe("Click to sort");
  });
});

function node(id: number, parent: number, name: string, host: number): ModuleNode {
  return {
    id, parent, depth: 0, name, cls: "", kind: "forward", forward: -1, event: name, thread: "1/1", occurrences: 1,
    host_total_us: host, host_self_us: 0, device_total_us: 0, device_self_us: 0, step_share_pct: 0, longest_us: host,
  };
}

describe("sortTree", () => {
  // Net(100) -> [a(10), B(40) -> [c(5), D(30)], e(20)];  Other(150)
  const roots = buildTree([node(0, -1, "Net", 100), node(1, 0, "a", 10), node(2, 0, "B", 40), node(3, 2, "c", 5), node(4, 2, "D", 30), node(5, 0, "e", 20), node(6, -1, "Other", 150)]);
  const names = (rs: ReturnType<typeof sortTree>) => visibleRows(rs, new Set([0, 2]), "").map((r) => r.node.name);
  it("orders siblings within each parent, never moving a node out of its parent", () => {
    const host = { key: (n: ModuleNode) => n.host_total_us, desc: true };
    expect(names(sortTree(roots, host))).toEqual(["Other", "Net", "B", "D", "c", "e", "a"]);
    expect(names(sortTree(roots, { ...host, desc: false }))).toEqual(["Net", "a", "e", "B", "c", "D", "Other"]);
  });
  it("sorts text case-insensitively and keeps the answer's order without a sort", () => {
    expect(names(sortTree(roots, { key: (n) => n.name, desc: false }))).toEqual(["Net", "a", "B", "c", "D", "e", "Other"]);
    expect(names(sortTree(roots, null))).toEqual(["Net", "a", "B", "c", "D", "e", "Other"]);
    expect(sortTree(roots, null)).toBe(roots);
  });
});

describe("library frames", () => {
  const f = (t: string): Frame => parseFrame(t);
  it("are torch, installed packages, the standard library, frozen modules and built-ins", () => {
    for (const t of [
      "torch/autograd/graph.py(966): _engine_run_backward",
      "/opt/conda/lib/python3.11/site-packages/torch/nn/modules/module.py(1751): _call_impl",
      "/usr/lib/python3/dist-packages/numpy/core/numeric.py(10): f",
      "/usr/lib/python3.12/threading.py(1012): run",
      "<frozen runpy>(88): _run_code",
      "<built-in method run_backward of torch._C._EngineBase object at 0x7f>",
      "C:\\Python311\\Lib\\site-packages\\lightning\\x.py(3): g",
    ])
      expect(isLibraryFrame(f(t)), t).toBe(true);
  });
  it("are not the user's own code or module frames", () => {
    for (const t of ["make_samples.py(98): train_step", "/home/me/proj/torchvision_utils.py(3): f", "/work/mytorch/train.py(1): main", "nn.Module: Linear_0"])
      expect(isLibraryFrame(f(t)), t).toBe(false);
  });
});

describe("vscodeUrl", () => {
  it("links absolute paths, POSIX and Windows", () => {
    expect(vscodeUrl("/home/me/proj/make_samples.py", 98)).toBe("vscode://file/home/me/proj/make_samples.py:98");
    expect(vscodeUrl("C:\\proj\\m.py", 7)).toBe("vscode://file/C:/proj/m.py:7");
    expect(vscodeUrl("/a dir/#x?.py", 2)).toBe("vscode://file/a%20dir/%23x%3F.py:2");
  });
  it("has no link for a relative path", () => {
    expect(vscodeUrl("make_samples.py", 98)).toBeNull();
    expect(vscodeUrl("torch/nn/functional.py", 1)).toBeNull();
  });
});
