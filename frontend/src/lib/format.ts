// Number formatting with units. Inputs are in the API's units: times in microseconds, sizes in bytes,
// ratios as percentages (0-100) unless the name says otherwise.

const nf = (digits: number) =>
  new Intl.NumberFormat("en-US", { maximumFractionDigits: digits, minimumFractionDigits: 0 });
const nf0 = nf(0);
const nf2 = nf(2);

export function isMissing(v: unknown): v is null | undefined {
  return v === null || v === undefined || (typeof v === "number" && !Number.isFinite(v));
}

/** Three significant digits, at most two decimals: 123, 12.3, 1.23, 0.12 */
function sig3(x: number): string {
  const a = Math.abs(x);
  const digits = a >= 100 ? 0 : a >= 10 ? 1 : 2;
  return nf(digits).format(x);
}

/** A duration given in µs, shown in µs, ms or s so that the number stays readable. */
export function formatDuration(us: number | null | undefined): string {
  if (isMissing(us)) return "–";
  const a = Math.abs(us);
  if (a >= 1e6) return `${sig3(us / 1e6)} s`;
  if (a >= 1e3) return `${sig3(us / 1e3)} ms`;
  return `${sig3(us)} µs`;
}

const BYTE_UNITS = ["B", "KiB", "MiB", "GiB", "TiB"] as const;

/** A size in bytes in binary units (1 KiB = 1024 B). */
export function formatBytes(bytes: number | null | undefined): string {
  if (isMissing(bytes)) return "–";
  let v = bytes;
  let i = 0;
  while (Math.abs(v) >= 1024 && i < BYTE_UNITS.length - 1) {
    v /= 1024;
    i += 1;
  }
  return i === 0 ? `${nf0.format(v)} B` : `${sig3(v)} ${BYTE_UNITS[i]}`;
}

/** A percentage already scaled to 0-100. */
export function formatPercent(p: number | null | undefined): string {
  if (isMissing(p)) return "–";
  return `${nf2.format(p)} %`;
}

export function formatCount(n: number | null | undefined): string {
  if (isMissing(n)) return "–";
  return Number.isInteger(n) ? nf0.format(n) : nf2.format(n);
}

export function formatNumber(n: number | null | undefined): string {
  if (isMissing(n)) return "–";
  return nf2.format(n);
}

/** Bandwidth given in GB/s (decimal units, 1 GB = 10^9 B), shown in GB/s, MB/s or KB/s. */
export function formatBandwidth(gbps: number | null | undefined): string {
  if (isMissing(gbps)) return "–";
  const a = Math.abs(gbps);
  if (a === 0 || a >= 1) return `${sig3(gbps)} GB/s`;
  if (a >= 1e-3) return `${sig3(gbps * 1e3)} MB/s`;
  return `${sig3(gbps * 1e6)} KB/s`;
}

export type ValueKind = "text" | "duration" | "bytes" | "percent" | "count" | "number" | "bandwidth";

export function formatValue(kind: ValueKind, v: unknown): string {
  if (kind === "text") return v === null || v === undefined ? "" : String(v);
  if (typeof v !== "number") return isMissing(v) ? "–" : String(v);
  switch (kind) {
    case "duration":
      return formatDuration(v);
    case "bytes":
      return formatBytes(v);
    case "percent":
      return formatPercent(v);
    case "count":
      return formatCount(v);
    case "bandwidth":
      return formatBandwidth(v);
    default:
      return formatNumber(v);
  }
}
