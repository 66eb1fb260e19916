import { type ReactNode, useMemo, useState } from "react";
import { Chart, safeTooltip } from "../components/Chart";
import { Empty, ErrorBox, Loading, Section, Select, Stat, TimelineLink } from "../components/common";
import { type Column, DataTable } from "../components/DataTable";
import { help } from "../lib/columnHelp";
import { fileSlug } from "../lib/csv";
import { formatDuration, formatPercent } from "../lib/format";
import { arr, get, isObj, num, str } from "../lib/pick";
import { useApi } from "../lib/useApi";
import { type ViewProps, profileParams } from "./types";

/** One row of the `roofline` route (docs/api.md): an operator (holder) or a kernel. */
export interface RoofRow {
  name: string;
  inputDims: string;
  dtype: string;
  peakDtype: string;
  calls: number;
  knownCalls: number | null;
  flops: number | null;
  bytes: number | null;
  deviceUs: number;
  intensity: number | null;
  tflops: number | null;
  tbps: number | null;
  pct: number | null;
  bound: string;
  timeLost: number | null;
  source: string;
  reason: string;
}

export interface RoofDevice {
  name: string;
  matched: string | null;
  peaks: Record<string, number>;
  tbps: number | null;
  source: string;
  how: string;
}

export interface RoofModel {
  device: RoofDevice;
  ridge: Record<string, number>;
  rows: RoofRow[];
  mfu: number | null;
  mfuDtype: string;
  knownShare: number | null;
  mfuReason: string;
  perStep: { step: number; mfu: number | null }[];
}

function readRow(r: unknown): RoofRow {
  return {
    name: str(r, "name"),
    inputDims: str(r, "input_dims"),
    dtype: str(r, "dtype"),
    peakDtype: str(r, "peak_dtype"),
    calls: num(r, "calls") ?? 0,
    knownCalls: num(r, "known_calls"),
    flops: num(r, "flops"),
    bytes: num(r, "bytes"),
    deviceUs: num(r, "device_us") ?? 0,
    intensity: num(r, "intensity"),
    tflops: num(r, "tflops_per_s"),
    tbps: num(r, "tb_per_s"),
    pct: num(r, "pct_of_roofline"),
    bound: str(r, "bound"),
    timeLost: num(r, "time_lost_us"),
    source: str(r, "source"),
    reason: str(r, "reason"),
  };
}

function numbers(o: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (isObj(o)) for (const [k, v] of Object.entries(o)) if (typeof v === "number") out[k] = v;
  return out;
}

export function readRoofline(data: unknown): RoofModel {
  const dev = get(data, "device");
  const mfu = get(data, "mfu");
  return {
    device: {
      name: str(dev, "name"),
      matched: (get(dev, "matched_peak_name") as string | null | undefined) ?? null,
      peaks: numbers(get(dev, "peaks")),
      tbps: num(dev, "tb_per_s"),
      source: str(dev, "source"),
      how: str(dev, "how"),
    },
    ridge: numbers(get(data, "ridge")),
    rows: arr(data, "rows").map(readRow),
    mfu: num(mfu, "mean"),
    mfuDtype: str(mfu, "dtype"),
    knownShare: num(mfu, "known_flops_share"),
    mfuReason: str(mfu, "reason"),
    perStep: arr(mfu, "per_step").map((s) => ({ step: num(s, "step") ?? 0, mfu: num(s, "mfu") })),
  };
}

/** Roofline lines: y = x·BW up to the ridge point, then the dtype's peak; over [lo, hi] FLOP/byte. */
export function roofLine(peak: number, tbps: number, lo: number, hi: number): [number, number][] {
  const ridge = peak / tbps;
  const pts: [number, number][] = [];
  if (lo < ridge) pts.push([lo, lo * tbps]);
  pts.push([Math.max(lo, Math.min(ridge, hi)), Math.min(peak, Math.max(lo, Math.min(ridge, hi)) * tbps)]);
  if (hi > ridge) pts.push([hi, peak]);
  return pts;
}

