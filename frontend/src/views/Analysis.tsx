import { type ReactNode, useEffect, useMemo } from "react";
import { Empty, ErrorBox, Loading, Section, Select } from "../components/common";
import { type Column, DataTable } from "../components/DataTable";
import { help } from "../lib/columnHelp";
import { fileSlug } from "../lib/csv";
import { formatTime } from "../timeline/nav";
import { arr, get, isObj, num, str } from "../lib/pick";
import { useApi } from "../lib/useApi";
import { type ViewProps, profileParams } from "./types";

/** The Analysis view: why the device waits (the `analysis` route, docs/api.md; definitions in
 * docs/metrics.md "Why the device waits"). Each table reads its part of the answer; a part the
 * profile has no data for shows an empty note instead. */

type Row = Record<string, unknown>;
type Show = (find: string) => void;

function rows(v: unknown): Row[] {
  return arr(v).filter(isObj) as Row[];
}

/** `{key: {figures}}` → rows with the key as `name`. */
function keyed(v: unknown): Row[] {
  return isObj(v) ? Object.entries(v).filter(([, o]) => isObj(o)).map(([k, o]) => ({ name: k, ...(o as Row) })) : [];
}

function stepLabel(r: unknown): string {
  const s = get(r, "step");
  return s === null || s === undefined ? "whole profile" : String(s);
}

function link(label: string, find: string | null, show: Show): ReactNode {
  if (!find) return label;
  return (
    <span className="tl-cell">
      <span className="tl-cell-name">{label}</span>
      <button type="button" className="tl-show" data-testid="show-in-timeline" title="Show in the timeline (Trace view)" aria-label={`Show ${label} in the timeline`} onClick={(e) => { e.stopPropagation(); show(find); }} />
    </span>
  );
}

const d = (id: string, header: string, key: string, tooltip?: string): Column<Row> => ({ id, header, kind: "duration", value: (r) => num(r, key), tooltip });
const t = (id: string, header: string, value: (r: Row) => string, width = "minmax(90px, 1fr)", tooltip?: string): Column<Row> => ({ id, header, kind: "text", value, width, tooltip });

function idleColumns(): Column<Row>[] {
  return [
    t("device", "Device", (r) => str(r, "device") || String(num(r, "device") ?? "")),
    t("stream", "Stream", (r) => String(num(r, "stream") ?? str(r, "stream"))),
    t("step", "Step", stepLabel),
    t("category", "Category", (r) => str(r, "category"), undefined, help("idle_category")),
    d("us", "Idle time", "us", help("idle_time")),
    { id: "ratio", header: "Share of the stream's idle", kind: "percent", value: (r) => (num(r, "ratio") === null ? null : 100 * (num(r, "ratio") ?? 0)), tooltip: help("idle_share") },
  ];
}

function intervalColumns(show: Show, origin: number): Column<Row>[] {
  const since = (r: Row) => (num(r, "start_us") === null ? null : (num(r, "start_us") ?? 0) - origin);
  return [
    { id: "start", header: "Start", kind: "duration", value: since, render: (r) => link(since(r) === null ? "?" : formatTime(since(r) ?? 0), num(r, "end_us") === null ? null : `at:kernel:${num(r, "end_us")}`, show), tooltip: help("idle_start"), width: "minmax(140px, 1fr)" },
    d("us", "Idle", "us"),
    t("stream", "Stream", (r) => String(num(r, "stream") ?? str(r, "stream"))),
    t("category", "Category", (r) => str(r, "category"), undefined, help("idle_category")),
    t("host", "Host was in", (r) => str(r, "host_op") || str(r, "launch") || "", "minmax(200px, 3fr)", help("idle_host_op")),
  ];
}

function temporalColumns(): Column<Row>[] {
  return [
    t("device", "Device", (r) => String(num(r, "device") ?? str(r, "device"))),
    t("step", "Step", stepLabel),
    d("idle", "Idle", "idle_us", help("temporal_idle")),
    d("compute", "Compute", "compute_us", help("temporal_compute")),
    d("noncompute", "Non-compute", "non_compute_us", help("temporal_noncompute")),
  ];
}

