import type { UsageGroupBy } from "@parley/shared";
import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { formatMicros, MICROS_PER_DOLLAR } from "../../lib/money.ts";
import type { ChartRow } from "./usage-data.ts";

const tick = { fontSize: 12, fill: "var(--muted-foreground)" };
const axisLine = { stroke: "var(--border)" };

/** A dollar axis tick: `$0.004`, `$12` (ticks are picked by recharts, so they may be fractions). */
const dollars = (value: number) => `$${Number(value.toPrecision(3))}`;

/** Ends a long label with an ellipsis so the axis keeps its width. */
const short = (text: string, max: number) =>
  text.length > max ? `${text.slice(0, max - 1)}…` : text;

/** `2026-12-01` as `Dec 1` on the day axis (the tooltip keeps the full date). */
const shortDay = (day: string) => {
  const at = Date.parse(`${day}T00:00:00Z`);
  return Number.isNaN(at)
    ? day
    : new Date(at).toLocaleDateString("en-US", { month: "short", day: "numeric", timeZone: "UTC" });
};

/**
 * The spend axis's range: recharts' own for real spend; with none in the window, just $0 (its
 * default "nice" domain for all-zero data ran $0 to $4, which read as spend that was not there).
 */
export function spendAxis(rows: readonly { priceMicros: number }[]): {
  domain: [number, number | "auto"];
  ticks?: number[];
} {
  return rows.some((row) => row.priceMicros > 0)
    ? { domain: [0, "auto"] }
    : { domain: [0, 1], ticks: [0] };
}

/**
 * Spend per group as bars, named as the table under it names them (labels, not ids), in the
 * theme's chart colors, so it reads in dark mode too. Days run along the bottom; other groups are
 * horizontal bars, whose names have room on the left. Only the lazy billing chunk imports recharts.
 */
export default function UsageChart({
  rows,
  groupBy,
}: {
  rows: readonly ChartRow[];
  groupBy: UsageGroupBy;
}) {
  const data = rows.map((row) => ({ ...row, dollars: row.priceMicros / MICROS_PER_DOLLAR }));
  const byDay = groupBy === "day";
  const height = byDay ? 260 : Math.max(160, data.length * 34 + 40);
  const tooltip = {
    cursor: { fill: "var(--muted)" },
    contentStyle: {
      background: "var(--popover)",
      color: "var(--popover-foreground)",
      border: "1px solid var(--border)",
      borderRadius: 8,
      fontSize: 12,
    },
    labelStyle: { color: "var(--popover-foreground)", fontWeight: 600 },
    itemStyle: { color: "var(--popover-foreground)" },
    formatter: (_value: unknown, _name: unknown, entry: { payload?: unknown }) =>
      [formatMicros((entry.payload as ChartRow).priceMicros, { precise: true }), "Spend"] as [
        string,
        string,
      ],
  };
  const axis = spendAxis(rows);
  const nameOf = (id: unknown) => data.find((row) => row.id === id)?.name ?? "";
  return (
    // The chart is a picture of the table below it: hidden from screen readers, with recharts'
    // keyboard layer off, since nothing inside aria-hidden may take focus.
    <div aria-hidden="true" className="w-full min-w-0">
      <ResponsiveContainer width="100%" height={height}>
        {byDay ? (
          <BarChart
            data={data}
            margin={{ top: 8, right: 8, bottom: 0, left: 0 }}
            accessibilityLayer={false}
          >
            <CartesianGrid strokeDasharray="3 3" stroke="var(--border)" vertical={false} />
            <XAxis
              dataKey="name"
              tickFormatter={shortDay}
              tick={tick}
              axisLine={axisLine}
              tickLine={false}
              minTickGap={12}
            />
            <YAxis
              {...axis}
              tickFormatter={dollars}
              tick={tick}
              axisLine={false}
              tickLine={false}
              width={76}
            />
            <Tooltip {...tooltip} />
            <Bar
              dataKey="dollars"
              name="Spend"
              fill="var(--chart-1)"
              radius={[4, 4, 0, 0]}
              isAnimationActive={false}
              maxBarSize={56}
            />
          </BarChart>
        ) : (
          <BarChart
            data={data}
            layout="vertical"
            margin={{ top: 0, right: 12, bottom: 0, left: 0 }}
            accessibilityLayer={false}
          >
            <CartesianGrid strokeDasharray="3 3" stroke="var(--border)" horizontal={false} />
            <XAxis
              type="number"
              {...axis}
              tickFormatter={dollars}
              tick={tick}
              axisLine={axisLine}
              tickLine={false}
            />
            <YAxis
              type="category"
              dataKey="id"
              tickFormatter={(id: string) => short(nameOf(id), 22)}
              tick={tick}
              axisLine={false}
              tickLine={false}
              width={150}
            />
            <Tooltip {...tooltip} labelFormatter={nameOf} />
            <Bar
              dataKey="dollars"
              name="Spend"
              fill="var(--chart-2)"
              radius={[0, 4, 4, 0]}
              isAnimationActive={false}
              maxBarSize={56}
            />
          </BarChart>
        )}
      </ResponsiveContainer>
    </div>
  );
}
