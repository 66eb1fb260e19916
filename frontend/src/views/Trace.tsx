import { type ReactNode, useCallback, useEffect, useMemo, useRef, useState } from "react";
import { ApiError } from "../api/client";
import { Empty, ErrorBox, Loading, Section } from "../components/common";
import { type Column, DataTable } from "../components/DataTable";
import { PathRules, StackFrames } from "../components/StackFrames";
import { fileSlug } from "../lib/csv";
import { formatCount } from "../lib/format";
import { useTheme } from "../lib/theme";
import { useApi } from "../lib/useApi";
import {
  type TlAggRow,
  type TlEvent,
  type TlPlace,
  type TlTracks,
  readAggregate,
  readEvent,
  readPlace,
  readTracks,
} from "../timeline/api";
import { type Detail, TimelineController } from "../timeline/controller";
import { KEY_HELP } from "../timeline/keys";
import { decodeWindow } from "../timeline/decode";
import { rulerTitle } from "../timeline/steps";
import { type Range, formatTime } from "../timeline/nav";
import { readFindWith } from "./findWith";
import { SidePanel, useFillHeight } from "./traceLayout";
import { useCriticalPathOverlay } from "./tracePath";
import { useTimelineSearch } from "./traceSearch";
import { type ViewProps, profileParams } from "./types";

/** `find` values other views link with: `kernel:<name>`, `op:<name>` or `any:<name>` (the longest event
 * of that name), or `at:<kind>:<µs>` (the event of that kind running at that time on the trace's clock,
 * the innermost: one instance, e.g. the op of an allocation). */
export function parseFind(find: string | undefined): { kind: string; name: string; at: number | null } | null {
  if (!find) return null;
  const colon = find.indexOf(":");
  const kind = colon > 0 ? find.slice(0, colon) : "";
  if (kind === "at") {
    const [k, t] = find.slice(colon + 1).split(":");
    const at = Number(t);
    if ((k === "op" || k === "kernel" || k === "any") && t !== undefined && t !== "" && Number.isFinite(at)) return { kind: k, name: "", at };
    return null;
  }
  if (kind === "kernel" || kind === "op" || kind === "any") return { kind, name: find.slice(colon + 1), at: null };
  return { kind: "any", name: find, at: null };
}

/** The timeline routes' parameters: the profile's, and `capture` when the view shows one of the run's
 * graph capture traces (opened from a replayed kernel's details). */
export function timelineParams(p: Pick<ViewProps, "run" | "worker" | "span" | "state">): Record<string, string> {
  const out = profileParams(p);
  if (p.state.capture) out.capture = p.state.capture;
  return out;
}

/** A relative time for the address: µs with at most 3 decimals. */
const urlTime = (t: number) => String(Math.round(t * 1000) / 1000);

/** A range kept in the address as two relative times (`r0`/`r1`, the box-selected range), else null. */
export function readUrlRange(a: string | undefined, b: string | undefined): Range | null {
  if (a === undefined || b === undefined || a === "" || b === "") return null;
  const t0 = Number(a);
  const t1 = Number(b);
  return Number.isFinite(t0) && Number.isFinite(t1) && t1 > t0 ? { t0, t1 } : null;
}

/** The range as the address's two keys (removed for null). */
const rangeState = (r: Range | null, k0: string, k1: string) => ({ [k0]: r ? urlTime(r.t0) : null, [k1]: r ? urlTime(r.t1) : null });

/** The test hook: where events are drawn, what is under a point (client coordinates). */
export interface TimelineHook {
  locate(id: string): { x: number; y: number } | null;
  hitTest(x: number, y: number): { id: string | null; name: string; count: number } | null;
  /** client y of a label line: "g:<group id>" or "t:<track id>" (click at a small x to toggle it) */
  labelY(key: string): number | null;
  /** client x of a trace time (absolute µs); client y of an event row's middle, null when not drawn */
  x(t: number): number;
  rowY(track: number, depth: number): number | null;
  view(): Range;
  /** the box-selected range and the mark (relative µs), when there are */
  range(): Range | null;
  mark(): Range | null;
  /** the label column's width (css px) */
  labelW(): number;
  /** the last frame: items in the drawn answer, boxes drawn, milliseconds spent drawing; frames drawn;
   * times the label column was drawn (it is copied while only the view changes) */
  stats(): { items: number; boxes: number; ms: number; frames: number; labelPaints: number };
  /** bands of the critical path drawn in the last frame (0 without one) */
  pathBands(): number;
}

