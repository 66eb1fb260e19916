// The timeline's overview strip (the minimap): event density over the whole profile and the first
// utilization counter, drawn once per answer, theme and size (the visible window is drawn over it).

import type { TlTrack, TlWindow } from "./api";
import type { Range } from "./nav";
import { type Palette, drawCounter } from "./render";

export const MINIMAP_H = 44;

export interface MinimapGeometry {
  pal: Palette;
  cssW: number;
  /** the drawing area's width (css px), right of the label column */
  areaW: number;
  labelW: number;
  /** the profile's length (µs) and its start on the trace's clock */
  total: number;
  base: number;
  tracks: TlTrack[];
}

export function drawMinimapBase(ctx: CanvasRenderingContext2D, m: TlWindow | null, g: MinimapGeometry): void {
  const { pal, cssW, labelW, total, base } = g;
  const W = g.areaW;
  ctx.fillStyle = pal.panel;
  ctx.fillRect(0, 0, cssW, MINIMAP_H);
  ctx.fillStyle = pal.muted;
  ctx.font = "11px system-ui, sans-serif";
  ctx.textBaseline = "middle";
  ctx.fillText("Overview", 6, MINIMAP_H / 2);
  const full: Range = { t0: 0, t1: total };
  if (m) {
    // event density: busy time per pixel, summed over every row (deep nesting shows as busier)
    const bins = new Float64Array(W);
    const scale = W / total;
    for (let i = 0; i < m.count; i++) {
      let a = (m.startUs[i]! - base) * scale;
      const b = a + m.durUs[i]! * scale;
      while (a < b) {
        const k = Math.floor(a);
        const next = Math.min(b, k + 1);
        if (k >= 0 && k < W) bins[k]! += next - a;
        a = next;
      }
    }
    let max = 0;
    for (const v of bins) max = Math.max(max, v);
    if (max > 0) {
      ctx.fillStyle = pal.dark ? "rgba(154,164,174,0.45)" : "rgba(89,99,110,0.35)";
      for (let k = 0; k < W; k++) {
        const h = (bins[k]! / max) * (MINIMAP_H - 6);
        if (h > 0) ctx.fillRect(labelW + k, MINIMAP_H - 2 - h, 1, h);
      }
    }
    // the first utilization counter, when the trace has one
    const util = g.tracks.find((t) => t.kind === "counter" && /utilization/i.test(t.name));
    const s = util ? m.counters.get(util.id) : undefined;
    if (util && s) drawCounter(ctx, s, util.max || 1, 3, MINIMAP_H - 6, { view: full, base: base, x0: labelW, width: W, height: MINIMAP_H, scrollY: 0 }, pal);
  }
  ctx.fillStyle = pal.border;
  ctx.fillRect(0, MINIMAP_H - 1, cssW, 1);
}
