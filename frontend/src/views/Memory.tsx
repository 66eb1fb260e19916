import { type ReactNode, useEffect, useMemo, useRef, useState } from "react";
import { ApiError } from "../api/client";
import { Chart, safeTooltip } from "../components/Chart";
import { Empty, ErrorBox, Loading, Section, Select, Stat, TimelineLink } from "../components/common";
import { type Column, DataTable } from "../components/DataTable";
import { help } from "../lib/columnHelp";
import { fileSlug } from "../lib/csv";
import { formatBytes, formatDuration } from "../lib/format";
import { byteAxis } from "../lib/roundAxis";
import { arr, bool, isObj, num, str } from "../lib/pick";
import { useApi } from "../lib/useApi";
import { spliceCurve } from "./shape";
import { type CurvePoint, memoryTooltip } from "./memoryTooltip";
import { type ViewProps, profileParams } from "./types";

export interface EventRow {
  operator: string;
  bytes: number;
  allocTs: number | null;
  freeTs: number | null;
  duration: number | null;
}

export interface StatRow {
  name: string;
  calls: number;
  sizeIncrease: number;
  selfSizeIncrease: number;
  allocCount: number;
  selfAllocCount: number;
  allocSize: number;
  selfAllocSize: number;
}

const EVENT_LIMIT = 100000;
const MIN_SIZES = [0, 1024, 1024 ** 2, 16 * 1024 ** 2, 256 * 1024 ** 2];

function statColumns(): Column<StatRow>[] {
  return [
    { id: "name", header: "Operator", kind: "text", value: (r) => r.name },
    { id: "calls", header: "Calls", kind: "count", value: (r) => r.calls },
    { id: "size_increase", header: "Size increase", kind: "bytes", value: (r) => r.sizeIncrease, tooltip: help("mem_size_increase") },
    { id: "self_size_increase", header: "Self size increase", kind: "bytes", value: (r) => r.selfSizeIncrease, tooltip: help("mem_self_size_increase") },
    { id: "alloc_count", header: "Allocations", kind: "count", value: (r) => r.allocCount, tooltip: help("mem_alloc_count") },
    { id: "self_alloc_count", header: "Self allocations", kind: "count", value: (r) => r.selfAllocCount, tooltip: help("mem_self_alloc_count") },
    { id: "alloc_size", header: "Allocation size", kind: "bytes", value: (r) => r.allocSize, tooltip: help("mem_alloc_size") },
    { id: "self_alloc_size", header: "Self allocation size", kind: "bytes", value: (r) => r.selfAllocSize, tooltip: help("mem_self_alloc_size") },
  ];
}

/** Event times are shown relative to the curve's first record, like the curve's x axis. The operator
 * cell links to the op running when the allocation was made (`show`), in the Trace view. */
function eventColumns(t0: number, show: (allocTs: number) => void): Column<EventRow>[] {
  return [
    {
      id: "operator",
      header: "Operator",
      kind: "text",
      value: (r) => r.operator,
      render: (r) => (r.allocTs === null ? r.operator : <TimelineLink name={r.operator} onShow={() => show(r.allocTs!)} title="Show the op that made this allocation in the timeline (Trace view)" />),
    },
    { id: "bytes", header: "Size", kind: "bytes", value: (r) => r.bytes },
    { id: "alloc", header: "Allocated at", kind: "duration", value: (r) => (r.allocTs === null ? null : r.allocTs - t0), tooltip: help("mem_alloc_at") },
    { id: "free", header: "Freed at", kind: "duration", value: (r) => (r.freeTs === null ? null : r.freeTs - t0), tooltip: help("mem_free_at") },
    { id: "duration", header: "Lifetime", kind: "duration", value: (r) => r.duration, tooltip: help("mem_lifetime") },
  ];
}

/** `memory/devices`: the devices with records, accelerators first. */
export function readDevices(data: unknown) {
  return (Array.isArray(data) ? data : arr(data, "devices")).map((d) => ({
    device: str(d, "device"),
    records: num(d, "records"),
    hasTotals: bool(d, "has_totals"),
    peak: num(d, "peak_allocated_bytes"),
    peakReserved: num(d, "peak_reserved_bytes"),
    total: num(d, "total_memory_bytes"),
  }));
}

