import { type ReactNode, useMemo, useState } from "react";
import { Empty, ErrorBox, Loading, Section, Select, TimelineLink } from "../components/common";
import { type Column, DataTable, serverPage, useServerQuery } from "../components/DataTable";
import { Pie } from "../components/Pie";
import { help } from "../lib/columnHelp";
import { fileSlug } from "../lib/csv";
import { arr, get, num, str } from "../lib/pick";
import { useApi } from "../lib/useApi";
import { findWith } from "./findWith";
import { PAGE, readPage, useLast } from "./Operator";
import { type Slice, tensorCoreSlices } from "./shape";
import { type ViewProps, profileParams } from "./types";

export interface KernelRow {
  name: string;
  operator: string | null;
  grid: string | null;
  block: string | null;
  regs: number | null;
  shmem: number | null;
  tcUsed: boolean;
  tcUnknown: boolean;
  opTcEligible: boolean | null;
  calls: number;
  total: number;
  mean: number | null;
  max: number | null;
  min: number | null;
  blocksPerSm: number | null;
  occupancy: number | null;
  /** calls and time that ran in graph replays (docs/metrics.md, "Graph replays") */
  replayedCalls: number;
  replayed: number;
}

/** -1 marks "not in the trace". */
function nonNegative(v: number | null): number | null {
  return v === null || v < 0 ? null : v;
}

export function readKernelRow(r: unknown): KernelRow {
  const calls = num(r, "calls") ?? 0;
  const total = num(r, "total_us") ?? 0;
  const opTc = get(r, "op_tc_eligible");
  const text = (k: string) => {
    const v = get(r, k);
    return v === undefined || v === null ? null : String(v);
  };
  return {
    name: str(r, "name"),
    operator: text("op_name"),
    grid: text("grid"),
    block: text("block"),
    regs: nonNegative(num(r, "regs")),
    shmem: nonNegative(num(r, "shmem")),
    tcUsed: get(r, "tc_used") === true,
    /** the kernel's name does not say whether it used the matrix units */
    tcUnknown: get(r, "tc_unknown") === true,
    opTcEligible: opTc === undefined ? null : opTc === true,
    calls,
    total,
    mean: num(r, "mean_us"),
    max: num(r, "max_us"),
    min: num(r, "min_us"),
    blocksPerSm: num(r, "mean_blocks_per_sm"),
    occupancy: num(r, "mean_achieved_occupancy_pct"),
    replayedCalls: num(r, "replayed_calls") ?? 0,
    replayed: num(r, "replayed_device_us") ?? 0,
  };
}

export function readKernelRows(data: unknown): KernelRow[] {
  return arr(data, "rows").map(readKernelRow);
}

/** What the pies need from a `kernels` answer, whatever page it holds: the top kernels by total
 * time, the number of kernel names, every kernel's time and that on matrix units (null: unknown). */
export interface KernelTotals {
  top: { name: string; total: number }[];
  count: number;
  total: number;
  tc: number | null;
  /** time of kernels whose names do not say (null where no rule exists) */
  tcUnknown: number | null;
}

export function readKernelTotals(data: unknown): KernelTotals {
  const totals = get(data, "totals");
  return {
    top: arr(data, "top").map((r) => ({ name: str(r, "name"), total: num(r, "total_us") ?? 0 })),
    count: num(data, "kernel_count") ?? 0,
    total: num(totals, "total_us") ?? 0,
    tc: num(totals, "tc_us"),
    tcUnknown: num(totals, "tc_unknown_us"),
  };
}

/** The top kernels as pie slices, the rest of the kernels' time as one "Other (k)" slice. */
export function kernelTopSlices(t: KernelTotals): Slice[] {
  const head = t.top.filter((r) => r.total > 0).map((r) => ({ name: r.name, value: r.total }));
  const rest = t.total - head.reduce((s, x) => s + x.value, 0);
  const others = t.count - t.top.length;
  if (others > 0 && rest > 0) head.push({ name: `Other (${others})`, value: rest });
  return head;
}

