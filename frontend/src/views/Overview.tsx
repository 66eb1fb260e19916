import { type ReactNode, useMemo } from "react";
import { Chart, safeTooltip } from "../components/Chart";
import { Empty, ErrorBox, Loading, Section, Stat } from "../components/common";
import { type Column, DataTable } from "../components/DataTable";
import { Pie } from "../components/Pie";
import { fileSlug } from "../lib/csv";
import { formatBytes, formatDuration, formatPercent } from "../lib/format";
import { arr, get, isObj, num, str } from "../lib/pick";
import { useApi } from "../lib/useApi";
import { BREAKDOWN, type SummaryRow, executionSummary, meanOf, visibleCategories } from "./shape";
import { type ViewProps, profileParams } from "./types";

export interface Gpu {
  id: number | null;
  name: string;
  memoryBytes: number | null;
  computeCapability: string;
  utilization: number | null;
  smEfficiency: number | null;
  occupancy: number | null;
  tensorCore: number | null;
}

function readGpu(g: unknown): Gpu {
  return {
    id: num(g, "id", "device"),
    name: str(g, "name"),
    memoryBytes: num(g, "memory_bytes", "memory"),
    computeCapability: str(g, "compute_capability"),
    utilization: num(g, "utilization_pct"),
    smEfficiency: num(g, "sm_efficiency_pct"),
    occupancy: num(g, "achieved_occupancy_pct", "occupancy_pct"),
    tensorCore: num(g, "tensor_core_pct", "tc_pct"),
  };
}

export interface Rec {
  id: string;
  title: string;
  text: string;
  evidence: string;
}

function readRec(r: unknown): Rec {
  if (!isObj(r)) return { id: "", title: "", text: String(r), evidence: "" };
  const ev = get(r, "evidence");
  return {
    id: str(r, "id"),
    title: str(r, "title"),
    text: str(r, "text", "message"),
    evidence: ev === undefined || ev === null ? "" : typeof ev === "string" ? ev : JSON.stringify(ev),
  };
}

/** Steps: {number, name, duration_us, <category>_us…} → {number, name, duration, <category>…}. */
function readSteps(list: unknown[]): (Record<string, number> & { label?: never })[] {
  return list.filter(isObj).map((s) => {
    const out: Record<string, number> = {};
    for (const [k, v] of Object.entries(s)) if (typeof v === "number") out[k.endsWith("_us") ? k.slice(0, -3) : k] = v;
    return out;
  });
}

const SUMMARY_COLUMNS: Column<SummaryRow>[] = [
  { id: "category", header: "Category", kind: "text", value: (r) => r.category, width: "minmax(160px, 2fr)" },
  { id: "us", header: "Time per step", kind: "duration", value: (r) => r.us, tooltip: "Mean over steps (µs)" },
  { id: "pct", header: "Share of step", kind: "percent", value: (r) => r.pct },
];

/** The `overview` answer (docs/api.md) as the view's model. */
export function readOverview(data: unknown) {
  const steps = readSteps(arr(data, "steps"));
  const gpus = arr(data, "gpus").map(readGpu);
  const env = get(data, "environment");
  const deviceType = str(data, "device_type") || str(env, "device_type");
  const listed = arr(data, "categories").map(String);
  const gpuUsed = gpus.length > 0 || deviceType.toUpperCase() === "GPU";
  const cats = listed.length ? BREAKDOWN.filter((c) => listed.includes(c.key)) : visibleCategories(steps, gpuUsed);
  const avgRaw = get(data, "average");
  // average: {category: {us, pct}} (pct = share of the mean step time)
  const avg: Record<string, number> = isObj(avgRaw)
    ? Object.fromEntries(Object.entries(avgRaw).map(([k, v]) => [k, num(v, "us") ?? (typeof v === "number" ? v : 0)]))
    : meanOf(steps, BREAKDOWN.map((c) => c.key));
  const stepTime = num(data, "step_time_us") ?? meanOf(steps, ["duration"]).duration ?? null;
  if (stepTime !== null) avg.duration = stepTime;
  return {
    steps,
    gpus,
    cats,
    deviceType: deviceType || (gpuUsed ? "GPU" : "CPU"),
    workers: num(env, "workers") ?? num(data, "workers"),
    versions: isObj(get(env, "versions")) ? (get(env, "versions") as Record<string, unknown>) : {},
    distributed: isObj(get(env, "distributed")) ? (get(env, "distributed") as Record<string, unknown>) : {},
    summary: executionSummary(avg, cats),
    stepTime: steps.length ? stepTime : null,
    recommendations: arr(data, "recommendations").map(readRec),
  };
}

export type OverviewModel = ReturnType<typeof readOverview>;

