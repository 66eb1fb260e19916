import { type ReactNode, useMemo } from "react";
import { Chart, safeTooltip } from "../components/Chart";
import { Empty, ErrorBox, Loading, Section, Stat } from "../components/common";
import { type Column, DataTable } from "../components/DataTable";
import { Pie } from "../components/Pie";
import { fileSlug } from "../lib/csv";
import { CATEGORY_COLORS } from "../lib/colors";
import { formatBytes, formatCount, formatDuration, formatNumber, formatPercent } from "../lib/format";
import { arr, get, isObj, num, str } from "../lib/pick";
import { useApi } from "../lib/useApi";
import { BREAKDOWN, type SummaryRow, evidenceRows, executionSummary, meanOf, stepTooltip, visibleCategories } from "./shape";
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
  /** share of kernel time in kernels whose names do not say (tensorCore is a lower bound by this much) */
  tensorCoreUnknown: number | null;
}

function readGpu(g: unknown): Gpu {
  return {
    id: num(g, "id"),
    name: str(g, "name"),
    memoryBytes: num(g, "memory_bytes"),
    computeCapability: str(g, "compute_capability"),
    utilization: num(g, "utilization_pct"),
    smEfficiency: num(g, "sm_efficiency_pct"),
    occupancy: num(g, "achieved_occupancy_pct"),
    tensorCore: num(g, "tensor_core_pct"),
    tensorCoreUnknown: num(g, "tensor_core_unknown_pct"),
  };
}

export interface Rec {
  id: string;
  title: string;
  text: string;
  evidence: unknown;
}

function readRec(r: unknown): Rec {
  return { id: str(r, "id"), title: str(r, "title"), text: str(r, "text"), evidence: get(r, "evidence") ?? null };
}

// the trace's configuration keys (top-level version fields, distributedInfo) as people say them
const CONFIG_LABELS: Record<string, string> = {
  schemaVersion: "Trace schema version",
  cupti_version: "CUPTI version",
  cuda_runtime_version: "CUDA runtime version",
  cuda_driver_version: "CUDA driver version",
  cuda_version: "CUDA version",
  hip_version: "HIP version",
  rocm_version: "ROCm version",
  roctracer_version: "ROCTracer version",
  backend: "Distributed backend",
  rank: "Rank",
  world_size: "World size",
  pg_count: "Process groups",
  nccl_version: "NCCL version",
};
const ACRONYMS: Record<string, string> = { cuda: "CUDA", cupti: "CUPTI", hip: "HIP", rocm: "ROCm", nccl: "NCCL", pg: "Process group", xpu: "XPU", mtia: "MTIA", gpu: "GPU" };

/** "schemaVersion" → "Trace schema version", "pg_count" → "Process groups"; other keys by their words
 * ("kineto_version" → "Kineto version"). */
export function configLabel(key: string): string {
  if (CONFIG_LABELS[key]) return CONFIG_LABELS[key];
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .split(/[_\s]+/)
    .filter(Boolean)
    .map((w) => ACRONYMS[w.toLowerCase()] ?? w.toLowerCase());
  const text = words.join(" ");
  return text.charAt(0).toUpperCase() + text.slice(1);
}

const EVIDENCE_FORMAT = { duration: formatDuration, percent: formatPercent, bytes: formatBytes, number: formatNumber };

