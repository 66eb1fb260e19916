// A "▸ timeline" link from a table row grouped finer than by name carries that row's other keys (an
// operator's input shape; a kernel's op and launch shape) in the `fwith` state key, as the
// `timeline/longest` filters they are, so the Trace view opens the longest instance of that row.

/** Filters → the `fwith` value. */
export function findWith(filters: Record<string, string>): string {
  return new URLSearchParams(filters).toString();
}

/** The `fwith` value → `timeline/longest` filters ({} when absent). */
export function readFindWith(fwith: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (fwith) new URLSearchParams(fwith).forEach((v, k) => (out[k] = v));
  return out;
}
