// The selection (run, view, worker, span and per-view options) lives in the page's query string, so
// a view can be linked and reloaded.

import { useCallback, useEffect, useState } from "react";

export type UrlState = Record<string, string>;

export function parseQuery(search: string): UrlState {
  const out: UrlState = {};
  new URLSearchParams(search).forEach((v, k) => {
    out[k] = v;
  });
  return out;
}

export function toQuery(state: UrlState): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(state)) if (v !== "") p.set(k, v);
  const s = p.toString();
  return s ? `?${s}` : "";
}

/** Merge a patch into the state; keys set to null or "" are removed. */
export function mergeState(state: UrlState, patch: Record<string, string | null | undefined>): UrlState {
  const next: UrlState = { ...state };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || v === undefined || v === "") delete next[k];
    else next[k] = v;
  }
  return next;
}

export function useUrlState(): [UrlState, (patch: Record<string, string | null | undefined>, push?: boolean) => void] {
  const [state, setState] = useState<UrlState>(() => parseQuery(window.location.search));
  useEffect(() => {
    const onPop = () => setState(parseQuery(window.location.search));
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, []);
  const update = useCallback((patch: Record<string, string | null | undefined>, push = false) => {
    setState((prev) => {
      const next = mergeState(prev, patch);
      const q = toQuery(next);
      if (q !== window.location.search) {
        const url = window.location.pathname + q + window.location.hash;
        if (push) window.history.pushState(null, "", url);
        else window.history.replaceState(null, "", url);
      }
      return next;
    });
  }, []);
  return [state, update];
}