export function OverviewView(p: ViewProps): ReactNode {
  const { data, error, loading } = useApi<unknown>(p.api, "overview", profileParams(p));

  const shaped = useMemo(() => (data === undefined ? null : readOverview(data)), [data]);

  const chart = useMemo(() => {
    if (!shaped) return null;
    const labels = shaped.steps.map((s, i) => String(s.number ?? i + 1));
    return {
      tooltip: {
        ...safeTooltip,
        trigger: "axis",
        valueFormatter: (v: number) => formatDuration(v),
      },
      legend: { top: 0, type: "scroll" },
      grid: { left: 70, right: 20, top: 36, bottom: 40 },
      xAxis: { type: "category", data: labels, name: "Step", nameLocation: "middle", nameGap: 26 },
      yAxis: { type: "value", axisLabel: { formatter: (v: number) => formatDuration(v) } },
      series: shaped.cats.map((c) => ({
        name: c.label,
        type: "bar",
        stack: "step",
        barMaxWidth: 48,
        data: shaped.steps.map((s) => s[c.key] ?? 0),
      })),
    };
  }, [shaped]);

  if (error) return <ErrorBox error={error} what="the overview" />;
  if (loading || !shaped || !chart) return <Loading what="overview" />;

  return (
    <div className="overview">
      <Section title="Configuration" id="overview-config">
        <div className="stats">
          <Stat label="Device type" value={shaped.deviceType} testId="device-type" />
          {shaped.workers !== null && <Stat label="Workers" value={String(shaped.workers)} testId="worker-count" raw={shaped.workers} />}
          {Object.entries(shaped.versions).map(([k, v]) => (
            <Stat key={k} label={k} value={String(v)} />
          ))}
          {Object.entries(shaped.distributed).map(([k, v]) => (
            <Stat key={`d-${k}`} label={k.replace(/_/g, " ")} value={String(v)} />
          ))}
          <Stat label="Steps" value={String(shaped.steps.length)} testId="step-count" raw={shaped.steps.length} />
          {shaped.stepTime !== null && (
            <Stat label="Mean step time" value={formatDuration(shaped.stepTime)} testId="step-time" raw={shaped.stepTime} />
          )}
        </div>
      </Section>

      {shaped.gpus.length > 0 && (
        <Section title="GPU summary" id="gpu-summary">
          <div className="cards">
            {shaped.gpus.map((g, i) => (
              <div className="card" key={i} data-testid="gpu-card">
                <h3>
                  GPU {g.id ?? i}: {g.name || "unknown model"}
                </h3>
                <dl className="kv">
                  {g.memoryBytes !== null && (
                    <>
                      <dt>Memory</dt>
                      <dd>{formatBytes(g.memoryBytes)}</dd>
                    </>
                  )}
                  {g.computeCapability && (
                    <>
                      <dt>Compute capability</dt>
                      <dd>{g.computeCapability}</dd>
                    </>
                  )}
                  <dt title="Share of the profiled window with at least one kernel running">GPU utilization</dt>
                  <dd data-testid="gpu-utilization" data-value={g.utilization ?? undefined}>{formatPercent(g.utilization)}</dd>
                  <dt title="Blocks per SM, capped at 1, weighted by kernel time over the window">Est. SM efficiency</dt>
                  <dd data-testid="gpu-sm-efficiency" data-value={g.smEfficiency ?? undefined}>{formatPercent(g.smEfficiency)}</dd>
                  <dt title="Kernel-time-weighted mean of estimated achieved occupancy">Est. achieved occupancy</dt>
                  <dd data-testid="gpu-occupancy" data-value={g.occupancy ?? undefined}>{formatPercent(g.occupancy)}</dd>
                  <dt title="Share of kernel time spent in tensor-core kernels">Kernel time using Tensor Cores</dt>
                  <dd data-testid="gpu-tc" data-value={g.tensorCore ?? undefined}>{formatPercent(g.tensorCore)}</dd>
                </dl>
              </div>
            ))}
          </div>
        </Section>
      )}

      <Section title="Step time breakdown" id="step-breakdown">
        {shaped.steps.length === 0 ? (
          <Empty title="No steps in this trace">
            The trace has no ProfilerStep#N ranges: call prof.step() once per iteration in the profiled loop.
          </Empty>
        ) : (
          <>
            <Chart
              option={chart}
              height={320}
              testId="breakdown-chart"
              ariaLabel="Step time breakdown"
              onClick={(i) => {
                const st = shaped.steps[i];
                if (st?.number !== undefined && st.number !== null)
                  p.setState({ view: "Trace", find: `op:ProfilerStep#${st.number}`, sel: null, t0: null, t1: null }, true);
              }}
            />
            <div className="muted">Click a step's bar to show it in the timeline (Trace view).</div>
          </>
        )}
      </Section>

      <Section title="Execution summary" id="execution-summary">
        <div className="grid2">
          <DataTable
            rows={shaped.summary}
            columns={SUMMARY_COLUMNS}
            csvName={fileSlug("execution-summary", p.run, p.worker, p.span)}
            search={false}
            height={Math.min(320, 32 + 28 * shaped.summary.length + 4)}
            testId="summary-table"
          />
          <Pie title="Time per step by category" slices={shaped.summary.map((r) => ({ name: r.category, value: r.us }))} testId="summary-pie" />
        </div>
      </Section>

      <Section title="Performance recommendations" id="recommendations">
        {shaped.recommendations.length === 0 ? (
          <div className="muted">No recommendation: none of the rules found a problem in this profile.</div>
        ) : (
          <ul className="recs">
            {shaped.recommendations.map((r, i) => (
              <li key={i} data-testid="recommendation" data-id={r.id}>
                {r.title && <strong>{r.title}. </strong>}
                {r.text}
                {r.evidence && (
                  <details className="evidence">
                    <summary>Evidence</summary>
                    <code>{r.evidence}</code>
                  </details>
                )}
              </li>
            ))}
          </ul>
        )}
      </Section>
    </div>
  );
}
