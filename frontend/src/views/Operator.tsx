import { type ReactNode, useMemo, useRef, useState } from "react";
import { Empty, ErrorBox, Loading, Section, Select, TimelineLink } from "../components/common";
import { type Column, DataTable, serverPage, useServerQuery } from "../components/DataTable";
import { Pie } from "../components/Pie";
import { LibraryToggle, PathRules, StackFrames } from "../components/StackFrames";
import { help } from "../lib/columnHelp";
import { fileSlug } from "../lib/csv";
import { formatCount, formatDuration } from "../lib/format";
import { arr, bool, get, isObj, num, str } from "../lib/pick";
import { type Frame, readFrames } from "../lib/source";
import { useApi } from "../lib/useApi";
import type { Slice } from "./shape";
import { type ViewProps, profileParams } from "./types";
import { findWith } from "./findWith";

export interface OpRow {
  name: string;
  inputShape: string | null;
  calls: number;
  hostSelf: number;
  hostTotal: number;
  deviceSelf: number;
  deviceTotal: number;
  tcEligible: boolean;
  tcSelfPct: number;
  tcTotalPct: number;
  hasStack: boolean;
  /** "op", or "graph_replay" for the range of a graph launch (docs/metrics.md, "Graph replays") */
  kind: string;
  replayedCalls: number;
  replayedDevice: number;
}

export function readOpRow(r: unknown): OpRow {
  const shape = isObj(r) && "input_shape" in r ? str(r, "input_shape") : null;
  return {
    name: str(r, "name"),
    inputShape: shape,
    calls: num(r, "calls") ?? 0,
    hostSelf: num(r, "host_self_us") ?? 0,
    hostTotal: num(r, "host_total_us") ?? 0,
    deviceSelf: num(r, "device_self_us") ?? 0,
    deviceTotal: num(r, "device_total_us") ?? 0,
    tcEligible: bool(r, "tc_eligible"),
    tcSelfPct: 100 * (num(r, "tc_self_ratio") ?? 0),
    tcTotalPct: 100 * (num(r, "tc_total_ratio") ?? 0),
    hasStack: bool(r, "has_call_stack"),
    kind: str(r, "kind") || "op",
    replayedCalls: num(r, "replayed_calls") ?? 0,
    replayedDevice: num(r, "replayed_device_us") ?? 0,
  };
}

export function readRows(data: unknown): OpRow[] {
  return arr(data, "rows").map(readOpRow);
}

/** The page counts of an `operators` answer. */
export function readPage(data: unknown): { offset: number; limit: number; total: number; matched: number } {
  return {
    offset: num(data, "offset") ?? 0,
    limit: num(data, "limit") ?? 0,
    total: num(data, "total_rows") ?? 0,
    matched: num(data, "matched_rows") ?? 0,
  };
}

const MEASURES = ["device_self_us", "device_total_us", "host_self_us", "host_total_us"] as const;
export type Measure = (typeof MEASURES)[number];

/**
 * A pie of the top n operators by a measure, from the answer's `top` lists and `totals` (every row,
 * not only the page): the rest of the total is one "Other (k)" slice.
 */
export function topPie(data: unknown, measure: Measure, n: number): Slice[] {
  const top = arr(get(data, "top"), measure)
    .map((r) => ({ name: str(r, "name"), value: num(r, measure) ?? 0 }))
    .filter((x) => x.value > 0)
    .slice(0, n);
  const total = num(get(data, "totals"), measure) ?? 0;
  const rest = total - top.reduce((s, x) => s + x.value, 0);
  const others = (num(data, "total_rows") ?? 0) - top.length;
  if (rest > total * 1e-9 && others > 0) top.push({ name: `Other (${others})`, value: rest });
  return top;
}

export interface StackGroup {
  frames: Frame[];
  calls: number | null;
  hostTotal: number | null;
  deviceTotal: number | null;
}

/** The `operators/stack` answer: one group per distinct call stack. */
export function readStacks(data: unknown): StackGroup[] {
  return arr(data, "stacks").map((g) => ({
    frames: readFrames(get(g, "frames")),
    calls: num(g, "calls"),
    hostTotal: num(g, "host_total_us"),
    deviceTotal: num(g, "device_total_us"),
  }));
}

