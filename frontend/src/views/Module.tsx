// Module view: time per nn.Module (or per Lightning hook) as a tree table and an icicle flame graph,
// for one step or all; the operators inside the selected module; its longest event in the timeline.

import { type ReactNode, useEffect, useMemo, useRef, useState } from "react";
import { Empty, ErrorBox, Loading, Section, Select } from "../components/common";
import { DataTable } from "../components/DataTable";
import { tableMaxHeight, useWindowHeight } from "../components/fillHeight";
import { headerTitle, help } from "../lib/columnHelp";
import { csvHeader, downloadText, fileSlug, toCsv } from "../lib/csv";
import { type ValueKind, formatCount, formatDuration, formatPercent, formatValue } from "../lib/format";
import { useApi } from "../lib/useApi";
import {
  HOOK_PARTS,
  type HookPart,
  type HookStep,
  type Bar,
  type Metric,
  type ModuleNode,
  type ModulesAnswer,
  type TreeNode,
  allParents,
  buildTree,
  icicle,
  metricValue,
  pathTo,
  readModules,
  sortTree,
  visibleRows,
} from "./moduleTree";
import { operatorColumns, readRows } from "./Operator";
import { type ViewProps, profileParams } from "./types";

const ROW_PX = 22;

/** A colour per class name, the same wherever the class appears (hues spread by the golden angle;
 * light enough for the dark label text in both themes). */
export function classColor(cls: string): string {
  let h = 0;
  for (let i = 0; i < cls.length; i++) h = (h * 31 + cls.charCodeAt(i)) >>> 0;
  return `hsl(${Math.round((h % 97) * 137.508) % 360}, 55%, 68%)`;
}

/** Backward nodes: hatched bars and italic names (inline: the styles sheet is shared with other views). */
const BACKWARD_HATCH = "repeating-linear-gradient(135deg, rgba(0, 0, 0, 0.14) 0 3px, transparent 3px 7px)";
const BACKWARD_TITLE = "Backward functions of the ops this module ran forward (fwdbwd flows), its submodules' included";

function threadLabel(a: ModulesAnswer, thread: string): string {
  const name = a.threads[thread] ?? thread;
  return thread === a.main_thread ? `${name} (main)` : name;
}

/** A column of the tree table: its header, how its cells read a node, what it means (hover). */
interface TreeColumn {
  id: string;
  header: string;
  kind: ValueKind;
  value: (n: ModuleNode) => number | string;
  tooltip?: string;
}

export function treeColumns(a: ModulesAnswer, multiThread: boolean): TreeColumn[] {
  const hooks = a.tree === "hooks";
  const cols: TreeColumn[] = [
    { id: "name", header: hooks ? "Hook" : "Module", kind: "text", value: (n) => n.name },
    { id: "cls", header: hooks ? "Kind" : "Class", kind: "text", value: (n) => n.cls },
  ];
  if (multiThread) cols.push({ id: "thread", header: "Thread", kind: "text", value: (n) => threadLabel(a, n.thread) });
  cols.push(
    { id: "occurrences", header: "Occurrences", kind: "count", value: (n) => n.occurrences, tooltip: help("module_occurrences") },
    { id: "host_total", header: "Host total", kind: "duration", value: (n) => n.host_total_us, tooltip: help("module_host_total") },
    { id: "host_self", header: "Host self", kind: "duration", value: (n) => n.host_self_us, tooltip: help("module_host_self") },
  );
  if (a.has_device)
    cols.push(
      { id: "device_total", header: "Device total", kind: "duration", value: (n) => n.device_total_us, tooltip: help("module_device_total") },
      { id: "device_self", header: "Device self", kind: "duration", value: (n) => n.device_self_us, tooltip: help("module_device_self") },
    );
  cols.push({ id: "step_share", header: "Share of step", kind: "percent", value: (n) => n.step_share_pct, tooltip: help("step_share") });
  return cols;
}

