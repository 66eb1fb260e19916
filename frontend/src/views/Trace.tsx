import type { ReactNode } from "react";
import { Section } from "../components/common";
import { fileSlug } from "../lib/csv";
import { type ViewProps, profileParams } from "./types";

/** Until the streaming timeline lands: download the trace, with GPU counter tracks added, for Perfetto. */
export function TraceView(p: ViewProps): ReactNode {
  const href = p.api.url("trace", profileParams(p));
  const name = `${fileSlug(p.run, p.worker, p.span)}.pt.trace.json.gz`;
  return (
    <Section title="Trace" id="trace">
      <p>
        Download this profile's trace with GPU utilization and estimated SM efficiency added as counter tracks
        (one per GPU). Open it in Perfetto UI (ui.perfetto.dev, which runs in your browser and keeps the file
        local) or in chrome://tracing.
      </p>
      <p>
        <a className="btn primary" href={href} download={name} data-testid="trace-download">
          Download trace
        </a>
      </p>
      <p className="muted">
        Run <code>{p.run}</code>, worker <code>{p.worker}</code>
        {p.span !== null && (
          <>
            , span <code>{p.span}</code>
          </>
        )}
        .
      </p>
    </Section>
  );
}