/** Table column → the route's sort key. */
const SORT_KEYS: Record<string, string> = { calls: "calls", total: "total_us", mean: "mean_us", max: "max_us", min: "min_us" };

/** The kernels answer's matrix units: "Tensor Cores" (CUDA), "Matrix Cores" (ROCm) or "" (unknown). */
export function readMatrixUnits(data: unknown): string {
  return str(data, "matrix_units");
}

/** A row grouped by op and launch shape as `timeline/longest`'s filters (the table's own values: no
 * op is "", an unrecorded register or shared-memory count -1). */
export function launchOf(r: KernelRow): Record<string, string> {
  return { op_name: r.operator ?? "", grid: r.grid ?? "", block: r.block ?? "", regs: String(r.regs ?? -1), shmem: String(r.shmem ?? -1) };
}

export function columnsFor(rows: KernelRow[], detailed: boolean, units: string, show: (row: KernelRow) => void): Column<KernelRow>[] {
  const cols: Column<KernelRow>[] = [
    {
      id: "name",
      header: "Kernel",
      kind: "text",
      value: (r) => r.name,
      width: "minmax(200px, 5fr)",
      render: (r) => (
        <TimelineLink
          name={r.name}
          onShow={() => show(r)}
          title={detailed ? "Show the longest launch of this kernel from this op with this launch shape in the timeline (Trace view)" : undefined}
        />
      ),
    },
  ];
  if (detailed) {
    cols.push(
      { id: "operator", header: "Operator", kind: "text", value: (r) => r.operator ?? "", width: "minmax(120px, 2fr)" },
      { id: "grid", header: "Grid", kind: "text", value: (r) => r.grid ?? "", width: "minmax(80px, 1fr)", searchable: false, tooltip: help("kernel_grid") },
      { id: "block", header: "Block", kind: "text", value: (r) => r.block ?? "", width: "minmax(80px, 1fr)", searchable: false, tooltip: help("kernel_block") },
      { id: "regs", header: "Regs/thread", kind: "count", value: (r) => r.regs, tooltip: help("kernel_regs") },
      { id: "shmem", header: "Shared mem", kind: "bytes", value: (r) => r.shmem, tooltip: help("kernel_shmem") },
    );
  }
  const short = units === "Matrix Cores" ? "MC" : "TC";
  if (units) {
    cols.push({ id: "tc_used", header: `${short} used`, kind: "text", value: (r) => (r.tcUsed ? "yes" : r.tcUnknown ? "?" : "no"), width: "minmax(64px, 0.6fr)", searchable: false, tooltip: help("tc_used", units) });
    if (detailed && rows.some((r) => r.opTcEligible !== null))
      cols.push({ id: "op_tc", header: `Op ${short} eligible`, kind: "text", value: (r) => (r.opTcEligible ? "yes" : "no"), width: "minmax(72px, 0.7fr)", searchable: false, tooltip: help("op_tc_eligible", units) });
  }
  cols.push(
    { id: "calls", header: "Calls", kind: "count", value: (r) => r.calls },
    { id: "total", header: "Total", kind: "duration", value: (r) => r.total, tooltip: help("kernel_total") },
    { id: "mean", header: "Mean", kind: "duration", value: (r) => r.mean, tooltip: help("kernel_mean") },
    { id: "max", header: "Max", kind: "duration", value: (r) => r.max },
    { id: "min", header: "Min", kind: "duration", value: (r) => r.min },
  );
  if (rows.some((r) => r.replayedCalls > 0))
    cols.push({ id: "replayed", header: "Replayed", kind: "duration", value: (r) => r.replayed, tooltip: help("kernel_replayed") });
  if (rows.some((r) => r.blocksPerSm !== null))
    cols.push({ id: "blocks_per_sm", header: "Mean blocks/SM", kind: "number", value: (r) => r.blocksPerSm, tooltip: help("blocks_per_sm") });
  if (rows.some((r) => r.occupancy !== null))
    cols.push({ id: "occupancy", header: "Mean est. occupancy", kind: "percent", value: (r) => r.occupancy, tooltip: help("occupancy") });
  return cols;
}