/** A figure of a device card: its value, or "–" with the reason the trace cannot give it. */
function Figure({ label, title, value, missing, testId }: { label: string; title: string; value: number | null; missing: string; testId: string }): ReactNode {
  return (
    <>
      <dt title={title}>{label}</dt>
      <dd data-testid={testId} data-value={value ?? undefined} title={value === null ? missing : undefined} className={value === null ? "missing" : undefined}>
        {formatPercent(value)}
      </dd>
    </>
  );
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
  const deviceType = str(data, "device_type") || "CPU";
  const listed = arr(data, "categories").map(String);
  const cats = listed.length ? BREAKDOWN.filter((c) => listed.includes(c.key)) : visibleCategories(steps, deviceType !== "CPU");
  const avgRaw = get(data, "average");
  // average: {category: {us, pct}} (pct = share of the mean step time)
  const avg: Record<string, number> = isObj(avgRaw)
    ? Object.fromEntries(Object.entries(avgRaw).map(([k, v]) => [k, num(v, "us") ?? 0]))
    : meanOf(steps, BREAKDOWN.map((c) => c.key));
  const stepTime = num(data, "step_time_us") ?? meanOf(steps, ["duration"]).duration ?? null;
  if (stepTime !== null) avg.duration = stepTime;
  return {
    steps,
    /** each step's range name (ProfilerStep#N, or an inference iteration's annotation) */
    stepNames: arr(data, "steps").map((s) => str(s, "name")),
    gpus,
    cats,
    deviceType,
    platform: str(data, "platform"),
    /** "Tensor Cores" (CUDA), "Matrix Cores" (ROCm), "" where kernel names cannot be classified */
    matrixUnits: str(data, "matrix_units"),
    workers: num(env, "workers"),
    moduleInfo: get(env, "module_info") !== false,
    versions: isObj(get(env, "versions")) ? (get(env, "versions") as Record<string, unknown>) : {},
    distributed: isObj(get(env, "distributed")) ? (get(env, "distributed") as Record<string, unknown>) : {},
    summary: executionSummary(avg, cats),
    stepTime: steps.length ? stepTime : null,
    recommendations: arr(data, "recommendations").map(readRec),
    graphs: readGraphs(get(data, "graphs")),
    /** launches whose device records were all lost (docs/metrics.md, "Device kind"): the note, or "" */
    lostDeviceActivity: str(get(data, "lost_device_activity"), "text"),
    inference: readInference(get(data, "inference")),
    /** the note of a CUPTI range-profiler trace (counters, no kernel times); "" otherwise */
    rangeProfiler: str(get(data, "range_profiler"), "note"),
  };
}

/** The `inference` summary (docs/api.md, "overview"): null for training profiles. */
export function readInference(v: unknown) {
  if (!isObj(v)) return null;
  const steps = get(v, "steps");
  return {
    prefill: num(steps, "prefill") ?? 0,
    decode: num(steps, "decode") ?? 0,
    mixed: num(steps, "mixed") ?? 0,
    contextTokens: num(v, "context_tokens") ?? 0,
    generationTokens: num(v, "generation_tokens") ?? 0,
    usPerToken: num(v, "us_per_token"),
  };
}

/** "1 mixed step · 8,155 context + 37 generation tokens · 37.6 µs per token" */
export function inferenceLine(i: NonNullable<ReturnType<typeof readInference>>): string {
  const kinds = (["prefill", "decode", "mixed"] as const)
    .filter((k) => i[k] > 0)
    .map((k) => `${formatCount(i[k])} ${k} step${i[k] === 1 ? "" : "s"}`);
  const parts = [kinds.join(", ")];
  if (i.contextTokens + i.generationTokens > 0)
    parts.push(`${formatCount(i.contextTokens)} context + ${formatCount(i.generationTokens)} generation tokens`);
  if (i.usPerToken !== null) parts.push(`${formatDuration(i.usPerToken)} per token`);
  return parts.join(" · ");
}

/** The `graphs` note (docs/api.md, "overview"): null for a profile without graph replays. */
export function readGraphs(g: unknown) {
  if (!isObj(g)) return null;
  return {
    text: str(g, "text"),
    replays: num(g, "replays") ?? 0,
    replayedShare: 100 * (num(g, "replayed_share") ?? 0),
    attributed: num(g, "attributed_device_us") ?? 0,
    unattributed: num(g, "unattributed_device_us") ?? 0,
    captures: arr(g, "captures").map((c) => ({
      file: str(c, "file"),
      batchSize: num(c, "batch_size"),
      mode: str(c, "mode"),
      matched: num(c, "matched_replays") ?? 0,
      leftovers: num(c, "leftover_launches") ?? 0,
      rank: num(c, "rank"),
      used: get(c, "used") !== false,
    })),
    unmatched: arr(g, "unmatched").map(String),
  };
}

export type OverviewModel = ReturnType<typeof readOverview>;

