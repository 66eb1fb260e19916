import { type ReactNode, type RefObject, useEffect, useMemo } from "react";
import { ErrorBox } from "../components/common";
import { useApi } from "../lib/useApi";
import type { TlTracks } from "../timeline/api";
import type { TimelineController } from "../timeline/controller";
import { PATH_KINDS, pathColour, readCriticalPath } from "../timeline/criticalPath";
import { fitRange, formatTime } from "../timeline/nav";
import type { ViewProps } from "./types";

/** The critical path of the step named by the address's `cpath` (the Analysis view links here): drawn
 * over the tracks, the view fitted to the step, and a banner saying what bounds it, with a key of the
 * segment kinds and a button that removes it. */
export function useCriticalPathOverlay(
  p: ViewProps,
  base: Record<string, string>,
  ctlRef: RefObject<TimelineController | null>,
  tracks: TlTracks,
): ReactNode {
  const step = p.state.cpath && /^-?\d+$/.test(p.state.cpath) ? p.state.cpath : null;
  const answer = useApi<unknown>(p.api, step === null ? null : "timeline/critical_path", { ...base, step: step ?? "" });
  const path = useMemo(() => (answer.data === undefined ? null : readCriticalPath(answer.data)), [answer.data]);
  useEffect(() => {
    const ctl = ctlRef.current;
    if (!ctl) return;
    ctl.setPath(step === null ? null : path);
    if (path && step !== null) ctl.setView(fitRange(path.start - tracks.start, path.end - tracks.start, ctl.total, 0.02));
  }, [path, step, tracks]);
  if (step === null) return null;
  const clear = (
    <button type="button" className="btn" data-testid="critical-path-clear" onClick={() => p.setState({ cpath: null })} title="Remove the critical path from the timeline">
      Clear
    </button>
  );
  if (answer.error)
    return (
      <div className="tl-path" data-testid="critical-path-banner">
        <ErrorBox error={answer.error} what={`step ${step}'s critical path`} /> {clear}
      </div>
    );
  if (!path) return <div className="tl-path muted">Loading step {step}&apos;s critical path…</div>;
  return (
    <div className="tl-path" data-testid="critical-path-banner" data-segments={path.segments.length}>
      <strong>Critical path of step {path.step}</strong>
      <span>{path.boundBy}</span>
      <span className="tl-path-key">
        {PATH_KINDS.filter((k) => path.byKind[k] > 0).map((k) => (
          <span key={k} className="tl-path-kind" title={`Time on the path spent in ${k} segments`}>
            <i style={{ background: pathColour(k, document.documentElement.dataset.theme === "dark", false) }} />
            {k} {formatTime(path.byKind[k])}
          </span>
        ))}
      </span>
      {clear}
    </div>
  );
}
