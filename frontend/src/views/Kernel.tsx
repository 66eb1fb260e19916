import { type ReactNode, useMemo } from "react";
import { Empty, ErrorBox, Loading, Section, Select, TimelineLink } from "../components/common";
import { type Column, DataTable } from "../components/DataTable";
import { Pie } from "../components/Pie";
import { fileSlug } from "../lib/csv";
import { arr, get, num, str } from "../lib/pick";
import { useApi } from "../lib/useApi";
import { tensorCoreSlices, topSlices } from "./shape";
import { type ViewProps, profileParams } from "./types";

export interface KernelRow {
  name: string;
  operator: string | null;
  grid: string | null;
  block: string | null;
  regs: number | null;
  shmem: number | null;
  tcUsed: boolean;
  opTcEligible: boolean | null;
  calls: number;
  total: number;
  mean: number | null;
  max: number | null;
  min: number | null;
  blocksPerSm: number | null;
  occupancy: number | null;
}

/** -1 marks "not in the trace". */
function nonNegative(v: number | null): number | null {
  return v === null || v < 0 ? null : v;
}

function yes(v: unknown): boolean {
  return v === true || v === "Yes" || v === "yes" || v === 1;
}

export function readKernelRow(r: unknown): KernelRow {
  const calls = num(r, "calls", "count") ?? 0;
  const total = num(r, "total_us", "total_duration", "total") ?? 0;
  const opTc = get(r, "op_tc_eligible", "op_tensor_core_eligible");
  const shape = (k: string, ...more: string[]) => {
    const v = get(r, k, ...more);
    return v === undefined || v === null ? null : Array.isArray(v) ? `[${v.join(", ")}]` : String(v);
  };
  return {
    name: str(r, "name"),
    operator: shape("op_name", "operator"),
    grid: shape("grid"),
    block: shape("block"),
    regs: nonNegative(num(r, "regs", "registers_per_thread")),
    shmem: nonNegative(num(r, "shmem", "shared_memory")),
    tcUsed: yes(get(r, "tc_used", "tensor_cores_used", "uses_tensor_cores")),
    opTcEligible: opTc === undefined ? null : yes(opTc),
    calls,
    total,
    mean: num(r, "mean_us", "mean_duration", "mean") ?? (calls ? total / calls : null),
    max: num(r, "max_us", "max_duration", "max"),
    min: num(r, "min_us", "min_duration", "min"),
    blocksPerSm: num(r, "mean_blocks_per_sm", "blocks_per_sm"),
    occupancy: num(r, "mean_achieved_occupancy_pct", "mean_occupancy_pct", "occupancy_pct", "occupancy"),
  };
}

export function readKernelRows(data: unknown): KernelRow[] {
  const list = Array.isArray(data) ? data : arr(data, "rows", "data", "kernels", "table");
  return list.map(readKernelRow);
}

function columnsFor(rows: KernelRow[], detailed: boolean, show: (name: string) => void): Column<KernelRow>[] {
  const cols: Column<KernelRow>[] = [
    {
      id: "name",
      header: "Kernel",
      kind: "text",
      value: (r) => r.name,
      width: "minmax(260px, 5fr)",
      render: (r) => <TimelineLink name={r.name} onShow={show} />,
    },
  ];
  if (detailed) {
    cols.push(
      { id: "operator", header: "Operator", kind: "text", value: (r) => r.operator ?? "", width: "minmax(160px, 2fr)" },
      { id: "grid", header: "Grid", kind: "text", value: (r) => r.grid ?? "", width: "minmax(100px, 1fr)", searchable: false },
      { id: "block", header: "Block", kind: "text", value: (r) => r.block ?? "", width: "minmax(100px, 1fr)", searchable: false },
      { id: "regs", header: "Regs/thread", kind: "count", value: (r) => r.regs },
      { id: "shmem", header: "Shared mem", kind: "bytes", value: (r) => r.shmem },
    );
  }
  cols.push({ id: "tc_used", header: "TC used", kind: "text", value: (r) => (r.tcUsed ? "yes" : "no"), width: "minmax(70px, 0.6fr)", searchable: false });
  if (detailed && rows.some((r) => r.opTcEligible !== null))
    cols.push({ id: "op_tc", header: "Op TC eligible", kind: "text", value: (r) => (r.opTcEligible ? "yes" : "no"), width: "minmax(90px, 0.7fr)", searchable: false });
  cols.push(
    { id: "calls", header: "Calls", kind: "count", value: (r) => r.calls },
    { id: "total", header: "Total", kind: "duration", value: (r) => r.total },
    { id: "mean", header: "Mean", kind: "duration", value: (r) => r.mean },
    { id: "max", header: "Max", kind: "duration", value: (r) => r.max },
    { id: "min", header: "Min", kind: "duration", value: (r) => r.min },
  );
  if (rows.some((r) => r.blocksPerSm !== null))
    cols.push({ id: "blocks_per_sm", header: "Mean blocks/SM", kind: "number", value: (r) => r.blocksPerSm });
  if (rows.some((r) => r.occupancy !== null))
    cols.push({ id: "occupancy", header: "Mean est. occupancy", kind: "percent", value: (r) => r.occupancy });
  return cols;
}

