// Keyboard input on the timeline (on the window, while the timeline is on the page and no text field
// has the focus): W/S zoom at the pointer (or the middle), A/D pan, Esc clears the selection and range.

import { type InputHost, LABEL_W, type Listen } from "./input";
import { pan, xToTime, zoomAt } from "./nav";

export function attachKeys(h: InputHost, on: Listen): void {
  on(window, "keydown", (e) => {
    if (!h.el.root.isConnected || e.ctrlKey || e.metaKey || e.altKey) return;
    const tgt = e.target as HTMLElement | null;
    if (tgt && (tgt.tagName === "INPUT" || tgt.tagName === "TEXTAREA" || tgt.tagName === "SELECT" || tgt.isContentEditable)) return;
    const span = h.view.t1 - h.view.t0;
    const at = h.mouseX !== null && h.mouseX >= LABEL_W ? xToTime(h.view, h.areaW, h.mouseX - LABEL_W) : (h.view.t0 + h.view.t1) / 2;
    const k = e.key.toLowerCase();
    if (k === "w") h.setView(zoomAt(h.view, 0.8, at, h.total));
    else if (k === "s") h.setView(zoomAt(h.view, 1.25, at, h.total));
    else if (k === "a") h.setView(pan(h.view, -span * 0.2, h.total));
    else if (k === "d") h.setView(pan(h.view, span * 0.2, h.total));
    else if (k === "escape") {
      h.cb.onSelect(null, null);
      h.setRange(null);
      h.cb.onRange(null);
    } else return;
    e.preventDefault();
  });
}
