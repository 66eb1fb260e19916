// Tables as tall as the window: the height below the sticky top bar, followed on window resizes (and
// when the top bar wraps onto another line), so that a table scrolled into view fills the window.
import { useEffect, useState } from "react";

/** Never shorter than this (a tiny window still shows some rows). */
export const MIN_TABLE_PX = 240;

function windowHeight(): number {
  if (typeof window === "undefined") return 800;
  const bar = document.querySelector(".topbar")?.getBoundingClientRect().height ?? 0;
  return Math.max(MIN_TABLE_PX, window.innerHeight - bar);
}

/** The window's height below the top bar, in px. */
export function useWindowHeight(): number {
  const [h, setH] = useState(windowHeight);
  useEffect(() => {
    const update = () => setH(windowHeight());
    window.addEventListener("resize", update);
    const bar = document.querySelector(".topbar");
    const ro = bar && typeof ResizeObserver !== "undefined" ? new ResizeObserver(update) : null;
    if (bar) ro?.observe(bar);
    update();
    return () => {
      window.removeEventListener("resize", update);
      ro?.disconnect();
    };
  }, []);
  return h;
}

/** The most a table's scrolling part may take: the window's height less the table's toolbar (measured
 * when rendered) and a margin. */
export function tableMaxHeight(windowPx: number, toolbar: HTMLElement | null): number {
  const above = toolbar ? toolbar.offsetHeight + 10 : 44;
  return Math.max(MIN_TABLE_PX, windowPx - above - 12);
}
