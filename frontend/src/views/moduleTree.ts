// The Module view's data: the `modules` answer typed once (docs/api.md), the tree built from its
// pre-ordered node list, search, and the icicle (flame graph) layout. Pure functions (test/module.test.ts).

import { arr, isObj, num, str } from "../lib/pick";

export interface ModuleNode {
  id: number;
  parent: number;
  depth: number;
  name: string;
  cls: string;
  /** "forward" (a module range) or "backward" (`<name>.backward`: the backward functions of its forward ops) */
  kind: "forward" | "backward";
  /** a backward node's forward node, else -1 */
  forward: number;
  /** the trace's own event name (what the Trace view searches); "" for backward nodes */
  event: string;
  /** "pid/tid" */
  thread: string;
  occurrences: number;
  host_total_us: number;
  host_self_us: number;
  device_total_us: number;
  device_self_us: number;
  step_share_pct: number;
  longest_us: number;
}

export interface ModuleStep {
  number: number;
  name: string;
  duration_us: number;
}

/** Lightning hooks per step: µs per part (analysis/modules/lightning.py), summing to the step's duration. */
export const HOOK_PARTS = ["data_fetching", "step", "backward", "optimizer", "callbacks", "other_hooks", "outside_hooks"] as const;
export type HookPart = (typeof HOOK_PARTS)[number];

export interface HookStep {
  number: number;
  name: string;
  duration_us: number;
  parts: Record<HookPart, number>;
}

export function readHookStep(r: unknown): HookStep {
  const raw = isObj(r) ? r.parts : undefined;
  const parts = {} as Record<HookPart, number>;
  for (const k of HOOK_PARTS) parts[k] = num(raw, k) ?? 0;
  return { number: num(r, "number") ?? 0, name: str(r, "name"), duration_us: num(r, "duration_us") ?? 0, parts };
}

export interface ModulesAnswer {
  tree: "modules" | "hooks";
  source: string;
  step: "all" | number;
  steps: ModuleStep[];
  has_modules: boolean;
  has_hooks: boolean;
  has_device: boolean;
  main_thread: string | null;
  threads: Record<string, string>;
  nodes: ModuleNode[];
  hook_steps: HookStep[];
}

export function readNode(r: unknown): ModuleNode {
  return {
    id: num(r, "id") ?? -1,
    parent: num(r, "parent") ?? -1,
    depth: num(r, "depth") ?? 0,
    name: str(r, "name"),
    cls: str(r, "cls"),
    kind: str(r, "kind") === "backward" ? "backward" : "forward",
    forward: num(r, "forward") ?? -1,
    event: str(r, "event"),
    thread: str(r, "thread"),
    occurrences: num(r, "occurrences") ?? 0,
    host_total_us: num(r, "host_total_us") ?? 0,
    host_self_us: num(r, "host_self_us") ?? 0,
    device_total_us: num(r, "device_total_us") ?? 0,
    device_self_us: num(r, "device_self_us") ?? 0,
    step_share_pct: num(r, "step_share_pct") ?? 0,
    longest_us: num(r, "longest_us") ?? 0,
  };
}

export function readModules(d: unknown): ModulesAnswer {
  const threads: Record<string, string> = {};
  const t = isObj(d) ? d.threads : undefined;
  if (isObj(t)) for (const [k, v] of Object.entries(t)) threads[k] = String(v);
  const step = isObj(d) && typeof d.step === "number" ? d.step : "all";
  return {
    tree: str(d, "tree") === "hooks" ? "hooks" : "modules",
    source: str(d, "source"),
    step,
    steps: arr(d, "steps").map((s) => ({ number: num(s, "number") ?? 0, name: str(s, "name"), duration_us: num(s, "duration_us") ?? 0 })),
    has_modules: isObj(d) && d.has_modules === true,
    has_hooks: isObj(d) && d.has_hooks === true,
    has_device: isObj(d) && d.has_device === true,
    main_thread: isObj(d) && typeof d.main_thread === "string" ? d.main_thread : null,
    threads,
    nodes: arr(d, "nodes").map(readNode),
    hook_steps: arr(d, "hook_steps").map(readHookStep),
  };
}

/** A node with its children (in the answer's order). */
export interface TreeNode {
  node: ModuleNode;
  children: TreeNode[];
}

/** The forest of a pre-ordered node list (a parent always precedes its children). */
export function buildTree(nodes: ModuleNode[]): TreeNode[] {
  const byId = new Map<number, TreeNode>();
  const roots: TreeNode[] = [];
  for (const n of nodes) {
    const t: TreeNode = { node: n, children: [] };
    byId.set(n.id, t);
    const p = byId.get(n.parent);
    if (p) p.children.push(t);
    else roots.push(t);
  }
  return roots;
}

/** How the tree table is ordered: a node field, largest or smallest first; null keeps the answer's order. */
export interface TreeSort {
  key: (n: ModuleNode) => number | string;
  desc: boolean;
}

/**
 * The forest with each parent's children (and the roots) ordered by `sort`, so that a sorted tree still
 * shows every node under its parent. Text compares case-insensitively; ties keep the answer's order.
 */