function launchColumns(): Column<Row>[] {
  return [
    t("name", "Kernel", (r) => str(r, "name"), "minmax(240px, 4fr)"),
    { id: "count", header: "Launches", kind: "count", value: (r) => num(r, "count") },
    d("cpu50", "CPU p50", "cpu_us_p50", help("launch_cpu")),
    d("cpu95", "CPU p95", "cpu_us_p95", help("launch_cpu")),
    d("gpu50", "GPU p50", "gpu_us_p50", help("launch_gpu")),
    d("gpu95", "GPU p95", "gpu_us_p95", help("launch_gpu")),
    d("delay50", "Delay p50", "delay_us_p50", help("launch_delay")),
    d("delay95", "Delay p95", "delay_us_p95", help("launch_delay")),
    { id: "short", header: "Short kernels", kind: "percent", value: (r) => (num(r, "short_share") === null ? null : 100 * (num(r, "short_share") ?? 0)), tooltip: help("launch_short") },
  ];
}

function queueColumns(): Column<Row>[] {
  return [
    t("name", "Device:stream", (r) => str(r, "name")),
    { id: "max", header: "Max queue length", kind: "count", value: (r) => num(r, "max"), tooltip: help("queue_max") },
    { id: "mean", header: "Mean (time-weighted)", kind: "number", value: (r) => num(r, "mean"), tooltip: help("queue_mean") },
  ];
}

function outlierColumns(show: Show): Column<Row>[] {
  return [
    { id: "kernel", header: "Kernel", kind: "text", value: (r) => str(r, "kernel"), render: (r) => link(str(r, "kernel"), num(r, "ts") === null ? null : `at:kernel:${num(r, "ts")}`, show), width: "minmax(240px, 4fr)" },
    t("call", "Launch call", (r) => str(r, "call")),
    d("delay", "Launch delay", "delay_us", help("launch_delay")),
  ];
}

function launchBoundColumns(): Column<Row>[] {
  return [
    t("step", "Step", stepLabel, "minmax(60px, 0.6fr)"),
    d("bound", "Launch-bound time", "launch_bound_us", help("launch_bound")),
    { id: "short", header: "Short launches", kind: "count", value: (r) => num(r, "short_launches"), tooltip: help("launch_short_count") },
  ];
}

function sequenceColumns(show: Show): Column<Row>[] {
  return [
    { id: "names", header: "Kernels", kind: "text", value: (r) => arr(r, "names").map(String).join(" → "), render: (r) => link(arr(r, "names").map(String).join(" → "), num(r, "first_ts") === null ? null : `at:kernel:${num(r, "first_ts")}`, show), width: "minmax(320px, 5fr)" },
    { id: "count", header: "Times", kind: "count", value: (r) => num(r, "count"), tooltip: help("seq_times") },
    d("total", "Total", "total_us", help("seq_total")),
    d("mean", "Mean", "mean_us", help("seq_mean")),
    t("ops", "Ops", (r) => arr(r, "ops").map(String).join(", "), "minmax(160px, 2fr)"),
  ];
}

/** The step's critical path drawn in the timeline (the Trace view's `cpath`). */
type ShowPath = (step: number) => void;

function pathColumns(showPath: ShowPath): Column<Row>[] {
  const kind = (k: "host" | "launch" | "device" | "sync" | "idle"): Column<Row> => ({ id: k, header: k.charAt(0).toUpperCase() + k.slice(1), kind: "duration", value: (r) => num(get(r, "by_kind"), k), tooltip: help(`path_${k}`) });
  return [
    {
      id: "step",
      header: "Step",
      kind: "text",
      value: stepLabel,
      width: "minmax(110px, 0.8fr)",
      render: (r) => {
        const step = num(r, "step");
        if (step === null) return stepLabel(r);
        return (
          <span className="tl-cell">
            <span className="tl-cell-name">{step}</span>
            <button type="button" className="link-button" data-testid="critical-path-show" title="Draw this step's critical path in the timeline (Trace view)" onClick={() => showPath(step)}>
              ▸ timeline
            </button>
          </span>
        );
      },
    },
    d("dur", "Step duration", "duration_us"),
    kind("host"),
    kind("launch"),
    kind("device"),
    kind("sync"),
    kind("idle"),
    t("bound", "What bounds the step", (r) => str(r, "bound_by"), "minmax(320px, 5fr)", help("path_bound")),
  ];
}