const COLORS = ["#d8590f", "#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf"];

const sci = (v: number | null, unit: string): string => (v === null ? "–" : `${v.toPrecision(3)} ${unit}`);

function tooltipText(r: RoofRow): string {
  const lines = [r.name + (r.inputDims ? ` ${r.inputDims}` : ""), `dtype ${r.dtype || "?"} · ${r.calls} calls · ${formatDuration(r.deviceUs)}`];
  lines.push(`FLOPs ${sci(r.flops, "")}  bytes ${sci(r.bytes, "B")}  intensity ${sci(r.intensity, "FLOP/B")}`);
  lines.push(`${sci(r.tflops, "TFLOP/s")}  ${sci(r.tbps, "TB/s")}  ${formatPercent(r.pct)} of roofline (${r.bound || "?"})`);
  lines.push(`time lost ${r.timeLost === null ? "–" : formatDuration(r.timeLost)} · source ${r.source || "?"}`);
  return lines.join("\n");
}

/** The dtypes drawn as roofs: those of the rows that have a peak on this device. */
function roofDtypes(m: RoofModel): string[] {
  if (!m.device.tbps) return [];
  return [...new Set(m.rows.map((r) => r.peakDtype).filter((d) => d && m.device.peaks[d] !== undefined))];
}

function roofCount(m: RoofModel): number {
  return roofDtypes(m).length;
}

function chartOption(m: RoofModel, plotted: RoofRow[], selected: number | null): Record<string, unknown> {
  const xs = plotted.map((r) => r.intensity as number);
  const ridges = Object.values(m.ridge);
  const lo = Math.min(0.1, ...xs) / 2;
  const hi = Math.max(1000, ...xs, ...ridges) * 2;
  const maxUs = Math.max(1, ...plotted.map((r) => r.deviceUs));
  const dtypes = roofDtypes(m);
  const series: Record<string, unknown>[] = [
    {
      name: "rows",
      type: "scatter",
      // area ∝ device time
      symbolSize: (v: number[]) => 6 + 34 * Math.sqrt((v[2] ?? 0) / maxUs),
      data: plotted.map((r, i) => ({
        value: [r.intensity, r.tflops, r.deviceUs],
        itemStyle: { color: r.bound === "compute" ? "#2ca02c" : "#1f77b4", opacity: i === selected ? 1 : 0.65, borderColor: i === selected ? "#d8590f" : undefined, borderWidth: i === selected ? 3 : 0 },
      })),
      tooltip: { formatter: (p: { dataIndex: number }) => tooltipText(plotted[p.dataIndex] as RoofRow) },
      z: 3,
    },
  ];
  if (m.device.tbps) {
    dtypes.forEach((d, i) => {
      const peak = m.device.peaks[d] as number;
      series.push({
        name: `${d} roof (${peak} TFLOP/s)`,
        type: "line",
        showSymbol: false,
        lineStyle: { color: COLORS[i % COLORS.length], width: 2 },
        itemStyle: { color: COLORS[i % COLORS.length] },
        data: roofLine(peak, m.device.tbps as number, lo, hi),
        tooltip: { formatter: () => `${d}: peak ${peak} TFLOP/s, ${m.device.tbps} TB/s, ridge ${(peak / (m.device.tbps as number)).toFixed(1)} FLOP/B` },
        z: 2,
      });
      series.push({
        name: `${d} ridge`,
        type: "scatter",
        symbol: "diamond",
        symbolSize: 10,
        itemStyle: { color: COLORS[i % COLORS.length] },
        data: [[peak / (m.device.tbps as number), peak]],
        tooltip: { formatter: () => `${d} ridge point: ${(peak / (m.device.tbps as number)).toFixed(1)} FLOP/B` },
        z: 2,
      });
    });
  }
  return {
    tooltip: { ...safeTooltip, trigger: "item" },
    legend: { top: 0, type: "scroll", data: series.filter((s) => String(s.name).includes("roof")).map((s) => s.name) },
    grid: { left: 70, right: 30, top: 36, bottom: 50 },
    xAxis: { type: "log", name: "Arithmetic intensity (FLOP/byte)", nameLocation: "middle", nameGap: 30, min: lo, max: hi },
    yAxis: { type: "log", name: "TFLOP/s", nameLocation: "middle", nameGap: 50 },
    series,
  };
}