declare global {
  interface Window {
    __timeline?: TimelineHook;
  }
}

export function TraceView(p: ViewProps): ReactNode {
  const base = timelineParams(p);
  const tracks = useApi<unknown>(p.api, "timeline/tracks", base);
  const data = useMemo(() => (tracks.data === undefined ? null : readTracks(tracks.data)), [tracks.data]);
  const exportHref = p.api.url("trace", base);
  const exportName = `${fileSlug(p.run, p.worker, p.span)}.pt.trace.json.gz`;
  const exportLink = p.state.capture ? (
    <CaptureBanner p={p} />
  ) : (
    <a className="btn" href={exportHref} download={exportName} data-testid="trace-download" title="Download the trace (with device counter tracks) for Perfetto or chrome://tracing">
      Export
    </a>
  );
  if (tracks.error)
    return (
      <>
        <ErrorBox error={tracks.error} what="the timeline" />
        <p>{exportLink}</p>
      </>
    );
  if (!data) return <Loading what="the timeline" />;
  if (data.eventCount === 0 && data.tracks.length === 0)
    return (
      <Empty title="This profile has no events to show">
        <p>{exportLink}</p>
      </Empty>
    );
  return <Timeline p={p} tracks={data} exportLink={exportLink} />;
}

const AGG_COLUMNS: Column<TlAggRow>[] = [
  { id: "name", header: "Name", kind: "text", value: (r) => r.name },
  { id: "count", header: "Count", kind: "count", value: (r) => r.count },
  { id: "total", header: "Total", kind: "duration", value: (r) => r.total, tooltip: "Whole durations of the events overlapping the range" },
  { id: "self", header: "Self", kind: "duration", value: (r) => r.self, tooltip: "Host events only" },
  { id: "mean", header: "Mean", kind: "duration", value: (r) => r.mean },
];

