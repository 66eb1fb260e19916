// CSV per RFC 4180: fields with a comma, quote, CR or LF are quoted and quotes doubled. A field that a
// spreadsheet would run as a formula (=, +, -, @ first) is prefixed with a quote mark, since trace
// names come from user code.

export function csvField(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "number") return Number.isFinite(v) ? String(v) : "";
  let s = typeof v === "string" ? v : JSON.stringify(v);
  if (/^[=+\-@\t\r]/.test(s) && !/^-?\d/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The unit a column's raw CSV numbers are in, by value kind (the API's units). */
export const CSV_UNITS: Record<string, string> = { duration: "µs", bytes: "B", percent: "%", bandwidth: "GB/s" };

/** A CSV column header with the unit of its raw numbers: "Host total (µs)". */
export function csvHeader(header: string, kind: string): string {
  const unit = CSV_UNITS[kind];
  return unit ? `${header} (${unit})` : header;
}

export function toCsv(header: string[], rows: unknown[][]): string {
  const lines = [header.map(csvField).join(",")];
  for (const r of rows) lines.push(r.map(csvField).join(","));
  return lines.join("\r\n") + "\r\n";
}

export function downloadText(filename: string, text: string, mime = "text/csv"): void {
  const url = URL.createObjectURL(new Blob([text], { type: `${mime};charset=utf-8` }));
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** A file-name-safe slug of the parts, for downloads. */
export function fileSlug(...parts: (string | null | undefined)[]): string {
  return parts
    .filter((p): p is string => !!p)
    .map((p) => p.replace(/[^A-Za-z0-9._-]+/g, "_"))
    .join("-");
}
