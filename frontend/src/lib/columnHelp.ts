// What each non-obvious table column means, in one place (wording follows docs/metrics.md). Shown as
// the column header's hover text; `units` is the device's matrix units ("Tensor Cores", "Matrix Cores").

const MU = "{units}";

export const COLUMN_HELP = {
  // operators (docs/metrics.md, "Operators")
  op_host_self: "Host total minus the children's host totals and the durations of its own runtime calls",
  op_host_total: "Wall time on the host, children included",
  op_device_self: "Time of the kernels, memcpys and memsets this operator launched itself",
  op_device_total: "Device self time of this operator and every operator it called",
  op_replayed: "Device self time that ran in graph replays: on the operator that captured it when a capture trace was merged, else on the 'graph replay' row",
  op_input_shape: "The Input Dims the profiler recorded (record_shapes=True); empty when it recorded none",
  tc_eligible: `Could run on ${MU}: an op autocast runs in reduced precision (convolutions, matmuls, linear, attention…) or its autograd node, or one with such a descendant, or one that launched a ${MU} kernel`,
  tc_self: `Share of the device self time in kernels using ${MU} (${MU} self ÷ device self)`,
  tc_total: `Share of the device total time in kernels using ${MU} (${MU} total ÷ device total)`,

  // kernels (docs/metrics.md, "Kernels")
  kernel_total: "Σ duration of the calls",
  kernel_mean: "Total ÷ calls",
  kernel_grid: "Grid of the launch (blocks per dimension)",
  kernel_block: "Block of the launch (threads per dimension)",
  kernel_regs: "Registers per thread",
  kernel_shmem: "Shared memory per block",
  tc_used: `Whether the kernel's name says it runs on ${MU} ("?": the name does not say; counted as not)`,
  op_tc_eligible: `Whether the launching operator could run on ${MU} (see the Operator view's column)`,
  kernel_replayed: "Time of the calls that ran in graph replays",
  blocks_per_sm: "Blocks per SM of each call as the profiler wrote it (grid blocks ÷ the device's SMs), averaged weighted by duration; below 1 leaves SMs idle",
  occupancy: "Estimated achieved occupancy the profiler computed per call (active warps ÷ the SM's maximum, from the launch shape, registers and shared memory), averaged weighted by duration; an estimate, not a measurement",

  // modules (docs/metrics.md, "Modules")
  module_occurrences: "Instances in the selected step(s)",
  module_host_total: "Σ of the instances' durations (the union of their ranges); backward nodes: the union of their backward functions' ranges",
  module_host_self: "Host total minus the direct children's host totals",
  module_device_total: "Device activities launched from inside the instances; backward nodes: the device time of their backward functions",
  module_device_self: "Device total minus the direct children's device totals",
  step_share: "Host total ÷ the host duration of the selected steps",

  // roofline (docs/metrics.md, "Roofline")
  roof_dtype: "The peak the row is measured against (fp32 on tensor cores: tf32)",
  roof_calls_known: "Calls whose work is known (a kernel takes its operator's work only when it is the operator's only kernel)",
  roof_time: "Kernel time of the row's calls",
  roof_flops: "Floating-point operations of the row's calls, 10⁹",
  roof_bytes: "Bytes the row's calls read and write (inputs and outputs, by the model)",
  roof_intensity: "Arithmetic intensity: FLOPs ÷ bytes",
  roof_tflops: "Achieved: FLOPs ÷ device time",
  roof_tbps: "Achieved: bytes ÷ device time",
  roof_pct: "Achieved TFLOP/s ÷ the roofline at the row's intensity, min(peak, intensity × bandwidth); bytes-only rows: achieved TB/s ÷ bandwidth",
  roof_bound: "memory when the intensity is below the ridge point (peak ÷ bandwidth), else compute",
  roof_lost: "Device time × (1 − fraction of the roofline); 0 at or above the roofline",
  roof_source: "trace: the profiler's own counts; model: from shapes and dtypes",

  // why the device waits (docs/metrics.md)
  idle_category: "host wait: the launch call came after the gap began; kernel wait: a gap under 30 µs; other: the rest",
  idle_share: "The category's share of the stream's idle time (the three add up to 100 %)",
  idle_time: "Σ of the gaps between the stream's activities (from the running latest end to the next start)",
  idle_start: "From the profile's start (the timeline's origin); ▸ timeline selects the activity that ended the gap",
  idle_host_op: "The host operator around the launch call of the activity that ended the gap",
  temporal_idle: "The window's time with no kernel, copy or set running",
  temporal_compute: "Time covered by kernels that are not communication",
  temporal_noncompute: "Time covered by copies, sets and communication kernels and not by a compute kernel",
  launch_cpu: "Duration of the launch call",
  launch_gpu: "Duration of the activity on the device",
  launch_delay: "Activity start − end of its launch call (0 when negative)",
  launch_short: "Share of launches whose device time is below the launch call's CPU time (launch-bound)",
  launch_bound: "Σ (CPU time − device time) over the step's short launches",
  launch_short_count: "Launches whose device time is below the launch call's CPU time",
  queue_max: "Most activities launched and not yet finished on the stream at once",
  queue_mean: "The queue length averaged over time",
  seq_times: "Occurrences on one stream, counted left to right without sharing a kernel",
  seq_total: "Device time of the kernels of the counted occurrences",
  seq_mean: "Total ÷ occurrences",
  path_host: "Time on the critical path spent on the host",
  path_launch: "Launch calls and the queueing between a call's end and its activity's start",
  path_device: "Device activities on the critical path",
  path_sync: "Synchronising runtime calls on the critical path",
  path_idle: "Time on the critical path with the device idle between two of its activities (after the one before on the stream had ended)",
  path_bound: "The kind with the most time, its share of the step and its longest named segment",

  // memory (docs/metrics.md, "Memory")
  mem_size_increase: "Σ bytes allocated minus freed by the operator and its children",
  mem_self_size_increase: "Σ bytes allocated minus freed by the operator itself",
  mem_alloc_count: "Allocations made by the operator and its children",
  mem_self_alloc_count: "Allocations made by the operator itself",
  mem_alloc_size: "Σ bytes of the allocations made by the operator and its children",
  mem_self_alloc_size: "Σ bytes of the allocations made by the operator itself",
  mem_alloc_at: "Time since the profile's start (as on the Trace view's ruler)",
  mem_free_at: "Empty: never freed within the trace",
  mem_lifetime: "Freed at − allocated at",
} as const;

export type HelpKey = keyof typeof COLUMN_HELP;

/** A column's hover text, with the device's matrix units filled in. */
export function help(key: HelpKey, units = "Tensor Cores"): string {
  return COLUMN_HELP[key].split(MU).join(units);
}

/** A header's title: what the column means, then how to sort by it. */
export function headerTitle(tooltip: string | undefined): string {
  return tooltip ? `${tooltip}\n(click to sort)` : "Click to sort";
}
