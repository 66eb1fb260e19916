// Where Enter, Shift+Enter and the ‹ › buttons go among a search's matches. Matches are ranked by start
// time over the whole answer (`total` of them); the page only holds `PAGE` of them at a time, so a rank
// past it is fetched by its page.

/** Matches fetched per request (and outlined by "Highlight all"). */
export const SEARCH_PAGE = 10_000;

/** The rank to go to: from the current match `k` one step on (wrapping at both ends); with no current
 * match (`k` < 0), the first match at or after the window's start (`fromRank`, `total` when none is:
 * then the first) or, stepping back, the one before it (wrapping to the last). -1 when nothing matches. */
export function nextRank(k: number, dir: 1 | -1, total: number, fromRank: number): number {
  if (total <= 0) return -1;
  const mod = (i: number) => ((i % total) + total) % total;
  if (k >= 0) return mod(k + dir);
  return dir > 0 ? mod(fromRank) : mod(fromRank - 1);
}

/** The offset of the page holding `rank`. */
export function pageOffset(rank: number, page = SEARCH_PAGE): number {
  return Math.floor(Math.max(rank, 0) / page) * page;
}

/** Whether a page (from `offset`, `count` matches) holds `rank`. */
export function inPage(offset: number, count: number, rank: number): boolean {
  return rank >= offset && rank < offset + count;
}
