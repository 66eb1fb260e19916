// The Trace view's frame: the view reaches the window's bottom (the track area takes what the toolbar,
// the ruler and the hint line leave), and the details of the selection sit in a panel beside the
// tracks, resized by dragging its edge (the width is remembered in the browser).

import { type ReactNode, type RefObject, useLayoutEffect, useRef, useState } from "react";

const MIN_VIEW_H = 420;
const SIDE_KEY = "torch-tb-profiler.timeline.sideWidth";
const SIDE_DEFAULT = 380;
const SIDE_MIN = 260;
/** what the side panel leaves to the tracks at least (css px) */
const TRACKS_MIN = 360;

/** Keep `ref`'s element as tall as the window below its top, less its container's bottom padding (at
 * least MIN_VIEW_H): the page does not scroll. */
export function useFillHeight(ref: RefObject<HTMLElement | null>): void {
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    const fit = () => {
      const parent = el.parentElement;
      const bottom = parent ? parseFloat(getComputedStyle(parent).paddingBottom) || 0 : 0;
      const top = el.getBoundingClientRect().top + window.scrollY;
      const h = `${Math.max(MIN_VIEW_H, Math.floor(window.innerHeight - top - bottom))}px`;
      if (el.style.height !== h) el.style.height = h;
    };
    fit();
    window.addEventListener("resize", fit);
    // the top bar can wrap onto more lines (its height moves this view's top)
    const ro = new ResizeObserver(fit);
    ro.observe(document.body);
    return () => {
      window.removeEventListener("resize", fit);
      ro.disconnect();
    };
  }, [ref]);
}

function readSide(): number {
  try {
    const v = Number(localStorage.getItem(SIDE_KEY));
    return Number.isFinite(v) && v >= SIDE_MIN ? v : SIDE_DEFAULT;
  } catch {
    return SIDE_DEFAULT;
  }
}

/** The panel beside the tracks, with a splitter on its left edge. */
export function SidePanel({ children }: { children: ReactNode }): ReactNode {
  const [width, setWidth] = useState(readSide);
  const ref = useRef<HTMLDivElement>(null);
  const startDrag = (e: React.MouseEvent) => {
    if (e.button !== 0) return;
    e.preventDefault();
    const panel = ref.current;
    const body = panel?.parentElement;
    if (!panel || !body) return;
    const right = panel.getBoundingClientRect().right;
    // where on the splitter it was grabbed: the edge moves with the pointer, without a jump
    const grab = right - e.clientX - width;
    const maxW = Math.max(SIDE_MIN, body.getBoundingClientRect().width - TRACKS_MIN);
    let last = width;
    const move = (ev: MouseEvent) => {
      last = Math.round(Math.max(SIDE_MIN, Math.min(maxW, right - ev.clientX - grab)));
      setWidth(last);
    };
    const up = () => {
      window.removeEventListener("mousemove", move);
      window.removeEventListener("mouseup", up);
      try {
        localStorage.setItem(SIDE_KEY, String(last));
      } catch {
        // storage refused: the width lasts for this page
      }
    };
    window.addEventListener("mousemove", move);
    window.addEventListener("mouseup", up);
  };
  return (
    <>
      <div className="tl-splitter" data-testid="timeline-splitter" role="separator" aria-orientation="vertical" title="Drag to resize the panel" onMouseDown={startDrag} />
      <div className="tl-side" ref={ref} data-testid="timeline-side" style={{ width }}>
        {children}
      </div>
    </>
  );
}
