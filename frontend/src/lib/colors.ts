// Colours that mean the same thing everywhere: one fixed colour per breakdown category (whatever the
// run, view or chart), distinct colours for the slices of one pie, grey for "Other".

export const OTHER_GREY = "#9e9e9e";

/** Step-time breakdown categories (analysis/device/breakdown.py) and the distributed view's parts. */
export const CATEGORY_COLORS: Record<string, string> = {
  kernel: "#4e79a7",
  memcpy: "#59a14f",
  memset: "#76b7b2",
  communication: "#e15759",
  runtime: "#b07aa1",
  dataloader: "#edc948",
  cpu_exec: "#f28e2b",
  other: OTHER_GREY,
  // distributed: computation is device work, overlap is computation hiding communication
  computation: "#4e79a7",
  overlap: "#8cd17d",
  synchronizing: "#ff9d9a",
  transferring: "#e15759",
};

// 20 hues that stay apart from each other (and from the grey of "Other") in light and dark themes.
const PALETTE = [
  "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
  "#1f77b4", "#8cd17d", "#d4a6c8", "#86bcb6", "#f1ce63", "#a0cbe8", "#ffbe7d", "#d37295", "#499894",
  "#b6992d", "#6a51a3",
];

/** The i-th of n distinct colours: the fixed palette first, then hues spread by the golden angle. */
export function distinctColor(i: number): string {
  if (i < PALETTE.length) return PALETTE[i] as string;
  const hue = Math.round((i * 137.508) % 360);
  const light = 45 + ((i * 7) % 3) * 10;
  return `hsl(${hue}, 60%, ${light}%)`;
}

/** "Other" and "Other (n)" slices, whatever their count. */
export function isOther(name: string): boolean {
  return /^Other( \(\d+\))?$/.test(name);
}

/** Colours for one pie's slices: the category's own colour when a slice has a category key, grey for
 * "Other", else distinct palette colours in slice order. */
export function sliceColors(slices: { name: string; key?: string }[]): string[] {
  let next = 0;
  return slices.map((s) => {
    if (s.key && CATEGORY_COLORS[s.key]) return CATEGORY_COLORS[s.key] as string;
    if (isOther(s.name)) return OTHER_GREY;
    return distinctColor(next++);
  });
}

/** A long name cut in the middle, so that names sharing a long prefix stay told apart:
 * "aten::cudnn_convolution_backward_weight" → "aten::cudnn_con…ackward_weight". */
/**
 * A legend name as a head that may be cut (CSS ellipsis) and a tail that stays: the tail starts where
 * the name first differs from the other names sharing its beginning (at most its last 12 characters
 * otherwise), so two long names that differ only at the end or in the middle never look alike.
 */
export function legendParts(names: string[], keep = 12): { head: string; tail: string }[] {
  return names.map((name, i) => {
    if (name.length <= keep) return { head: name, tail: "" };
    let common = 0;
    names.forEach((other, j) => {
      if (j === i) return;
      let k = 0;
      while (k < name.length && k < other.length && name[k] === other[k]) k++;
      common = Math.max(common, k);
    });
    const cut = Math.max(0, Math.min(name.length - keep, common));
    return { head: name.slice(0, cut), tail: name.slice(cut) };
  });
}

export function middleEllipsis(name: string, max = 44): string {
  if (name.length <= max) return name;
  const head = Math.ceil((max - 1) / 2);
  const tail = max - 1 - head;
  return `${name.slice(0, head)}…${name.slice(name.length - tail)}`;
}
