import { type ReactNode, useMemo } from "react";
import { type Slice } from "../views/shape";
import { Chart, safeTooltip } from "./Chart";
import { formatValue, type ValueKind } from "../lib/format";

/** A pie of named values; labels and tooltips are canvas text. */
export function Pie({ title, slices, kind = "duration", testId, height = 300 }: { title: string; slices: Slice[]; kind?: ValueKind; testId?: string; height?: number }): ReactNode {
  const option = useMemo(
    () => ({
      title: { text: title, left: "center", textStyle: { fontSize: 13 } },
      tooltip: {
        ...safeTooltip,
        trigger: "item",
        formatter: (p: { name: string; value: number; percent: number }) =>
          `${p.name}\n${formatValue(kind, p.value)} (${p.percent.toFixed(1)} %)`,
      },
      legend: { type: "scroll", orient: "vertical", left: "52%", right: 0, top: 28, bottom: 0, textStyle: { width: 190, overflow: "truncate" } },
      series: [
        {
          type: "pie",
          radius: ["0%", "72%"],
          center: ["26%", "55%"],
          label: { show: false },
          data: slices.map((s) => ({ name: s.name, value: s.value })),
        },
      ],
    }),
    [title, slices, kind],
  );
  if (slices.length === 0)
    return (
      <div className="pie-empty" data-testid={testId}>
        <strong>{title}</strong>
        <div className="muted">Nothing to show: every value is zero.</div>
      </div>
    );
  return <Chart option={option} height={height} testId={testId} ariaLabel={title} />;
}