const SEQ_LENGTHS = Array.from({ length: 15 }, (_, i) => ({ value: String(i + 2), label: `${i + 2} kernels` }));

function Table({ title, id, data, columns, csv, sort, empty }: { title: string; id: string; data: Row[]; columns: Column<Row>[]; csv: string; sort: string; empty: string }): ReactNode {
  return (
    <Section title={title} id={id}>
      {data.length === 0 ? (
        <Empty title={empty} />
      ) : (
        <DataTable rows={data} columns={columns} csvName={csv} initialSort={{ id: sort, desc: true }} testId={`${id}-table`} />
      )}
    </Section>
  );
}

export function AnalysisView(p: ViewProps): ReactNode {
  const n = p.state.seqn && /^\d+$/.test(p.state.seqn) ? p.state.seqn : "5";
  const { data, error } = useApi<unknown>(p.api, "analysis", { ...profileParams(p), n });
  const setState = p.setState;
  const show = useMemo<Show>(() => (find) => setState({ view: "Trace", find, sel: null, t0: null, t1: null, cpath: null }, true), [setState]);
  const showPath = useMemo<ShowPath>(() => (step) => setState({ view: "Trace", cpath: String(step), find: null, sel: null, t0: null, t1: null }, true), [setState]);
  const section = p.state.asec;
  useEffect(() => {
    // arriving from a recommendation: bring the section that backs it into view
    if (data === undefined || !section) return;
    document.querySelector(`[data-testid="${CSS.escape(section)}"]`)?.scrollIntoView({ block: "start" });
  }, [data, section]);
  if (error) return <ErrorBox error={error} what="the analyses" />;
  if (data === undefined) return <Loading what="analyses" />;
  const a = get(data, "analyses");
  const slug = (what: string) => fileSlug(what, p.run, p.worker, p.span);
  return (
    <div className="analysis" data-testid="analysis-view">
      {!isObj(a) || get(data, "device") === false ? (
        <Empty title="No device activity in this profile">The analyses of device idle time, launches and queues need kernels, copies or sets.</Empty>
      ) : null}
      <Table title="Idle time per stream" id="idle" data={rows(get(a, "idle_time"))} columns={idleColumns()} csv={slug("idle-time")} sort="us" empty="No idle time measured" />
      <Table title="Longest idle intervals" id="idle-longest" data={rows(get(data, "idle_longest"))} columns={intervalColumns(show, num(data, "origin_us") ?? 0)} csv={slug("idle-intervals")} sort="us" empty="No idle interval" />
      <Table title="Temporal breakdown" id="temporal" data={rows(get(a, "temporal"))} columns={temporalColumns()} csv={slug("temporal")} sort="idle" empty="No device time" />
      <Table title="Kernel launches" id="launch" data={keyed(get(a, "launch"))} columns={launchColumns()} csv={slug("launches")} sort="count" empty="No launch linked to a device activity" />
      <Table title="Launch delay outliers" id="launch-outliers" data={rows(get(data, "launch_outliers"))} columns={outlierColumns(show)} csv={slug("launch-outliers")} sort="delay" empty="No outlier" />
      <Table title="Launch-bound time per step" id="launch-bound" data={rows(get(data, "launch_bound"))} columns={launchBoundColumns()} csv={slug("launch-bound")} sort="bound" empty="No step" />
      <Table title="Queue length per stream" id="queue" data={keyed(get(a, "queue"))} columns={queueColumns()} csv={slug("queues")} sort="max" empty="No queue" />
      <Section title="Frequent kernel sequences" id="sequences">
        <Select label="Length" value={n} options={SEQ_LENGTHS} onChange={(v) => setState({ seqn: v === "5" ? null : v }, true)} testId="select-seqn" />
        {rows(get(data, "sequences")).length === 0 ? (
          <Empty title="No repeated sequence" />
        ) : (
          <DataTable rows={rows(get(data, "sequences"))} columns={sequenceColumns(show)} csvName={slug("sequences")} initialSort={{ id: "total", desc: true }} testId="sequences-table" />
        )}
      </Section>
      <Table title="Critical path per step" id="critical-path" data={rows(get(a, "critical_path"))} columns={pathColumns(showPath)} csv={slug("critical-path")} sort="dur" empty="No step" />
    </div>
  );
}
