// Tolerant readers for JSON answers: the first present key wins, with a type check.

export type Obj = Record<string, unknown>;

export const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

export function get(o: unknown, ...keys: string[]): unknown {
  if (!isObj(o)) return undefined;
  for (const k of keys) if (k in o && o[k] !== undefined) return o[k];
  return undefined;
}

export function num(o: unknown, ...keys: string[]): number | null {
  const v = get(o, ...keys);
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

export function str(o: unknown, ...keys: string[]): string {
  const v = get(o, ...keys);
  return typeof v === "string" ? v : v === null || v === undefined ? "" : String(v);
}

export function arr(o: unknown, ...keys: string[]): unknown[] {
  const v = keys.length ? get(o, ...keys) : o;
  return Array.isArray(v) ? v : [];
}

export function bool(o: unknown, ...keys: string[]): boolean {
  return get(o, ...keys) === true;
}
