import { type ReactNode, Suspense, useEffect, useMemo, useRef, useState } from "react";
import { type Api, pageApi } from "./api/client";
import {
  type RunInfo,
  type RunsAnswer,
  defaultWorker,
  fetchAllRuns,
  normalizeNames,
  workerEvicted,
  workerFailed,
  workerLoaded,
} from "./api/runs";
import { Empty, ErrorBox, Loading, Select } from "./components/common";
import { RunStatus } from "./components/RunStatus";
import { copyText } from "./lib/source";
import { useTheme } from "./lib/theme";
import { standaloneHref, tensorBoardPage, useUrlState } from "./lib/urlState";
import { VIEWS, preloadView, viewLabel, viewKey } from "./views/registry";

/** The worker selector's label: a worker whose files all failed, or were dropped from memory for the
 * memory budget (opening it reads them again), says so. */
function workerLabel(run: RunInfo | null | undefined, worker: string): string {
  if (run && workerFailed(run, worker)) return `${worker} (failed to load)`;
  if (run && workerEvicted(run, worker)) return `${worker} (evicted from memory)`;
  return worker;
}

const POLL_LOADING_MS = 3000;
const POLL_IDLE_MS = 15000;

function useRuns(api: Api): { answer: RunsAnswer | null; error: Error | null } {
  const [answer, setAnswer] = useState<RunsAnswer | null>(null);
  const [error, setError] = useState<Error | null>(null);
  useEffect(() => {
    let live = true;
    let timer = 0;
    const poll = async () => {
      let busy = true;
      try {
        const a = await fetchAllRuns((params) => api.get<unknown>("runs", params));
        if (!live) return;
        setAnswer(a);
        setError(null);
        busy = a.scanning || a.runs.length === 0 || a.runs.some((r) => r.loading);
      } catch (e) {
        if (live) setError(e instanceof Error ? e : new Error(String(e)));
      }
      if (live) timer = window.setTimeout(poll, busy ? POLL_LOADING_MS : POLL_IDLE_MS);
    };
    void poll();
    return () => {
      live = false;
      window.clearTimeout(timer);
    };
  }, [api]);
  return { answer, error };
}

/** Fetch a name list (views/workers/spans); refetched when deps change. */
function useNames(api: Api, path: string, params: Record<string, string> | null, version: string) {
  const [state, setState] = useState<{ key: string; names: string[] | null; error: Error | null }>({
    key: "",
    names: null,
    error: null,
  });
  const key = params ? `${api.url(path, params)}#${version}` : "";
  useEffect(() => {
    if (!params) return;
    let live = true;
    api.get<unknown>(path, params).then(
      (raw) => live && setState({ key, names: normalizeNames(raw), error: null }),
      (e: unknown) => live && setState({ key, names: null, error: e instanceof Error ? e : new Error(String(e)) }),
    );
    return () => {
      live = false;
    };
  }, [key]);
  return state.key === key ? state : { key, names: null, error: null };
}

