// The Diff view's default baseline for an experiment (docs/user_guide.md, "Diff"): the same run and
// worker's other span (the one before the experiment's, else the next), else the run whose name is
// most like the experiment's among those of the same device kind (device activity or none), with
// the same worker and span names where it has them. Pure: tested without a browser.

export interface BaselineRun {
  name: string;
  files: { worker: string; span: string }[];
  /** whether its profiles have device activity; null when not known yet */
  deviceActivity: boolean | null;
}

export interface ProfileChoice {
  run: string;
  worker: string;
  /** null for a worker's only, unnamed span */
  span: string | null;
}

function spanOrder(a: string, b: string): number {
  const x = Number(a);
  const y = Number(b);
  if (Number.isFinite(x) && Number.isFinite(y)) return x - y;
  return a < b ? -1 : a > b ? 1 : 0;
}

function spansOf(run: BaselineRun, worker: string): string[] {
  return [...new Set(run.files.filter((f) => f.worker === worker).map((f) => f.span))].sort(spanOrder);
}

function workersOf(run: BaselineRun): string[] {
  return [...new Set(run.files.map((f) => f.worker))].sort();
}

function bigrams(s: string): Map<string, number> {
  const out = new Map<string, number>();
  const t = s.toLowerCase();
  for (let i = 0; i + 1 < t.length; i++) out.set(t.slice(i, i + 2), (out.get(t.slice(i, i + 2)) ?? 0) + 1);
  return out;
}

/** Name similarity in [0, 1]: the Dice coefficient of character bigrams, ties broken by a longer
 * common prefix (resnet50_num_workers_0 is nearer resnet50_num_workers_4 than resnet18_...). */
export function nameSimilarity(a: string, b: string): number {
  const x = bigrams(a);
  const y = bigrams(b);
  let both = 0;
  let total = 0;
  for (const [k, n] of x) both += Math.min(n, y.get(k) ?? 0);
  for (const n of x.values()) total += n;
  for (const n of y.values()) total += n;
  return total === 0 ? (a === b ? 1 : 0) : (2 * both) / total;
}

function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

function pickSpan(spans: string[], want: string | null): string | null {
  if (want !== null && spans.includes(want)) return want;
  return spans[0] ?? null;
}

export function defaultBaseline(exp: ProfileChoice, runs: BaselineRun[]): ProfileChoice | null {
  const own = runs.find((r) => r.name === exp.run);
  if (own) {
    const spans = spansOf(own, exp.worker);
    const at = exp.span === null ? -1 : spans.indexOf(exp.span);
    const others = spans.filter((s) => s !== exp.span);
    if (others.length) {
      const before = at > 0 ? spans[at - 1] : undefined;
      return { run: exp.run, worker: exp.worker, span: before ?? others[0] ?? null };
    }
  }
  const kind = own?.deviceActivity ?? null;
  const candidates = runs.filter((r) => r.name !== exp.run && r.files.length > 0);
  const sameKind = candidates.filter((r) => kind === null || r.deviceActivity === null || r.deviceActivity === kind);
  const pool = sameKind.length ? sameKind : candidates;
  if (pool.length) {
    const score = (r: BaselineRun) => nameSimilarity(r.name, exp.run);
    const best = [...pool].sort(
      (a, b) => score(b) - score(a) || commonPrefix(b.name, exp.run) - commonPrefix(a.name, exp.run) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
    )[0] as BaselineRun;
    const workers = workersOf(best);
    const worker = workers.includes(exp.worker) ? exp.worker : (workers[0] as string);
    return { run: best.name, worker, span: pickSpan(spansOf(best, worker), exp.span) };
  }
  // one run: another worker of it (same span where it has one), else the experiment itself
  if (own) {
    const other = workersOf(own).find((w) => w !== exp.worker);
    if (other !== undefined) return { run: exp.run, worker: other, span: pickSpan(spansOf(own, other), exp.span) };
  }
  return own ? { ...exp } : null;
}