type Sort = { id: string; desc: boolean } | null;

/** The next order on a header click: numbers largest first, text A→Z first, the third click back to
 * the tree's own order. */
function nextSort(cur: Sort, col: TreeColumn): Sort {
  const first = col.kind !== "text";
  if (!cur || cur.id !== col.id) return { id: col.id, desc: first };
  return cur.desc === first ? { id: col.id, desc: !first } : null;
}

/** The tree table's header: a click on a column sorts by it (see nextSort). */
function TreeHead({ columns, sort, setSort }: { columns: TreeColumn[]; sort: Sort; setSort: (f: (s: Sort) => Sort) => void }): ReactNode {
  return (
    <thead>
      <tr>
        {columns.map((c) => {
          const dir = sort?.id === c.id ? (sort.desc ? "descending" : "ascending") : "none";
          const click = () => setSort((cur) => nextSort(cur, c));
          return (
            <th
              key={c.id}
              className={`${c.id === "name" ? "mt-name" : ""}${c.kind !== "text" ? " num" : ""}${c.tooltip ? " dt-help" : ""}`}
              data-col={c.id}
              aria-sort={dir}
              title={`${headerTitle(c.tooltip)}${dir !== "none" ? "; a third click restores the tree order" : ""}`}
              tabIndex={0}
              onClick={click}
              onKeyDown={(e) => {
                if (e.key === "Enter" || e.key === " ") {
                  e.preventDefault();
                  click();
                }
              }}
            >
              {c.header}
              <span className="dt-sort">{dir === "ascending" ? " ▲" : dir === "descending" ? " ▼" : ""}</span>
            </th>
          );
        })}
      </tr>
    </thead>
  );
}

