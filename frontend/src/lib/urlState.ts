// The selection (run, view, worker, span and per-view options) lives in the page's query string, so
// a view can be linked and reloaded. Inside TensorBoard the app's frame is reloaded without a query
// string, so the selection is also kept in TensorBoard's own address, after its tab name
// (`#pytorch_profiler&run=…&view=…`, the `tab&key=value` form TensorBoard reads and keeps), and read
// back from there when the frame starts empty.

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

export const PLUGIN_TAB = "pytorch_profiler";

/** "#pytorch_profiler&run=a&view=b" → {run: "a", view: "b"}; {} for another tab's address. */
export function parseTabHash(hash: string): UrlState {
  const parts = hash.replace(/^#/, "").split("&");
  if (parts[0] !== PLUGIN_TAB) return {};
  const out: UrlState = {};
  for (const part of parts.slice(1)) {
    const eq = part.indexOf("=");
    if (eq <= 0) continue;
    try {
      out[decodeURIComponent(part.slice(0, eq))] = decodeURIComponent(part.slice(eq + 1));
    } catch {
      // a malformed escape: skip that key
    }
  }
  return out;
}

/** The selection as TensorBoard's address hash of this tab. */
export function toTabHash(state: UrlState): string {
  const kv = Object.entries(state)
    .filter(([, v]) => v !== "")
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`);
  return `#${[PLUGIN_TAB, ...kv].join("&")}`;
}

/** TensorBoard's page when this app is its plugin frame (same origin), else null. */
export function tensorBoardPage(): Window | null {
  try {
    const p = window.parent;
    if (!p || p === window) return null;
    const tb = p.document.querySelector("tb-webapp, tf-tensorboard") !== null;
    const tab = p.location.hash === "" || p.location.hash.replace(/^#/, "").split("&")[0] === PLUGIN_TAB;
    return tb && tab ? p : null;
  } catch {
    return null; // cross-origin parent (e.g. VS Code's webview)
  }
}

/** The starting selection: the frame's own query string, else (inside TensorBoard) its address. */
export function initialState(): UrlState {
  const own = parseQuery(window.location.search);
  if (Object.keys(own).length) return own;
  const tb = tensorBoardPage();
  return tb ? parseTabHash(tb.location.hash) : {};
}

function mirrorToTensorBoard(state: UrlState): void {
  const tb = tensorBoardPage();
  if (!tb) return;
  const hash = toTabHash(state);
  if (tb.location.hash !== hash) tb.history.replaceState(tb.history.state, "", tb.location.pathname + tb.location.search + hash);
}

export function useUrlState(): [UrlState, (patch: Record<string, string | null | undefined>, push?: boolean) => void] {
  const [state, setState] = useState<UrlState>(initialState);
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
      mirrorToTensorBoard(next);
      return next;
    });
  }, []);
  return [state, update];
}
