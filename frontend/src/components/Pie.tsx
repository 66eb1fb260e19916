import { type ReactNode, useMemo } from "react";
import { type Slice } from "../views/shape";
import { Chart, safeTooltip } from "./Chart";
import { legendParts, sliceColors } from "../lib/colors";
import { formatValue, type ValueKind } from "../lib/format";

/** A pie of named values with a legend beside it: each entry has the slice's colour, its name, the value
 * and its share. A name too long for its column loses the middle of its head, never the tail that tells
 * it from the other names (lib/colors.ts legendParts); the full name is on hover. Canvas and DOM text only. */
export function Pie({ title, slices, kind = "duration", testId, height = 300 }: { title: string; slices: Slice[]; kind?: ValueKind; testId?: string; height?: number }): ReactNode {
  const colors = useMemo(() => sliceColors(slices), [slices]);
  const total = useMemo(() => slices.reduce((s, x) => s + x.value, 0), [slices]);
  const parts = useMemo(() => legendParts(slices.map((s) => s.name)), [slices]);
  const option = useMemo(
    () => ({
      tooltip: {
        ...safeTooltip,
        trigger: "item",
        formatter: (p: { name: string; value: number; percent: number }) =>
          `${p.name}\n${formatValue(kind, p.value)} (${p.percent.toFixed(1)} %)`,
      },
      series: [
        {
          type: "pie",
          radius: ["0%", "88%"],
          center: ["50%", "50%"],
          label: { show: false },
          data: slices.map((s, i) => ({ name: s.name, value: s.value, itemStyle: { color: colors[i] } })),
        },
      ],
    }),
    [slices, colors, kind],
  );
  if (slices.length === 0)
    return (
      <div className="pie-empty" data-testid={testId}>
        <strong>{title}</strong>
        <div className="muted">Nothing to show: every value is zero.</div>
      </div>
    );
  return (
    <figure className="pie" data-testid={testId}>
      <figcaption className="pie-title">{title}</figcaption>
      <div className="pie-body">
        <div className="pie-chart">
          <Chart option={option} height={Math.min(height - 30, 240)} ariaLabel={title} />
        </div>
        <ul className="pie-legend" style={{ maxHeight: height - 30 }} aria-label={`${title}: legend`}>
          {slices.map((s, i) => (
            <li key={`${s.name}|${i}`} title={`${s.name}\n${formatValue(kind, s.value)}`} data-testid="legend-item" data-name={s.name} data-color={colors[i]}>
              <span className="pie-swatch" style={{ background: colors[i] }} aria-hidden="true" />
              <span className="pie-name">
                <span className="pie-name-head">{parts[i]?.head}</span>
                {parts[i]?.tail ? <span className="pie-name-tail">{parts[i]?.tail}</span> : null}
              </span>
              <span className="pie-share">{total > 0 ? `${((100 * s.value) / total).toFixed(1)} %` : ""}</span>
            </li>
          ))}
        </ul>
      </div>
    </figure>
  );
}
