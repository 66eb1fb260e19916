// Diff view: the profile chosen at the top (the experiment) against a baseline picked here. Both live
// in the address (run/worker/span and base_run/base_worker/base_span), so a comparison can be linked.
import { type ReactNode, useEffect, useMemo, useState } from "react";
import type { Api } from "../api/client";
import { type Change, type DiffAnswer, type KernelDiff, type NoisyChange, type OpFields, type OperatorDiff, type Spread, waterfallBars } from "../api/diff";
import { type RunsAnswer, fetchAllRuns, normalizeNames } from "../api/runs";
import { Chart, type ChartOption, safeTooltip } from "../components/Chart";
import { Empty, ErrorBox, Loading, Section, Select } from "../components/common";
import { type Column, DataTable } from "../components/DataTable";
import { StackFrames } from "../components/StackFrames";
import { fileSlug } from "../lib/csv";
import { formatCount, formatDuration } from "../lib/format";
import { useApi } from "../lib/useApi";
import { defaultBaseline } from "./diffBaseline";
import { readStacks } from "./Operator";
import { type ViewProps, profileParams } from "./types";

type ProfileRef = { run: string; worker: string; span?: string };

const pct = (rel: number | null | undefined): number | null => (rel === null || rel === undefined ? null : 100 * rel);

/** The baseline's run/worker/span: from the address, else a sensible other profile. */
function useBaseline(p: ViewProps): { run: string; worker: string; span: string | null; runs: string[]; workers: string[]; spans: string[] } | null {
  // every page of the runs answer (docs/api.md "runs")
  const [runsAnswer, setRunsAnswer] = useState<RunsAnswer | undefined>(undefined);
  useEffect(() => {
    let live = true;
    fetchAllRuns((params) => p.api.get<unknown>("runs", params)).then(
      (a) => live && setRunsAnswer(a),
      () => live && setRunsAnswer(undefined),
    );
    return () => {
      live = false;
    };
  }, [p.api]);
  // runs whose every file failed have nothing to compare
  const runs = useMemo(
    () => (runsAnswer === undefined ? [] : runsAnswer.runs.filter((r) => r.state !== "error").map((r) => r.name)),
    [runsAnswer],
  );
  // the same run's other span, else the most similar run of the same device kind (diffBaseline.ts)
  const guess = useMemo(
    () =>
      runsAnswer === undefined
        ? null
        : defaultBaseline(
            { run: p.run, worker: p.worker, span: p.span },
            runsAnswer.runs.filter((r) => r.state !== "error").map((r) => ({ ...r, files: r.files.filter((f) => f.status !== "error") })),
          ),
    [runsAnswer, p.run, p.worker, p.span],
  );
  const run = p.state.base_run && runs.includes(p.state.base_run) ? p.state.base_run : runs.length ? (guess?.run ?? p.run) : null;
  const workersAnswer = useApi<unknown>(p.api, run === null ? null : "workers", { run: run ?? "" });
  const workers = useMemo(() => (workersAnswer.data === undefined ? [] : normalizeNames(workersAnswer.data)), [workersAnswer.data]);
  const guessWorker = guess && guess.run === run && workers.includes(guess.worker) ? guess.worker : null;
  const worker = workers.includes(p.state.base_worker ?? "")
    ? (p.state.base_worker as string)
    : (guessWorker ?? (workers.includes(p.worker) ? p.worker : (workers[0] ?? null)));
  const spansAnswer = useApi<unknown>(p.api, run === null || worker === null ? null : "spans", { run: run ?? "", worker: worker ?? "" });
  const spans = useMemo(() => (spansAnswer.data === undefined ? null : normalizeNames(spansAnswer.data)), [spansAnswer.data]);
  const sameProfile = run === p.run && worker === p.worker;
  const guessSpan = guess && guess.run === run && guess.worker === worker && spans?.includes(guess.span ?? "") ? guess.span : null;
  const fallbackSpan = spans ? (guessSpan ?? (sameProfile ? (spans.find((s) => s !== p.span) ?? spans[0]) : spans.includes(p.span ?? "") ? p.span : spans[0])) : undefined;
  const span = spans === null ? undefined : spans.includes(p.state.base_span ?? "") ? (p.state.base_span as string) : (fallbackSpan ?? null);
  const { setState } = p;
  useEffect(() => {
    if (run === null || worker === null || span === undefined) return;
    const patch: Record<string, string | null> = {};
    if (p.state.base_run !== run) patch.base_run = run;
    if (p.state.base_worker !== worker) patch.base_worker = worker;
    if ((p.state.base_span ?? null) !== span) patch.base_span = span;
    if (Object.keys(patch).length) setState(patch);
  }, [run, worker, span, p.state.base_run, p.state.base_worker, p.state.base_span, setState]);
  if (run === null || worker === null || span === undefined) return null;
  return { run, worker, span, runs, workers, spans: spans ?? [] };
}

