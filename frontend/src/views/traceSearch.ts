// The Trace view's search box: matches counted as you type, and Enter / Shift+Enter / ‹ › stepping
// through all of them. Enter waits for its own answer (never acts on a count still being fetched), and
// the first Enter goes to the first match at or after the window's start.

import { useCallback, useEffect, useRef, useState } from "react";
import type { Api, Params } from "../api/client";
import { type TlPlace, type TlSearch, readSearch } from "../timeline/api";
import { SEARCH_PAGE, inPage, nextRank, pageOffset } from "../timeline/searchNav";

export interface SearchState {
  /** the page of matches last fetched (its `total` counts all) */
  answer: TlSearch | null;
  error: Error | null;
  busy: boolean;
  /** rank of the current match among all matches, -1 before the first step */
  k: number;
  current: TlPlace | null;
  step: (dir: 1 | -1) => void;
}

interface Options {
  api: Api;
  base: Params;
  query: string;
  /** the range searched ("In view"), µs on the trace's clock; null: everywhere */
  within: { start_us: number; end_us: number } | null;
  /** the window's start now, µs on the trace's clock */
  windowStart: () => number | null;
  /** show a match: the caller reveals and selects it */
  onGo: (m: TlPlace) => void;
}

export function useTimelineSearch({ api, base, query, within, windowStart, onGo }: Options): SearchState {
  const [answer, setAnswer] = useState<TlSearch | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  const [k, setK] = useState(-1);
  // the latest values for the async steps; `seq` counts queries and steps, so a late answer of an
  // older one is dropped
  const seq = useRef(0);
  const latest = useRef({ answer, k, onGo, windowStart });
  latest.current = { answer, k, onGo, windowStart };
  const q = query.trim();
  const withinKey = within ? `${within.start_us}-${within.end_us}` : "";

  const ask = useCallback(
    (extra: Params, signal?: AbortSignal) =>
      api.get<unknown>("timeline/search", { ...base, q, limit: SEARCH_PAGE, ...(within ?? {}), ...extra }, signal).then(readSearch),
    [api, base, q, withinKey],
  );

  // as you type (debounced): the count, and the first page for "Highlight all"
  useEffect(() => {
    const my = ++seq.current;
    setK(-1);
    setError(null);
    if (!q) {
      setAnswer(null);
      setBusy(false);
      return;
    }
    setBusy(true);
    const ctl = new AbortController();
    const timer = window.setTimeout(() => {
      ask({}, ctl.signal).then(
        (a) => {
          if (seq.current !== my) return; // a step has fetched its own page since
          setAnswer(a);
          setBusy(false);
        },
        (e: unknown) => {
          if (ctl.signal.aborted || seq.current !== my) return;
          setError(e instanceof Error ? e : new Error(String(e)));
          setBusy(false);
        },
      );
    }, 250);
    return () => {
      window.clearTimeout(timer);
      ctl.abort();
    };
  }, [ask]);

  const step = useCallback(
    (dir: 1 | -1) => {
      if (!q) return;
      const my = ++seq.current;
      const { answer: page, k: cur } = latest.current;
      const go = async () => {
        let at = page;
        let rank: number;
        if (cur < 0 || !at) {
          const from = latest.current.windowStart();
          at = await ask(from === null ? {} : { from_us: from });
          rank = nextRank(-1, dir, at.total, at.fromRank ?? 0);
        } else rank = nextRank(cur, dir, at.total, 0);
        if (seq.current !== my) return;
        if (rank >= 0 && !inPage(at.offset, at.matches.length, rank)) {
          at = await ask({ offset: pageOffset(rank) });
          if (seq.current !== my) return;
        }
        setAnswer(at);
        setBusy(false);
        setK(rank);
        const m = rank >= 0 ? at.matches[rank - at.offset] : undefined;
        if (m) latest.current.onGo(m);
      };
      setBusy(true);
      go().catch((e: unknown) => {
        if (seq.current !== my) return;
        setError(e instanceof Error ? e : new Error(String(e)));
        setBusy(false);
      });
    },
    [ask, q],
  );

  const current = answer && k >= 0 ? (answer.matches[k - answer.offset] ?? null) : null;
  return { answer, error, busy, k, current, step };
}