function StackDetails({ p, row }: { p: ViewProps; row: OpRow }): ReactNode {
  // The grouping is the row's own (a row grouped by shape has one), not the selector's: switching the
  // grouping re-renders an open row of the old table before the new rows arrive. A shape of "" (calls
  // without recorded shapes) is dropped from the URL, which the route reads as "".
  const params: Record<string, string> = { ...profileParams(p), group_by: row.inputShape !== null ? "name_input_shape" : "name", name: row.name };
  if (row.inputShape !== null) params.input_shape = row.inputShape;
  const { data, error, loading } = useApi<unknown>(p.api, "operators/stack", params);
  if (error) return <ErrorBox error={error} what="the call stacks" />;
  if (loading || data === undefined) return <Loading what="call stacks" />;
  const groups = readStacks(data);
  if (groups.length === 0) return <div className="muted">No call stack recorded (profile with with_stack=True).</div>;
  return (
    <div data-testid="stack-groups">
      {groups.some((g) => g.frames.length > 0) && <LibraryToggle />}
      {groups.map((g, i) => (
        <div className="stack-group" key={i}>
          <div className="stack-group-head">
            {g.calls !== null && `${formatCount(g.calls)} call${g.calls === 1 ? "" : "s"}`}
            {g.hostTotal !== null && ` · host total ${formatDuration(g.hostTotal)}`}
            {g.deviceTotal !== null && g.deviceTotal > 0 && ` · device total ${formatDuration(g.deviceTotal)}`}
          </div>
          {g.frames.length ? <StackFrames frames={g.frames} toggle={false} /> : <div className="muted">Calls without a recorded stack.</div>}
        </div>
      ))}
      <PathRules />
    </div>
  );
}

/** units: the device's matrix units ("Tensor Cores", "Matrix Cores"); "" hides the TC columns;
 * replayed: show the graph-replay column (some row ran in graph replays). */
export function operatorColumns(withDevice: boolean, withShape: boolean, show?: (row: OpRow) => void, units = "Tensor Cores", replayed = false): Column<OpRow>[] {
  const tip = withShape ? "Show the longest call of this operator with this input shape in the timeline (Trace view)" : undefined;
  const cols: Column<OpRow>[] = [
    { id: "name", header: "Operator", kind: "text", value: (r) => r.name, ...(show ? { render: (r: OpRow) => <TimelineLink name={r.name} onShow={() => show(r)} title={tip} /> } : {}) },
  ];
  if (withShape)
    cols.push({ id: "input_shape", header: "Input shape", kind: "text", value: (r) => r.inputShape ?? "", width: "minmax(160px, 2fr)", tooltip: help("op_input_shape") });
  cols.push({ id: "calls", header: "Calls", kind: "count", value: (r) => r.calls });
  if (withDevice) {
    cols.push(
      { id: "device_self", header: "Device self", kind: "duration", value: (r) => r.deviceSelf, tooltip: help("op_device_self") },
      { id: "device_total", header: "Device total", kind: "duration", value: (r) => r.deviceTotal, tooltip: help("op_device_total") },
    );
    if (replayed)
      cols.push({
        id: "replayed",
        header: "Replayed",
        kind: "duration",
        value: (r) => r.replayedDevice,
        tooltip: help("op_replayed"),
      });
  }
  cols.push(
    { id: "host_self", header: "Host self", kind: "duration", value: (r) => r.hostSelf, tooltip: help("op_host_self") },
    { id: "host_total", header: "Host total", kind: "duration", value: (r) => r.hostTotal, tooltip: help("op_host_total") },
  );
  if (withDevice && units) {
    const short = units === "Matrix Cores" ? "MC" : "TC"; // ROCm says Matrix Cores, CUDA Tensor Cores
    cols.push(
      { id: "tc_eligible", header: `${short} eligible`, kind: "text", value: (r) => (r.tcEligible ? "yes" : "no"), width: "minmax(80px, 0.6fr)", searchable: false, tooltip: help("tc_eligible", units) },
      { id: "tc_self", header: `${short} self`, kind: "percent", value: (r) => r.tcSelfPct, tooltip: help("tc_self", units) },
      { id: "tc_total", header: `${short} total`, kind: "percent", value: (r) => r.tcTotalPct, tooltip: help("tc_total", units) },
    );
  }
  return cols;
}

const GROUPS = [
  { value: "name", label: "Operator" },
  { value: "name_input_shape", label: "Operator + input shape" },
];

/** Rows per request: the table virtualizes, but one answer stays the size a browser table needs. */
export const PAGE = 10000;

/** Table column → the route's sort key (columns without one sort only the page shown). */
const SORT_KEYS: Record<string, string> = {
  calls: "calls",
  device_self: "device_self_us",
  device_total: "device_total_us",
  host_self: "host_self_us",
  host_total: "host_total_us",
  tc_self: "tc_self_us",
  tc_total: "tc_total_us",
};

/** The last answer while the next one loads, so that the table (and its search box) stays. */
export function useLast<T>(value: T | undefined): T | undefined {
  const last = useRef<T | undefined>(undefined);
  if (value !== undefined) last.current = value;
  return value ?? last.current;
}