/** `memory/curve`: the step curve (µs, bytes) and peaks. */
export function readCurve(d: unknown) {
  const ts = arr(d, "ts") as number[];
  // times count from the profile's start, as on the Trace view's ruler (so an allocation's time lies
  // inside the op its link selects)
  const t0 = num(d, "origin_ts") ?? num(d, "first_ts") ?? ts[0] ?? 0;
  return {
    t0,
    ts,
    allocated: arr(d, "allocated") as (number | null)[],
    reserved: arr(d, "reserved") as (number | null)[],
    peak: num(d, "peak_allocated_bytes"),
    peakTs: num(d, "peak_allocated_ts"),
    peakReserved: num(d, "peak_reserved_bytes"),
    total: num(d, "total_memory_bytes"),
    downsampled: bool(d, "downsampled"),
    hasTotals: (arr(d, "allocated") as (number | null)[]).some((v) => v !== null),
    // records without totals (PyTorch < 1.10): allocated is the running sum of Bytes since the first record
    relative: bool(d, "relative"),
    peakIncrease: num(d, "peak_increase_bytes"),
    peakIncreaseTs: num(d, "peak_increase_ts"),
  };
}

/** `memory/events`: the page of allocation events, the matching total, whether records have addresses. */
export function readEvents(d: unknown): { rows: EventRow[]; total: number | null; hasAddresses: boolean } {
  return {
    rows: arr(d, "rows").map((r) => ({
      operator: str(r, "operator"),
      bytes: num(r, "bytes") ?? 0,
      allocTs: num(r, "alloc_ts"),
      freeTs: num(r, "free_ts"),
      duration: num(r, "duration"),
    })),
    total: num(d, "total"),
    hasAddresses: bool(d, "has_addresses"),
  };
}

/** `memory/stats`: per-operator memory statistics. */
export function readStats(d: unknown): StatRow[] {
  return arr(d, "rows")
    .filter(isObj)
    .map((r) => ({
      name: str(r, "name"),
      calls: num(r, "calls") ?? 0,
      sizeIncrease: num(r, "size_increase") ?? 0,
      selfSizeIncrease: num(r, "self_size_increase") ?? 0,
      allocCount: num(r, "alloc_count") ?? 0,
      selfAllocCount: num(r, "self_alloc_count") ?? 0,
      allocSize: num(r, "alloc_size") ?? 0,
      selfAllocSize: num(r, "self_alloc_size") ?? 0,
    }));
}