function Timeline({ p, tracks, exportLink }: { p: ViewProps; tracks: TlTracks; exportLink: ReactNode }): ReactNode {
  const theme = useTheme();
  const base = useMemo(() => timelineParams(p), [p.run, p.worker, p.span, p.state.capture]);
  const rootRef = useRef<HTMLDivElement>(null);
  const mainRef = useRef<HTMLCanvasElement>(null);
  const rulerRef = useRef<HTMLCanvasElement>(null);
  const miniRef = useRef<HTMLCanvasElement>(null);
  const tipRef = useRef<HTMLDivElement>(null);
  const helpRef = useRef<HTMLDivElement>(null);
  const viewRef = useRef<HTMLDivElement>(null);
  useFillHeight(viewRef);
  const ctlRef = useRef<TimelineController | null>(null);
  const setStateRef = useRef(p.setState);
  setStateRef.current = p.setState;

  const [selId, setSelId] = useState<string | null>(p.state.sel ?? null);
  // the box-selected range and the mark are kept in the address (not when a link from another view
  // brought us here: that names what to show)
  const [range, setRange] = useState<Range | null>(() => (p.state.find ? null : readUrlRange(p.state.r0, p.state.r1)));
  const [rangeMode, setRangeMode] = useState(false);
  // the status line is written by the controller's callback directly (it changes while panning: no
  // re-render of the view for it); only a window's error goes through React
  const statusRef = useRef<HTMLSpanElement>(null);
  const [windowError, setWindowError] = useState<Error | null>(null);
  const [query, setQuery] = useState("");
  const [highlightAll, setHighlightAll] = useState(false);
  /** "In view": the search is limited to the window shown when the query or the box last changed */
  const [inView, setInView] = useState(false);
  const [searchRange, setSearchRange] = useState<Range | null>(null);
  const [findError, setFindError] = useState<string>("");
  /** reveal the selected event once its details arrive (a link from elsewhere, not a click on it) */
  const revealNext = useRef<boolean>(!!p.state.sel && !p.state.t0);

  const select = useCallback((id: string | null) => {
    setSelId(id);
    setStateRef.current({ sel: id });
  }, []);

  // the controller lives as long as the view
  useEffect(() => {
    const root = rootRef.current;
    const main = mainRef.current;
    const ruler = rulerRef.current;
    const minimap = miniRef.current;
    const tooltip = tipRef.current;
    const help = helpRef.current;
    if (!root || !main || !ruler || !minimap || !tooltip) return;
    const t0 = Number(p.state.t0);
    const t1 = Number(p.state.t1);
    const initial = p.state.t0 !== undefined && p.state.t1 !== undefined && Number.isFinite(t0) && Number.isFinite(t1) && t1 > t0 ? { t0, t1 } : null;
    let timer = 0;
    const fetchWindow = async (start: number, end: number, px: number, trackIds: string | null, signal: AbortSignal) => {
      const url = p.api.url("timeline", { ...base, start_us: start, end_us: end, px, tracks: trackIds, format: "bin" });
      const res = await fetch(url, { signal });
      if (!res.ok) {
        const text = await res.text();
        let msg = text.slice(0, 300) || res.statusText;
        try {
          const j: unknown = JSON.parse(text);
          if (j && typeof j === "object" && "error" in j && typeof j.error === "string") msg = j.error;
        } catch {
          // not JSON: the text itself
        }
        throw new ApiError(res.status, msg, url);
      }
      return decodeWindow(await res.arrayBuffer());
    };
    const ctl = new TimelineController(
      tracks,
      { root, main, ruler, minimap, tooltip, help },
      fetchWindow,
      {
        onView: (v) => {
          window.clearTimeout(timer);
          timer = window.setTimeout(() => setStateRef.current({ t0: urlTime(v.t0), t1: urlTime(v.t1) }), 120);
        },
        onSelect: (id) => select(id),
        onRange: (r) => {
          setRange(r);
          setStateRef.current(rangeState(r, "r0", "r1"));
        },
        onMark: (r) => setStateRef.current(rangeState(r, "m0", "m1")),
        onState: (state, error, detail) => {
          const el = statusRef.current;
          if (el) {
            el.textContent = timelineStatus(state, detail);
            el.title = detail?.coarsened ? COARSENED_TIP : "";
          }
          setWindowError((prev) => (prev?.message === error?.message ? prev : error));
        },
      },
      document.documentElement.dataset.theme === "dark",
      initial,
    );
    ctlRef.current = ctl;
    if (range) ctl.setRange(range);
    const mark = p.state.find ? null : readUrlRange(p.state.m0, p.state.m1);
    if (mark) ctl.setMark(mark);
    if (p.state.find) setStateRef.current({ r0: null, r1: null, m0: null, m1: null });
    if (!initial) setStateRef.current({ t0: urlTime(ctl.view.t0), t1: urlTime(ctl.view.t1) });
    const hook: TimelineHook = {
      locate: (id) => ctl.locate(id),
      hitTest: (x, y) => {
        const r = main.getBoundingClientRect();
        const h = ctl.hitTest(x - r.left, y - r.top);
        return h ? { id: h.id, name: h.name, count: h.count } : null;
      },
      labelY: (key) => ctl.labelY(key),
      x: (t) => ctl.clientX(t),
      rowY: (track, depth) => ctl.clientRowY(track, depth),
      view: () => ctl.view,
      range: () => ctl.range,
      mark: () => ctl.mark,
      labelW: () => ctl.labelW,
      stats: () => ctl.stats,
      pathBands: () => ctl.pathBands,
    };
    window.__timeline = hook;
    ctl.redraw();
    return () => {
      window.clearTimeout(timer);
      ctl.destroy();
      ctlRef.current = null;
      if (window.__timeline === hook) delete window.__timeline;
    };
    // one controller per profile (the view is keyed by run/worker/span)
  }, [tracks]);

  useEffect(() => {
    ctlRef.current?.setTheme(theme === "dark");
  }, [theme]);
  useEffect(() => {
    if (ctlRef.current) ctlRef.current.rangeMode = rangeMode;
  }, [rangeMode]);

  // details of the selected event
  const detail = useApi<unknown>(p.api, selId ? "timeline/event" : null, { ...base, id: selId });
  const event = useMemo(() => (detail.data === undefined ? null : readEvent(detail.data)), [detail.data]);
  useEffect(() => {
    const ctl = ctlRef.current;
    if (!ctl) return;
    if (!selId) ctl.setSelection(null);
    else if (event && event.id === selId) {
      ctl.setSelection(event, event.links);
      if (revealNext.current) {
        revealNext.current = false;
        ctl.reveal(event, "centre");
      }
    }
  }, [selId, event]);

  // "Show in timeline" from another view: the longest event of that name
  useEffect(() => {
    const f = parseFind(p.state.find);
    if (!f) return;
    let live = true;
    // a row grouped by shape (or op and launch shape): the longest instance of that row
    const query = f.at === null ? { name: f.name, kind: f.kind, ...readFindWith(p.state.fwith) } : { at_us: f.at, kind: f.kind };
    p.api.get<unknown>("timeline/longest", { ...base, ...query }).then(
      (d) => {
        if (!live) return;
        const place = readPlace(d);
        revealNext.current = false;
        ctlRef.current?.reveal(place, "fit");
        setSelId(place.id);
        setStateRef.current({ find: null, fwith: null, sel: place.id, cpath: null });
      },
      (e: unknown) => {
        if (!live) return;
        const what = f.at === null ? `"${f.name}"` : `No ${f.kind === "any" ? "event" : f.kind} at that time`;
        setFindError(`${what} was not found in the timeline (${e instanceof Error ? e.message : String(e)})`);
        setStateRef.current({ find: null, fwith: null });
      },
    );
    return () => {
      live = false;
    };
  }, [p.state.find]);

  // search: counted as you type; Enter / Shift+Enter step through the matches (traceSearch.ts)
  const within = useMemo(
    () => (inView && searchRange ? { start_us: tracks.start + searchRange.t0, end_us: tracks.start + searchRange.t1 } : null),
    [inView, searchRange, tracks.start],
  );
  const found = useTimelineSearch({
    api: p.api,
    base,
    query,
    within,
    // "In view" searches the window itself: its first match is the first to go to
    windowStart: () => (ctlRef.current && !within ? tracks.start + ctlRef.current.view.t0 : null),
    onGo: (m) => {
      revealNext.current = false;
      ctlRef.current?.reveal(m, "keep");
      select(m.id);
    },
  });
  const k = found.k;
  const matches = found.answer?.matches ?? [];
  useEffect(() => {
    ctlRef.current?.setMarks(highlightAll ? matches : [], found.current);
  }, [found.answer, highlightAll, found.current]);
  const goTo = found.step;

  const goToPlace = (pl: TlPlace) => {
    revealNext.current = false;
    ctlRef.current?.reveal(pl, "pan");
    select(pl.id);
  };

  const pathBanner = useCriticalPathOverlay(p, base, ctlRef, tracks);
  const agg = useApi<unknown>(p.api, range ? "timeline/aggregate" : null, range ? { ...base, start_us: tracks.start + range.t0, end_us: tracks.start + range.t1 } : {});
  const aggregate = useMemo(() => (agg.data === undefined ? null : readAggregate(agg.data)), [agg.data]);

  let countText = "";
  if (found.error) countText = found.error.message;
  else if (found.busy) countText = "searching…";
  else if (found.answer) {
    const total = found.answer.total;
    countText = total === 0 ? "no matches" : k >= 0 ? `${formatCount(k + 1)} of ${formatCount(total)}` : `${formatCount(total)} match${total === 1 ? "" : "es"}`;
    if (inView && searchRange) countText += " in view";
  }

  return (
    <div className="trace-view" ref={viewRef}>
      <div className="tl-toolbar">
        <button type="button" className="btn" onClick={() => ctlRef.current?.fit()} data-testid="timeline-fit" title="Show the whole profile">
          Fit
        </button>
        <input
          type="search"
          className="tl-search"
          placeholder="Search events by name"
          value={query}
          data-testid="timeline-search"
          aria-label="Search events"
          onChange={(e) => {
            setQuery(e.target.value);
            if (inView && ctlRef.current) setSearchRange(ctlRef.current.view);
          }}
          onKeyDown={(e) => {
            if (e.key === "Enter") {
              e.preventDefault();
              goTo(e.shiftKey ? -1 : 1);
            }
          }}
        />
        <button type="button" className="btn" onClick={() => goTo(-1)} disabled={!found.answer?.total} title="Previous match (Shift+Enter)">
          ‹
        </button>
        <button type="button" className="btn" onClick={() => goTo(1)} disabled={!found.answer?.total} title="Next match (Enter)">
          ›
        </button>
        <span className="muted" data-testid="timeline-search-count">
          {countText}
        </span>
        <label className="tl-check" title="Search only the events overlapping the window shown (as it was when you typed or ticked this)">
          <input
            type="checkbox"
            checked={inView}
            data-testid="timeline-search-in-view"
            onChange={(e) => {
              setInView(e.target.checked);
              setSearchRange(e.target.checked && ctlRef.current ? ctlRef.current.view : null);
            }}
          />{" "}
          In view
        </label>
        <label className="tl-check">
          <input type="checkbox" checked={highlightAll} onChange={(e) => setHighlightAll(e.target.checked)} data-testid="timeline-highlight" /> Highlight all
        </label>
        <label className="tl-check" title="Drag on the tracks to select a time range (or hold Shift while dragging)">
          <input type="checkbox" checked={rangeMode} onChange={(e) => setRangeMode(e.target.checked)} data-testid="timeline-range-mode" /> Select range
        </label>
        <button
          type="button"
          className="btn"
          data-testid="timeline-keys-button"
          title="Keys and gestures (?)"
          onClick={() => {
            if (helpRef.current) helpRef.current.hidden = !helpRef.current.hidden;
          }}
        >
          ?
        </button>
        <span className="tl-spacer" />
        {tracks.moved > 0 && (
          <span className="muted" data-testid="timeline-moved" title="Events that overlap another event of their depth without nesting are drawn in overlap lanes at the bottom of their track">
            {formatCount(tracks.moved)} {tracks.moved === 1 ? "event" : "events"} moved to extra lanes
          </span>
        )}
        <span
          className="muted tl-status"
          data-testid="timeline-status"
          ref={statusRef}
        >
          loading…
        </span>
        {exportLink}
      </div>
      {pathBanner}
      {findError && <div className="warn">{findError}</div>}
      {windowError && <ErrorBox error={windowError} what="this part of the timeline" />}
      <div className="tl-body">
        <div className="tl-left">
          <div className="timeline" ref={rootRef} data-testid="timeline" data-state="loading" tabIndex={0}>
            <canvas ref={miniRef} className="tl-minimap" data-testid="timeline-minimap" />
            <canvas ref={rulerRef} className="tl-ruler" data-testid="timeline-steps" onMouseMove={(e) => rulerTitle(e.currentTarget, e.clientX, ctlRef.current, tracks)} />
            <div className="tl-main">
              <canvas ref={mainRef} />
            </div>
            <div className="tl-tooltip" ref={tipRef} role="tooltip" />
            <div className="tl-keys" ref={helpRef} data-testid="timeline-keys" role="dialog" aria-label="Timeline keys" hidden>
              <strong>Keys</strong> <span className="muted">(? or Esc closes)</span>
              <dl className="kv">
                {KEY_HELP.map(([k, what]) => (
                  <KeyRow key={k} k={k} what={what} />
                ))}
              </dl>
            </div>
          </div>
          {selId && (
            <div className="tl-selline" data-testid="timeline-selline">
              <span className="muted">Selected: </span>
              {event && event.id === selId ? (
                <>
                  <strong className="tl-selname" title={event.name}>
                    {event.name}
                  </strong>
                  <span className="muted tl-selmeta">
                    {formatTime(event.dur)} · at {formatTime(event.start - tracks.start)}
                  </span>
                  <a
                    href="#"
                    onClick={(e) => {
                      e.preventDefault();
                      document.querySelector('[data-testid="timeline-details"]')?.scrollIntoView({ behavior: "smooth", block: "nearest" });
                    }}
                  >
                    details →
                  </a>
                </>
              ) : (
                <span className="muted">loading…</span>
              )}
            </div>
          )}
          <div className="tl-help muted">
            W/S (hold) or Ctrl+wheel: zoom · A/D, Shift+wheel or drag: pan · wheel: scroll tracks · click: select · Shift+drag: select a range · F: zoom to
            the selection · M: mark it · Esc: clear the selection · ?: every key
          </div>
        </div>
        {/* always there: a selection does not narrow the tracks under the pointer */}
        <SidePanel>
          {!selId && !range && (
            <p className="muted tl-side-empty" data-testid="timeline-side-empty">
              Click an event for its details and links; Shift+drag on the tracks to sum up a time range.
            </p>
          )}
          {selId && <Details p={p} id={selId} loading={detail.loading} error={detail.error} event={event} base={tracks.start} onLink={goToPlace} />}
          {range && (
            <Section title={`Range ${formatTime(range.t0)} – ${formatTime(range.t1)} (${formatTime(range.t1 - range.t0)})`} id="timeline-range">
              {agg.error && <ErrorBox error={agg.error} what="the range's events" />}
              {!aggregate && !agg.error && <Loading what="the range's events" />}
              {aggregate && (
                <>
                  <div className="muted">{formatCount(aggregate.events)} events overlap the range.</div>
                  <DataTable rows={aggregate.rows} columns={AGG_COLUMNS} csvName={fileSlug("range", p.run, p.worker, p.span)} initialSort={{ id: "total", desc: true }} height={320} testId="timeline-aggregate" />
                </>
              )}
            </Section>
          )}
        </SidePanel>
      </div>
    </div>
  );
}

