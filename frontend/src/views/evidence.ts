// A recommendation's evidence (nested JSON from analysis/overview/recommendations.py) as readable
// rows: human labels that say what a figure is (a mean per step, a total), values with their units.

export interface EvidenceRow {
  key: string;
  value: string;
  /** the Trace view's `find` for the kernel or operator this row names (its longest instance) */
  find?: string;
}

export interface EvidenceFormat {
  duration: (us: number) => string;
  percent: (p: number) => string;
  bytes: (b: number) => string;
  number: (n: number) => string;
}

type Unit = "duration" | "percent" | "fraction" | "bytes" | "count" | "";

// labels of the rules' keys; `parent>key` where the same key means something else under a parent
const LABELS: Record<string, string> = {
  dataloader_us: "DataLoader time per step (mean)",
  step_us: "Step time (mean)",
  "steps>step": "Step",
  "steps>dataloader_us": "DataLoader time",
  "steps>step_us": "Step time",
  steps: "Stalled steps",
  median_dataloader_us: "DataLoader time per step (median)",
  share: "Share of step time",
  "kernels>share": "Share of kernel time",
  communication_us: "Communication time per step (mean)",
  eligible_kernel_share: "Kernel time in ops that can use tensor cores",
  kernel_us: "Total kernel time",
  devices: "Devices",
  device: "Device",
  peak_allocated_bytes: "Peak allocated",
  total_memory_bytes: "Device memory (total)",
  host_wait_us: "Device idle while the host works, per step (mean)",
  idle_us_per_step: "Device idle time per step (mean)",
  top_host_ranges: "Host ranges while the device idles",
  idle_overlap_us: "Overlap with device idle time (total)",
  kernels_per_step: "Kernels per step",
  short_kernel_share: "Share of kernels shorter than 10 µs",
  mean_kernel_us: "Mean kernel duration",
  mean_launch_us: "Mean launch call duration",
  launch_us_per_step: "Launch time per step",
  kernel_us_per_step: "Kernel time per step",
  top_short_kernels: "Short kernels with the most calls",
  ">calls": "Synchronizing calls",
  calls: "Calls",
  count: "Calls",
  us: "Total time",
  sync_us: "Total synchronizing time in steps",
  top_ops: "Synchronizing time by issuing operator (total)",
  copies: "Pageable copies (total)",
  bytes: "Total size copied",
  us_in_steps: "Total copy time in steps",
  ops: "Copies by issuing operator",
  kernels: "Kernels",
  mean_achieved_occupancy_pct: "Mean est. achieved occupancy",
  mean_blocks_per_sm: "Mean blocks per SM",
  backend: "Backend",
  name: "Name",
};

// the unit of a key's values (inherited by the values of an object keyed by names)
const UNITS: Record<string, Unit> = { top_ops: "duration", ops: "count", count: "count", calls: "count", copies: "count", kernels_per_step: "count" };

/** Evidence objects keyed by operator or call names (`synchronization`, `pageable_memcpy`). */
const NAMED_BY_KEY = new Set(["calls", "top_ops", "ops"]);

function unitOf(key: string): Unit {
  if (UNITS[key] !== undefined) return UNITS[key];
  if (/(^|_)us($|_)/.test(key)) return "duration"; // dataloader_us, us_in_steps, launch_us_per_step
  if (/_pct$/.test(key)) return "percent";
  if (/(^|_)share$|_ratio$/.test(key)) return "fraction";
  if (/(^|_)bytes$/.test(key)) return "bytes";
  return "";
}

/** A key the table does not know: its words, with "time" for µs and the unit suffix dropped. */
function fallbackLabel(key: string): string {
  const words = key
    .replace(/_(pct|bytes|ratio)$/, "")
    .split("_")
    .map((w) => (w === "us" ? "time" : w))
    .join(" ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function labelOf(key: string, parent: string): string {
  return LABELS[`${parent}>${key}`] ?? LABELS[key] ?? fallbackLabel(key);
}

/**
 * The evidence as rows: nested labels joined with " › ", list items numbered, values by unit (µs
 * times, percentages, shares as percentages, sizes, whole counts) and text quoted. ``deviceKind``
 * names the devices of a `gpus` object of utilizations ("GPU 0 utilization").
 */
export function evidenceRows(evidence: unknown, fmt: EvidenceFormat, deviceKind = "GPU"): EvidenceRow[] {
  const out: EvidenceRow[] = [];
  const value = (unit: Unit, v: unknown): string => {
    if (typeof v === "number") {
      if (unit === "duration") return fmt.duration(v);
      if (unit === "percent") return fmt.percent(v);
      if (unit === "fraction") return fmt.percent(100 * v);
      if (unit === "bytes") return fmt.bytes(v);
      return Number.isInteger(v) ? v.toLocaleString("en-US") : fmt.number(v);
    }
    if (typeof v === "string") return `“${v}”`;
    if (typeof v === "boolean") return v ? "yes" : "no";
    return v === null || v === undefined ? "–" : String(v);
  };
  // a kernel under a key that says so (`kernels`, `top_short_kernels`), else any event of that name
  const findOf = (raw: string[], name: string) => `${raw.some((k) => k.includes("kernel")) ? "kernel" : "any"}:${name}`;
  const walk = (path: string[], raw: string[], unit: Unit, v: unknown, find?: string) => {
    const last = raw[raw.length - 1] ?? "";
    if (Array.isArray(v)) {
      if (v.every((x) => typeof x !== "object" || x === null)) {
        // a list of device ids (`gpus`) reads as ids, not as figures
        const label = last === "gpus" ? `${deviceKind}s` : path.join(" › ");
        out.push({ key: label, value: v.map((x) => value(last === "gpus" ? "count" : unit, x)).join(", "), find });
        return;
      }
      v.forEach((x, i) => walk([...path, `#${i + 1}`], [...raw, last], unit, x, find));
      return;
    }
    if (typeof v === "object" && v !== null) {
      const entries = Object.entries(v);
      if (last === "gpus" && entries.every(([, x]) => typeof x === "number")) {
        for (const [id, x] of entries) out.push({ key: `${deviceKind} ${id} utilization`, value: value("percent", x) });
        return;
      }
      const named = (v as Record<string, unknown>).name;
      const own = typeof named === "string" && named ? findOf(raw, named) : find;
      const byKey = NAMED_BY_KEY.has(last);
      for (const [k, x] of entries) {
        const keyUnit = unitOf(k);
        walk([...path, byKey ? k : labelOf(k, last)], [...raw, byKey ? "#named" : k], byKey ? unit : keyUnit || unit, x, byKey ? `any:${k}` : own);
      }
      return;
    }
    out.push({ key: path.join(" › "), value: value(unit, v), find });
  };
  walk([], [], "", evidence);
  return out;
}
