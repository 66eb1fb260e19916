// Run list and per-run loading status, normalised from the `runs` route (docs/api.md).

export interface FileError {
  file: string;
  message: string;
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
  errors: FileError[];
  /** Repairs made to read a file (salvaged truncation, bare N/A, …). */
  warnings: FileError[];
  /** Changes when the run's data changes (reload); used to key the response cache. */
  version: string;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const str = (v: unknown): string => (typeof v === "string" ? v : v === null || v === undefined ? "" : String(v));

function pick(o: Obj, ...keys: string[]): unknown {
  for (const k of keys) if (k in o) return o[k];
  return undefined;
}

function fileLabel(e: Obj): string {
  const file = str(pick(e, "file", "path", "name"));
  return file;
}

function normalizeErrors(v: unknown): FileError[] {
  if (!Array.isArray(v)) {
    if (isObj(v)) return Object.entries(v).map(([file, message]) => ({ file, message: str(message) }));
    return [];
  }
  return v.map((e) =>
    isObj(e)
      ? { file: fileLabel(e), message: str(pick(e, "message", "error", "reason")) }
      : { file: "", message: str(e) },
  );
}

export function normalizeRun(r: unknown): RunInfo {
  if (!isObj(r)) {
    return {
      name: str(r),
      state: "ready",
      loading: false,
      filesDone: null,
      filesTotal: null,
      bytesDone: null,
      bytesTotal: null,
      errors: [],
      warnings: [],
      version: "",
    };
  }
  const progress = isObj(r.progress) ? r.progress : r;
  const filesDone = num(pick(progress, "files_done", "files_loaded", "loaded_files"));
  const filesTotal = num(pick(progress, "files_total", "total_files", "files"));
  const loadingRaw = pick(r, "loading", "is_loading");
  const state = str(pick(r, "state", "status"));
  const loading =
    typeof loadingRaw === "boolean"
      ? loadingRaw
      : state === "loading" || (filesDone !== null && filesTotal !== null && filesDone < filesTotal);
  const files = Array.isArray(r.files) ? r.files.filter(isObj) : [];
  const version = [
    str(pick(r, "version", "generation", "mtime")),
    ...files.map((f) => `${str(f.file)}:${str(f.size)}:${str(f.status)}`),
  ].join("|");
  return {
    name: str(pick(r, "name", "run")),
    state: state || (loading ? "loading" : "ready"),
    loading,
    filesDone,
    filesTotal,
    bytesDone: num(pick(progress, "bytes_done", "bytes_loaded", "loaded_bytes")),
    bytesTotal: num(pick(progress, "bytes_total", "total_bytes", "bytes")),
    errors: normalizeErrors(pick(r, "errors", "file_errors")),
    warnings: normalizeErrors(r.warnings),
    version,
  };
}

export interface RunsAnswer {
  runs: RunInfo[];
  /** The logdir is still being scanned, or some run is loading. */
  scanning: boolean;
  logdir: string;
  /** The logdir itself could not be listed (credentials, network, missing bucket). */
  scanError: string;
}

export function normalizeRuns(raw: unknown): RunsAnswer {
  if (Array.isArray(raw)) return { runs: raw.map(normalizeRun), scanning: false, logdir: "", scanError: "" };
  if (isObj(raw)) {
    const runs = Array.isArray(raw.runs) ? raw.runs.map(normalizeRun) : [];
    const scanning = raw.loading === true || raw.scanning === true;
    return { runs, scanning, logdir: str(raw.logdir), scanError: str(raw.scan_error) };
  }
  return { runs: [], scanning: false, logdir: "", scanError: "" };
}

/** A list-of-names answer (views, workers, spans): plain strings or objects with a name. */
export function normalizeNames(raw: unknown): string[] {
  const list = Array.isArray(raw) ? raw : isObj(raw) ? (Object.values(raw).find(Array.isArray) ?? []) : [];
  return list.map((x) => (isObj(x) ? str(pick(x, "name", "id", "label")) : str(x))).filter((s) => s !== "");
}