export function App(): ReactNode {
  const api = useMemo(() => pageApi(), []);
  const theme = useTheme();
  const [state, setState, navigations] = useUrlState();
  preloadView(state.view ?? "overview"); // fetch the view's code while the run list is on its way
  const { answer, error: runsError } = useRuns(api);
  const [copied, setCopied] = useState("");

  const runs = answer?.runs ?? [];
  // A linked run that is not (yet) there: wait while the logdir is being scanned, then say so.
  const linkedRun = state.run ? (runs.find((r) => r.name === state.run) ?? null) : null;
  const waitForRun = !!state.run && !linkedRun && !!answer?.scanning;
  const run = linkedRun ?? (waitForRun ? null : (runs[0] ?? null));
  const [notice, setNotice] = useState("");
  const runVersion = run ? `${run.version}|${run.loading}|${run.errors.length}` : "";

  // A run that reloaded (new or changed files) invalidates cached answers.
  const lastVersion = useRef("");
  if (run && runVersion !== lastVersion.current) {
    if (lastVersion.current !== "") api.clearCache();
    lastVersion.current = runVersion;
  }

  const views = useNames(api, "views", run ? { run: run.name } : null, runVersion);
  const viewNames = views.names ?? [];
  const view = viewNames.find((v) => viewKey(v) === viewKey(state.view ?? "")) ?? viewNames[0] ?? null;

  const workers = useNames(api, "workers", run && view ? { run: run.name, view } : null, runVersion);
  const workerNames = workers.names ?? [];
  const worker = workerNames.find((w) => w === state.worker) ?? (run ? defaultWorker(run, workerNames) : null);

  const spans = useNames(api, "spans", run && worker ? { run: run.name, worker } : null, runVersion);
  const spanNames = spans.names ?? [];
  const span =
    spanNames.find((s) => s === state.span) ??
    (run && worker ? spanNames.find((s) => workerLoaded(run, worker, s)) : undefined) ??
    spanNames[0] ??
    null;

  // Write the effective selection back, so the address always links to what is shown.
  // A linked name that does not exist is replaced, and the notice says which and by what (only for the
  // selection the page opened with: later changes are the user's own).
  const opening = useRef(true);
  const seenNavigations = useRef(navigations);
  if (seenNavigations.current !== navigations) {
    // Back, Forward or a pasted link: a new selection the page "opens with"
    seenNavigations.current = navigations;
    opening.current = true;
  }
  useEffect(() => {
    const patch: Record<string, string | null> = {};
    const missing: string[] = [];
    if (run && state.run !== run.name) {
      if (state.run) missing.push(`run “${state.run}” does not exist; showing “${run.name}”`);
      patch.run = run.name;
    }
    if (view && state.view !== view) {
      if (state.view && views.names) missing.push(`run “${run?.name}” has no ${state.view} view; showing ${viewLabel(view)}`);
      patch.view = view;
    }
    if (worker && state.worker !== worker) {
      if (state.worker && workers.names) missing.push(`worker “${state.worker}” is not in this run${view ? ` (${viewLabel(view)} view)` : ""}; showing “${worker}”`);
      patch.worker = worker;
    }
    if (spans.names && (span ?? null) !== (state.span ?? null)) {
      if (state.span) missing.push(`span “${state.span}” does not exist; showing span “${span}”`);
      patch.span = span;
    }
    if (missing.length && opening.current) setNotice(`The link asked for what is not here: ${missing.join("; ")}.`);
    if (spans.names) opening.current = false;
    if (Object.keys(patch).length) setState(patch);
  }, [run, view, worker, span, views.names, workers.names, spans.names, state, setState]);

  const ViewComponent = view ? VIEWS[viewKey(view)] : undefined;

  let body: ReactNode;
  if (runsError && !answer) body = <ErrorBox error={runsError} what="the run list" />;
  else if (!answer) body = <Loading what="runs" />;
  else if (waitForRun) body = <Loading what={`run “${state.run}” (the log directory is still being scanned)`} />;
  else if (!run)
    body = (
      <Empty title={answer.scanning ? "Scanning the log directory…" : "No profiler runs found"}>
        {answer.scanning
          ? "Runs appear here as soon as their trace files are found."
          : `The log directory ${answer.logdir ? `"${answer.logdir}" ` : ""}has no *.pt.trace.json(.gz) files. Write traces with torch.profiler.tensorboard_trace_handler(logdir); new files show up here by themselves.`}
      </Empty>
    );
  else if (run.state === "error")
    body = (
      <Empty title={`Nothing to show for ${run.name}`}>
        Every trace file of this run failed to load; the reasons are listed above. Fixed or new files are picked up by themselves.
      </Empty>
    );
  else if (views.error) body = <ErrorBox error={views.error} what="the views of this run" />;
  else if (!views.names) body = <Loading what="views" />;
  else if (viewNames.length === 0)
    body = (
      <Empty title={run.loading ? `${run.name} is still loading` : `Nothing to show for ${run.name}`}>
        {run.loading ? "Views appear when its first trace file is parsed." : "None of its trace files could be loaded (see the errors above)."}
      </Empty>
    );
  else if (workers.error) body = <ErrorBox error={workers.error} what="the workers" />;
  else if (spans.error) body = <ErrorBox error={spans.error} what="the spans" />;
  else if (!worker || !spans.names) body = <Loading what="workers" />;
  else if (!ViewComponent || !view)
    body = <Empty title={`The ${view ?? ""} view is not supported by this version of the frontend`} />;
  else
    body = (
      <Suspense fallback={<Loading what={`the ${viewLabel(view)} view`} />}>
        <ViewComponent
          key={`${run.name}|${view}|${worker}|${span ?? ""}|${state.capture ?? ""}|${runVersion}|${navigations}`}
          api={api}
          run={run.name}
          worker={worker}
          span={spanNames.length ? span : null}
          state={state}
          setState={setState}
        />
      </Suspense>
    );

  const copyLink = () => {
    // inside TensorBoard its own address (which carries the selection) is the link to share
    const url = tensorBoardPage()?.location.href ?? window.location.href;
    void copyText(url).then((ok) => setCopied(ok ? "Link copied" : url));
    window.setTimeout(() => setCopied(""), 4000);
  };

  return (
    <div className="app" data-theme={theme}>
      <header className="topbar">
        <h1>PyTorch Profiler</h1>
        <nav className="selectors" aria-label="Selection">
          {runs.length > 0 && run && (
            <Select
              label="Run"
              testId="select-run"
              value={run.name}
              options={runs.map((r) => ({ value: r.name, label: r.loading ? `${r.name} (loading)` : r.name }))}
              onChange={(v) => {
                setNotice("");
                setState({ run: v, view: state.view, worker: null, span: null }, true);
              }}
            />
          )}
          {viewNames.length > 0 && view && (
            <Select
              label="View"
              testId="select-view"
              value={view}
              options={viewNames.map((v) => ({ value: v, label: viewLabel(v) }))}
              onChange={(v) => setState({ view: v, capture: null }, true)}
            />
          )}
          {/* the Distributed view covers every worker: no worker to pick there */}
          {workerNames.length > 0 && worker && (view === null || viewKey(view) !== "distributed") && (
            <Select
              label="Worker"
              testId="select-worker"
              value={worker}
              options={workerNames.map((w) => ({ value: w, label: workerLabel(run, w) }))}
              onChange={(v) => setState({ worker: v, span: null, capture: null }, true)}
            />
          )}
          {spanNames.length > 1 && span && (
            <Select
              label="Span"
              testId="select-span"
              value={span}
              options={spanNames.map((s) => ({ value: s }))}
              onChange={(v) => setState({ span: v, capture: null }, true)}
            />
          )}
        </nav>
        <div className="topbar-actions">
          <button type="button" className="btn" onClick={copyLink} title="Copy a link to this selection">
            Copy link
          </button>
          <a className="btn" href={standaloneHref(state)} target="_blank" rel="noopener" title="Open this view in its own tab">
            Open in new tab
          </a>
          {copied && <span className="muted">{copied}</span>}
        </div>
      </header>
      {runsError && answer && <div className="warn">Could not refresh the run list: {runsError.message}</div>}
      {answer?.scanError && (
        <div className="warn" role="alert" data-testid="scan-error">
          Could not list the log directory: {answer.scanError}
        </div>
      )}
      {answer && answer.scanWarnings.length > 0 && (
        <details className="warn" data-testid="scan-warnings">
          <summary>
            The log directory scan skipped {answer.scanWarnings.length === 1 ? "1 path" : `${answer.scanWarnings.length} paths`} (symlink loops, unreadable or too deep
            directories): traces under them are not shown.
          </summary>
          <ul>
            {answer.scanWarnings.map((w) => (
              <li key={w}>{w}</li>
            ))}
          </ul>
        </details>
      )}
      {notice && (
        <div className="warn" role="status" data-testid="link-notice">
          {notice}{" "}
          <button type="button" className="btn" onClick={() => setNotice("")}>
            Dismiss
          </button>
        </div>
      )}
      {run && <RunStatus run={run} />}
      <main className="content" data-testid="view" data-view={view ? viewKey(view) : ""}>
        {body}
      </main>
    </div>
  );
}