export function MemoryView(p: ViewProps): ReactNode {
  const base = profileParams(p);
  const devices = useApi<unknown>(p.api, "memory/devices", base);
  const deviceList = useMemo(() => readDevices(devices.data), [devices.data]);
  const device = deviceList.find((d) => d.device === p.state.device)?.device ?? deviceList[0]?.device ?? null;
  const start = p.state.mstart !== undefined ? Number(p.state.mstart) : null;
  const end = p.state.mend !== undefined ? Number(p.state.mend) : null;
  const range = { start: start ?? undefined, end: end ?? undefined };

  const curve = useApi<unknown>(p.api, device ? "memory/curve" : null, { ...base, device });
  const minBytes = Number(p.state.minsize) > 0 ? Number(p.state.minsize) : undefined;
  const events = useApi<unknown>(p.api, device ? "memory/events" : null, { ...base, device, ...range, min_bytes: minBytes, limit: EVENT_LIMIT });
  const stats = useApi<unknown>(p.api, device ? "memory/stats" : null, { ...base, device, ...range });

  const c = useMemo(() => (curve.data === undefined ? null : readCurve(curve.data)), [curve.data]);

  // The chart's zoom selects the tables' time range, debounced; it goes into the URL (mstart/mend).
  const timer = useRef(0);
  const [zoomLabel, setZoomLabel] = useState("");
  useEffect(() => () => window.clearTimeout(timer.current), []);
  const onZoom = (r: { start: number; end: number } | null) => {
    window.clearTimeout(timer.current);
    timer.current = window.setTimeout(() => {
      if (!c) return;
      if (r === null) {
        p.setState({ mstart: null, mend: null });
        setZoomLabel("");
      } else {
        // axis values are ms since t0
        const s = c.t0 + r.start * 1000;
        const e = c.t0 + r.end * 1000;
        p.setState({ mstart: String(s), mend: String(e) });
        setZoomLabel(`${formatDuration(r.start * 1000)} – ${formatDuration(r.end * 1000)}`);
      }
    }, 250);
  };

  // A zoomed range of a downsampled curve is fetched again at full resolution and spliced in.
  const zoomed = start !== null && end !== null;
  const detail = useApi<unknown>(p.api, device && zoomed && c?.downsampled ? "memory/curve" : null, { ...base, device, start: start ?? undefined, end: end ?? undefined });
  const shown = useMemo(() => {
    if (!c) return null;
    if (!zoomed || detail.data === undefined) return c;
    return { ...c, ...spliceCurve(c, readCurve(detail.data), start, end) };
  }, [c, detail.data, zoomed, start, end]);

  const option = useMemo(() => {
    if (!c || !shown) return null;
    const x = shown.ts.map((t) => (t - c.t0) / 1000);
    const series = (name: string, ys: (number | null)[]) => ({
      name,
      type: "line",
      step: "end",
      showSymbol: false,
      sampling: undefined,
      data: x.map((t, i) => [t, ys[i] ?? null]),
    });
    // round ticks (1, 2, 2.5, 5 × 10^n of one unit) over every value drawn
    let lo = 0;
    let hi = 0;
    for (const ys of c.relative ? [shown.allocated] : [shown.allocated, shown.reserved])
      for (const v of ys) if (v !== null && Number.isFinite(v)) [lo, hi] = [Math.min(lo, v), Math.max(hi, v)];
    const y = byteAxis(lo, hi);
    const zoom: Record<string, unknown> = { type: "slider", xAxisIndex: 0, filterMode: "none", bottom: 8 };
    if (start !== null && end !== null) {
      zoom.startValue = (start - c.t0) / 1000;
      zoom.endValue = (end - c.t0) / 1000;
    }
    return {
      tooltip: {
        ...safeTooltip,
        trigger: "axis",
        formatter: (items: CurvePoint[]) => memoryTooltip(items, formatDuration, formatBytes),
      },
      legend: { top: 0 },
      grid: { left: 80, right: 24, top: 36, bottom: 64 },
      // labels on the round ticks only: not at the curve's first and last times
      xAxis: { type: "value", name: "ms", min: "dataMin", max: "dataMax", axisLabel: { showMinLabel: false, showMaxLabel: false, formatter: (v: number) => String(Number(v.toFixed(3))) } },
      yAxis: { type: "value", min: y.min, max: y.max, interval: y.interval, axisLabel: { formatter: y.label } },
      dataZoom: [zoom, { type: "inside", xAxisIndex: 0, filterMode: "none" }],
      series: c.relative
        ? [series("Allocated since the first record", shown.allocated)]
        : [series("Allocated", shown.allocated), series("Reserved", shown.reserved)],
    };
  }, [c, shown, start, end]);

  if (devices.error instanceof ApiError && devices.error.status === 404)
    return <Empty title="No memory records for this worker">{devices.error.message}</Empty>;
  if (devices.error) return <ErrorBox error={devices.error} what="memory devices" />;
  if (devices.data === undefined) return <Loading what="memory" />;
  if (!device)
    return <Empty title="No memory records in this profile">Profile with profile_memory=True to see memory.</Empty>;

  const ev = events.data === undefined ? null : readEvents(events.data);
  const evRows = ev?.rows ?? null;
  const evTotal = ev?.total ?? null;
  const hasAddresses = ev?.hasAddresses ?? true;
  const stRows = stats.data === undefined ? null : readStats(stats.data);
  const rangeText = start !== null && end !== null && c ? `${formatDuration(start - c.t0)} – ${formatDuration(end - c.t0)}` : "";

  return (
    <div className="memory">
      <Section
        title="Memory curve"
        id="memory-curve"
        actions={
          <Select
            label="Device"
            value={device}
            options={deviceList.map((d) => ({ value: d.device }))}
            onChange={(v) => p.setState({ device: v, mstart: null, mend: null }, true)}
            testId="select-device"
          />
        }
      >
        {curve.error && <ErrorBox error={curve.error} what="the memory curve" />}
        {c?.hasTotals && c.relative && (
          <>
            <div className="muted" data-testid="memory-relative">
              These memory records carry no totals (PyTorch before 1.10 did not write them): the curve is the
              running sum of allocations and frees since the first record, not the absolute level, and reserved
              memory is unknown.
            </div>
            <div className="stats">
              <Stat label="Peak increase" value={formatBytes(c.peakIncrease)} testId="peak-increase" raw={c.peakIncrease} />
              {c.peakIncreaseTs !== null && <Stat label="Peak at" value={formatDuration(c.peakIncreaseTs - c.t0)} />}
              {c.total !== null && <Stat label="Device memory" value={formatBytes(c.total)} />}
            </div>
          </>
        )}
        {c?.hasTotals && !c.relative && (
          <div className="stats">
            <Stat label="Peak allocated" value={formatBytes(c.peak)} testId="peak-allocated" raw={c.peak} />
            <Stat label="Peak reserved" value={formatBytes(c.peakReserved)} testId="peak-reserved" raw={c.peakReserved} />
            {c.total !== null && <Stat label="Device memory" value={formatBytes(c.total)} />}
            {c.peakTs !== null && <Stat label="Peak at" value={formatDuration(c.peakTs - c.t0)} />}
          </div>
        )}
        {c && !c.hasTotals ? (
          <Empty title="No memory curve for this device">
            Its memory records carry no "Total Allocated"/"Total Reserved" figures (PyTorch before 1.10 did not
            write them), so the curve and peaks cannot be drawn. The events and statistics below are complete.
          </Empty>
        ) : option ? (
          <Chart option={option} height={320} onZoom={onZoom} testId="memory-chart" ariaLabel="Memory curve" />
        ) : (
          !curve.error && <Loading what="memory curve" />
        )}
        <div className="muted" hidden={!c?.hasTotals}>
          Drag the slider or scroll on the chart to zoom: the tables below then cover the zoomed time range.
          {c?.downsampled && " The curve is downsampled for display; peaks are kept."}
          {(zoomLabel || rangeText) && (
            <>
              {" "}
              Range: <strong data-testid="memory-range">{rangeText || zoomLabel}</strong>{" "}
              <button type="button" className="btn" onClick={() => p.setState({ mstart: null, mend: null })}>
                Reset
              </button>
            </>
          )}
        </div>
      </Section>
      <Section
        title="Memory events"
        id="memory-events"
        actions={
          <Select
            label="Size"
            value={String(minBytes ?? 0)}
            options={MIN_SIZES.map((b) => ({ value: String(b), label: b === 0 ? "all" : `≥ ${formatBytes(b)}` }))}
            onChange={(v) => p.setState({ minsize: v === "0" ? null : v })}
            testId="select-minsize"
          />
        }
      >
        {events.error ? (
          <ErrorBox error={events.error} what="memory events" />
        ) : !evRows || !c ? (
          <Loading what="memory events" />
        ) : !hasAddresses ? (
          <Empty title="No allocation events">
            The memory records of this device carry no addresses, so allocations cannot be paired with their frees.
          </Empty>
        ) : (
          <>
            {evTotal !== null && evTotal > evRows.length && (
              <div className="muted">
                Showing the {evRows.length.toLocaleString("en-US")} largest of {evTotal.toLocaleString("en-US")} events.
              </div>
            )}
            <DataTable rows={evRows} columns={eventColumns(c.t0, (ts) => p.setState({ view: "Trace", find: `at:op:${ts}`, sel: null, t0: null, t1: null }, true))} csvName={fileSlug("memory-events", p.run, p.worker, p.span, device)} initialSort={{ id: "bytes", desc: true }} testId="memory-events-table" />
          </>
        )}
      </Section>
      <Section title="Memory statistics per operator" id="memory-stats">
        {stats.error ? (
          <ErrorBox error={stats.error} what="memory statistics" />
        ) : !stRows ? (
          <Loading what="memory statistics" />
        ) : (
          <DataTable rows={stRows} columns={statColumns()} csvName={fileSlug("memory-stats", p.run, p.worker, p.span, device)} initialSort={{ id: "size_increase", desc: true }} testId="memory-stats-table" />
        )}
      </Section>
    </div>
  );
}
