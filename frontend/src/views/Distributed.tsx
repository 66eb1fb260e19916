import { type ReactNode, useEffect, useMemo, useState } from "react";
import { Chart, safeTooltip } from "../components/Chart";
import { Empty, ErrorBox, Loading, Section, Select, TimelineLink } from "../components/common";
import { type Column, DataTable } from "../components/DataTable";
import { Heatmap } from "../components/Heatmap";
import { CATEGORY_COLORS } from "../lib/colors";
import { fileSlug } from "../lib/csv";
import { formatDuration } from "../lib/format";
import { arr, get, isObj, num, str } from "../lib/pick";
import { useApi } from "../lib/useApi";
import { stepFigures } from "./shape";
import { type ViewProps } from "./types";

export interface CommRow {
  collective: string;
  calls: number;
  totalBytes: number | null;
  avgBytes: number | null;
  totalLatency: number | null;
  avgLatency: number | null;
  totalTransfer: number | null;
  avgTransfer: number | null;
  algbw: number | null;
  busbw: number | null;
}

const COMM_COLUMNS: Column<CommRow>[] = [
  { id: "collective", header: "Collective", kind: "text", value: (r) => r.collective, width: "minmax(160px, 2fr)" },
  { id: "calls", header: "Calls", kind: "count", value: (r) => r.calls },
  { id: "total_bytes", header: "Total size", kind: "bytes", value: (r) => r.totalBytes },
  { id: "avg_bytes", header: "Mean size", kind: "bytes", value: (r) => r.avgBytes },
  { id: "total_latency", header: "Latency, wall (union)", kind: "duration", value: (r) => r.totalLatency, tooltip: "Wall time with at least one call running (the union of the calls' intervals): overlapping calls count once, so calls × mean per call can be larger" },
  { id: "avg_latency", header: "Latency per call (mean)", kind: "duration", value: (r) => r.avgLatency, tooltip: "Mean duration of one call" },
  { id: "total_transfer", header: "Transfer, wall (union)", kind: "duration", value: (r) => r.totalTransfer, tooltip: "Wall time of the transfer parts (after the last rank arrived), overlapping parts counted once" },
  { id: "avg_transfer", header: "Transfer per call (mean)", kind: "duration", value: (r) => r.avgTransfer, tooltip: "Mean transfer part of one call" },
  { id: "algbw", header: "Alg. bandwidth", kind: "bandwidth", value: (r) => r.algbw, tooltip: "Σ size / Σ latency; none (–) for a barrier, which moves no data, or when the size is unknown" },
  { id: "busbw", header: "Bus bandwidth", kind: "bandwidth", value: (r) => r.busbw, tooltip: "Alg. bandwidth × the NCCL-tests bus factor; none (–) for a barrier or an unknown size" },
];

/** A point-to-point row (docs/api.md, "distributed": `p2p`): one per worker, operation and peer. */
export interface P2pRow {
  op: string;
  peer: number | null;
  calls: number;
  totalBytes: number | null;
  avgBytes: number | null;
  totalTime: number | null;
  avgTime: number | null;
  bandwidth: number | null;
}

const P2P_COLUMNS: Column<P2pRow>[] = [
  { id: "op", header: "Operation", kind: "text", value: (r) => r.op, width: "minmax(120px, 1.4fr)" },
  { id: "peer", header: "Peer rank", kind: "count", value: (r) => r.peer, tooltip: "The rank sent to or received from, when the trace records it (– when it does not)" },
  { id: "calls", header: "Calls", kind: "count", value: (r) => r.calls },
  { id: "total_bytes", header: "Total size", kind: "bytes", value: (r) => r.totalBytes },
  { id: "avg_bytes", header: "Mean size", kind: "bytes", value: (r) => r.avgBytes },
  { id: "total_time", header: "Time, wall (union)", kind: "duration", value: (r) => r.totalTime, tooltip: "Wall time with at least one of these calls running" },
  { id: "avg_time", header: "Time per call (mean)", kind: "duration", value: (r) => r.avgTime },
  { id: "bandwidth", header: "Bandwidth", kind: "bandwidth", value: (r) => r.bandwidth, tooltip: "Σ size / Σ time per call; none (–) when the size is unknown" },
];