export function columns(byOps: boolean, show: (name: string) => void): Column<RoofRow>[] {
  const cols: Column<RoofRow>[] = [
    { id: "name", header: byOps ? "Operator" : "Kernel", kind: "text", value: (r) => r.name, width: "minmax(200px, 4fr)", render: (r) => <TimelineLink name={r.name} onShow={show} /> },
  ];
  if (byOps) cols.push({ id: "dims", header: "Input dims", kind: "text", value: (r) => r.inputDims, width: "minmax(140px, 2fr)" });
  cols.push(
    { id: "dtype", header: "Dtype", kind: "text", value: (r) => r.peakDtype || r.dtype, width: "minmax(64px, 0.6fr)", searchable: false, tooltip: help("roof_dtype") },
    { id: "calls", header: byOps ? "Calls" : "Calls (known)", kind: "count", value: (r) => r.knownCalls ?? r.calls, ...(byOps ? {} : { tooltip: help("roof_calls_known") }) },
    { id: "time", header: "Device time", kind: "duration", value: (r) => r.deviceUs, tooltip: help("roof_time") },
    { id: "flops", header: "GFLOP", kind: "number", value: (r) => (r.flops === null ? null : r.flops / 1e9), tooltip: help("roof_flops") },
    { id: "bytes", header: "Bytes", kind: "bytes", value: (r) => r.bytes, tooltip: help("roof_bytes") },
    { id: "intensity", header: "FLOP/B", kind: "number", value: (r) => r.intensity, tooltip: help("roof_intensity") },
    { id: "tflops", header: "TFLOP/s", kind: "number", value: (r) => r.tflops, tooltip: help("roof_tflops") },
    { id: "tbps", header: "TB/s", kind: "number", value: (r) => r.tbps, tooltip: help("roof_tbps") },
    { id: "pct", header: "% of roofline", kind: "percent", value: (r) => r.pct, tooltip: help("roof_pct") },
    { id: "bound", header: "Bound", kind: "text", value: (r) => r.bound, width: "minmax(72px, 0.7fr)", searchable: false, tooltip: help("roof_bound") },
    { id: "lost", header: "Time lost", kind: "duration", value: (r) => r.timeLost, tooltip: help("roof_lost") },
    { id: "source", header: "Source", kind: "text", value: (r) => r.source || r.reason, width: "minmax(80px, 1fr)", searchable: false, tooltip: help("roof_source") },
  );
  return cols;
}

const BYS = [
  { value: "ops", label: "Operators" },
  { value: "ops_total", label: "Operators (subtree totals)" },
  { value: "kernels", label: "Kernels" },
];

