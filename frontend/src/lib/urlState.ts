// The selection (run, view, worker, span and per-view options) lives in the page's query string, so
// a view can be linked and reloaded. Inside TensorBoard the app's frame is reloaded without a query
// string, so the selection is also kept in TensorBoard's own address, after its tab name
// (`#pytorch_profiler&run=…&view=…`, the `tab&key=value` form TensorBoard reads and keeps), and read
// back from there when the frame starts empty. Selector changes (run, view, worker, span, grouping)
// add a history entry, zoom, pan and selection replace the current one; inside TensorBoard the entries
// are TensorBoard's, and the frame follows its address when it changes (Back, Forward, a pasted link).

import { useCallback, useEffect, useRef, useState } from "react";

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

/** TensorBoard's window when this app is its plugin frame (same origin), whatever tab it shows; else null. */
function tensorBoardWindow(): Window | null {
  try {
    const p = window.parent;
    if (!p || p === window) return null;
    return p.document.querySelector("tb-webapp, tf-tensorboard") !== null ? p : null;
  } catch {
    return null; // cross-origin parent (e.g. VS Code's webview)
  }
}

function isPluginTab(hash: string): boolean {
  return hash === "" || hash === "#" || hash.replace(/^#/, "").split("&")[0] === PLUGIN_TAB;
}

/** TensorBoard's page when this app is its plugin frame and its address is this plugin's tab, else null. */
export function tensorBoardPage(): Window | null {
  const tb = tensorBoardWindow();
  return tb && isPluginTab(tb.location.hash) ? tb : null;
}

/** The starting selection: the frame's own query string, else (inside TensorBoard) its address. */
export function initialState(): UrlState {
  const own = parseQuery(window.location.search);
  if (Object.keys(own).length) return own;
  const tb = tensorBoardPage();
  return tb ? parseTabHash(tb.location.hash) : {};
}

/** Same keys and values, whatever their order or escaping in an address. */
export function sameState(a: UrlState, b: UrlState): boolean {
  const ka = Object.keys(a).filter((k) => a[k] !== "");
  const kb = Object.keys(b).filter((k) => b[k] !== "");
  return ka.length === kb.length && ka.every((k) => a[k] === b[k]);
}

/** A link to this app showing `state`, in its own tab (the frame's own page with the state as query). */
export function standaloneHref(state: UrlState): string {
  return window.location.origin + window.location.pathname + toQuery(state);
}

/** Write the state into the addresses. Standalone, the frame's own history gets the entry. Inside
 * TensorBoard the entry goes into TensorBoard's history (its address is the one users see, copy and
 * go Back in) and the frame's own address is only replaced: an entry in both would take two Backs and
 * leave the two addresses disagreeing after one. */
function writeAddress(state: UrlState, push: boolean): void {
  const q = toQuery(state);
  const tb = tensorBoardPage();
  if (q !== window.location.search) {
    const url = window.location.pathname + q + window.location.hash;
    if (push && !tb) window.history.pushState(null, "", url);
    else window.history.replaceState(null, "", url);
  }
  if (!tb) return;
  const hash = toTabHash(state);
  if (sameState(parseTabHash(tb.location.hash), state)) return;
  const url = tb.location.pathname + tb.location.search + hash;
  if (push) tb.history.pushState(tb.history.state, "", url);
  else tb.history.replaceState(tb.history.state, "", url);
}

export type SetUrlState = (patch: Record<string, string | null | undefined>, push?: boolean) => void;

/** The selection and its setter (push: a new history entry; else the current one is replaced), and a
 * counter of navigations made outside the app (Back, Forward, a pasted link inside TensorBoard): the
 * views read their own state when they mount, so a caller remounts them when it changes. */
export function useUrlState(): [UrlState, SetUrlState, number] {
  const [state, setState] = useState<UrlState>(initialState);
  const [navigations, setNavigations] = useState(0);
  const current = useRef(state);

  useEffect(() => {
    const follow = (next: UrlState) => {
      if (sameState(next, current.current)) return;
      current.current = next;
      setState(next);
      setNavigations((n) => n + 1);
    };
    const onPop = () => {
      if (!tensorBoardPage()) follow(parseQuery(window.location.search));
    };
    window.addEventListener("popstate", onPop);
    // Inside TensorBoard: Back, Forward and an edited `#pytorch_profiler&…` change TensorBoard's
    // address only (its page does not reload the frame); follow it, and keep the frame's own address
    // (what "Open in new tab" and a frame reload read) in step.
    const tb = tensorBoardWindow();
    const onTabHash = () => {
      const t = tensorBoardPage();
      if (!t) return; // another TensorBoard tab
      const next = parseTabHash(t.location.hash);
      if (sameState(next, current.current)) return;
      window.history.replaceState(null, "", window.location.pathname + toQuery(next) + window.location.hash);
      follow(next);
    };
    tb?.addEventListener("hashchange", onTabHash);
    tb?.addEventListener("popstate", onTabHash);
    return () => {
      window.removeEventListener("popstate", onPop);
      tb?.removeEventListener("hashchange", onTabHash);
      tb?.removeEventListener("popstate", onTabHash);
    };
  }, []);

  const update = useCallback<SetUrlState>((patch, push = false) => {
    // the side effects run here, once per call (a state updater may run twice)
    const next = mergeState(current.current, patch);
    if (sameState(next, current.current)) return;
    current.current = next;
    writeAddress(next, push);
    setState(next);
  }, []);
  return [state, update, navigations];
}