function readP2p(list: unknown[]): P2pRow[] {
  return list.map((r) => ({
    op: str(r, "op"),
    peer: num(r, "peer"),
    calls: num(r, "calls") ?? 0,
    totalBytes: num(r, "total_bytes"),
    avgBytes: num(r, "avg_bytes"),
    totalTime: num(r, "total_time_us"),
    avgTime: num(r, "avg_time_us"),
    bandwidth: num(r, "bandwidth_gbps"),
  }));
}

export interface StragglerRow {
  worker: string;
  rank: number | null;
  timesLast: number;
  totalWait: number;
  maxWait: number;
}

const STRAGGLER_COLUMNS: Column<StragglerRow>[] = [
  { id: "worker", header: "Worker", kind: "text", value: (r) => r.worker },
  { id: "rank", header: "Rank", kind: "count", value: (r) => r.rank },
  { id: "times_last", header: "Times last to arrive", kind: "count", value: (r) => r.timesLast },
  { id: "total_wait", header: "Wait caused (total)", kind: "duration", value: (r) => r.totalWait, tooltip: "Σ over rounds of (longest − shortest call duration)" },
  { id: "max_wait", header: "Wait caused (max)", kind: "duration", value: (r) => r.maxWait },
];

export interface RoundRow {
  collective: string;
  group: string;
  seq: number | null;
  step: string;
  lastWorker: string;
  /** the last rank's call start on its host (its clock), for the Trace view */
  lastStart: number | null;
  wait: number;
  ranks: number;
}

/** The rounds table; the collective links to the last rank's call in that rank's timeline. */
function roundColumns(show: (r: RoundRow) => void): Column<RoundRow>[] {
  return [
    {
      id: "collective",
      header: "Collective",
      kind: "text",
      value: (r) => r.collective,
      width: "minmax(140px, 2fr)",
      render: (r) =>
        r.lastStart === null ? r.collective : (
          <TimelineLink name={r.collective} onShow={() => show(r)} title="Show the last rank's call in its timeline (Trace view)" />
        ),
    },
    { id: "group", header: "Process group", kind: "text", value: (r) => r.group, width: "minmax(100px, 1fr)" },
    { id: "seq", header: "Seq", kind: "count", value: (r) => r.seq },
    { id: "step", header: "Step", kind: "text", value: (r) => r.step, width: "minmax(70px, 0.6fr)" },
    { id: "last", header: "Last to arrive", kind: "text", value: (r) => r.lastWorker, width: "minmax(120px, 1.5fr)" },
    { id: "wait", header: "Others waited", kind: "duration", value: (r) => r.wait },
    { id: "ranks", header: "Ranks", kind: "count", value: (r) => r.ranks },
  ];
}

interface GroupRow {
  name: string;
  description: string;
  backend: string;
  size: number | null;
  ranks: string;
}

const GROUP_COLUMNS: Column<GroupRow>[] = [
  { id: "name", header: "Process group", kind: "text", value: (r) => r.name, width: "minmax(100px, 1fr)" },
  { id: "description", header: "Description", kind: "text", value: (r) => r.description, width: "minmax(140px, 2fr)" },
  { id: "backend", header: "Backend", kind: "text", value: (r) => r.backend, width: "minmax(100px, 1fr)" },
  { id: "size", header: "Size", kind: "count", value: (r) => r.size },
  { id: "ranks", header: "Ranks", kind: "text", value: (r) => r.ranks, width: "minmax(140px, 3fr)" },
];

export interface GpuRow {
  node: string;
  process: string;
  gpu: string;
  name: string;
  memory: number | null;
  cc: string;
  sms: number | null;
  /** ROCm's compute units (the CUDA SM count's counterpart) */
  cus: number | null;
}

/** The compute capability, SM and CU columns only when some device has the figure (each vendor its own). */
function shownGpuColumn(id: string, rows: GpuRow[]): boolean {
  if (id === "cc") return rows.some((r) => r.cc !== "");
  if (id === "sms") return rows.some((r) => r.sms !== null);
  if (id === "cus") return rows.some((r) => r.cus !== null);
  return true;
}