export function RooflineView(p: ViewProps): ReactNode {
  const by = p.state.rby === "kernels" || p.state.rby === "ops_total" ? p.state.rby : "ops";
  const { data, error } = useApi<unknown>(p.api, "roofline", { ...profileParams(p), by, limit: 5000 });
  const model = useMemo(() => (data === undefined ? null : readRoofline(data)), [data]);
  const [selected, setSelected] = useState<RoofRow | null>(null);
  const plotted = useMemo(() => (model ? model.rows.filter((r) => r.intensity !== null && r.tflops !== null && r.tflops > 0) : []), [model]);
  const selIndex = selected ? plotted.indexOf(selected) : -1;
  const option = useMemo(() => (model ? chartOption(model, plotted, selIndex >= 0 ? selIndex : null) : null), [model, plotted, selIndex]);
  const setState = p.setState;
  const cols = useMemo(
    () => columns(by !== "kernels", (name) => setState({ view: "Trace", find: `${by === "kernels" ? "kernel" : "op"}:${name}`, sel: null, t0: null, t1: null }, true)),
    [by, setState],
  );

  if (error) return <ErrorBox error={error} what="the roofline" />;
  if (!model || !option) return <Loading what="roofline" />;
  const dev = model.device;
  const bytesOnly = model.rows.filter((r) => r.flops === null && r.bytes !== null).length;
  return (
    <div className="roofline">
      <Section title="Device" id="roofline-device">
        <div className="stats">
          <Stat label="Device" value={dev.name || "(no name in the trace)"} testId="roof-device" />
          <Stat label="Peaks from" value={dev.matched ?? "unknown device"} title={dev.matched ? dev.source : dev.how} testId="roof-matched" />
          {dev.tbps !== null && <Stat label="Memory bandwidth" value={`${dev.tbps} TB/s`} raw={dev.tbps} />}
          {Object.entries(dev.peaks).map(([d, v]) => (
            <Stat key={d} label={`${d} peak`} value={`${v} TFLOP/s`} raw={v} />
          ))}
          <Stat
            label={`MFU${model.mfuDtype ? ` (${model.mfuDtype})` : ""}`}
            value={model.mfu === null ? "–" : formatPercent(100 * model.mfu)}
            title={model.mfu === null ? model.mfuReason : "Model FLOPs / (step time × peak of the dominant dtype), docs/metrics.md"}
            testId="roof-mfu"
            raw={model.mfu}
          />
          <Stat label="Device time with known FLOPs" value={model.knownShare === null ? "–" : formatPercent(100 * model.knownShare)} raw={model.knownShare} />
        </div>
        {!dev.matched && (
          <div className="muted" data-testid="roof-unknown">
            {dev.how || "The device is not in the peaks table"}: absolute figures only (no percentages). Name its peaks with --peaks FILE or TORCH_TB_PROFILER_PEAKS (docs/metrics.md, “Roofline”).
          </div>
        )}
      </Section>
      <Section
        title="Roofline"
        id="roofline-section"
        actions={<Select label="Rows" value={by} options={BYS} onChange={(v) => { setSelected(null); p.setState({ rby: v === "ops" ? null : v }, true); }} testId="select-rby" />}
      >
        {plotted.length === 0 ? (
          <Empty title="No row with known FLOPs and bytes">The table lists what is known.</Empty>
        ) : (
          <div data-testid="roofline-plot" data-points={plotted.length} data-roofs={roofCount(model)}>
          <Chart
            option={option}
            height={420}
            testId="roofline-chart"
            ariaLabel="Roofline: achieved TFLOP/s against arithmetic intensity, with the device's roofs"
            onItemClick={(series, index) => {
              if (series === 0) setSelected(plotted[index] ?? null);
            }}
          />
          </div>
        )}
        <div className="muted">
          Point area ∝ device time; lines: the roof of each dtype present (min(peak, intensity × bandwidth)), diamonds the ridge points.
          {bytesOnly > 0 ? ` ${bytesOnly} rows with bytes only (elementwise, normalisations) are in the table, not on the chart.` : ""}
        </div>
        {selected && (
          <div className="roof-selected" data-testid="roof-selected">
            {tooltipText(selected)}
          </div>
        )}
      </Section>
      <Section
        title={by === "ops" ? "Operators by time lost" : by === "ops_total" ? "Operators by time lost, subtree totals (rows overlap)" : "Kernels by time lost"}
        id="roofline-rows"
      >
        <DataTable
          rows={model.rows}
          columns={cols}
          csvName={fileSlug("roofline", p.run, p.worker, p.span, by)}
          initialSort={{ id: "lost", desc: true }}
          testId="roofline-table"
          selected={(r) => r === selected}
          onRowClick={(r) => setSelected(r)}
        />
      </Section>
    </div>
  );
}