const GROUPS = [
  { value: "name", label: "Kernel name" },
  { value: "detailed", label: "Kernel + operator + launch shape" },
];

export function KernelView(p: ViewProps): ReactNode {
  const detailed = p.state.kgroup === "detailed";
  const groupBy = detailed ? "name_op_launch" : "name";
  const topN = Math.max(1, Math.min(50, Number(p.state.top) || 10));
  const base = profileParams(p);
  const [sort, setSort] = useState<{ id: string; desc: boolean }>({ id: "total", desc: true });
  const { typed, setTyped, query, offset, setOffset } = useServerQuery([sort, groupBy]);

  // the pies (every kernel, by name) and one bounded page of the table, searched and sorted by the route
  const pies = useApi<unknown>(p.api, "kernels", { ...base, group_by: "name", limit: 1, top: topN });
  const grouped = useApi<unknown>(p.api, "kernels", {
    ...base,
    group_by: groupBy,
    sort: SORT_KEYS[sort.id] ?? "total_us",
    order: sort.desc ? "desc" : "asc",
    q: query,
    offset,
    limit: PAGE,
  });
  const data = useLast(grouped.data);
  const rows = useMemo(() => (data === undefined ? null : readKernelRows(data)), [data]);
  const page = readPage(data);
  const paged = page.total > PAGE; // else the whole table is here: sorted and searched in the page
  const totals = useMemo(() => (pies.data === undefined ? null : readKernelTotals(pies.data)), [pies.data]);
  const setState = p.setState;
  const units = readMatrixUnits(pies.data);
  const columns = useMemo(
    () =>
      columnsFor(rows ?? [], detailed, units, (r) =>
        setState({ view: "Trace", find: `kernel:${r.name}`, fwith: detailed ? findWith(launchOf(r)) : null, sel: null, t0: null, t1: null }, true),
      ),
    [rows, detailed, units, setState],
  );
  const tcSlices = useMemo(
    () =>
      units && totals?.tc !== null && totals?.tc !== undefined
        ? tensorCoreSlices(
            [
              { total: totals.tc, tcUsed: true },
              { total: totals.total - totals.tc - (totals.tcUnknown ?? 0), tcUsed: false },
              { total: totals.tcUnknown ?? 0, tcUsed: null },
            ],
            units,
          )
        : [],
    [totals, units],
  );

  const err = pies.error ?? grouped.error;
  if (err) return <ErrorBox error={err} what="the kernels" />;
  if (!totals || !rows) return <Loading what="kernels" />;
  if (totals.count === 0)
    return <Empty title="This trace has no kernels">Profile with ProfilerActivity.CUDA (or another accelerator) to see kernels.</Empty>;

  const server = paged
    ? serverPage({
        query: typed,
        onQuery: setTyped,
        sort: sort,
        sortable: (id) => !!SORT_KEYS[id],
        onSort: setSort,
        page,
        shown: rows.length,
        pageSize: PAGE,
        setOffset,
      })
    : undefined;

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
          <Pie title={`Top ${topN} kernels by total time`} slices={kernelTopSlices(totals)} testId="pie-kernels" />
          {units ? (
            <Pie title={`Kernel time using ${units} (at least)`} slices={tcSlices} testId="pie-tc" />
          ) : (
            <div className="pie-empty" data-testid="pie-tc-missing">
              <strong>Matrix units</strong>
              <div className="muted">This device's kernel names do not say whether they use its matrix units: no share is shown.</div>
            </div>
          )}
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
          testId="kernel-table"
          server={server}
        />
      </Section>
    </div>
  );
}