const GPU_COLUMNS: Column<GpuRow>[] = [
  { id: "node", header: "Node", kind: "text", value: (r) => r.node },
  { id: "process", header: "Process", kind: "text", value: (r) => r.process },
  { id: "gpu", header: "Device", kind: "text", value: (r) => r.gpu, width: "minmax(80px, 1fr)" },
  { id: "name", header: "Name", kind: "text", value: (r) => r.name },
  { id: "memory", header: "Memory", kind: "bytes", value: (r) => r.memory },
  { id: "cc", header: "Compute capability", kind: "text", value: (r) => r.cc, width: "minmax(100px, 1fr)" },
  { id: "sms", header: "SMs", kind: "count", value: (r) => r.sms },
  { id: "cus", header: "CUs", kind: "count", value: (r) => r.cus, tooltip: "Compute units (ROCm)" },
];

function readGpuInfo(info: unknown): GpuRow[] {
  const rows: GpuRow[] = [];
  if (!isObj(info)) return rows;
  for (const [node, procs] of Object.entries(info)) {
    if (!isObj(procs)) continue;
    for (const [process, gpus] of Object.entries(procs)) {
      if (!isObj(gpus)) continue;
      for (const [gpu, props] of Object.entries(gpus)) {
        rows.push({
          node,
          process,
          gpu,
          name: str(props, "name"),
          memory: num(props, "memory_bytes"),
          cc: str(props, "compute_capability"),
          sms: num(props, "sms"),
          cus: num(props, "compute_units"),
        });
      }
    }
  }
  return rows;
}

function stackedBars(title: string, workers: string[], legends: { key: string; label: string }[], values: Record<string, Record<string, number>>) {
  return {
    title: { text: title, left: 0, textStyle: { fontSize: 13 } },
    tooltip: { ...safeTooltip, trigger: "axis", valueFormatter: (v: number) => formatDuration(v) },
    legend: { top: 0, right: 0 },
    grid: { left: 110, right: 20, top: 40, bottom: 30 },
    yAxis: { type: "category", data: workers, inverse: true },
    xAxis: { type: "value", axisLabel: { formatter: (v: number) => (v === 0 ? "0" : formatDuration(v)) } },
    series: legends.map((l) => ({
      name: l.label,
      type: "bar",
      stack: "w",
      barMaxWidth: 28,
      itemStyle: { color: CATEGORY_COLORS[l.key] },
      data: workers.map((w) => values[w]?.[l.key] ?? 0),
    })),
  };
}

const OVERLAP = [
  { key: "computation", label: "Computation" },
  { key: "overlap", label: "Overlapping" },
  { key: "communication", label: "Communication" },
  { key: "other", label: "Other" },
];
const WAIT = [
  { key: "synchronizing", label: "Synchronizing" },
  { key: "transferring", label: "Data transfer" },
];

/** The per-step figures of the heatmap and the distributions (docs/metrics.md, "Distributed at scale"). */
export const SCALE_METRICS = [
  { key: "computation", label: "Computation (not overlapped)" },
  { key: "overlap", label: "Overlapping" },
  { key: "communication", label: "Communication (not overlapped)" },
  { key: "other", label: "Other" },
  { key: "synchronizing", label: "Waiting (synchronizing)" },
  { key: "transferring", label: "Data transfer" },
];

/** Bars per worker are readable up to this many workers; beyond, the heatmap and the rank table. */
const MAX_BAR_WORKERS = 32;

export interface Named {
  worker: string;
  rank: number | null;
  value: number | null;
}

export interface DistRow {
  metric: string;
  label: string;
  min: number | null;
  median: number | null;
  p95: number | null;
  max: number | null;
  highest: Named[];
  lowest: Named[];
}

const named = (list: Named[]): string => list.map((n) => `${n.worker} (${n.value === null ? "–" : formatDuration(n.value)})`).join(", ");

const DIST_COLUMNS: Column<DistRow>[] = [
  { id: "metric", header: "Per step (mean over steps)", kind: "text", value: (r) => r.label, width: "minmax(200px, 1.4fr)" },
  { id: "min", header: "Min", kind: "duration", value: (r) => r.min },
  { id: "median", header: "Median", kind: "duration", value: (r) => r.median },
  { id: "p95", header: "p95", kind: "duration", value: (r) => r.p95, tooltip: "Nearest rank: the ⌈0.95·n⌉-th smallest of the n ranks" },
  { id: "max", header: "Max", kind: "duration", value: (r) => r.max },
  { id: "highest", header: "Highest ranks", kind: "text", value: (r) => named(r.highest), width: "minmax(220px, 2fr)" },
  { id: "lowest", header: "Lowest ranks", kind: "text", value: (r) => named(r.lowest), width: "minmax(220px, 2fr)" },
];

