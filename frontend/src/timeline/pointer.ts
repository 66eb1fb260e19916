// Mouse input on the timeline: drag to pan (or to select a range with Shift / the range mode), click to
// select or collapse, wheel to zoom, pan and scroll, the overview's window dragged, hover tooltips.

import { type Hit, type InputHost, type Listen } from "./input";
import { lineAt, rowAt } from "./layout";
import { type Range, fitRange, formatTime, pan, xToTime, zoomAt } from "./nav";
import { STEPS_H, counterValueAt } from "./render";

interface Drag {
  kind: "pan" | "range" | "label" | "minimap" | "labelW";
  x: number;
  y: number;
  view: Range;
  scrollY: number;
  moved: boolean;
  hit: Hit | null;
}

/** How near the label column's edge (css px) a press resizes the column. */
const EDGE_PX = 4;
const nearEdge = (h: InputHost, x: number) => Math.abs(x - h.labelW) <= EDGE_PX;

const local = (e: MouseEvent, c: HTMLElement) => {
  const r = c.getBoundingClientRect();
  return { x: e.clientX - r.left, y: e.clientY - r.top };
};

export function attachPointer(h: InputHost, on: Listen): void {
  const { main, ruler, minimap } = h.el;
  let drag: Drag | null = null;

  on(main, "wheel", (e) => onWheel(h, e, local(e, main).x), { passive: false });
  on(ruler, "wheel", (e) => onWheel(h, e, local(e, ruler).x), { passive: false });
  on(main, "mousedown", (e) => {
    if (e.button !== 0) return;
    const { x, y } = local(e, main);
    const kind = nearEdge(h, x) ? "labelW" : x < h.labelW ? "label" : e.shiftKey || h.rangeMode ? "range" : "pan";
    drag = { kind, x, y, view: h.view, scrollY: h.scrollY, moved: false, hit: kind === "pan" ? h.hitTest(x, y) : null };
    e.preventDefault();
    h.el.root.focus({ preventScroll: true });
  });
  on(minimap, "mousedown", (e) => {
    if (e.button !== 0) return;
    const { x, y } = local(e, minimap);
    const t = ((x - h.labelW) / h.areaW) * h.total;
    let view = h.view;
    if (t < view.t0 || t > view.t1) {
      const span = view.t1 - view.t0;
      h.setView({ t0: t - span / 2, t1: t + span / 2 });
      view = h.view;
    }
    drag = { kind: "minimap", x, y, view, scrollY: h.scrollY, moved: false, hit: null };
    e.preventDefault();
  });
  on(window, "mousemove", (e) => {
    const d = drag;
    if (!d) {
      if (e.target === main) hover(h, e, local(e, main));
      return;
    }
    const c = d.kind === "minimap" ? minimap : main;
    const { x, y } = local(e, c);
    if (d.kind === "labelW") {
      h.setLabelW(x);
      return;
    }
    if (Math.abs(x - d.x) + Math.abs(y - d.y) > 3) d.moved = true;
    if (!d.moved) return;
    const span = d.view.t1 - d.view.t0;
    if (d.kind === "pan") {
      h.view = pan(d.view, (-(x - d.x) * span) / h.areaW, h.total);
      h.setScroll(d.scrollY - (y - d.y));
      h.cb.onView(h.view);
    } else if (d.kind === "minimap") {
      h.setView(pan(d.view, ((x - d.x) * h.total) / h.areaW, h.total));
    } else if (d.kind === "range") {
      const a = xToTime(h.view, h.areaW, Math.max(0, d.x - h.labelW));
      const b = xToTime(h.view, h.areaW, Math.max(0, x - h.labelW));
      h.setRange({ t0: Math.min(a, b), t1: Math.max(a, b) });
    }
    hideTooltip(h);
  });
  on(window, "mouseup", (e) => {
    const d = drag;
    drag = null;
    if (!d) return;
    if (d.kind === "labelW") return;
    if (d.kind === "range" && d.moved && h.range) h.cb.onRange(h.range);
    if (d.moved) return;
    const { x, y } = local(e, main);
    if (d.kind === "label") {
      const l = lineAt(h.layout, y + h.scrollY);
      if (l?.collapsible) h.toggleKey(l.key);
    } else if (d.kind === "pan" || d.kind === "range") {
      const hit = h.hitTest(x, y);
      if (hit && hit.count > 1) {
        // a merged box: zoom onto it (its events show when the resolution allows)
        h.setView(fitRange(hit.start - h.base, hit.start - h.base + hit.dur, h.total));
      } else if (hit && hit.id) {
        h.cb.onSelect(hit.id, { id: hit.id, name: hit.name, track: hit.track, depth: hit.depth, start: hit.start, dur: hit.dur });
      } else {
        h.cb.onSelect(null, null);
        if (h.range) {
          h.setRange(null);
          h.cb.onRange(null);
        }
      }
    }
  });
  on(main, "dblclick", (e) => {
    const { x, y } = local(e, main);
    const hit = h.hitTest(x, y);
    if (hit) h.setView(fitRange(hit.start - h.base, hit.start - h.base + hit.dur, h.total, 0.1));
  });
  on(main, "mouseleave", () => {
    h.mouseX = null;
    hideTooltip(h);
  });
  on(ruler, "click", (e) => {
    const { x, y } = local(e, ruler);
    if (y > STEPS_H || x < h.labelW) return;
    const t = h.base + xToTime(h.view, h.areaW, x - h.labelW);
    const st = h.tracks.steps.find((s) => s.start <= t && t <= s.end);
    if (st) h.setView(fitRange(st.start - h.base, st.end - h.base, h.total, 0.02));
  });
}

