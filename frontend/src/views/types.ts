import type { Api } from "../api/client";
import type { UrlState } from "../lib/urlState";

export interface ViewProps {
  api: Api;
  run: string;
  worker: string;
  /** null when the worker has a single (unnamed) span */
  span: string | null;
  state: UrlState;
  setState: (patch: Record<string, string | null | undefined>, push?: boolean) => void;
}

/** The parameters every per-profile route takes. */
export function profileParams(p: Pick<ViewProps, "run" | "worker" | "span">): Record<string, string> {
  const out: Record<string, string> = { run: p.run, worker: p.worker };
  if (p.span !== null) out.span = p.span;
  return out;
}
