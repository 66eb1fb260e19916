// Typed access to the plugin's JSON API (docs/api.md). Every path is relative to the app's own URL, so
// the same bundle works inside TensorBoard's iframe and standalone.

export type Params = Record<string, string | number | boolean | null | undefined>;

export class ApiError extends Error {
  readonly status: number;
  readonly url: string;
  constructor(status: number, message: string, url: string) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.url = url;
  }
}

export function buildUrl(base: string, path: string, params: Params = {}): string {
  const url = new URL(path.replace(/^\//, ""), base);
  for (const [k, v] of Object.entries(params)) {
    if (v !== null && v !== undefined && v !== "") url.searchParams.set(k, String(v));
  }
  return url.toString();
}

export type FetchLike = (input: string, init?: { signal?: AbortSignal }) => Promise<Response>;

export class Api {
  readonly base: string;
  private readonly fetchImpl: FetchLike;
  private readonly cache = new Map<string, Promise<unknown>>();
  private readonly cacheLimit = 64;

  constructor(base: string, fetchImpl?: FetchLike) {
    this.base = base;
    this.fetchImpl = fetchImpl ?? ((input, init) => fetch(input, init));
  }

  url(path: string, params: Params = {}): string {
    return buildUrl(this.base, path, params);
  }

  /** GET a JSON route; a non-2xx answer becomes an ApiError carrying the server's message. */
  async get<T>(path: string, params: Params = {}, signal?: AbortSignal): Promise<T> {
    const url = this.url(path, params);
    const init = signal ? { signal } : undefined;
    const res = await this.fetchImpl(url, init);
    const text = await res.text();
    let body: unknown = null;
    try {
      body = text === "" ? null : JSON.parse(text);
    } catch {
      if (res.ok) throw new ApiError(res.status, `invalid JSON from ${path}`, url);
    }
    if (!res.ok) {
      const msg =
        body && typeof body === "object" && "error" in body && typeof body.error === "string"
          ? body.error
          : text.slice(0, 300) || res.statusText;
      throw new ApiError(res.status, msg, url);
    }
    return body as T;
  }

  /** Like get, but answers repeated requests for the same URL from memory (profiles are immutable
   * for a given run version, which callers put in the params). */
  cached<T>(path: string, params: Params = {}): Promise<T> {
    const key = this.url(path, params);
    let p = this.cache.get(key);
    if (p) {
      this.cache.delete(key); // LRU: re-insert at the end
    } else {
      p = this.get<T>(path, params);
      p.catch(() => this.cache.delete(key));
    }
    this.cache.set(key, p);
    while (this.cache.size > this.cacheLimit) {
      const oldest = this.cache.keys().next().value;
      if (oldest === undefined) break;
      this.cache.delete(oldest);
    }
    return p as Promise<T>;
  }

  clearCache(): void {
    this.cache.clear();
  }
}

/** The API rooted at the page's own folder (…/data/plugin/pytorch_profiler/). */
export function pageApi(): Api {
  return new Api(new URL(".", document.baseURI).toString());
}