export function DiffView(p: ViewProps): ReactNode {
  const base = useBaseline(p);
  const byShape = p.state.dgroup === "name_input_shape";
  const params = base
    ? { ...profileParams(p), base_run: base.run, base_worker: base.worker, base_span: base.span ?? undefined, group_by: byShape ? "name_input_shape" : "name" }
    : {};
  const answer = useApi<DiffAnswer>(p.api, base ? "diff" : null, params);
  const picker = base && (
    <div className="diff-picker" data-testid="diff-picker">
      <span className="muted">Baseline:</span>
      <Select label="Run" testId="base-run" value={base.run} options={base.runs.map((r) => ({ value: r }))} onChange={(v) => p.setState({ base_run: v, base_worker: null, base_span: null }, true)} />
      <Select label="Worker" testId="base-worker" value={base.worker} options={base.workers.map((w) => ({ value: w }))} onChange={(v) => p.setState({ base_worker: v, base_span: null }, true)} />
      {base.spans.length > 1 && base.span !== null && (
        <Select label="Span" testId="base-span" value={base.span} options={base.spans.map((s) => ({ value: s }))} onChange={(v) => p.setState({ base_span: v }, true)} />
      )}
      <span className="muted">Experiment: the run, worker and span chosen at the top.</span>
    </div>
  );
  let body: ReactNode;
  if (!base) body = <Loading what="the profiles to compare" />;
  else if (answer.error) body = <ErrorBox error={answer.error} what="the comparison" />;
  else if (!answer.data) body = <Loading what="the comparison" />;
  else {
    const exp: ProfileRef = { run: p.run, worker: p.worker, ...(p.span !== null ? { span: p.span } : {}) };
    const baseRef: ProfileRef = { run: base.run, worker: base.worker, ...(base.span !== null ? { span: base.span } : {}) };
    const showInTimeline = (side: ProfileRef, name: string, kind: "op" | "kernel" = "op") =>
      p.setState({ view: "Trace", run: side.run, worker: side.worker, span: side.span ?? null, find: `${kind}:${name}`, sel: null, t0: null, t1: null }, true);
    body = (
      <DiffBody
        api={p.api}
        d={answer.data}
        byShape={byShape}
        setGroup={(g) => p.setState({ dgroup: g === "name" ? null : g }, true)}
        drill={{ base: baseRef, exp, show: showInTimeline }}
        focus={p.state.dfocus ?? null}
        setFocus={(f) => p.setState({ dfocus: f }, true)}
      />
    );
  }
  return (
    <div className="diff">
      {picker}
      {body}
    </div>
  );
}

function sideLabel(s: DiffAnswer["baseline"]): string {
  return `${s.run} / ${s.worker} / span ${s.span} (${s.device_type}, ${s.steps} steps)`;
}

function spreadText(s: Spread | null | undefined): string {
  if (!s || s.count === 0) return "–";
  return `${formatDuration(s.min)} / ${formatDuration(s.median)} / ${formatDuration(s.max)}`;
}

interface StepRow {
  figure: string;
  c: NoisyChange;
}

