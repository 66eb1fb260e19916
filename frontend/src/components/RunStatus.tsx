import type { ReactNode } from "react";
import { captureLabel, type RunInfo } from "../api/runs";
import { formatBytes } from "../lib/format";

/** Loading progress (files, bytes) and per-file errors of one run, shown plainly. */
export function RunStatus({ run }: { run: RunInfo }): ReactNode {
  const { filesDone, filesTotal, bytesDone, bytesTotal } = run;
  const frac =
    bytesTotal && bytesDone !== null ? bytesDone / bytesTotal : filesTotal && filesDone !== null ? filesDone / filesTotal : null;
  return (
    <div className="run-status" data-testid="run-status">
      {run.loading && (
        <div className="progress" role="status" aria-live="polite" data-testid="run-progress">
          <span>
            Loading {run.name}
            {filesTotal !== null && `: ${filesDone ?? 0} of ${filesTotal} files`}
            {bytesTotal !== null && ` (${formatBytes(bytesDone ?? 0)} of ${formatBytes(bytesTotal)})`}
          </span>
          {frac !== null && <progress max={1} value={Math.min(1, Math.max(0, frac))} />}
        </div>
      )}
      {run.captures && (
        <div className="muted" data-testid="run-captures" title={run.captures.files.join("\n")}>
          {captureLabel(run.captures)}
          {run.captures.merged && ` · ${run.captures.matchedReplays} graph replay${run.captures.matchedReplays === 1 ? "" : "s"} matched`}
          {run.captures.unmatched.length > 0 && ` · ${run.captures.unmatched.length} not merged (see the Overview)`}
        </div>
      )}
      {run.errors.length > 0 && (
        <details className="file-errors" open={run.errors.length <= 3} data-testid="file-errors">
          <summary>
            {run.errors.length} file{run.errors.length === 1 ? "" : "s"} of this run could not be loaded
          </summary>
          <ul>
            {run.errors.map((e, i) => (
              <li key={i}>
                <code>{e.file}</code>: {e.message}
              </li>
            ))}
          </ul>
        </details>
      )}
      {run.warnings.length > 0 && (
        <details className="file-warnings" data-testid="file-warnings">
          <summary>
            {run.warnings.length} file{run.warnings.length === 1 ? " was" : "s were"} repaired to be read
          </summary>
          <ul>
            {run.warnings.map((e, i) => (
              <li key={i}>
                <code>{e.file}</code>: {e.message}
              </li>
            ))}
          </ul>
        </details>
      )}
    </div>
  );
}