export function OperatorView(p: ViewProps): ReactNode {
  const groupBy = p.state.group === "name_input_shape" ? "name_input_shape" : "name";
  const topN = Math.max(1, Math.min(50, Number(p.state.top) || 10));
  const base = profileParams(p);
  const [sort, setSort] = useState<{ id: string; desc: boolean } | null>(null);
  const { typed, setTyped, query, offset, setOffset } = useServerQuery([sort, groupBy]);

  const pies = useApi<unknown>(p.api, "operators", { ...base, group_by: "name", limit: 1, top: topN });
  const totals = get(pies.data, "totals");
  const withDevice = (num(totals, "device_total_us") ?? 0) > 0;
  const sortId = sort?.id ?? (withDevice ? "device_self" : "host_self");
  const desc = sort?.desc ?? true;
  const grouped = useApi<unknown>(p.api, pies.data === undefined ? null : "operators", {
    ...base,
    group_by: groupBy,
    sort: SORT_KEYS[sortId] ?? (withDevice ? "device_self_us" : "host_self_us"),
    order: desc ? "desc" : "asc",
    q: query,
    offset,
    limit: PAGE,
  });
  const data = useLast(grouped.data);
  const rows = useMemo(() => (data === undefined ? null : readRows(data)), [data]);
  const page = readPage(data);
  // the whole table fits in one answer: sort and search it here, as every other table
  const paged = page.total > PAGE;
  const setState = p.setState;
  const units = str(pies.data, "matrix_units");
  const hasReplays = useMemo(() => (rows ?? []).some((r) => r.replayedDevice > 0 || r.kind === "graph_replay"), [rows]);
  const columns = useMemo(
    () =>
      operatorColumns(
        withDevice,
        groupBy === "name_input_shape",
        (r) => setState({ view: "Trace", find: `op:${r.name}`, fwith: r.inputShape !== null ? findWith({ input_shape: r.inputShape }) : null, sel: null, t0: null, t1: null }, true),
        units,
        hasReplays,
      ),
    [withDevice, groupBy, setState, units, hasReplays],
  );

  const err = pies.error ?? grouped.error;
  if (err) return <ErrorBox error={err} what="the operators" />;
  if (pies.data === undefined || !rows) return <Loading what="operators" />;
  if (readPage(pies.data).total === 0)
    return <Empty title="No operators in this profile">The trace has no cpu_op events (was record_shapes / the CPU activity enabled?).</Empty>;

  // self times only: a parent's total time includes its children's, so total-time pies count it twice
  const measures: { title: string; m: Measure }[] = [
    ...(withDevice ? [{ title: "Device self time (children excluded)", m: "device_self_us" as const }] : []),
    { title: "Host self time (children excluded)", m: "host_self_us" },
  ];
  const server = paged
    ? serverPage({
        query: typed,
        onQuery: setTyped,
        sort: { id: sortId, desc },
        sortable: (id) => !!SORT_KEYS[id],
        onSort: setSort,
        page,
        shown: rows.length,
        pageSize: PAGE,
        setOffset,
      })
    : undefined;

  return (
    <div className="operator">
      <Section
        title={`Top ${topN} operators`}
        id="operator-pies"
        actions={
          <Select
            label="Top"
            value={String(topN)}
            options={[5, 10, 20, 30].map((n) => ({ value: String(n) }))}
            onChange={(v) => p.setState({ top: v })}
            testId="select-top"
          />
        }
      >
        {!withDevice && <div className="muted">This trace has no device activity: only host times are shown.</div>}
        <div className="grid2">
          {measures.map((pie) => (
            <Pie key={pie.m} title={pie.title} slices={topPie(pies.data, pie.m, topN)} testId={`pie-${pie.m}`} />
          ))}
        </div>
      </Section>
      <Section
        title="Operators"
        id="operator-table"
        actions={
          <Select label="Group by" value={groupBy} options={GROUPS} onChange={(v) => p.setState({ group: v }, true)} testId="select-group" />
        }
      >
        {groupBy === "name_input_shape" && get(data, "has_input_shapes") === false && (
          <div className="notice" role="note" data-testid="no-shapes">
            This trace recorded no input shapes, so every row&apos;s shape is empty and the grouping is the same as by operator. Record with{" "}
            <code>torch.profiler.profile(record_shapes=True)</code> to group by input shape.
          </div>
        )}
        {paged && (
          <div className="muted" data-testid="op-paged">
            {page.total.toLocaleString("en-US")} rows: the table shows {PAGE.toLocaleString("en-US")} at a time; sorting and search run on all of them.
          </div>
        )}
        <DataTable
          rows={rows}
          columns={columns}
          csvName={fileSlug("operators", p.run, p.worker, p.span, groupBy)}
          initialSort={{ id: withDevice ? "device_self" : "host_self", desc: true }}
          searchPlaceholder="Search operator names"
          expand={{ canExpand: (r) => r.hasStack, render: (r) => <StackDetails p={p} row={r} /> }}
          testId="op-table"
          server={server}
        />
      </Section>
    </div>
  );
}
