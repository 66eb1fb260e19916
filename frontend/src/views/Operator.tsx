import { type ReactNode, useMemo } from "react";
import { Empty, ErrorBox, Loading, Section, Select, TimelineLink } from "../components/common";
import { type Column, DataTable } from "../components/DataTable";
import { Pie } from "../components/Pie";
import { PathRules, StackFrames } from "../components/StackFrames";
import { fileSlug } from "../lib/csv";
import { formatCount, formatDuration } from "../lib/format";
import { arr, bool, isObj, num, str } from "../lib/pick";
import { type Frame, parseFrame, parseStack } from "../lib/source";
import { useApi } from "../lib/useApi";
import { topSlices } from "./shape";
import { type ViewProps, profileParams } from "./types";

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
}

/** Ratios come as 0..1 (`*_ratio`) or percentages (`*_pct`). */
function pct(r: unknown, ratioKey: string, pctKey: string): number {
  const ratio = num(r, ratioKey);
  if (ratio !== null) return ratio * 100;
  return num(r, pctKey) ?? 0;
}

export function readOpRow(r: unknown): OpRow {
  const shape = isObj(r) && "input_shape" in r ? str(r, "input_shape") : null;
  return {
    name: str(r, "name"),
    inputShape: shape,
    calls: num(r, "calls") ?? 0,
    hostSelf: num(r, "host_self_us", "host_self") ?? 0,
    hostTotal: num(r, "host_total_us", "host_total") ?? 0,
    deviceSelf: num(r, "device_self_us", "device_self") ?? 0,
    deviceTotal: num(r, "device_total_us", "device_total") ?? 0,
    tcEligible: bool(r, "tc_eligible"),
    tcSelfPct: pct(r, "tc_self_ratio", "tc_self_pct"),
    tcTotalPct: pct(r, "tc_total_ratio", "tc_total_pct"),
    hasStack: bool(r, "has_call_stack", "has_stack"),
  };
}

export function readRows(data: unknown): OpRow[] {
  const list = Array.isArray(data) ? data : arr(data, "rows", "data", "operators", "table");
  return list.map(readOpRow);
}

export interface StackGroup {
  frames: Frame[];
  calls: number | null;
  hostTotal: number | null;
  deviceTotal: number | null;
}

export function readFrames(v: unknown): Frame[] {
  if (typeof v === "string") return parseStack(v);
  return arr(v).map((f) => {
    if (typeof f === "string") return parseFrame(f);
    const file = str(f, "file") || null;
    const line = num(f, "line");
    const func = str(f, "function", "func", "name");
    return { text: file ? `${file}(${line ?? "?"}): ${func}` : func, file, line, func };
  });
}

/** The `operators/stack` answer: one group per distinct call stack. */
export function readStacks(data: unknown): StackGroup[] {
  return (Array.isArray(data) ? data : arr(data, "stacks", "rows", "data")).map((g) => ({
    frames: readFrames(isObj(g) ? (g.frames ?? g.call_stack ?? g.stack) : g),
    calls: num(g, "calls"),
    hostTotal: num(g, "host_total_us", "host_total"),
    deviceTotal: num(g, "device_total_us", "device_total"),
  }));
}

function StackDetails({ p, row, groupBy }: { p: ViewProps; row: OpRow; groupBy: string }): ReactNode {
  const params: Record<string, string> = { ...profileParams(p), group_by: groupBy, name: row.name };
  if (row.inputShape !== null) params.input_shape = row.inputShape;
  const { data, error, loading } = useApi<unknown>(p.api, "operators/stack", params);
  if (error) return <ErrorBox error={error} what="the call stacks" />;
  if (loading || data === undefined) return <Loading what="call stacks" />;
  const groups = readStacks(data);
  if (groups.length === 0) return <div className="muted">No call stack recorded (profile with with_stack=True).</div>;
  return (
    <div data-testid="stack-groups">
      {groups.map((g, i) => (
        <div className="stack-group" key={i}>
          <div className="stack-group-head">
            {g.calls !== null && `${formatCount(g.calls)} call${g.calls === 1 ? "" : "s"}`}
            {g.hostTotal !== null && ` · host total ${formatDuration(g.hostTotal)}`}
            {g.deviceTotal !== null && g.deviceTotal > 0 && ` · device total ${formatDuration(g.deviceTotal)}`}
          </div>
          {g.frames.length ? <StackFrames frames={g.frames} /> : <div className="muted">Calls without a recorded stack.</div>}
        </div>
      ))}
      <PathRules />
    </div>
  );
}

