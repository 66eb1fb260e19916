// Run list and per-run loading status, read from the `runs` route (docs/api.md): one spelling per field.

export interface FileError {
  file: string;
  message: string;
}

export interface RunFile {
  worker: string;
  span: string;
  /** waiting | loading | ready | error */
  status: string;
  /** resident | summary | evicted (dropped for the memory budget; read again when opened) | "" */
  memory: string;
}

export interface RunInfo {
  name: string;
  /** loading | ready | error (every file failed) */
  state: string;
  /** Still loading (files left to parse). */
  loading: boolean;
  filesDone: number | null;
  filesTotal: number | null;
  bytesDone: number | null;
  bytesTotal: number | null;
  files: RunFile[];
  errors: FileError[];
  /** Repairs made to read a file (salvaged truncation, bare N/A, …). */
  warnings: FileError[];
  /** The run's graph capture traces (docs/api.md, "runs"), null without a capture folder. */
  captures: RunCaptures | null;
  /** Changes when the run's data changes (reload); used to key the response cache. */
  version: string;
  /** Whether its loaded profiles have device activity (kernels); null before any has loaded. */
  deviceActivity: boolean | null;
}

export interface RunCaptures {
  files: string[];
  batchSizes: number[];
  matchedReplays: number;
  unmatched: string[];
  merged: boolean;
}

/** "2 capture traces, batch sizes 8, 32" (the label the run shows). */
export function captureLabel(c: RunCaptures): string {
  const n = c.files.length;
  const sizes = c.batchSizes.length ? `, batch size${c.batchSizes.length === 1 ? "" : "s"} ${c.batchSizes.join(", ")}` : "";
  return `${n} capture trace${n === 1 ? "" : "s"}${sizes}`;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const str = (v: unknown): string => (typeof v === "string" ? v : v === null || v === undefined ? "" : String(v));
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);

function readCaptures(v: unknown): RunCaptures | null {
  if (!isObj(v)) return null;
  const nums = (x: unknown): number[] => (Array.isArray(x) ? x.map(num).filter((n): n is number => n !== null) : []);
  return {
    files: Array.isArray(v.files) ? v.files.map(str) : [],
    batchSizes: nums(v.batch_sizes),
    matchedReplays: num(v.matched_replays) ?? 0,
    unmatched: Array.isArray(v.unmatched) ? v.unmatched.map(str) : [],
    merged: v.merged === true,
  };
}

function fileMessages(v: unknown): FileError[] {
  return list(v).map((e) => ({ file: str(e.file), message: str(e.message) }));
}

export function normalizeRun(r: unknown): RunInfo {
  const o = isObj(r) ? r : {};
  const progress = isObj(o.progress) ? o.progress : {};
  const state = str(o.state);
  const files = list(o.files).map((f) => ({
    worker: str(f.worker),
    span: str(f.span),
    status: str(f.status),
    memory: str(f.memory),
  }));
  return {
    name: str(o.name),
    state,
    loading: state === "loading",
    filesDone: num(progress.files_done),
    filesTotal: num(progress.files_total),
    bytesDone: num(progress.bytes_done),
    bytesTotal: num(progress.bytes_total),
    files,
    errors: fileMessages(o.errors),
    warnings: fileMessages(o.warnings),
    captures: readCaptures(o.captures),
    deviceActivity: typeof o.device_activity === "boolean" ? o.device_activity : null,
    version: list(o.files)
      .map((f) => `${str(f.file)}:${str(f.size)}:${str(f.status)}`)
      .join("|"),
  };
}

export interface RunsAnswer {
  runs: RunInfo[];
  /** The logdir is still being scanned, or some run is loading. */
  scanning: boolean;
  logdir: string;
  /** The logdir itself could not be listed (credentials, network, missing bucket). */
  scanError: string;
  /** What the last listing skipped and why (a symlink loop, an unreadable directory, too deep). */
  scanWarnings: string[];
}

export function normalizeRuns(raw: unknown): RunsAnswer {
  const o = isObj(raw) ? raw : {};
  return {
    runs: Array.isArray(o.runs) ? o.runs.map(normalizeRun) : [],
    scanning: o.loading === true,
    logdir: str(o.logdir),
    scanError: str(o.scan_error),
    scanWarnings: (Array.isArray(o.scan_warnings) ? o.scan_warnings : []).map(str).filter((w) => w !== ""),
  };
}

/** A list-of-names answer (views, workers, spans): an array of strings. */
export function normalizeNames(raw: unknown): string[] {
  return (Array.isArray(raw) ? raw : []).map(str).filter((s) => s !== "");
}

/** Whether any file of this worker (in this span, when given) loaded. */
export function workerLoaded(run: RunInfo, worker: string, span?: string | null): boolean {
  return run.files.some((f) => f.worker === worker && (span == null || f.span === span) && f.status === "ready");
}

/** Whether every file of this worker failed to load. */
export function workerFailed(run: RunInfo, worker: string): boolean {
  const mine = run.files.filter((f) => f.worker === worker);
  return mine.length > 0 && mine.every((f) => f.status === "error");
}

/** Whether this worker's loaded files were all dropped from memory for the memory budget (opening it
 * reads them again). */
export function workerEvicted(run: RunInfo, worker: string): boolean {
  const ready = run.files.filter((f) => f.worker === worker && f.status === "ready");
  return ready.length > 0 && ready.every((f) => f.memory === "evicted");
}

/** The worker to open when none is asked for: the first one that loaded, else the first one. */
export function defaultWorker(run: RunInfo, workers: string[]): string | null {
  return workers.find((w) => workerLoaded(run, w)) ?? workers[0] ?? null;
}

/** The pages of the `runs` answer joined into one raw answer (docs/api.md "runs": an answer is at most
 * 1 MB, cut between files; a run cut between pages is listed on each, with that page's files). */
export function joinRunPages(pages: unknown[]): Obj {
  const objs = pages.filter(isObj);
  const first = objs[0] ?? {};
  const runs = new Map<string, Obj>();
  for (const page of objs) {
    for (const r of list(page.runs)) {
      const name = str(r.name);
      const held = runs.get(name);
      if (!held) {
        runs.set(name, { ...r, files: list(r.files), errors: list(r.errors), warnings: list(r.warnings) });
        continue;
      }
      for (const key of ["files", "errors", "warnings"]) held[key] = [...list(held[key]), ...list(r[key])];
    }
  }
  const last = objs[objs.length - 1] ?? {};
  return { ...first, loading: objs.some((p) => p.loading === true), memory: last.memory ?? first.memory, runs: [...runs.values()] };
}

/** Every page of `runs`, joined (``get`` fetches one page by offset). */
export async function fetchAllRuns(get: (params: { offset: number }) => Promise<unknown>, maxPages = 10000): Promise<RunsAnswer> {
  const pages: unknown[] = [];
  let offset: number | null = 0;
  while (offset !== null && pages.length < maxPages) {
    const page: unknown = await get({ offset });
    pages.push(page);
    const next = isObj(page) ? num(page.next_offset) : null;
    offset = next !== null && next > offset ? next : null;
  }
  return normalizeRuns(joinRunPages(pages));
}