/** The device card's MFU from a `roofline` answer: null when the route has no FLOPs to speak of. */
export function readCardMfu(data: unknown): { device: number | null; value: number | null; dtype: string; reason: string } | null {
  if (data === undefined) return null;
  const m = get(data, "mfu");
  const share = num(m, "known_flops_share");
  if (!share) return null;
  return { device: num(get(data, "device"), "id"), value: num(m, "mean"), dtype: str(m, "dtype"), reason: str(m, "reason") };
}

/** The Analysis view's section that backs a recommendation (its `id`), linked from the recommendation. */
const ANALYSIS_SECTION: Record<string, string> = {
  low_gpu_utilization: "idle",
  host_bound: "idle",
  launch_bound: "launch",
  synchronization: "critical-path",
  dataloader: "idle",
  pageable_memcpy: "idle",
};

export function OverviewView(p: ViewProps): ReactNode {
  const { data, error, loading } = useApi<unknown>(p.api, "overview", profileParams(p));

  const shaped = useMemo(() => (data === undefined ? null : readOverview(data)), [data]);
  // MFU for the device card (the roofline route, one row: docs/metrics.md "Roofline")
  const roof = useApi<unknown>(p.api, shaped && shaped.gpus.length > 0 ? "roofline" : null, { ...profileParams(p), limit: 1 });
  const mfu = useMemo(() => readCardMfu(roof.data), [roof.data]);

  const chart = useMemo(() => {
    if (!shaped) return null;
    const labels = shaped.steps.map((s, i) => String(s.number ?? i + 1));
    const cats = shaped.cats;
    return {
      tooltip: {
        ...safeTooltip,
        trigger: "axis",
        // the step's total first, then each category with its share of the step (as the original)
        formatter: (items: { dataIndex: number; seriesName: string; value: number }[]) => {
          const i = items[0]?.dataIndex ?? 0;
          const st = shaped.steps[i];
          const host = st?.host_start !== undefined && st.host_end !== undefined ? st.host_end - st.host_start : null;
          return stepTooltip(labels[i] ?? "", st?.duration ?? null, items, formatDuration, host);
        },
      },
      legend: { top: 0, type: "scroll" },
      grid: { left: 70, right: 20, top: 36, bottom: 40 },
      xAxis: { type: "category", data: labels, name: "Step", nameLocation: "middle", nameGap: 26 },
      yAxis: { type: "value", axisLabel: { formatter: (v: number) => (v === 0 ? "0" : formatDuration(v)) } },
      series: cats.map((c) => ({
        name: c.label,
        type: "bar",
        stack: "step",
        barMaxWidth: 48,
        itemStyle: { color: CATEGORY_COLORS[c.key] },
        data: shaped.steps.map((s) => s[c.key] ?? 0),
      })),
    };
  }, [shaped]);

  if (error) return <ErrorBox error={error} what="the overview" />;
  if (loading || !shaped || !chart) return <Loading what="overview" />;
  // SM efficiency and occupancy are CUPTI figures: shown on CUDA devices only (an answer without a platform keeps them)
  const cupti = !shaped.platform || shaped.platform === "CUDA";

  return (
    <div className="overview">
      <Section title="Configuration" id="overview-config">
        <div className="stats">
          <Stat
            label="Device type"
            value={shaped.platform && shaped.platform !== shaped.deviceType ? `${shaped.deviceType} (${shaped.platform})` : shaped.deviceType}
            title="From the trace's runtime categories and device names (docs/metrics.md, “Device kind”)"
            testId="device-type"
          />
          {shaped.workers !== null && <Stat label="Workers" value={String(shaped.workers)} testId="worker-count" raw={shaped.workers} />}
          {Object.entries(shaped.versions).map(([k, v]) => (
            <Stat key={k} label={configLabel(k)} value={String(v)} title={`The trace's “${k}”`} testId={`config-${k}`} />
          ))}
          {Object.entries(shaped.distributed).map(([k, v]) => (
            <Stat key={`d-${k}`} label={configLabel(k)} value={String(v)} title={`distributedInfo “${k}”`} testId={`config-${k}`} />
          ))}
          <Stat label="Steps" value={String(shaped.steps.length)} testId="step-count" raw={shaped.steps.length} />
          {shaped.stepTime !== null && (
            <Stat label="Mean step time" value={formatDuration(shaped.stepTime)} testId="step-time" raw={shaped.stepTime} />
          )}
        </div>
        {!shaped.moduleInfo && (
          <div className="muted" data-testid="module-hint">
            No module information in this trace: record with torch.profiler.profile(..., with_modules=True) (or with_stack=True) to see
            the time per nn.Module in the Module view.
          </div>
        )}
      </Section>

      {shaped.lostDeviceActivity && (
        <div className="warn" data-testid="lost-device-activity">
          {shaped.lostDeviceActivity}
        </div>
      )}

      {shaped.gpus.length > 0 && (
        <Section title={`${shaped.deviceType} summary`} id="gpu-summary">
          <div className="cards">
            {shaped.gpus.map((g, i) => (
              <div className="card" key={i} data-testid="gpu-card">
                <h3 data-testid="gpu-title">
                  {shaped.deviceType} {g.id ?? i}
                  {g.name ? `: ${g.name}` : ""}
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
                      <dd data-testid="gpu-cc">{g.computeCapability}</dd>
                    </>
                  )}
                  <Figure
                    label={`${shaped.deviceType} utilization`}
                    title="Share of the profiled window with at least one kernel running"
                    value={g.utilization}
                    missing="The trace has no kernel in the profiled window"
                    testId="gpu-utilization"
                  />
                  {cupti && (
                    <>
                      <Figure
                        label="Est. SM efficiency"
                        title="Blocks per SM, capped at 1, weighted by kernel time over the window"
                        value={g.smEfficiency}
                        missing="Not in this trace: no kernel carries “blocks per SM”"
                        testId="gpu-sm-efficiency"
                      />
                      <Figure
                        label="Est. achieved occupancy"
                        title="Kernel-time-weighted mean of estimated achieved occupancy (Kineto's 0, written when CUPTI cannot compute it, is left out)"
                        value={g.occupancy}
                        missing="Not in this trace: no kernel carries a computed “est. achieved occupancy %”"
                        testId="gpu-occupancy"
                      />
                    </>
                  )}
                  {mfu && (mfu.device === null || mfu.device === g.id) && (
                    <Figure
                      label={`MFU${mfu.dtype ? ` (${mfu.dtype})` : ""}`}
                      title="Model FLOPs / (step time × the device's peak of the dominant dtype); see the Roofline view"
                      value={mfu.value === null ? null : 100 * mfu.value}
                      missing={mfu.reason || "Unknown"}
                      testId="gpu-mfu"
                    />
                  )}
                  {shaped.matrixUnits && (
                    <>
                      <Figure
                        label={`Kernel time using ${shaped.matrixUnits} (at least)`}
                        title={`Share of kernel time spent in kernels whose names say they use ${shaped.matrixUnits}: a lower bound, kernels whose names do not say count as not using them (docs/metrics.md)`}
                        value={g.tensorCore}
                        missing="No kernel time to classify"
                        testId="gpu-tc"
                      />
                      {g.tensorCoreUnknown !== null && g.tensorCoreUnknown > 0 && (
                        <Figure
                          label="Kernel time not classified"
                          title={`Share of kernel time in kernels whose names do not say whether they use ${shaped.matrixUnits} (Triton, custom kernels)`}
                          value={g.tensorCoreUnknown}
                          missing=""
                          testId="gpu-tc-unknown"
                        />
                      )}
                    </>
                  )}
                </dl>
              </div>
            ))}
          </div>
        </Section>
      )}

      <Section title="Step time breakdown" id="step-breakdown">
        {shaped.inference && (
          <div className="muted" data-testid="inference-steps" title="Inference iterations as steps (docs/metrics.md, 'Inference steps')">
            Inference steps: {inferenceLine(shaped.inference)}
          </div>
        )}
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
                const name = shaped.stepNames[i] || (st?.number !== undefined ? `ProfilerStep#${st.number}` : "");
                if (name) p.setState({ view: "Trace", find: `op:${name}`, sel: null, t0: null, t1: null }, true);
              }}
            />
            <div className="muted" data-testid="step-time-note">
              Click a step's bar to show it in the timeline (Trace view). A step's time runs from its start to the end of the device work it
              launched, so it can be longer than the ProfilerStep range the Trace view's ruler draws; hover a bar (or a step on that ruler) for both.
            </div>
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
          <Pie title="Time per step by category" slices={shaped.summary.map((r) => ({ name: r.category, value: r.us, key: r.key }))} testId="summary-pie" />
        </div>
      </Section>

      {shaped.rangeProfiler && (
        <Section title="Range profiler" id="range-profiler">
          <p data-testid="range-profiler-note">{shaped.rangeProfiler}</p>
        </Section>
      )}

      {shaped.graphs && (
        <Section title="Graph replays" id="graph-replays">
          <p data-testid="graphs-note">{shaped.graphs.text}</p>
          <div className="muted">
            {formatCount(shaped.graphs.replays)} replay{shaped.graphs.replays === 1 ? "" : "s"} · {shaped.graphs.replayedShare.toFixed(1)} % of device time ·
            attributed to operators {formatDuration(shaped.graphs.attributed)} · on graph replay rows {formatDuration(shaped.graphs.unattributed)}
          </div>
          {shaped.graphs.captures.length > 0 && (
            <ul data-testid="graph-captures">
              {shaped.graphs.captures.map((c, i) => (
                <li key={i}>
                  {c.file}
                  {c.batchSize !== null && ` (batch size ${c.batchSize}${c.mode ? `, ${c.mode}` : ""})`}
                  {c.used ? (
                    <>
                      : {formatCount(c.matched)} replay
                      {c.matched === 1 ? "" : "s"} matched, {formatCount(c.leftovers)} captured launch{c.leftovers === 1 ? "" : "es"} never replayed
                    </>
                  ) : (
                    <span className="muted">: recorded on rank {c.rank}, not this trace's rank: not used</span>
                  )}
                </li>
              ))}
            </ul>
          )}
          {shaped.graphs.unmatched.length > 0 && (
            <details>
              <summary>Not merged ({shaped.graphs.unmatched.length})</summary>
              <ul>
                {shaped.graphs.unmatched.map((u, i) => (
                  <li key={i}>{u}</li>
                ))}
              </ul>
            </details>
          )}
        </Section>
      )}

      <Section title="Performance recommendations" id="recommendations">
        {shaped.recommendations.length === 0 ? (
          <div className="muted">No recommendation: none of the rules found a problem in this profile.</div>
        ) : (
          <ul className="recs">
            {shaped.recommendations.map((r, i) => (
              <li key={i} data-testid="recommendation" data-id={r.id}>
                {r.title && <strong>{r.title}. </strong>}
                {r.text}{" "}
                {ANALYSIS_SECTION[r.id] && (
                  <button type="button" className="link-button" data-testid="recommendation-analysis" onClick={() => p.setState({ view: "Analysis", asec: ANALYSIS_SECTION[r.id], sel: null }, true)}>
                    See the analysis ▸
                  </button>
                )}
                {r.evidence !== null && (
                  <details className="evidence">
                    <summary>Evidence</summary>
                    <table className="evidence-table" data-testid="evidence">
                      <tbody>
                        {evidenceRows(r.evidence, EVIDENCE_FORMAT, shaped.deviceType === "CPU" ? "GPU" : shaped.deviceType).map((e, j, rows) => (
                          <tr key={j}>
                            <th scope="row">{e.key}</th>
                            <td>
                              {e.value}
                              {e.find && rows[j - 1]?.find !== e.find && (
                                <button
                                  type="button"
                                  className="tl-show"
                                  data-testid="evidence-show-in-timeline"
                                  title={`Show the longest ${e.find.slice(e.find.indexOf(":") + 1)} in the timeline (Trace view)`}
                                  aria-label="Show in the timeline"
                                  onClick={() => p.setState({ view: "Trace", find: e.find, sel: null, t0: null, t1: null }, true)}
                                />
                              )}
                            </td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
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