export function operatorColumns(withDevice: boolean, withShape: boolean, show?: (name: string) => void): Column<OpRow>[] {
  const cols: Column<OpRow>[] = [
    { id: "name", header: "Operator", kind: "text", value: (r) => r.name, ...(show ? { render: (r: OpRow) => <TimelineLink name={r.name} onShow={show} /> } : {}) },
  ];
  if (withShape)
    cols.push({ id: "input_shape", header: "Input shape", kind: "text", value: (r) => r.inputShape ?? "", width: "minmax(160px, 2fr)" });
  cols.push({ id: "calls", header: "Calls", kind: "count", value: (r) => r.calls });
  if (withDevice) {
    cols.push(
      { id: "device_self", header: "Device self", kind: "duration", value: (r) => r.deviceSelf, tooltip: "Time of the kernels, memcpys and memsets this operator launched itself" },
      { id: "device_total", header: "Device total", kind: "duration", value: (r) => r.deviceTotal, tooltip: "Device self time of this operator and every operator it called" },
    );
  }
  cols.push(
    { id: "host_self", header: "Host self", kind: "duration", value: (r) => r.hostSelf, tooltip: "Duration minus children and its own runtime calls" },
    { id: "host_total", header: "Host total", kind: "duration", value: (r) => r.hostTotal, tooltip: "Wall time on the host, children included" },
  );
  if (withDevice) {
    cols.push(
      { id: "tc_eligible", header: "TC eligible", kind: "text", value: (r) => (r.tcEligible ? "yes" : "no"), width: "minmax(80px, 0.6fr)", searchable: false },
      { id: "tc_self", header: "TC self", kind: "percent", value: (r) => r.tcSelfPct, tooltip: "Share of device self time in tensor-core kernels" },
      { id: "tc_total", header: "TC total", kind: "percent", value: (r) => r.tcTotalPct, tooltip: "Share of device total time in tensor-core kernels" },
    );
  }
  return cols;
}

const GROUPS = [
  { value: "name", label: "Operator" },
  { value: "name_input_shape", label: "Operator + input shape" },
];

export function OperatorView(p: ViewProps): ReactNode {
  const groupBy = p.state.group === "name_input_shape" ? "name_input_shape" : "name";
  const topN = Math.max(1, Math.min(50, Number(p.state.top) || 10));
  const base = profileParams(p);
  const byName = useApi<unknown>(p.api, "operators", { ...base, group_by: "name" });
  const grouped = useApi<unknown>(p.api, "operators", { ...base, group_by: groupBy });

  const nameRows = useMemo(() => (byName.data === undefined ? null : readRows(byName.data)), [byName.data]);
  const rows = useMemo(() => (grouped.data === undefined ? null : readRows(grouped.data)), [grouped.data]);
  const withDevice = useMemo(() => (nameRows ?? []).some((r) => r.deviceTotal > 0), [nameRows]);
  const setState = p.setState;
  const columns = useMemo(
    () =>
      operatorColumns(withDevice, groupBy === "name_input_shape", (name) =>
        setState({ view: "Trace", find: `op:${name}`, sel: null, t0: null, t1: null }, true),
      ),
    [withDevice, groupBy, setState],
  );

  const err = byName.error ?? grouped.error;
  if (err) return <ErrorBox error={err} what="the operators" />;
  if (!nameRows || !rows) return <Loading what="operators" />;
  if (nameRows.length === 0)
    return <Empty title="No operators in this profile">The trace has no cpu_op events (was record_shapes / the CPU activity enabled?).</Empty>;

  const pies = [
    ...(withDevice
      ? [
          { title: "Device self time", v: (r: OpRow) => r.deviceSelf },
          { title: "Device total time", v: (r: OpRow) => r.deviceTotal },
        ]
      : []),
    { title: "Host self time", v: (r: OpRow) => r.hostSelf },
    { title: "Host total time", v: (r: OpRow) => r.hostTotal },
  ];

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
        {!withDevice && <div className="muted">This trace has no GPU activity: only host times are shown.</div>}
        <div className="grid2">
          {pies.map((pie) => (
            <Pie key={pie.title} title={pie.title} slices={topSlices(nameRows, (r) => r.name, pie.v, topN)} testId={`pie-${pie.title}`} />
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
        <DataTable
          rows={rows}
          columns={columns}
          csvName={fileSlug("operators", p.run, p.worker, p.span, groupBy)}
          initialSort={{ id: withDevice ? "device_self" : "host_self", desc: true }}
          searchPlaceholder="Search operator names"
          expand={{ canExpand: (r) => r.hasStack, render: (r) => <StackDetails p={p} row={r} groupBy={groupBy} /> }}
          height={520}
          testId="op-table"
        />
      </Section>
    </div>
  );
}