const GROUPS = [
  { value: "name", label: "Kernel name" },
  { value: "detailed", label: "Kernel + operator + launch shape" },
];

export function KernelView(p: ViewProps): ReactNode {
  const detailed = p.state.kgroup === "detailed";
  const topN = Math.max(1, Math.min(50, Number(p.state.top) || 10));
  const base = profileParams(p);
  const byName = useApi<unknown>(p.api, "kernels", { ...base, group_by: "name" });
  const grouped = useApi<unknown>(p.api, "kernels", { ...base, group_by: detailed ? "name_op_launch" : "name" });
  const nameRows = useMemo(() => (byName.data === undefined ? null : readKernelRows(byName.data)), [byName.data]);
  const rows = useMemo(() => (grouped.data === undefined ? null : readKernelRows(grouped.data)), [grouped.data]);
  const setState = p.setState;
  const columns = useMemo(
    () => columnsFor(rows ?? [], detailed, (name) => setState({ view: "Trace", find: `kernel:${name}`, sel: null, t0: null, t1: null }, true)),
    [rows, detailed, setState],
  );

  // The route's tensor_core_share (0..1) is the reference; the table's split is the fallback.
  const tcShare = num(byName.data, "tensor_core_share");
  const tcSlices = useMemo(() => {
    const all = tensorCoreSlices(nameRows ?? []);
    if (tcShare === null) return all;
    const total = all.reduce((s, x) => s + x.value, 0);
    return total > 0
      ? [
          { name: "Using Tensor Cores", value: tcShare * total },
          { name: "Not using Tensor Cores", value: (1 - tcShare) * total },
        ]
      : [];
  }, [nameRows, tcShare]);

  const err = byName.error ?? grouped.error;
  if (err) return <ErrorBox error={err} what="the kernels" />;
  if (!nameRows || !rows) return <Loading what="kernels" />;
  if (nameRows.length === 0)
    return <Empty title="This trace has no GPU kernels">Profile with ProfilerActivity.CUDA (or another accelerator) to see kernels.</Empty>;

  return (
    <div className="kernel">
      <Section
        title="Kernel time"
        id="kernel-pies"
        actions={
          <Select label="Top" value={String(topN)} options={[5, 10, 20, 30].map((n) => ({ value: String(n) }))} onChange={(v) => p.setState({ top: v })} />
        }
      >
        <div className="grid2">
          <Pie title={`Top ${topN} kernels by total time`} slices={topSlices(nameRows, (r) => r.name, (r) => r.total, topN)} testId="pie-kernels" />
          <Pie title="Kernel time using Tensor Cores" slices={tcSlices} testId="pie-tc" />
        </div>
      </Section>
      <Section
        title="Kernels"
        id="kernel-section"
        actions={<Select label="Group by" value={detailed ? "detailed" : "name"} options={GROUPS} onChange={(v) => p.setState({ kgroup: v === "name" ? null : v }, true)} testId="select-kgroup" />}
      >
        <div className="muted">Memcpy and memset activities are not kernels and are not listed.</div>
        <DataTable
          rows={rows}
          columns={columns}
          csvName={fileSlug("kernels", p.run, p.worker, p.span, detailed ? "detailed" : "name")}
          initialSort={{ id: "total", desc: true }}
          searchPlaceholder={detailed ? "Search kernel and operator names" : "Search kernel names"}
          height={520}
          testId="kernel-table"
        />
      </Section>
    </div>
  );
}