export interface RankRow {
  worker: string;
  rank: number | null;
  values: Record<string, number | null>;
}

const RANK_COLUMNS: Column<RankRow>[] = [
  { id: "worker", header: "Worker", kind: "text", value: (r) => r.worker, width: "minmax(120px, 1.5fr)" },
  { id: "rank", header: "Rank", kind: "count", value: (r) => r.rank },
  ...SCALE_METRICS.map((m): Column<RankRow> => ({ id: m.key, header: m.label, kind: "duration", value: (r) => r.values[m.key] ?? null })),
];

export interface JobCollRow {
  collective: string;
  ranks: number;
  calls: number;
  totalBytes: number | null;
  latMin: number | null;
  latMedian: number | null;
  latP95: number | null;
  latMax: number | null;
  busbwMedian: number | null;
  lowest: Named[];
  highest: Named[];
}

const JOB_COLL_COLUMNS: Column<JobCollRow>[] = [
  { id: "collective", header: "Collective", kind: "text", value: (r) => r.collective, width: "minmax(140px, 1.4fr)" },
  { id: "ranks", header: "Ranks", kind: "count", value: (r) => r.ranks },
  { id: "calls", header: "Calls (all ranks)", kind: "count", value: (r) => r.calls },
  { id: "total_bytes", header: "Total size (all ranks)", kind: "bytes", value: (r) => r.totalBytes },
  { id: "lat_min", header: "Latency min", kind: "duration", value: (r) => r.latMin, tooltip: "Per rank: the wall time of its calls (union); then over ranks" },
  { id: "lat_median", header: "Latency median", kind: "duration", value: (r) => r.latMedian },
  { id: "lat_p95", header: "Latency p95", kind: "duration", value: (r) => r.latP95 },
  { id: "lat_max", header: "Latency max", kind: "duration", value: (r) => r.latMax },
  { id: "busbw_median", header: "Bus bandwidth median", kind: "bandwidth", value: (r) => r.busbwMedian },
  { id: "lowest", header: "Shortest latency (arrived last)", kind: "text", value: (r) => named(r.lowest), width: "minmax(220px, 2fr)", tooltip: "The rank that arrives last at a collective waits least in it" },
  { id: "highest", header: "Longest latency (waited most)", kind: "text", value: (r) => named(r.highest), width: "minmax(220px, 2fr)" },
];

function readNamed(list: unknown): Named[] {
  return (Array.isArray(list) ? list : []).map((n) => ({ worker: str(n, "worker"), rank: num(n, "rank"), value: num(n, "value") }));
}

function readCells(rows: unknown): (number | null)[][] {
  return (Array.isArray(rows) ? rows : []).map((row) => (Array.isArray(row) ? row.map((v) => (typeof v === "number" ? v : null)) : []));
}