const changeColumns = <R,>(pick: (r: R) => Change, kind: "duration" | "percent" | "bytes" | "count" | "bandwidth", what = ""): Column<R>[] => [
  { id: `${what}baseline`, header: `${what}Baseline`, kind, value: (r) => pick(r).baseline },
  { id: `${what}experiment`, header: `${what}Experiment`, kind, value: (r) => pick(r).experiment },
  { id: `${what}delta`, header: `${what}Change`, kind, value: (r) => pick(r).delta },
  { id: `${what}rel`, header: `${what}Change %`, kind: "percent", value: (r) => pct(pick(r).rel) },
];

interface Drill {
  base: ProfileRef;
  exp: ProfileRef;
  show: (side: ProfileRef, name: string, kind?: "op" | "kernel") => void;
}

/** A kernel row's two sides: its name in each profile (a renamed kernel has two) and a link to its
 * longest launch in that profile's timeline. */
function KernelSides({ row, drill }: { row: KernelDiff; drill: Drill }): ReactNode {
  const sides = [
    { label: "Baseline", side: drill.base, name: row.baseline_name ?? row.name, present: row.baseline !== null },
    { label: "Experiment", side: drill.exp, name: row.name, present: row.experiment !== null },
  ];
  return (
    <div className="grid2">
      {sides.map((s) => (
        <div className="diff-stack" key={s.label} data-testid={`diff-kernel-${s.label.toLowerCase()}`}>
          <div className="stack-group-head">
            <strong>{s.label}</strong>{" "}
            {s.present && (
              <button type="button" className="btn" onClick={() => drill.show(s.side, s.name, "kernel")} title="The longest launch of this kernel in that profile's timeline">
                ▸ timeline
              </button>
            )}
          </div>
          {s.present ? <code>{s.name}</code> : <div className="muted">Not in this profile.</div>}
        </div>
      ))}
    </div>
  );
}

/** One side's call stacks of an operator (the Operator view's `operators/stack` route). */
function SideStacks({ api, side, row, byShape, label, show }: { api: Api; side: ProfileRef; row: OperatorDiff; byShape: boolean; label: string; show: () => void }): ReactNode {
  const params: Record<string, string> = { ...side, name: row.name, group_by: byShape ? "name_input_shape" : "name" };
  if (byShape && row.input_shape !== undefined) params.input_shape = row.input_shape;
  const present = label === "Baseline" ? row.baseline !== null : row.experiment !== null;
  const { data, error } = useApi<unknown>(api, present ? "operators/stack" : null, params);
  const groups = data === undefined ? null : readStacks(data);
  return (
    <div className="diff-stack" data-testid={`diff-stack-${label.toLowerCase()}`}>
      <div className="stack-group-head">
        <strong>{label}</strong>{" "}
        {present && (
          <button type="button" className="btn" onClick={show} title="The longest call of this operator in that profile's timeline">
            ▸ timeline
          </button>
        )}
      </div>
      {!present ? (
        <div className="muted">Not in this profile.</div>
      ) : error ? (
        <div className="muted">{error.message}</div>
      ) : groups === null ? (
        <Loading what="call stacks" />
      ) : groups.every((g) => g.frames.length === 0) ? (
        <div className="muted">No call stack recorded (profile with with_stack=True).</div>
      ) : (
        groups.map((g, i) => (
          <div className="stack-group" key={i}>
            <div className="muted">
              {g.calls !== null && `${formatCount(g.calls)} call${g.calls === 1 ? "" : "s"}`}
              {g.hostTotal !== null && ` · host total ${formatDuration(g.hostTotal)}`}
            </div>
            {g.frames.length ? <StackFrames frames={g.frames} /> : <div className="muted">Calls without a recorded stack.</div>}
          </div>
        ))
      )}
    </div>
  );
}

const significance = (significant: boolean | undefined, delta: number | null | undefined): string =>
  delta === null || delta === undefined ? "–" : significant ? "yes" : "within noise";

const OP_FIGURES: [keyof OpFields, string][] = [
  ["calls", "Calls"],
  ["host_self_us", "Host self"],
  ["host_total_us", "Host total"],
  ["device_self_us", "Device self"],
  ["device_total_us", "Device total"],
];

/** What a clicked waterfall bar stands for: an operator (its figures, call stacks on both sides and
 * links to its longest call in each timeline), a breakdown category (its step-level row), the rest
 * or the whole step-time change. `focus` is the bar's WaterfallBar.focus. */
