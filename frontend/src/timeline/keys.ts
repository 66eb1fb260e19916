// Keyboard input on the timeline (on the window, while the timeline is on the page and no text field
// has the focus): W/S zoom at the pointer (or the middle), smoothly while held; A/D pan; F zooms to the
// selection, M marks it; ? shows the key help, Esc closes it or clears the selection and range.

import { type InputHost, type Listen } from "./input";
import { pan, xToTime, zoomAt } from "./nav";

/** Every key and pointer gesture, for the help overlay (Trace.tsx renders it). */
export const KEY_HELP: [string, string][] = [
  ["W / S", "zoom in / out at the pointer; hold to keep zooming"],
  ["A / D", "pan left / right"],
  ["F", "zoom to the selection (the selected range, else the selected event)"],
  ["M", "mark the selection: a band kept across the tracks (M on the marked range again removes it)"],
  ["Esc", "close this help; else clear the selection and the range"],
  ["?", "show or hide this help"],
  ["Ctrl + wheel", "zoom"],
  ["Shift + wheel, drag", "pan"],
  ["wheel", "scroll the tracks"],
  ["click", "select an event (a merged box: zoom onto it)"],
  ["double-click", "zoom to an event"],
  ["Shift + drag", "select a time range (or tick Select range)"],
  ["click a label", "collapse or expand it; drag the label column's edge to resize it"],
  ["click a step", "zoom to it"],
];

/** Held W/S: the view shrinks (grows) by this factor per second, one frame at a time. */
export const ZOOM_PER_S = 0.15;
/** A press zooms by this step at once (a tap is one step, as before holding zoomed). */
const ZOOM_STEP = 0.8;

export interface KeyActions {
  /** fit the view to the selected range, else the selected event */
  zoomToSelection(): void;
  /** mark the selected range (or event), or remove the mark */
  toggleMark(): void;
}

export function attachKeys(h: InputHost & KeyActions, on: Listen, cleanup: (() => void)[]): void {
  const held = new Set<"w" | "s">();
  let frame = 0;
  let last = 0;
  const anchor = () => (h.mouseX !== null && h.mouseX >= h.labelW ? xToTime(h.view, h.areaW, h.mouseX - h.labelW) : (h.view.t0 + h.view.t1) / 2);
  const tick = (now: number) => {
    frame = 0;
    const dt = Math.min(0.1, Math.max(0, now - last) / 1000);
    last = now;
    const dir = (held.has("s") ? 1 : 0) - (held.has("w") ? 1 : 0);
    if (dir !== 0 && dt > 0) h.setView(zoomAt(h.view, Math.pow(ZOOM_PER_S, -dir * dt), anchor(), h.total));
    if (held.size) frame = requestAnimationFrame(tick);
  };
  const release = () => {
    held.clear();
    cancelAnimationFrame(frame);
    frame = 0;
  };
  cleanup.push(release);
  const help = () => h.el.help ?? null;

  on(window, "keydown", (e) => {
    if (!h.el.root.isConnected || e.ctrlKey || e.metaKey || e.altKey) return;
    const tgt = e.target as HTMLElement | null;
    if (tgt && (tgt.tagName === "INPUT" || tgt.tagName === "TEXTAREA" || tgt.tagName === "SELECT" || tgt.isContentEditable)) return;
    const span = h.view.t1 - h.view.t0;
    const k = e.key.toLowerCase();
    if (k === "w" || k === "s") {
      // the key repeat's keydowns change nothing: the animation zooms while the key is down
      if (!e.repeat && !held.has(k)) {
        h.setView(zoomAt(h.view, k === "w" ? ZOOM_STEP : 1 / ZOOM_STEP, anchor(), h.total));
        held.add(k);
        last = performance.now();
        if (!frame) frame = requestAnimationFrame(tick);
      }
    } else if (k === "a") h.setView(pan(h.view, -span * 0.2, h.total));
    else if (k === "d") h.setView(pan(h.view, span * 0.2, h.total));
    else if (k === "f") h.zoomToSelection();
    else if (k === "m") h.toggleMark();
    else if (k === "?") {
      const el = help();
      if (el) el.hidden = !el.hidden;
    } else if (k === "escape") {
      const el = help();
      if (el && !el.hidden) el.hidden = true;
      else {
        h.cb.onSelect(null, null);
        h.setRange(null);
        h.cb.onRange(null);
      }
    } else return;
    e.preventDefault();
  });
  on(window, "keyup", (e) => {
    const k = e.key.toLowerCase();
    if (k === "w" || k === "s") held.delete(k);
    if (!held.size) release();
  });
  on(window, "blur", release);
}
