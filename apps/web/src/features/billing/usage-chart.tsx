import type { UsageGroup } from "@parley/shared";
import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { formatMicros, MICROS_PER_DOLLAR } from "../../lib/money.ts";

/** Spend per group as bars, in dollars. Only the lazy billing chunk imports recharts. */
export default function UsageChart({ items }: { items: readonly UsageGroup[] }) {
  const data = items.map((item) => ({
    key: item.key ?? "(none)",
    dollars: item.priceMicros / MICROS_PER_DOLLAR,
    priceMicros: item.priceMicros,
  }));
  return (
    <div className="chart" aria-hidden="true">
      <ResponsiveContainer width="100%" height={260}>
        {/* The chart is a picture of the table below it: hidden from screen readers, and with
            recharts' keyboard layer off, since nothing inside aria-hidden may take focus. */}
        <BarChart
          data={data}
          margin={{ top: 8, right: 8, bottom: 8, left: 8 }}
          accessibilityLayer={false}
        >
          <CartesianGrid strokeDasharray="3 3" stroke="var(--border)" />
          <XAxis dataKey="key" tick={{ fontSize: 12 }} />
          <YAxis
            tickFormatter={(value: number) => `$${value}`}
            tick={{ fontSize: 12 }}
            width={60}
          />
          <Tooltip
            formatter={(_value, _name, entry) => [
              formatMicros((entry.payload as { priceMicros: number }).priceMicros),
              "Spend",
            ]}
          />
          <Bar dataKey="dollars" name="Spend" fill="var(--accent)" isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}