function WaterfallDrill({ api, d, focus, drill, close }: { api: Api; d: DiffAnswer; focus: string; drill: Drill; close: () => void }): ReactNode {
  const gpu = d.sort_metric === "device_self_us";
  let title: string;
  let body: ReactNode;
  if (focus.startsWith("op:")) {
    const name = focus.slice(3);
    const rows = d.operators.filter((r) => r.name === name);
    // by name + input shape, the stacks are still those of every call of the name
    const first = rows[0];
    const row: OperatorDiff | undefined = first && {
      ...first,
      baseline: rows.find((r) => r.baseline)?.baseline ?? null,
      experiment: rows.find((r) => r.experiment)?.experiment ?? null,
    };
    title = `Operator ${name}`;
    body = !row ? (
      <div className="muted">This operator is not in the table.</div>
    ) : (
      <>
        {d.group_by === "name" && (
          <table className="diff-drill-figures" data-testid="diff-drill-figures">
            <thead>
              <tr>
                <th>Per step</th>
                <th>Baseline</th>
                <th>Experiment</th>
                <th>Change</th>
                <th>Noise ±</th>
                <th>Significant</th>
              </tr>
            </thead>
            <tbody>
              {OP_FIGURES.filter(([f]) => gpu || !f.startsWith("device")).map(([f, label]) => {
                const fmt = (v: number | null | undefined) => (v === null || v === undefined ? "–" : f === "calls" ? formatCount(v) : formatDuration(v));
                return (
                  <tr key={f} data-figure={f}>
                    <td>{label}</td>
                    <td>{fmt(row.baseline?.[f])}</td>
                    <td>{fmt(row.experiment?.[f])}</td>
                    <td>{fmt(row.delta[f])}</td>
                    <td>{fmt(row.noise?.[f])}</td>
                    <td>{significance(row.significant?.[f], row.delta[f])}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
        <div className="grid2">
          <SideStacks api={api} side={drill.base} row={row} byShape={false} label="Baseline" show={() => drill.show(drill.base, name)} />
          <SideStacks api={api} side={drill.exp} row={row} byShape={false} label="Experiment" show={() => drill.show(drill.exp, name)} />
        </div>
      </>
    );
  } else if (focus.startsWith("cat:")) {
    const label = focus.slice(4);
    const key = Object.keys(d.breakdown_us).find((k) => (d.labels[k] ?? k) === label);
    const c = key === undefined ? undefined : d.breakdown_us[key];
    title = `${label} (breakdown category)`;
    body = c ? (
      <div>
        {formatDuration(c.baseline)} → {formatDuration(c.experiment)} per step: change {formatDuration(c.delta)}, noise ±{formatDuration(c.noise)} ({significance(c.significant, c.delta)}).{" "}
        <span className="muted">
          {c.note ??
            `${label} time is not made of operators' ${gpu ? "device" : "host"} self time; each side's min / median / max over steps is in the table above.`}
        </span>
      </div>
    ) : (
      <div className="muted">This category is not compared.</div>
    );
  } else if (focus === "rest") {
    title = "Rest (unlisted)";
    body = (
      <div>
        {formatDuration(d.waterfall.other_us)} per step: the parts not listed (smaller operator and category changes) and what operators do not explain (device time outside any
        operator, overlap between operators). Every operator's change is in the Operators table below.
      </div>
    );
  } else {
    title = "Step time change";
    body = (
      <div>
        {formatDuration(d.steps.baseline)} → {formatDuration(d.steps.experiment)} per step: change {formatDuration(d.steps.delta)}, noise ±{formatDuration(d.steps.noise)} (
        {significance(d.steps.significant, d.steps.delta)}).
      </div>
    );
  }
  return (
    <div className="diff-drill" data-testid="diff-drill" data-focus={focus}>
      <div className="stack-group-head">
        <strong>{title}</strong>{" "}
        <button type="button" className="btn" onClick={close} aria-label="Close the details">
          ✕
        </button>
      </div>
      {body}
    </div>
  );
}

function DiffBody({
  api,
  d,
  byShape,
  setGroup,
  drill,
  focus,
  setFocus,
}: {
  api: Api;
  d: DiffAnswer;
  byShape: boolean;
  setGroup: (g: string) => void;
  drill: Drill;
  focus: string | null;
  setFocus: (f: string | null) => void;
}): ReactNode {
  const stepRows: StepRow[] = useMemo(
    () => [{ figure: "Step time", c: d.steps }, ...Object.entries(d.breakdown_us).map(([k, c]) => ({ figure: d.labels[k] ?? k, c }))],
    [d],
  );
  // the Analysis view's figures that --fail-on rules read (temporal:idle, critical_path:host, …)
  const waitRows: StepRow[] = useMemo(
    () => Object.entries(d.waits ?? {}).map(([k, c]) => ({ figure: k, c: { ...c, rel: c.baseline ? c.delta / c.baseline : null } })),
    [d],
  );
  const stepColumns: Column<StepRow>[] = [
    { id: "figure", header: "Figure", kind: "text", value: (r) => r.figure, width: "minmax(140px, 1.5fr)" },
    ...changeColumns<StepRow>((r) => r.c, "duration"),
    { id: "b_spread", header: "Baseline min / median / max", kind: "text", value: (r) => spreadText(r.c.spread?.baseline), width: "minmax(150px, 1.4fr)", searchable: false },
    { id: "e_spread", header: "Experiment min / median / max", kind: "text", value: (r) => spreadText(r.c.spread?.experiment), width: "minmax(150px, 1.4fr)", searchable: false },
    { id: "noise", header: "Noise ±", kind: "duration", value: (r) => r.c.noise, tooltip: "the larger half-range of the steps on either side" },
    {
      id: "significant",
      header: "Significant",
      kind: "text",
      value: (r) => (r.c.note ? "not compared" : r.c.significant ? "yes" : "within noise"),
      render: (r) => <span title={r.c.note ?? ""}>{r.c.note ? "not compared" : r.c.significant ? "yes" : "within noise"}</span>,
      width: "minmax(110px, 1fr)",
      searchable: false,
    },
  ];
  const pairedChart: ChartOption = useMemo(
    () => ({
      tooltip: { ...safeTooltip, trigger: "axis", valueFormatter: (v: number) => formatDuration(v) },
      legend: { data: ["Baseline", "Experiment"], top: 0 },
      grid: { left: 70, right: 20, top: 40, bottom: 40 },
      xAxis: { type: "category", data: stepRows.map((r) => r.figure) },
      yAxis: { type: "value", axisLabel: { formatter: (v: number) => formatDuration(v) } },
      series: [
        { name: "Baseline", type: "bar", data: stepRows.map((r) => r.c.baseline) },
        { name: "Experiment", type: "bar", data: stepRows.map((r) => r.c.experiment) },
      ],
    }),
    [stepRows],
  );
  const bars = useMemo(() => waterfallBars(d.waterfall), [d.waterfall]);
  const waterfallChart: ChartOption = useMemo(
    () => ({
      tooltip: {
        ...safeTooltip,
        trigger: "axis",
        formatter: (ps: { dataIndex: number }[]) => {
          const b = bars[ps[0]?.dataIndex ?? 0];
          return b ? `${b.name}: ${b.end - b.start >= 0 ? "+" : ""}${formatDuration(b.end - b.start)}` : "";
        },
      },
      grid: { left: 70, right: 20, top: 20, bottom: 110 },
      xAxis: { type: "category", data: bars.map((b) => b.name), axisLabel: { rotate: 30, width: 160, overflow: "truncate" } },
      yAxis: { type: "value", axisLabel: { formatter: (v: number) => formatDuration(v) } },
      series: [
        { type: "bar", stack: "w", stackStrategy: "all", silent: true, itemStyle: { color: "transparent" }, data: bars.map((b) => Math.min(b.start, b.end)) },
        {
          type: "bar",
          stack: "w",
          stackStrategy: "all", // a negative base and a positive height stack from the base
          data: bars.map((b) => ({
            value: Math.abs(b.end - b.start),
            itemStyle: { color: b.total ? "#5470c6" : b.end > b.start ? "#d9534f" : "#3c9d5d" },
          })),
        },
      ],
    }),
    [bars],
  );
  const gpu = d.sort_metric === "device_self_us";
  const metric = d.sort_metric;
  const opColumns: Column<OperatorDiff>[] = [
    { id: "name", header: "Operator", kind: "text", value: (r) => r.name, width: "minmax(220px, 4fr)" },
    ...(byShape ? [{ id: "shape", header: "Input shape", kind: "text" as const, value: (r: OperatorDiff) => r.input_shape ?? "", width: "minmax(140px, 2fr)" }] : []),
    { id: "status", header: "Status", kind: "text", value: (r) => r.status, width: "minmax(80px, 0.8fr)", searchable: false },
    { id: "calls_b", header: "Calls B", kind: "count", value: (r) => r.baseline?.calls ?? null },
    { id: "calls_e", header: "Calls E", kind: "count", value: (r) => r.experiment?.calls ?? null },
    ...(["host_self_us", "host_total_us", ...(gpu ? (["device_self_us", "device_total_us"] as const) : [])] as const).flatMap((f) => {
      const label = f.replace("_us", "").replace("_", " ");
      return [
        { id: `${f}_b`, header: `${label} B`, kind: "duration" as const, value: (r: OperatorDiff) => r.baseline?.[f] ?? null },
        { id: `${f}_e`, header: `${label} E`, kind: "duration" as const, value: (r: OperatorDiff) => r.experiment?.[f] ?? null },
        { id: `${f}_d`, header: `Δ ${label}`, kind: "duration" as const, value: (r: OperatorDiff) => r.delta[f] },
      ];
    }),
    { id: "rel", header: `Δ % ${metric.replace("_us", "").replace("_", " ")}`, kind: "percent", value: (r) => pct(r.rel[metric]) },
    { id: "abs", header: "|Δ|", kind: "duration", value: (r) => Math.abs(r.delta[metric] ?? 0), tooltip: `the sort key: |Δ ${metric}|` },
    { id: "noise", header: "Noise ±", kind: "duration", value: (r) => r.noise?.[metric] ?? null, tooltip: `the larger half-range over steps of ${metric.replace("_us", "").replace("_", " ")} on either side` },
    {
      id: "significant",
      header: "Significant",
      kind: "text",
      value: (r) => significance(r.significant?.[metric], r.delta[metric]),
      width: "minmax(100px, 1fr)",
      searchable: false,
    },
  ];
  const kernelColumns: Column<KernelDiff>[] = [
    {
      id: "name",
      header: "Kernel",
      kind: "text",
      value: (r) => (r.baseline_name ? `${r.name} ← ${r.baseline_name}` : r.name),
      width: "minmax(260px, 5fr)",
    },
    { id: "status", header: "Status", kind: "text", value: (r) => r.status, width: "minmax(80px, 0.8fr)", searchable: false },
    { id: "calls_b", header: "Calls B", kind: "count", value: (r) => r.baseline?.calls ?? null },
    { id: "calls_e", header: "Calls E", kind: "count", value: (r) => r.experiment?.calls ?? null },
    { id: "total_b", header: "Total B", kind: "duration", value: (r) => r.baseline?.total_us ?? null },
    { id: "total_e", header: "Total E", kind: "duration", value: (r) => r.experiment?.total_us ?? null },
    { id: "total_d", header: "Δ total", kind: "duration", value: (r) => r.delta.total_us },
    { id: "rel", header: "Δ % total", kind: "percent", value: (r) => pct(r.rel.total_us) },
    { id: "noise", header: "Noise ± total", kind: "duration", value: (r) => r.noise?.total_us ?? null, tooltip: "the larger half-range over steps of the total on either side" },
    { id: "significant", header: "Significant", kind: "text", value: (r) => significance(r.significant?.total_us, r.delta.total_us), width: "minmax(100px, 1fr)", searchable: false },
    { id: "mean_b", header: "Mean B", kind: "duration", value: (r) => r.baseline?.mean_us ?? null },
    { id: "mean_e", header: "Mean E", kind: "duration", value: (r) => r.experiment?.mean_us ?? null },
    { id: "occ_b", header: "Occupancy B", kind: "percent", value: (r) => r.baseline?.mean_achieved_occupancy_pct ?? null },
    { id: "occ_e", header: "Occupancy E", kind: "percent", value: (r) => r.experiment?.mean_achieved_occupancy_pct ?? null },
    { id: "bps_b", header: "Blocks/SM B", kind: "number", value: (r) => r.baseline?.mean_blocks_per_sm ?? null },
    { id: "bps_e", header: "Blocks/SM E", kind: "number", value: (r) => r.experiment?.mean_blocks_per_sm ?? null },
  ];
  // the device kind and matrix units' name of the sides (GPU / MTIA …; Tensor Cores / Matrix Cores)
  const kind = [d.experiment.device_type, d.baseline.device_type].find((t) => t && t !== "CPU") ?? "GPU";
  const units = d.experiment.matrix_units ?? d.baseline.matrix_units ?? "Matrix-unit";
  const slug = fileSlug("diff", d.baseline.run, d.baseline.worker, d.baseline.span, "vs", d.experiment.run, d.experiment.worker, d.experiment.span);
  return (
    <>
      <div className="diff-sides" data-testid="diff-sides">
        <div>
          <strong>Baseline</strong> <span data-testid="diff-baseline">{sideLabel(d.baseline)}</span>
        </div>
        <div>
          <strong>Experiment</strong> <span data-testid="diff-experiment">{sideLabel(d.experiment)}</span>
        </div>
      </div>
      {d.notes.length > 0 && (
        <ul className="warn" data-testid="diff-notes">
          {d.notes.map((n) => (
            <li key={n}>{n}</li>
          ))}
        </ul>
      )}
      <Section title="Step time and breakdown (mean per step)" id="diff-steps">
        <Chart option={pairedChart} height={300} testId="diff-steps-chart" ariaLabel="Baseline and experiment step time by category" />
        <DataTable rows={stepRows} columns={stepColumns} csvName={`${slug}-steps`} search={false} height={300} testId="diff-steps-table" />
        {waitRows.length > 0 && (
          <DataTable rows={waitRows} columns={stepColumns} csvName={`${slug}-waits`} search={false} height={Math.min(300, 48 + 28 * waitRows.length)} testId="diff-waits-table" />
        )}
        {d.gpus.length > 0 && (
          <DataTable
            rows={d.gpus.flatMap((g) =>
              (
                [
                  [`${kind} utilization`, g.utilization_pct],
                  ["Est. SM efficiency", g.sm_efficiency_pct],
                  ["Est. achieved occupancy", g.achieved_occupancy_pct],
                  [`${units} share`, g.tensor_core_pct],
                ] as const
              )
                // a figure neither trace gives (SM figures off CUDA, matrix units on MTIA) is left out
                .filter(([, c]) => c.baseline !== null || c.experiment !== null)
                .map(([figure, c]) => ({ figure: `${kind} ${g.baseline_id ?? "–"}→${g.id}: ${figure}`, c })),
            )}
            columns={[{ id: "figure", header: `${kind} figure`, kind: "text", value: (r) => r.figure, width: "minmax(220px, 2fr)" }, ...changeColumns<{ figure: string; c: Change }>((r) => r.c, "percent")]}
            csvName={`${slug}-gpus`}
            search={false}
            height={200}
            testId="diff-gpu-table"
          />
        )}
      </Section>
      <Section title="Where did the step time change" id="diff-waterfall">
        {bars.length ? (
          <>
            <Chart
              option={waterfallChart}
              height={340}
              testId="diff-waterfall-chart"
              ariaLabel="Step time change by part"
              onClick={(i) => bars[i] && setFocus(bars[i].focus === focus ? null : bars[i].focus)}
            />
            <div className="muted">
              Breakdown categories, and operators by {gpu ? "device" : "host"} self time per step in place of the {gpu ? "kernel, memcpy and memset" : "CPU Exec"} time they make up; red: slower, green: faster. The rest is what the listed parts do not explain.
              Click a bar for what it stands for (an operator's figures, call stacks and timeline links).
            </div>
            {focus && <WaterfallDrill api={api} d={d} focus={focus} drill={drill} close={() => setFocus(null)} />}
          </>
        ) : (
          <Empty title="The step time cannot be compared">See the notes above.</Empty>
        )}
      </Section>
      <Section
        title="Operators (per step)"
        id="diff-operators"
        actions={
          <Select
            label="Join by"
            testId="select-dgroup"
            value={byShape ? "name_input_shape" : "name"}
            options={[
              { value: "name", label: "Operator name" },
              { value: "name_input_shape", label: "Name + input shape" },
            ]}
            onChange={setGroup}
          />
        }
      >
        <DataTable
          rows={d.operators}
          columns={opColumns}
          csvName={`${slug}-operators`}
          initialSort={{ id: "abs", desc: true }}
          searchPlaceholder="Search operator names"
          height={480}
          testId="diff-op-table"
          expand={{
            canExpand: () => true,
            render: (r) => (
              <div className="grid2">
                <SideStacks api={api} side={drill.base} row={r} byShape={byShape} label="Baseline" show={() => drill.show(drill.base, r.name)} />
                <SideStacks api={api} side={drill.exp} row={r} byShape={byShape} label="Experiment" show={() => drill.show(drill.exp, r.name)} />
              </div>
            ),
          }}
        />
        <div className="muted">Expand a row for its call stacks on both sides and links to its longest call in each timeline.</div>
      </Section>
      {d.kernels.length > 0 && (
        <Section title="Kernels (per step)" id="diff-kernels">
          <div className="muted">Renamed: the names differ only in template arguments or numbers (docs/metrics.md, “Diff”); shown as “experiment ← baseline”.</div>
          <DataTable
            rows={d.kernels}
            columns={kernelColumns}
            csvName={`${slug}-kernels`}
            searchPlaceholder="Search kernel names"
            height={420}
            testId="diff-kernel-table"
            expand={{ canExpand: () => true, render: (r) => <KernelSides row={r} drill={drill} /> }}
          />
          <div className="muted">Expand a row for the kernel's name on each side and links to its longest launch in each timeline.</div>
        </Section>
      )}
      {d.memory.length > 0 && (
        <Section title="Memory peaks" id="diff-memory">
          <DataTable
            rows={d.memory.flatMap((m) => {
              const label = m.experiment_device ? `${m.device} → ${m.experiment_device}` : m.device;
              return [
                { figure: `${label} peak allocated`, c: m.peak_allocated_bytes },
                { figure: `${label} peak reserved`, c: m.peak_reserved_bytes },
              ];
            })}
            columns={[{ id: "figure", header: "Device", kind: "text", value: (r) => r.figure }, ...changeColumns<{ figure: string; c: Change }>((r) => r.c, "bytes")]}
            csvName={`${slug}-memory`}
            search={false}
            height={200}
            testId="diff-memory-table"
          />
        </Section>
      )}
      {d.distributed && (
        <Section title={`Distributed (rank ${d.distributed.rank.baseline ?? "?"} → ${d.distributed.rank.experiment ?? "?"})`} id="diff-distributed">
          <DataTable
            rows={Object.entries(d.distributed.overlap_us).map(([figure, c]) => ({ figure, c }))}
            columns={[{ id: "figure", header: "Per step", kind: "text", value: (r) => r.figure }, ...changeColumns<{ figure: string; c: Change }>((r) => r.c, "duration")]}
            csvName={`${slug}-overlap`}
            search={false}
            height={200}
            testId="diff-overlap-table"
          />
          <DataTable
            rows={d.distributed.collectives}
            columns={[
              { id: "collective", header: "Collective", kind: "text", value: (r) => r.collective },
              ...changeColumns<(typeof d.distributed.collectives)[number]>((r) => r.avg_latency_us, "duration", "Avg latency "),
              ...changeColumns<(typeof d.distributed.collectives)[number]>((r) => r.busbw_gbps, "bandwidth", "Bus bw "),
            ]}
            csvName={`${slug}-collectives`}
            search={false}
            height={240}
            testId="diff-collectives-table"
          />
        </Section>
      )}
    </>
  );
}
