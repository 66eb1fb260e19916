import { lazy, type ComponentType } from "react";
import type { ViewProps } from "./types";

type View = ComponentType<ViewProps>;

/** Each view is its own chunk, fetched when first shown: the Trace view never loads the chart library
 * (echarts, 60% of the bundle), so a deep link to the timeline starts drawing sooner. */
const LOADERS: Record<string, () => Promise<View>> = {
  overview: () => import("./Overview").then((m) => m.OverviewView),
  operator: () => import("./Operator").then((m) => m.OperatorView),
  kernel: () => import("./Kernel").then((m) => m.KernelView),
  roofline: () => import("./Roofline").then((m) => m.RooflineView),
  trace: () => import("./Trace").then((m) => m.TraceView),
  analysis: () => import("./Analysis").then((m) => m.AnalysisView),
  memory: () => import("./Memory").then((m) => m.MemoryView),
  distributed: () => import("./Distributed").then((m) => m.DistributedView),
  diff: () => import("./Diff").then((m) => m.DiffView),
  module: () => import("./Module").then((m) => m.ModuleView),
};

const started = new Map<string, Promise<View>>();

/** Start fetching a view's chunk (e.g. the one named in the address, before the run list arrives). */
export function preloadView(name: string | null | undefined): void {
  const key = name ? viewKey(name) : "";
  const load = LOADERS[key];
  if (load && !started.has(key)) started.set(key, load());
}

function loadView(key: string): Promise<{ default: View }> {
  preloadView(key);
  return started.get(key)!.then((view) => ({ default: view }));
}

/** Views by normalised name (the `views` route spells them "Overview", "Kernel", …). */
export const VIEWS: Record<string, View> = Object.fromEntries(
  Object.keys(LOADERS).map((key) => [key, lazy(() => loadView(key))]),
);

const ALIASES: Record<string, string> = {
  operators: "operator",
  "gpu kernel": "kernel",
  kernels: "kernel",
};

export function viewKey(name: string): string {
  const k = name.trim().toLowerCase();
  return ALIASES[k] ?? k;
}

const LABELS: Record<string, string> = {
  overview: "Overview",
  operator: "Operator",
  kernel: "Kernel",
  roofline: "Roofline",
  trace: "Trace",
  analysis: "Analysis",
  memory: "Memory",
  distributed: "Distributed",
  diff: "Diff",
  module: "Module",
};

export function viewLabel(name: string): string {
  return LABELS[viewKey(name)] ?? name;
}