function ModuleTable({
  a,
  roots,
  selected,
  onSelect,
  csvName,
}: {
  a: ModulesAnswer;
  roots: TreeNode[];
  selected: number | null;
  onSelect: (id: number) => void;
  csvName: string;
}): ReactNode {
  const [open, setOpen] = useState<Set<number>>(() => new Set(a.nodes.filter((n) => n.depth < 1).map((n) => n.id)));
  const [query, setQuery] = useState("");
  const [sort, setSort] = useState<Sort>(null);
  const multiThread = new Set(a.nodes.map((n) => n.thread)).size > 1;
  const columns = useMemo(() => treeColumns(a, multiThread), [a, multiThread]);
  const sortCol = sort ? columns.find((c) => c.id === sort.id) : undefined;
  const sorted = useMemo(() => sortTree(roots, sortCol && sort ? { key: sortCol.value, desc: sort.desc } : null), [roots, sortCol, sort]);
  const rows = useMemo(() => visibleRows(sorted, open, query), [sorted, open, query]);
  const toolbarRef = useRef<HTMLDivElement>(null);
  const windowPx = useWindowHeight();
  const toggle = (id: number) =>
    setOpen((s) => {
      const next = new Set(s);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  const what = a.tree === "hooks" ? "hook" : "module";
  const path = (id: number) =>
    pathTo(a.nodes, id)
      .map((n) => n.name)
      .join(" › ");
  const exportCsv = () => {
    const [name, ...rest] = columns;
    const header = [name?.header ?? "", "Path", ...rest.map((c) => csvHeader(c.header, c.kind))];
    downloadText(`${csvName}.csv`, toCsv(header, rows.map((r) => [r.node.name, path(r.node.id), ...rest.map((c) => c.value(r.node))])));
  };
  return (
    <div className="mt" data-testid="module-table">
      <div className="dt-toolbar" ref={toolbarRef}>
        <input
          type="search"
          className="dt-search"
          placeholder={`Search ${what} names and classes`}
          value={query}
          onChange={(e) => setQuery(e.target.value)}
          data-testid="module-search"
          aria-label={`Search ${what}s`}
        />
        <button type="button" className="btn" onClick={() => setOpen(new Set(allParents(roots)))} data-testid="expand-all">
          Expand all
        </button>
        <button type="button" className="btn" onClick={() => setOpen(new Set())} data-testid="collapse-all">
          Collapse all
        </button>
        <span className="dt-count">
          {rows.length} of {a.nodes.length} {what}s shown
        </span>
        <button type="button" className="btn" onClick={exportCsv} title="Download the rows shown, in the order shown, as CSV">
          Export CSV
        </button>
      </div>
      <div className="mt-scroll" style={{ maxHeight: tableMaxHeight(windowPx, toolbarRef.current) }}>
        <table className="mt-table">
          <TreeHead columns={columns} sort={sort} setSort={setSort} />
          <tbody>
            {rows.map((r) => (
              <tr
                key={r.node.id}
                className={`${r.node.id === selected ? "mt-selected" : ""} ${r.match ? "" : "mt-context"}`}
                onClick={() => onSelect(r.node.id)}
                data-testid="module-row"
                data-name={r.node.name}
                data-depth={r.depth}
                data-kind={r.node.kind}
                title={r.node.kind === "backward" ? BACKWARD_TITLE : undefined}
              >
                <td className="mt-name" data-col="name" style={{ paddingLeft: 6 + r.depth * 16 }}>
                  {r.hasChildren ? (
                    <button
                      type="button"
                      className="dt-toggle"
                      aria-expanded={r.open}
                      aria-label={`${r.open ? "Collapse" : "Expand"} ${r.node.name}`}
                      data-testid="module-toggle"
                      onClick={(e) => {
                        e.stopPropagation();
                        toggle(r.node.id);
                      }}
                    >
                      {r.open ? "▾" : "▸"}
                    </button>
                  ) : (
                    <span className="mt-leaf" />
                  )}
                  <span title={path(r.node.id)} style={r.node.kind === "backward" ? { fontStyle: "italic" } : undefined}>
                    {r.node.name}
                  </span>
                </td>
                {columns.slice(1).map((c) => {
                  const v = c.value(r.node);
                  return c.kind === "text" ? (
                    <td key={c.id} data-col={c.id}>
                      {v}
                    </td>
                  ) : (
                    <td key={c.id} className="num" data-col={c.id} data-value={v}>
                      {formatValue(c.kind, v)}
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
        {rows.length === 0 && <div className="dt-empty">No {what} matches “{query}”.</div>}
      </div>
    </div>
  );
}

function tooltipText(n: ModuleNode, withDevice: boolean): string[] {
  const lines = [`${n.name}${n.cls ? ` (${n.cls})` : ""}`, `${formatCount(n.occurrences)} occurrence${n.occurrences === 1 ? "" : "s"}`];
  lines.push(`host total ${formatDuration(n.host_total_us)}, self ${formatDuration(n.host_self_us)}`);
  if (withDevice) lines.push(`device total ${formatDuration(n.device_total_us)}, self ${formatDuration(n.device_self_us)}`);
  lines.push(`${formatPercent(n.step_share_pct)} of the step`);
  if (n.kind === "backward") lines.push(BACKWARD_TITLE);
  return lines;
}

function FlameGraph({
  a,
  roots,
  metric,
  zoom,
  onZoom,
}: {
  a: ModulesAnswer;
  roots: TreeNode[];
  metric: Metric;
  zoom: number | null;
  onZoom: (id: number | null) => void;
}): ReactNode {
  const bars = useMemo(() => icicle(roots, metric, zoom, 0.001), [roots, metric, zoom]);
  const [tip, setTip] = useState<{ bar: Bar; x: number; y: number; flip: boolean } | null>(null);
  const rowsUsed = bars.reduce((m, b) => Math.max(m, b.row + 1), 0);
  // a bar zooms in; the zoomed bar zooms out to its parent; an ancestor above it zooms out to itself
  const zoomTo = (b: Bar) => onZoom(b.ancestor || b.node.id !== zoom ? b.node.id : b.node.parent >= 0 ? b.node.parent : null);
  if (!bars.length)
    return <div className="muted">No {metric} time in the selected step{a.step === "all" ? "s" : ""}.</div>;
  return (
    <div
      className="flame"
      style={{ height: rowsUsed * ROW_PX + 2 }}
      data-testid="flame-graph"
      data-zoom={zoom ?? ""}
      onMouseLeave={() => setTip(null)}
    >
      {bars.map((b) => (
        <div
          key={`${b.node.id}-${b.ancestor ? "a" : "n"}`}
          className={`flame-bar${b.ancestor ? " flame-ancestor" : ""}`}
          style={{
            left: `${b.x * 100}%`,
            width: `${b.w * 100}%`,
            top: b.row * ROW_PX,
            backgroundColor: classColor(b.node.cls || b.node.name),
            backgroundImage: b.node.kind === "backward" ? BACKWARD_HATCH : undefined,
          }}
          data-testid="flame-bar"
          data-id={b.node.id}
          data-name={b.node.name}
          data-kind={b.node.kind}
          data-value={metricValue(b.node, metric)}
          role="button"
          tabIndex={0}
          aria-label={`${b.node.name}: ${formatDuration(metricValue(b.node, metric))}; zoom`}
          onClick={() => zoomTo(b)}
          onKeyDown={(e) => {
            if (e.key === "Enter" || e.key === " ") {
              e.preventDefault();
              zoomTo(b);
            }
          }}
          onMouseMove={(e) => {
            const box = e.currentTarget.parentElement?.getBoundingClientRect();
            const x = e.clientX - (box?.left ?? 0);
            setTip({ bar: b, x, y: e.clientY - (box?.top ?? 0), flip: x > (box?.width ?? 0) * 0.6 });
          }}
        >
          <span className="flame-label">{b.node.name}</span>
        </div>
      ))}
      {tip && (
        <div className="flame-tip" role="tooltip" data-testid="flame-tip" style={tip.flip ? { right: `calc(100% - ${tip.x - 12}px)`, top: tip.y + 14 } : { left: tip.x + 12, top: tip.y + 14 }}>
          {tooltipText(tip.bar.node, a.has_device).map((l, i) => (
            <div key={i} className={i === 0 ? "flame-tip-title" : ""}>
              {l}
            </div>
          ))}
        </div>
      )}
    </div>
  );
}

const PART_LABELS: Record<HookPart, string> = {
  data_fetching: "Data fetching",
  step: "Step hook",
  backward: "Backward",
  optimizer: "Optimizer",
  callbacks: "Callbacks",
  other_hooks: "Other hooks",
  outside_hooks: "Outside hooks",
};
const PART_COLORS: Record<HookPart, string> = {
  data_fetching: "#edc948",
  step: "#4e79a7",
  backward: "#e15759",
  optimizer: "#59a14f",
  callbacks: "#b07aa1",
  other_hooks: "#76b7b2",
  outside_hooks: "#9e9e9e",
};

function HookSteps({ steps }: { steps: HookStep[] }): ReactNode {
  const used = HOOK_PARTS.filter((k) => steps.some((s) => s.parts[k] > 0));
  return (
    <div className="mt-scroll" data-testid="hook-steps">
      <table className="mt-table">
        <thead>
          <tr>
            <th>Step</th>
            <th className="num">Duration</th>
            <th className="hs-barcol">Share</th>
            {used.map((k) => (
              <th key={k} className="num">
                <span className="hs-swatch" style={{ background: PART_COLORS[k] }} />
                {PART_LABELS[k]}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {steps.map((s) => (
            <tr key={s.number} data-testid="hook-step" data-name={s.name}>
              <td>{s.name}</td>
              <td className="num" data-value={s.duration_us}>{formatDuration(s.duration_us)}</td>
              <td className="hs-barcol">
                <div className="hs-bar">
                  {used.map((k) =>
                    s.parts[k] > 0 ? (
                      <span
                        key={k}
                        style={{ width: `${(100 * s.parts[k]) / (s.duration_us || 1)}%`, background: PART_COLORS[k] }}
                        title={`${PART_LABELS[k]}: ${formatDuration(s.parts[k])} (${formatPercent((100 * s.parts[k]) / (s.duration_us || 1))})`}
                      />
                    ) : null,
                  )}
                </div>
              </td>
              {used.map((k) => (
                <td key={k} className="num" data-part={k} data-value={s.parts[k]}>
                  {formatDuration(s.parts[k])}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Inside({ p, a, node }: { p: ViewProps; a: ModulesAnswer; node: ModuleNode }): ReactNode {
  const params = { ...profileParams(p), tree: a.tree, step: String(a.step), node: String(node.id) };
  const { data, error } = useApi<unknown>(p.api, "modules/operators", params);
  const rows = useMemo(() => (data === undefined ? null : readRows(data)), [data]);
  const setState = p.setState;
  const columns = useMemo(
    () => operatorColumns(a.has_device, false, (r) => setState({ view: "Trace", find: `op:${r.name}`, sel: null, t0: null, t1: null }, true)),
    [a.has_device, setState],
  );
  if (error) return <ErrorBox error={error} what="the operators inside this module" />;
  if (!rows) return <Loading what="operators" />;
  if (!rows.length) return <div className="muted">No operator starts inside {node.name} in the selected step(s).</div>;
  return (
    <DataTable
      rows={rows}
      columns={columns}
      csvName={fileSlug("module-operators", p.run, p.worker, p.span, node.name)}
      initialSort={{ id: a.has_device ? "device_total" : "host_total", desc: true }}
      searchPlaceholder="Search operator names"
      testId="module-ops"
    />
  );
}

export function ModuleView(p: ViewProps): ReactNode {
  const base = profileParams(p);
  const params: Record<string, string> = { ...base, step: p.state.mstep ?? "all" };
  if (p.state.mtree) params.tree = p.state.mtree;
  const { data, error } = useApi<unknown>(p.api, "modules", params);
  const a = useMemo(() => (data === undefined ? null : readModules(data)), [data]);
  const roots = useMemo(() => (a ? buildTree(a.nodes) : []), [a]);
  const metric: Metric = p.state.mmetric === "device" && a?.has_device ? "device" : "host";
  const selected = p.state.mnode !== undefined && a?.nodes.some((n) => n.id === Number(p.state.mnode)) ? Number(p.state.mnode) : null;
  const zoom = p.state.mzoom !== undefined && a?.nodes.some((n) => n.id === Number(p.state.mzoom)) ? Number(p.state.mzoom) : null;

  // a tree or step kept in the address from another profile that lacks it: fall back to the defaults
  const stale = error !== undefined && (p.state.mtree !== undefined || (p.state.mstep ?? "all") !== "all");
  const setState = p.setState;
  useEffect(() => {
    if (stale) setState({ mtree: null, mstep: null, mnode: null, mzoom: null });
  }, [stale, setState]);

  if (stale) return <Loading what="modules" />;
  if (error)
    return (
      <Empty title="No module information in this profile">
        {error.message}. Record with <code>torch.profiler.profile(with_modules=True)</code> (or with_stack=True), or
        profile a PyTorch Lightning Trainer with <code>profiler="pytorch"</code>.
      </Empty>
    );
  if (!a) return <Loading what="modules" />;
  const node = selected === null ? null : (a.nodes.find((n) => n.id === selected) ?? null);
  const what = a.tree === "hooks" ? "Lightning hooks" : "Modules";
  const stepOptions = [{ value: "all", label: "All steps" }, ...a.steps.map((s) => ({ value: String(s.number), label: s.name }))];
  const treeOptions = [
    ...(a.has_modules ? [{ value: "modules", label: "Modules" }] : []),
    ...(a.has_hooks ? [{ value: "hooks", label: "Lightning hooks" }] : []),
  ];
  const select = (id: number) => p.setState({ mnode: String(id) });
  const backwardNote = a.nodes.some((n) => n.kind === "backward")
    ? " <module>.backward (italic, hatched): the backward functions of the ops the module ran forward, its submodules' included."
    : "";
  const sourceNote =
    a.source === "lightning"
      ? a.tree === "hooks"
        ? "Ranges of Lightning's PyTorchProfiler ([pl][profile] actions). Lightning ends a ProfilerStep when training_step returns, so a batch's backward and optimizer hooks fall into the next step."
        : `Ranges of Lightning's record_module_names ([pl][module] events).${backwardNote}`
      : `Ranges of the trace's nn.Module events (with_modules / with_stack).${backwardNote}`;

  return (
    <div className="module" data-testid="module-view">
      <Section
        title={what}
        id="module-tree"
        actions={
          <>
            {treeOptions.length > 1 && (
              <Select label="Tree" value={a.tree} options={treeOptions} onChange={(v) => p.setState({ mtree: v, mnode: null, mzoom: null }, true)} testId="select-tree" />
            )}
            <Select label="Step" value={String(a.step)} options={stepOptions} onChange={(v) => p.setState({ mstep: v, mzoom: null }, true)} testId="select-step" />
          </>
        }
      >
        <div className="muted mt-note">{sourceNote}</div>
        <ModuleTable
          key={`${a.tree}`}
          a={a}
          roots={roots}
          selected={selected}
          onSelect={select}
          csvName={fileSlug("modules", p.run, p.worker, p.span, a.tree, a.step === "all" ? "all-steps" : `step${a.step}`)}
        />
      </Section>
      {a.tree === "hooks" && a.hook_steps.length > 0 && (
        <Section title="Lightning hooks per step" id="module-hook-steps">
          <div className="muted mt-note">
            Each instant of a step goes to the first part whose hooks cover it, in the column order (callbacks: [Callback] and other on_* hooks); an
            optimizer_step holds the closure that runs training_step and backward, so its own column is the rest.
          </div>
          <HookSteps steps={a.hook_steps} />
        </Section>
      )}
      <Section
        title="Flame graph"
        id="module-flame"
        actions={
          <>
            {zoom !== null && (
              <button type="button" className="btn" onClick={() => p.setState({ mzoom: null })} data-testid="flame-reset">
                Reset zoom
              </button>
            )}
            {a.has_device && (
              <Select
                label="Time"
                value={metric}
                options={[
                  { value: "host", label: "Host" },
                  { value: "device", label: "Device" },
                ]}
                onChange={(v) => p.setState({ mmetric: v })}
                testId="select-metric"
              />
            )}
          </>
        }
      >
        <div className="muted mt-note">Width = {metric} total time{zoom !== null ? "; click a bar above the zoomed one to zoom out" : "; click a bar to zoom into it"}.</div>
        <FlameGraph
          a={a}
          roots={roots}
          metric={metric}
          zoom={zoom}
          onZoom={(id) => p.setState(id === null ? { mzoom: null } : { mzoom: String(id), mnode: String(id) })}
        />
      </Section>
      {node && (
        <Section
          title={`Operators inside ${node.name}`}
          id="module-inside"
          actions={
            node.event ? (
              <button
                type="button"
                className="btn"
                data-testid="module-timeline"
                title="Open the Trace view on the longest event of this name"
                onClick={() => p.setState({ view: "Trace", find: `any:${node.event}`, sel: null, t0: null, t1: null }, true)}
              >
                Show in timeline
              </button>
            ) : undefined
          }
        >
          <div className="muted mt-note">
            {pathTo(a.nodes, node.id)
              .map((n) => n.name)
              .join(" › ")}
            {" · "}
            {threadLabel(a, node.thread)} · longest instance {formatDuration(node.longest_us)}
          </div>
          <Inside p={p} a={a} node={node} />
        </Section>
      )}
    </div>
  );
}
