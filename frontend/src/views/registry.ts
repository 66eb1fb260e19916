import type { ComponentType } from "react";
import { DiffView } from "./Diff";
import { DistributedView } from "./Distributed";
import { KernelView } from "./Kernel";
import { MemoryView } from "./Memory";
import { ModuleView } from "./Module";
import { OperatorView } from "./Operator";
import { OverviewView } from "./Overview";
import { TraceView } from "./Trace";
import type { ViewProps } from "./types";

/** Views by normalised name (the `views` route spells them "Overview", "Kernel", …). */
export const VIEWS: Record<string, ComponentType<ViewProps>> = {
  overview: OverviewView,
  operator: OperatorView,
  kernel: KernelView,
  trace: TraceView,
  memory: MemoryView,
  distributed: DistributedView,
  diff: DiffView,
  module: ModuleView,
};

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
  trace: "Trace",
  memory: "Memory",
  distributed: "Distributed",
  diff: "Diff",
  module: "Module",
};

export function viewLabel(name: string): string {
  return LABELS[viewKey(name)] ?? name;
}
