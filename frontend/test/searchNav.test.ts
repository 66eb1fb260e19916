import { describe, expect, it } from "vitest";
import { centreKeepingZoom } from "../src/timeline/nav";
import { SEARCH_PAGE, inPage, nextRank, pageOffset } from "../src/timeline/searchNav";

describe("search stepping", () => {
  it("first Enter goes to the first match at or after the window's start", () => {
    expect(nextRank(-1, 1, 216, 40)).toBe(40);
    expect(nextRank(-1, 1, 216, 216)).toBe(0); // none after the start: the first
    expect(nextRank(-1, -1, 216, 40)).toBe(39);
    expect(nextRank(-1, -1, 216, 0)).toBe(215); // before the first: the last
    expect(nextRank(-1, 1, 0, 0)).toBe(-1);
  });
  it("steps wrap at both ends of all matches, not of a page", () => {
    expect(nextRank(0, -1, 12_000, 0)).toBe(11_999);
    expect(nextRank(11_999, 1, 12_000, 0)).toBe(0);
    expect(nextRank(9_999, 1, 12_000, 0)).toBe(10_000);
  });
  it("finds the page of a rank", () => {
    expect(pageOffset(10_000)).toBe(SEARCH_PAGE);
    expect(pageOffset(11_999)).toBe(SEARCH_PAGE);
    expect(pageOffset(9_999)).toBe(0);
    expect(inPage(10_000, 2_000, 11_999)).toBe(true);
    expect(inPage(0, 10_000, 10_000)).toBe(false);
  });
  it("centres at the current zoom, fitting an event wider than the window", () => {
    expect(centreKeepingZoom(500, 10, { t0: 0, t1: 100 }, 10_000)).toEqual({ t0: 455, t1: 555 });
    const wide = centreKeepingZoom(500, 400, { t0: 0, t1: 100 }, 10_000);
    expect(wide.t0).toBeLessThanOrEqual(500);
    expect(wide.t1).toBeGreaterThanOrEqual(900);
    expect(wide.t1 - wide.t0).toBeLessThan(500);
  });
});