/** The `distributed` answer (docs/api.md) as the view's model. */
export function readDistributed(data: unknown) {
  const workers = arr(data, "workers").map((w) => ({ worker: str(w, "worker"), rank: num(w, "rank"), steps: arr(w, "steps").map(String) }));
  const names = workers.map((w) => w.worker);
  const steps = [...new Set(workers.flatMap((w) => w.steps))];
  const commOps = get(data, "comm_ops");
  const p2pOps = get(data, "p2p");
  const st = get(data, "stragglers");
  const heat = get(data, "heatmap");
  const cells = get(heat, "cells");
  const dist = get(data, "distribution");
  const overlapAll = get(data, "overlap");
  const waitAll = get(data, "wait");
  return {
    names,
    ranks: workers.map((w) => w.rank),
    steps,
    heatSteps: arr(heat, "steps").map(String),
    heatCells: Object.fromEntries(SCALE_METRICS.map((m) => [m.key, readCells(get(cells, m.key))])) as Record<string, (number | null)[][]>,
    distribution: SCALE_METRICS.filter((m) => isObj(get(dist, m.key))).map(
      (m): DistRow => ({
        metric: m.key,
        label: m.label,
        min: num(get(dist, m.key), "min"),
        median: num(get(dist, m.key), "median"),
        p95: num(get(dist, m.key), "p95"),
        max: num(get(dist, m.key), "max"),
        highest: readNamed(get(get(dist, m.key), "highest")),
        lowest: readNamed(get(get(dist, m.key), "lowest")),
      }),
    ),
    rankRows: workers.map(
      (w): RankRow => ({
        worker: w.worker,
        rank: w.rank,
        values: Object.fromEntries(SCALE_METRICS.map((m) => [m.key, num(get(get(m.key === "synchronizing" || m.key === "transferring" ? waitAll : overlapAll, w.worker), "mean"), m.key)])),
      }),
    ),
    jobCollectives: arr(data, "collectives").map(
      (c): JobCollRow => ({
        collective: str(c, "collective"),
        ranks: num(c, "ranks") ?? 0,
        calls: num(c, "calls") ?? 0,
        totalBytes: num(c, "total_bytes"),
        latMin: num(get(c, "latency_us"), "min"),
        latMedian: num(get(c, "latency_us"), "median"),
        latP95: num(get(c, "latency_us"), "p95"),
        latMax: num(get(c, "latency_us"), "max"),
        busbwMedian: num(get(c, "busbw_gbps"), "median"),
        lowest: readNamed(get(c, "lowest")),
        highest: readNamed(get(c, "highest")),
      }),
    ),
    overlap: get(data, "overlap"),
    wait: get(data, "wait"),
    comm: Object.fromEntries(
      names.map((w) => [
        w,
        arr(commOps, w).map(
          (r): CommRow => ({
            collective: str(r, "collective"),
            calls: num(r, "calls") ?? 0,
            totalBytes: num(r, "total_bytes"),
            avgBytes: num(r, "avg_bytes"),
            totalLatency: num(r, "total_latency_us"),
            avgLatency: num(r, "avg_latency_us"),
            totalTransfer: num(r, "total_transfer_us"),
            avgTransfer: num(r, "avg_transfer_us"),
            algbw: num(r, "algbw_gbps"),
            busbw: num(r, "busbw_gbps"),
          }),
        ),
      ]),
    ) as Record<string, CommRow[]>,
    p2p: Object.fromEntries(names.map((w) => [w, readP2p(arr(p2pOps, w))])) as Record<string, P2pRow[]>,
    stragglers: arr(st, "ranks").map(
      (r): StragglerRow => ({
        worker: str(r, "worker"),
        rank: num(r, "rank"),
        timesLast: num(r, "times_last") ?? 0,
        totalWait: num(r, "total_wait_caused_us") ?? 0,
        maxWait: num(r, "max_wait_caused_us") ?? 0,
      }),
    ),
    roundCount: num(st, "round_count"),
    rounds: arr(st, "rounds").map(
      (r): RoundRow => ({
        collective: str(r, "collective"),
        group: str(r, "process_group"),
        seq: num(r, "seq"),
        step: str(r, "step"),
        lastWorker: str(r, "last_worker"),
        lastStart: num(r, "last_start_us"),
        wait: num(r, "wait_us") ?? 0,
        ranks: num(r, "ranks") ?? 0,
      }),
    ),
    groups: arr(data, "process_groups").map(
      (g): GroupRow => ({
        name: str(g, "name"),
        description: str(g, "description"),
        backend: str(g, "backend"),
        size: num(g, "size"),
        ranks: Array.isArray(get(g, "ranks")) ? (get(g, "ranks") as unknown[]).join(", ") : str(g, "ranks"),
      }),
    ),
    gpus: readGpuInfo(get(data, "gpu_info")),
    warnings: arr(data, "warnings").map(String),
    /** the analysed job and the span's jobs (Lightning writes one per stage; "" = the only one) */
    job: str(data, "job"),
    jobs: arr(data, "jobs").map((j) => ({ name: str(j, "name"), workers: num(j, "workers") ?? 0 })),
  };
}

