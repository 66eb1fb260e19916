// A rank × step heatmap drawn on one canvas: 1024 rows × a few steps cost one draw, not 4096 DOM nodes.
// Rows share 512 px down to one pixel per rank (a 1024-rank job is 1024 px tall), so a straggler's row
// is a line of a different colour across the steps. Hover names the cell (React text, never HTML);
// clicking a row reports its index.

import { type ReactNode, useEffect, useMemo, useRef, useState } from "react";
import { useTheme } from "../lib/theme";

export interface HeatmapProps {
  rows: string[];
  columns: string[];
  /** values[row][column]; null: the row has no such column (drawn as a hatch colour). */
  values: (number | null)[][];
  format: (v: number) => string;
  onRowClick?: (row: number) => void;
  testId?: string;
  ariaLabel?: string;
}

const LABEL_W = 96;
const HEADER_H = 22;
const MAX_H = 512; // rows share this height down to MIN_ROW_H (1024 ranks: 1 px each)
const MIN_ROW_H = 1;
const MAX_ROW_H = 18;
const MAX_COL_W = 160;

/** Light → dark blue, by the position of v between lo and hi (0 when every value is equal). */
export function cellColor(v: number, lo: number, hi: number): string {
  const t = hi > lo ? Math.min(1, Math.max(0, (v - lo) / (hi - lo))) : 0;
  const from = [239, 243, 255];
  const to = [8, 48, 107];
  const c = from.map((f, i) => Math.round(f + (to[i]! - f) * t));
  return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
}

export function valueRange(values: (number | null)[][]): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (const row of values)
    for (const v of row)
      if (v !== null && Number.isFinite(v)) {
        lo = Math.min(lo, v);
        hi = Math.max(hi, v);
      }
  return Number.isFinite(lo) ? [lo, hi] : [0, 0];
}

export function Heatmap({ rows, columns, values, format, onRowClick, testId, ariaLabel }: HeatmapProps): ReactNode {
  const canvas = useRef<HTMLCanvasElement>(null);
  const box = useRef<HTMLDivElement>(null);
  const theme = useTheme();
  const [width, setWidth] = useState(640);
  const [hover, setHover] = useState<{ row: number; col: number } | null>(null);
  const [lo, hi] = useMemo(() => valueRange(values), [values]);
  const rowH = Math.max(MIN_ROW_H, Math.min(MAX_ROW_H, MAX_H / Math.max(1, rows.length)));
  const height = HEADER_H + rowH * rows.length;
  // columns share the width down to one pixel each (hundreds of steps still fit; hover names them)
  const colW = Math.max(1, Math.min(MAX_COL_W, (width - LABEL_W) / Math.max(1, columns.length)));

  useEffect(() => {
    if (!box.current) return;
    const ro = new ResizeObserver(() => setWidth(Math.max(200, box.current?.clientWidth ?? 640)));
    ro.observe(box.current);
    return () => ro.disconnect();
  }, []);

  useEffect(() => {
    const c = canvas.current;
    const ctx = c?.getContext("2d");
    if (!c || !ctx) return;
    const dpr = window.devicePixelRatio || 1;
    c.width = Math.round(width * dpr);
    c.height = Math.round(height * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const fg = theme === "dark" ? "#ddd" : "#333";
    ctx.clearRect(0, 0, width, height);
    ctx.font = "11px sans-serif";
    ctx.fillStyle = fg;
    ctx.textBaseline = "middle";
    // a step label every `everyCol` columns, so that labels never overlap
    const everyCol = Math.max(1, Math.ceil(40 / colW));
    columns.forEach((name, j) => {
      if (j % everyCol === 0) ctx.fillText(name, LABEL_W + j * colW + 3, HEADER_H / 2, Math.max(colW, 40) - 4);
    });
    // a label every `every` rows, so that labels never overlap
    const every = Math.max(1, Math.ceil(13 / rowH));
    for (let i = 0; i < rows.length; i++) {
      const y = HEADER_H + i * rowH;
      if (i % every === 0) {
        ctx.fillStyle = fg;
        ctx.fillText(rows[i]!, 2, y + Math.max(rowH, 13) / 2, LABEL_W - 6);
      }
      const row = values[i] ?? [];
      for (let j = 0; j < columns.length; j++) {
        const v = row[j];
        ctx.fillStyle = v === null || v === undefined ? "#bbb" : cellColor(v, lo, hi);
        // cover whole device pixels: fractional rows would otherwise leave seams between them
        ctx.fillRect(LABEL_W + j * colW, y, colW - (colW > 8 ? 1 : 0), Math.max(rowH, 1 / dpr));
      }
    }
  }, [rows, columns, values, width, height, rowH, colW, lo, hi, theme]);

  const cellAt = (e: React.MouseEvent<HTMLCanvasElement>): { row: number; col: number } | null => {
    const r = e.currentTarget.getBoundingClientRect();
    const x = e.clientX - r.left;
    const y = e.clientY - r.top - HEADER_H;
    const row = Math.floor(y / rowH);
    const col = Math.floor((x - LABEL_W) / colW);
    if (y < 0 || x < LABEL_W || row >= rows.length || col >= columns.length) return null;
    return { row, col };
  };
  const hovered = hover ? values[hover.row]?.[hover.col] : undefined;

  return (
    <div className="heatmap" ref={box} data-testid={testId} data-rows={rows.length} data-cols={columns.length} data-row-height={rowH} data-col-width={colW} data-label-width={LABEL_W} data-header-height={HEADER_H}>
      <div className="heatmap-legend muted">
        <span>{format(lo)}</span>
        <span className="heatmap-ramp" style={{ background: `linear-gradient(to right, ${cellColor(lo, lo, hi)}, ${cellColor(hi, lo, hi)})` }} />
        <span>{format(hi)}</span>
        <span className="heatmap-hover" data-testid={testId ? `${testId}-hover` : undefined}>
          {hover ? `${rows[hover.row]}, step ${columns[hover.col]}: ${hovered === null || hovered === undefined ? "no such step" : format(hovered)}` : "Hover a cell; click a rank to show its collectives"}
        </span>
      </div>
      <canvas
        ref={canvas}
        role="img"
        aria-label={ariaLabel}
        style={{ width, height, display: "block", cursor: onRowClick ? "pointer" : "default" }}
        onMouseMove={(e) => setHover(cellAt(e))}
        onMouseLeave={() => setHover(null)}
        onClick={(e) => {
          const cell = cellAt(e);
          if (cell && onRowClick) onRowClick(cell.row);
        }}
      />
    </div>
  );
}
