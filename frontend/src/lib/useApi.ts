import { useEffect, useState } from "react";
import type { Api, Params } from "../api/client";

export interface Loaded<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
}

/** Fetch (through the Api's cache) a route; path null means "nothing to fetch yet". */
export function useApi<T>(api: Api, path: string | null, params: Params = {}): Loaded<T> {
  const key = path === null ? null : api.url(path, params);
  const [state, setState] = useState<Loaded<T> & { key: string | null }>({
    data: undefined,
    error: undefined,
    loading: path !== null,
    key: null,
  });
  useEffect(() => {
    if (path === null || key === null) {
      setState({ data: undefined, error: undefined, loading: false, key });
      return;
    }
    let live = true;
    setState((s) => ({ data: s.key === key ? s.data : undefined, error: undefined, loading: true, key }));
    api.cached<T>(path, params).then(
      (data) => live && setState({ data, error: undefined, loading: false, key }),
      (error: unknown) =>
        live &&
        setState({
          data: undefined,
          error: error instanceof Error ? error : new Error(String(error)),
          loading: false,
          key,
        }),
    );
    return () => {
      live = false;
    };
    // key captures path and params
  }, [api, key]);
  if (state.key !== key) return { data: undefined, error: undefined, loading: path !== null };
  return state;
}
