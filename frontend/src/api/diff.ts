// The `diff` route's answer (docs/api.md, "Diff"; built by torch_tb_profiler/analysis/diff/compare.py, the
// same object `torch-tb-profiler compare --json` prints, less `verdict`).

export interface Change {
  baseline: number | null;
  experiment: number | null;
  delta: number | null;
  /** delta / baseline (a ratio, not %); null when the baseline is 0 or a side lacks the figure */
  rel: number | null;
}

export interface Spread {
  count: number;
  mean: number | null;
  min: number | null;
  median: number | null;
  max: number | null;
}

/** A step-level figure: the change of the per-step means with both sides' spread. */
export interface NoisyChange extends Change {
  noise: number | null;
  significant: boolean;
  /** null on the side that lacks the figure */
  spread?: { baseline: Spread | null; experiment: Spread | null };
  /** why the figure is not compared (a side lacks it) */
  note?: string;
}

export interface DiffSide {
  run: string;
  worker: string;
  span: string;
  device_type: string;
  /** "Tensor Cores" (CUDA), "Matrix Cores" (ROCm), null where kernel names cannot be classified */
  matrix_units: string | null;
  steps: number;
}

export type OpFields = Record<"calls" | "host_self_us" | "host_total_us" | "device_self_us" | "device_total_us", number | null>;
export type KernelFields = Record<
  "calls" | "total_us" | "mean_us" | "mean_blocks_per_sm" | "mean_achieved_occupancy_pct",
  number | null
>;

export interface JoinedRow<F> {
  name: string;
  status: "both" | "added" | "removed" | "renamed";
  baseline: F | null;
  experiment: F | null;
  delta: { [K in keyof F]: number | null };
  rel: { [K in keyof F]: number | null };
  /** per per-step figure: the larger half-range of its per-step values on either side */
  noise: Partial<Record<keyof F, number>>;
  /** per per-step figure: |delta| > noise */
  significant: Partial<Record<keyof F, boolean>>;
}

export interface OperatorDiff extends JoinedRow<OpFields> {
  input_shape?: string;
}

export interface KernelDiff extends JoinedRow<KernelFields> {
  baseline_name?: string;
}

export interface WaterfallItem {
  name: string;
  kind: "category" | "operator";
  delta_us: number;
}

export interface GpuDiff {
  id: number;
  baseline_id: number | null;
  name: string | null;
  utilization_pct: Change;
  sm_efficiency_pct: Change;
  achieved_occupancy_pct: Change;
  tensor_core_pct: Change;
}

export interface MemoryDiff {
  /** the baseline's label (the experiment's when only it has the device) */
  device: string;
  /** the experiment's label when the two sides' accelerators are paired by role under other labels */
  experiment_device?: string;
  peak_allocated_bytes: Change;
  peak_reserved_bytes: Change;
}

export interface CollectiveDiff {
  collective: string;
  calls: Change;
  avg_latency_us: Change;
  total_latency_us: Change;
  algbw_gbps: Change;
  busbw_gbps: Change;
}

export interface DiffAnswer {
  baseline: DiffSide;
  experiment: DiffSide;
  group_by: "name" | "name_input_shape";
  sort_metric: "device_self_us" | "host_self_us";
  steps: NoisyChange;
  /** Each side's MFU (a fraction) and its change; `note` says why when a side has none. */
  mfu: Change & { noise: number | null; significant: boolean; note: string | null };
  /** The why-the-device-waits figures (`temporal:idle`, `critical_path:host`, …; mean µs per step) that
   * `--fail-on` rules read, each side's mean and its change. */
  waits: Record<string, { baseline: number | null; experiment: number | null; delta: number; noise: number; significant: boolean }>;
  breakdown_us: Record<string, NoisyChange>;
  labels: Record<string, string>;
  gpus: GpuDiff[];
  operators: OperatorDiff[];
  waterfall: { metric: string; total_delta_us: number | null; items: WaterfallItem[]; other_us: number | null };
  kernels: KernelDiff[];
  memory: MemoryDiff[];
  distributed: {
    rank: { baseline: number | null; experiment: number | null };
    overlap_us: Record<string, Change>;
    collectives: CollectiveDiff[];
  } | null;
  notes: string[];
  /** both sides are one profile (the same file): every change is 0, and `notes` says so */
  same_profile: boolean;
}

/** The waterfall's bars: each part from the running sum, then "rest" and the total. */
export interface WaterfallBar {
  name: string;
  start: number;
  end: number;
  total?: boolean;
  /** what a click on the bar drills down to: "op:NAME", "cat:LABEL", "rest" or "total" */
  focus: string;
}

export function waterfallBars(w: DiffAnswer["waterfall"]): WaterfallBar[] {
  if (w.total_delta_us === null) return [];
  const bars: WaterfallBar[] = [];
  let at = 0;
  for (const item of w.items) {
    bars.push({ name: item.name, start: at, end: at + item.delta_us, focus: `${item.kind === "operator" ? "op" : "cat"}:${item.name}` });
    at += item.delta_us;
  }
  if (w.other_us) bars.push({ name: "Rest (unlisted)", start: at, end: at + w.other_us, focus: "rest" });
  bars.push({ name: "Step time change", start: 0, end: w.total_delta_us, total: true, focus: "total" });
  return bars;
}