export function sortTree(roots: TreeNode[], sort: TreeSort | null): TreeNode[] {
  if (!sort) return roots;
  const cmp = (a: TreeNode, b: TreeNode): number => {
    const x = sort.key(a.node);
    const y = sort.key(b.node);
    let c: number;
    if (typeof x === "number" && typeof y === "number") c = x - y;
    else {
      const [u, v] = [String(x).toLowerCase(), String(y).toLowerCase()];
      c = u < v ? -1 : u > v ? 1 : 0; // code-unit order, as the other tables' text sort
    }
    return sort.desc ? -c : c;
  };
  const walk = (ts: TreeNode[]): TreeNode[] =>
    ts
      .map((t) => ({ node: t.node, children: walk(t.children) }))
      .sort(cmp); // Array.prototype.sort is stable
  return walk(roots);
}

export interface VisibleRow {
  node: ModuleNode;
  depth: number;
  hasChildren: boolean;
  open: boolean;
  /** the row matches the search (rows shown only as ancestors of a match are false) */
  match: boolean;
}

/**
 * The rows to show, in tree order: children of open nodes only. With a search query, the nodes whose
 * name or class contains it (case-insensitive) and their ancestors, all opened.
 */
export function visibleRows(roots: TreeNode[], open: Set<number>, query: string): VisibleRow[] {
  const q = query.trim().toLowerCase();
  const out: VisibleRow[] = [];
  const matches = (n: ModuleNode) => n.name.toLowerCase().includes(q) || n.cls.toLowerCase().includes(q);
  const keep = new Set<number>();
  if (q) {
    const mark = (t: TreeNode): boolean => {
      let any = matches(t.node);
      for (const c of t.children) any = mark(c) || any;
      if (any) keep.add(t.node.id);
      return any;
    };
    roots.forEach(mark);
  }
  const walk = (t: TreeNode, depth: number) => {
    if (q && !keep.has(t.node.id)) return;
    const isOpen = q ? true : open.has(t.node.id);
    out.push({ node: t.node, depth, hasChildren: t.children.length > 0, open: isOpen, match: !q || matches(t.node) });
    if (isOpen) for (const c of t.children) walk(c, depth + 1);
  };
  for (const r of roots) walk(r, 0);
  return out;
}

/** Every node id that has children (to open the whole tree). */
export function allParents(roots: TreeNode[]): number[] {
  const ids: number[] = [];
  const walk = (t: TreeNode) => {
    if (t.children.length) ids.push(t.node.id);
    t.children.forEach(walk);
  };
  roots.forEach(walk);
  return ids;
}

/** The node and its ancestors, outermost first. */
export function pathTo(nodes: ModuleNode[], id: number): ModuleNode[] {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const out: ModuleNode[] = [];
  let n = byId.get(id);
  while (n) {
    out.unshift(n);
    n = byId.get(n.parent);
  }
  return out;
}

export type Metric = "host" | "device";

export const metricValue = (n: ModuleNode, m: Metric): number => (m === "host" ? n.host_total_us : n.device_total_us);

/** One bar of the icicle: x and width as fractions (0..1) of the drawing's width, row = depth. */
export interface Bar {
  node: ModuleNode;
  x: number;
  w: number;
  row: number;
  /** an ancestor of the zoomed node, drawn full width above it */
  ancestor: boolean;
}

/**
 * The icicle layout. Zoomed on a node: its ancestors fill the top rows at full width and the node's
 * subtree the rows below, the node itself full width. Not zoomed: the roots side by side, each as wide
 * as its share of their total. A child is as wide as its value's share of its parent's width, children
 * left to right in tree order; the rest of the parent's width is its self time. Bars narrower than
 * minW are left out (with their subtrees).
 */
export function icicle(roots: TreeNode[], metric: Metric, zoom: number | null, minW = 0): Bar[] {
  const bars: Bar[] = [];
  const byId = new Map<number, TreeNode>();
  const index = (t: TreeNode) => {
    byId.set(t.node.id, t);
    t.children.forEach(index);
  };
  roots.forEach(index);
  const place = (t: TreeNode, x: number, w: number, row: number) => {
    if (w < minW || w <= 0) return;
    bars.push({ node: t.node, x, w, row, ancestor: false });
    const total = metricValue(t.node, metric);
    if (total <= 0) return;
    let cx = x;
    for (const c of t.children) {
      const cw = (w * Math.min(metricValue(c.node, metric), total)) / total;
      place(c, cx, Math.min(cw, x + w - cx), row + 1);
      cx += cw;
    }
  };
  const focus = zoom === null ? undefined : byId.get(zoom);
  if (focus) {
    const chain: TreeNode[] = [];
    let p = byId.get(focus.node.parent);
    while (p) {
      chain.unshift(p);
      p = byId.get(p.node.parent);
    }
    chain.forEach((a, i) => bars.push({ node: a.node, x: 0, w: 1, row: i, ancestor: true }));
    place(focus, 0, 1, chain.length);
    return bars;
  }
  const sum = roots.reduce((s, r) => s + Math.max(metricValue(r.node, metric), 0), 0);
  if (sum <= 0) return bars;
  let x = 0;
  for (const r of roots) {
    const w = Math.max(metricValue(r.node, metric), 0) / sum;
    place(r, x, w, 0);
    x += w;
  }
  return bars;
}
