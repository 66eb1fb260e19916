// ECharts, tree-shaken to the chart types we use. Tooltips render as canvas rich text (never HTML), so
// names from user traces cannot inject markup.

import { BarChart, LineChart, PieChart, ScatterChart } from "echarts/charts";
import {
  DataZoomComponent,
  GridComponent,
  LegendComponent,
  TitleComponent,
  TooltipComponent,
} from "echarts/components";
import * as echarts from "echarts/core";
import { CanvasRenderer } from "echarts/renderers";
import { type ReactNode, useEffect, useRef } from "react";
import { useTheme } from "../lib/theme";

echarts.use([
  BarChart,
  LineChart,
  PieChart,
  ScatterChart,
  DataZoomComponent,
  GridComponent,
  LegendComponent,
  TitleComponent,
  TooltipComponent,
  CanvasRenderer,
]);

export type ChartOption = echarts.EChartsCoreOption;

export interface ChartProps {
  option: ChartOption;
  height?: number;
  testId?: string;
  /** Called with the visible x range (axis units) after the user zooms. */
  onZoom?: (range: { start: number; end: number } | null) => void;
  ariaLabel?: string;
  /** Called with the category index of a clicked bar or point. */
  onClick?: (index: number) => void;
  /** Called with the series and data index of a clicked item (charts of several series). */
  onItemClick?: (seriesIndex: number, dataIndex: number) => void;
}

export function Chart({ option, height = 300, testId, onZoom, ariaLabel, onClick, onItemClick }: ChartProps): ReactNode {
  const el = useRef<HTMLDivElement>(null);
  const chart = useRef<echarts.ECharts | null>(null);
  const theme = useTheme();
  const zoomRef = useRef(onZoom);
  zoomRef.current = onZoom;
  const clickRef = useRef(onClick);
  clickRef.current = onClick;
  const itemRef = useRef(onItemClick);
  itemRef.current = onItemClick;

  useEffect(() => {
    if (!el.current) return;
    const c = echarts.init(el.current, theme === "dark" ? "dark" : undefined, { renderer: "canvas" });
    chart.current = c;
    const ro = new ResizeObserver(() => c.resize());
    ro.observe(el.current);
    c.on("click", (e: { dataIndex?: number; seriesIndex?: number }) => {
      if (clickRef.current && typeof e.dataIndex === "number") clickRef.current(e.dataIndex);
      if (itemRef.current && typeof e.dataIndex === "number") itemRef.current(e.seriesIndex ?? 0, e.dataIndex);
    });
    c.on("datazoom", () => {
      const cb = zoomRef.current;
      if (!cb) return;
      const opt = c.getOption() as { dataZoom?: { startValue?: number; endValue?: number; start?: number; end?: number }[] };
      const dz = opt.dataZoom?.[0];
      if (!dz) return;
      if ((dz.start ?? 0) <= 0 && (dz.end ?? 100) >= 100) cb(null);
      else if (dz.startValue !== undefined && dz.endValue !== undefined) cb({ start: dz.startValue, end: dz.endValue });
    });
    return () => {
      ro.disconnect();
      c.dispose();
      chart.current = null;
    };
  }, [theme]);

  useEffect(() => {
    const c = chart.current;
    if (!c) return;
    const base: ChartOption = {
      backgroundColor: "transparent",
      animation: false,
      textStyle: { fontFamily: "system-ui, sans-serif" },
    };
    c.setOption({ ...base, ...withTipRecord(option, el.current) }, { notMerge: true });
  }, [option, theme]);

  return <div ref={el} className="chart" style={{ height }} data-testid={testId} role="img" aria-label={ariaLabel} />;
}

/** The option with its tooltip formatter also writing the shown text to the chart element's
 * `data-tooltip` (the canvas text is not in the DOM: for screen readers' tools and tests). */
function withTipRecord(option: ChartOption, el: HTMLDivElement | null): ChartOption {
  const tip = option.tooltip as { formatter?: unknown } | undefined;
  if (!el || !tip || typeof tip.formatter !== "function") return option;
  const format = tip.formatter as (...args: unknown[]) => string;
  const formatter = (...args: unknown[]) => {
    const text = format(...args);
    el.dataset.tooltip = text;
    return text;
  };
  return { ...option, tooltip: { ...tip, formatter } };
}

/** Tooltip settings shared by every chart: rich text on the canvas, no HTML. */
export const safeTooltip = { renderMode: "richText" as const, confine: true };