function KeyRow({ k, what }: { k: string; what: string }): ReactNode {
  return (
    <>
      <dt>
        <kbd>{k}</kbd>
      </dt>
      <dd>{what}</dd>
    </>
  );
}

const COARSENED_TIP =
  "The answer for this window reached the server's cap of 100,000 boxes, so neighbouring events were merged at a coarser resolution than the screen's. Zoom in (or collapse groups) for every event.";

/** The status line: loading, or the drawn answer's resolution when the server had to coarsen it. */
export function timelineStatus(state: string, detail: Detail | null): string {
  const coarse = detail?.coarsened ? `coarsened: events under ${formatTime(detail.resolution)} merged (box cap) — zoom in for every event` : "";
  if (state === "loading") return coarse ? `loading… (${coarse})` : "loading…";
  return coarse;
}

/** Shown instead of the export button while the view shows a graph capture trace. */
function CaptureBanner({ p }: { p: ViewProps }): ReactNode {
  return (
    <span className="tl-capture" data-testid="timeline-capture">
      Graph capture trace <strong>{p.state.capture}</strong> (what the replays ran, as recorded at capture time) ·{" "}
      <a
        href="#"
        data-testid="timeline-capture-back"
        onClick={(e) => {
          e.preventDefault();
          p.setState({ capture: null, sel: null, t0: null, t1: null }, true);
        }}
      >
        back to the replay trace
      </a>
    </span>
  );
}