function onWheel(h: InputHost, e: WheelEvent, x: number): void {
  e.preventDefault();
  const px = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? h.mainH : 1;
  const dx = e.deltaX * px;
  const dy = e.deltaY * px;
  const span = h.view.t1 - h.view.t0;
  if (e.ctrlKey || e.metaKey) {
    const at = x >= h.labelW ? xToTime(h.view, h.areaW, x - h.labelW) : (h.view.t0 + h.view.t1) / 2;
    const f = Math.exp(Math.max(-1, Math.min(1, dy * 0.004)));
    h.setView(zoomAt(h.view, f, at, h.total));
  } else if (e.shiftKey || Math.abs(dx) > Math.abs(dy)) {
    const d = e.shiftKey && dx === 0 ? dy : dx;
    h.setView(pan(h.view, (d * span) / h.areaW, h.total));
  } else {
    h.setScroll(h.scrollY + dy);
  }
}

function hover(h: InputHost, e: MouseEvent, p: { x: number; y: number }): void {
  h.mouseX = p.x;
  const tip = h.el.tooltip;
  let text = "";
  const hit = h.hitTest(p.x, p.y);
  if (nearEdge(h, p.x)) {
    hideTooltip(h);
    h.el.main.style.cursor = "col-resize";
    return;
  }
  if (p.x < h.labelW) {
    // the label's whole name (a long process name is cut to the column)
    const l = lineAt(h.layout, p.y + h.scrollY);
    if (l) text = l.label;
  } else if (hit) {
    text = `${hit.name}\n${formatTime(hit.dur)}`;
    if (hit.count > 1) text += ` · ${hit.count.toLocaleString("en-US")} merged events (click to zoom)`;
    else text += ` · at ${formatTime(hit.start - h.base)}`;
  } else if (p.x >= h.labelW) {
    const r = rowAt(h.layout, p.y + h.scrollY);
    const tp = r ? h.layout.tracks.get(r.track) : undefined;
    if (tp && tp.track.kind === "counter" && h.drawn) {
      const s = h.drawn.counters.get(tp.track.id);
      const t = h.base + xToTime(h.view, h.areaW, p.x - h.labelW);
      const v = s ? counterValueAt(s, t) : null;
      if (v !== null) text = `${tp.track.name}\n${fmtValue(v, tp.track.unit)} at ${formatTime(t - h.base)}`;
    }
  }
  if (!text) {
    hideTooltip(h);
    return;
  }
  tip.textContent = text;
  tip.style.display = "block";
  const host = h.el.root.getBoundingClientRect();
  const left = e.clientX - host.left + 14;
  tip.style.left = `${Math.min(left, host.width - 260)}px`;
  tip.style.top = `${e.clientY - host.top + 14}px`;
  h.el.main.style.cursor = hit ? "pointer" : "default";
}

function hideTooltip(h: InputHost): void {
  h.el.tooltip.style.display = "none";
}

export function fmtValue(v: number, unit: string): string {
  if (unit === "ratio") return `${(v * 100).toFixed(1)} %`;
  if (unit === "bytes") {
    const u = ["B", "KiB", "MiB", "GiB", "TiB"];
    let x = v;
    let i = 0;
    while (Math.abs(x) >= 1024 && i < u.length - 1) {
      x /= 1024;
      i++;
    }
    return `${+x.toPrecision(3)} ${u[i]}`;
  }
  return `${+v.toPrecision(4)}${unit ? ` ${unit}` : ""}`;
}
