// The timeline's label column: group headers, track names (sticky while a track scrolls), counter
// maxima and overlap-lane notes. Drawn into a layer that is copied while only the view changes.

import type { Layout } from "./layout";
import { ROW_H } from "./layout";
import { fmtValue } from "./pointer";
import { type Palette, fitText } from "./render";

export function drawTrackLabels(ctx: CanvasRenderingContext2D, layout: Layout, scrollY: number, labelW: number, H: number, pal: Palette): void {
  ctx.fillStyle = pal.panel;
  ctx.fillRect(0, 0, labelW, H);
  ctx.font = "12px system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
  ctx.textBaseline = "middle";
  for (const l of layout.lines) {
    const y = l.y - scrollY;
    if (y + l.h < 0 || y > H) continue;
    if (l.kind === "group") {
      ctx.font = "600 12px system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
      ctx.fillStyle = pal.fg;
      ctx.fillText(`${l.collapsed ? "▸" : "▾"} ${fitText(l.label, labelW - 24)}`, 6, y + l.h / 2);
      ctx.font = "12px system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
    } else if (l.place) {
      const t = l.place.track;
      const ty = Math.max(y + 9, Math.min(8, y + l.h - 9)); // sticky label while the track scrolls
      ctx.fillStyle = pal.fg;
      const mark = l.collapsible ? (l.collapsed ? "▸ " : "▾ ") : "   ";
      ctx.fillText(`${mark}${fitText(t.name, labelW - 40)}`, 14, ty);
      if (t.kind === "counter") {
        ctx.fillStyle = pal.muted;
        ctx.font = "10px system-ui, sans-serif";
        ctx.fillText(`max ${fmtValue(t.max, t.unit)}`, 28, y + l.h - 8);
        ctx.font = "12px system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
      }
      if (!l.collapsed && t.extraRows > 0) {
        ctx.fillStyle = pal.muted;
        ctx.font = "10px system-ui, sans-serif";
        for (let k = t.rows - t.extraRows; k < t.rows; k++) {
          const ry = l.place.y + k * ROW_H - scrollY;
          ctx.fillText("overlap lane", labelW - 70, ry + ROW_H / 2);
        }
        ctx.font = "12px system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
      }
    }
    ctx.fillStyle = pal.border;
    ctx.fillRect(0, y + l.h - 1, labelW, 1);
  }
  ctx.fillStyle = pal.border;
  ctx.fillRect(labelW - 1, 0, 1, H);
}