function Details({
  p,
  id,
  loading,
  error,
  event,
  base,
  onLink,
}: {
  p: ViewProps;
  id: string;
  loading: boolean;
  error: Error | undefined;
  event: TlEvent | null;
  base: number;
  onLink: (pl: TlPlace) => void;
}): ReactNode {
  return (
    <Section title="Selected event" id="timeline-details">
      {error && <ErrorBox error={error} what={`event ${id}`} />}
      {loading && !event && <Loading what="the event" />}
      {event && (
        <div className="tl-details">
          <h3 data-testid="timeline-details-name" className="tl-name">
            {event.name}
          </h3>
          <dl className="kv">
            <dt>Category</dt>
            <dd>{event.category || event.kind}</dd>
            <dt>Start</dt>
            <dd>{formatTime(event.start - base)} after the profile's start</dd>
            <dt>Duration</dt>
            <dd data-testid="timeline-details-dur" data-value={event.dur}>
              {formatTime(event.dur)}
            </dd>
            {event.self !== null && (
              <>
                <dt>Self</dt>
                <dd>{formatTime(event.self)}</dd>
              </>
            )}
            <dt>Id</dt>
            <dd>
              <code>{event.id}</code>
            </dd>
            {event.capture && (
              <>
                <dt>Captured in</dt>
                <dd>
                  <a
                    href="#"
                    data-testid="timeline-capture-link"
                    title="Open the graph capture trace at the launch call that recorded this kernel"
                    onClick={(e) => {
                      e.preventDefault();
                      if (event.capture) p.setState({ capture: event.capture.file, sel: event.capture.launch, t0: null, t1: null, find: null }, true);
                    }}
                  >
                    {event.capture.file}, at its launch ▸
                  </a>
                </dd>
              </>
            )}
          </dl>
          {event.links.length > 0 && (
            <>
              <h4 className="subhead">Linked events</h4>
              <ul className="tl-links">
                {event.links.map((l) => (
                  <li key={`${l.relation}|${l.id}`}>
                    <span className="muted">{l.relation}: </span>
                    <a
                      href="#"
                      data-testid="timeline-link"
                      data-id={l.id}
                      onClick={(e) => {
                        e.preventDefault();
                        onLink(l);
                      }}
                    >
                      {l.name}
                    </a>{" "}
                    <span className="muted">({formatTime(l.dur)})</span>
                  </li>
                ))}
              </ul>
            </>
          )}
          {event.args.length > 0 && (
            <>
              <h4 className="subhead">Arguments</h4>
              <table className="tl-args">
                <tbody>
                  {event.args.map(([k, v]) => (
                    <tr key={k}>
                      <th>{k}</th>
                      <td>{v}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          )}
          {event.frames.length > 0 && (
            <>
              <h4 className="subhead">Call stack</h4>
              <StackFrames frames={event.frames} />
              <PathRules />
            </>
          )}
        </div>
      )}
    </Section>
  );
}