export function DistributedView(p: ViewProps): ReactNode {
  const params: Record<string, string> = { run: p.run };
  if (p.span !== null) params.span = p.span;
  if (p.state.djob != null) params.job = p.state.djob;
  const { data, error } = useApi<unknown>(p.api, "distributed", params);
  // a job picked in another run or span (kept in the address) is not here: back to the default job
  const staleJob = error !== undefined && error !== null && p.state.djob != null;
  useEffect(() => {
    if (staleJob) p.setState({ djob: null });
  }, [staleJob, p]);
  const step = p.state.step ?? "all";
  const [metric, setMetric] = useState("computation");

  const shaped = useMemo(() => (data === undefined ? null : readDistributed(data)), [data]);

  if (error) return <ErrorBox error={error} what="the distributed view" />;
  if (!shaped) return <Loading what="distributed figures" />;
  if (shaped.names.length === 0) return <Empty title="No distributed data">This run has no collective calls and a single worker.</Empty>;

  const worker = shaped.names.includes(p.state.cworker ?? "") ? (p.state.cworker as string) : shaped.names[0] ?? "";
  const overlapVals = stepFigures(shaped.overlap, shaped.names, step);
  const waitVals = stepFigures(shaped.wait, shaped.names, step);
  const chartHeight = 80 + 34 * shaped.names.length;
  const metricLabel = SCALE_METRICS.find((m) => m.key === metric)?.label ?? metric;
  const slowest = shaped.stragglers.slice().sort((a, b) => b.timesLast - a.timesLast || b.totalWait - a.totalWait).slice(0, 5);

  return (
    <div className="distributed">
      {shaped.jobs.length > 1 && (
        <div className="dt-toolbar" data-testid="dist-jobs">
          <Select
            label="Job"
            value={shaped.job}
            options={shaped.jobs.map((j) => ({ value: j.name, label: `${j.name} (${j.workers.toLocaleString("en-US")} worker${j.workers === 1 ? "" : "s"})` }))}
            onChange={(v) => p.setState({ djob: v, cworker: null })}
            testId="select-job"
          />
          <span className="muted">This span holds several jobs (workers of one rank, such as Lightning&apos;s stages, are not separate ranks); one is shown.</span>
        </div>
      )}
      {shaped.warnings.length > 0 && (
        <div className="warn" role="status">
          {shaped.warnings.map((w, i) => (
            <div key={i}>{w}</div>
          ))}
        </div>
      )}
      <Section
        title={`Ranks at a glance (${shaped.names.length.toLocaleString("en-US")} workers)`}
        id="dist-ranks"
        actions={<Select label="Metric" value={metric} options={SCALE_METRICS.map((m) => ({ value: m.key, label: m.label }))} onChange={setMetric} testId="select-metric" />}
      >
        <div className="slowest" data-testid="slowest-ranks">
          {slowest.length === 0 ? (
            <span className="muted">No rank made the others wait in a collective{shaped.roundCount ? ` (${shaped.roundCount} rounds compared)` : ""}.</span>
          ) : (
            <>
              <strong>Slowest ranks</strong> (last to arrive at collectives, the others waited for them):{" "}
              {slowest.map((r, i) => (
                <span key={r.worker} className="slowest-rank" data-worker={r.worker}>
                  {i > 0 ? "; " : ""}
                  {r.worker}: last in {r.timesLast.toLocaleString("en-US")} {r.timesLast === 1 ? "round" : "rounds"}
                  {shaped.roundCount !== null ? ` of ${shaped.roundCount.toLocaleString("en-US")}` : ""}, {formatDuration(r.totalWait)} of waiting caused
                </span>
              ))}
            </>
          )}
        </div>
        {shaped.heatSteps.length > 0 && (
          <Heatmap
            rows={shaped.names}
            columns={shaped.heatSteps}
            values={shaped.heatCells[metric] ?? []}
            format={(v) => formatDuration(v)}
            onRowClick={(i) => p.setState({ cworker: shaped.names[i] ?? null })}
            testId="rank-heatmap"
            ariaLabel={`${metricLabel} per rank and step`}
          />
        )}
        {shaped.distribution.length > 0 && (
          <DataTable rows={shaped.distribution} columns={DIST_COLUMNS} csvName={fileSlug("rank-distribution", p.run, p.span)} search={false} testId="distribution-table" />
        )}
      </Section>
      {shaped.gpus.length > 0 && (
        <Section title="Devices" id="dist-gpus">
          <DataTable rows={shaped.gpus} columns={GPU_COLUMNS.filter((c) => shownGpuColumn(c.id, shaped.gpus))} csvName={fileSlug("gpus", p.run)} search={false} height={Math.min(300, 36 + 28 * shaped.gpus.length)} />
        </Section>
      )}
      <Section
        title="Computation and communication per worker"
        id="dist-overlap"
        actions={
          shaped.names.length <= MAX_BAR_WORKERS ? (
            <Select
              label="Step"
              value={step}
              options={[{ value: "all", label: "Mean of all steps" }, ...shaped.steps.map((s) => ({ value: s }))]}
              onChange={(v) => p.setState({ step: v === "all" ? null : v })}
              testId="select-step"
            />
          ) : undefined
        }
      >
        {shaped.names.length <= MAX_BAR_WORKERS && (
          <>
            <Chart option={stackedBars("Time per step", shaped.names, OVERLAP, overlapVals)} height={chartHeight} testId="overlap-chart" ariaLabel="Overlap per worker" />
            <Chart option={stackedBars("Collective time per step", shaped.names, WAIT, waitVals)} height={chartHeight} testId="wait-chart" ariaLabel="Synchronizing and transfer per worker" />
          </>
        )}
        <DataTable rows={shaped.rankRows} columns={RANK_COLUMNS} csvName={fileSlug("ranks", p.run, p.span)} initialSort={{ id: metric, desc: true }} height={Math.min(420, 48 + 28 * shaped.rankRows.length)} testId="rank-table" />
      </Section>
      {shaped.jobCollectives.length > 0 && (
        <Section title="Collectives over all ranks" id="dist-collectives">
          <DataTable rows={shaped.jobCollectives} columns={JOB_COLL_COLUMNS} csvName={fileSlug("collectives-job", p.run, p.span)} search={false} testId="collectives-job-table" />
        </Section>
      )}
      <Section
        title="Collective operations"
        id="dist-commops"
        actions={<Select label="Worker" value={worker} options={shaped.names.map((w) => ({ value: w }))} onChange={(v) => p.setState({ cworker: v })} testId="select-cworker" />}
      >
        {(shaped.comm[worker] ?? []).length === 0 ? (
          <Empty title={`No collective calls on ${worker}`} />
        ) : (
          <DataTable rows={shaped.comm[worker] ?? []} columns={COMM_COLUMNS} csvName={fileSlug("collectives", p.run, worker, p.span)} initialSort={{ id: "total_latency", desc: true }} height={Math.min(420, 40 + 28 * (shaped.comm[worker]?.length ?? 0))} testId="comm-table" />
        )}
      </Section>
      {(shaped.p2p[worker] ?? []).length > 0 && (
        <Section title={`Point-to-point operations (${worker})`} id="dist-p2p">
          <div className="muted">Send and receive calls pair one rank with one other: they are not matched across ranks as collectives are.</div>
          <DataTable rows={shaped.p2p[worker] ?? []} columns={P2P_COLUMNS} csvName={fileSlug("p2p", p.run, worker, p.span)} initialSort={{ id: "total_time", desc: true }} search={false} height={Math.min(320, 48 + 28 * (shaped.p2p[worker]?.length ?? 0))} testId="p2p-table" />
        </Section>
      )}
      {shaped.groups.length > 0 && (
        <Section title="Process groups" id="dist-groups">
          <DataTable rows={shaped.groups} columns={GROUP_COLUMNS} csvName={fileSlug("process-groups", p.run)} search={false} height={Math.min(300, 48 + 28 * shaped.groups.length)} testId="groups-table" />
        </Section>
      )}
      <Section title="Stragglers" id="dist-stragglers">
        {shaped.stragglers.length === 0 ? (
          <div className="muted">No straggler: no collective round in which ranks waited for a last one{shaped.roundCount ? ` (${shaped.roundCount} rounds compared)` : ""}.</div>
        ) : (
          <>
            <div className="muted">
              In each collective round the last rank to arrive has the shortest call; the others waited for it.
              {shaped.roundCount !== null && ` ${shaped.roundCount} rounds compared.`}
            </div>
            <DataTable rows={shaped.stragglers} columns={STRAGGLER_COLUMNS} csvName={fileSlug("stragglers", p.run, p.span)} search={false} initialSort={{ id: "times_last", desc: true }} height={Math.min(300, 48 + 28 * shaped.stragglers.length)} testId="straggler-table" />
            {shaped.rounds.length > 0 && (
              <>
                <h3 className="subhead">Rounds with the longest wait</h3>
                <DataTable rows={shaped.rounds} columns={roundColumns((r) => p.setState({ view: "Trace", worker: r.lastWorker, find: `at:op:${r.lastStart}`, sel: null, t0: null, t1: null }, true))} csvName={fileSlug("straggler-rounds", p.run, p.span)} initialSort={{ id: "wait", desc: true }} height={Math.min(360, 48 + 28 * shaped.rounds.length)} testId="rounds-table" />
              </>
            )}
          </>
        )}
      </Section>
    </div>
  );
}
