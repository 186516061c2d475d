import type { UsageGroup, UsageGroupBy } from "@parley/shared";

export const GROUPS: readonly { value: UsageGroupBy; label: string }[] = [
  { value: "day", label: "Day" },
  { value: "model", label: "Model" },
  { value: "member", label: "Member" },
  { value: "project", label: "Project" },
  { value: "session", label: "Session" },
];

/**
 * What a person reads for a usage group: the worker's label (a member's name, a project's name, a
 * session's title) since 2026-12-01, the key only when there is no label, never a raw id beside it.
 */
export function groupName(item: Pick<UsageGroup, "key" | "label">, groupBy?: UsageGroupBy): string {
  // The free onboarding preview's calls belong to no session: named as what they are.
  if (groupBy === "session" && item.key === null) return PREVIEW;
  if (item.label) return item.label;
  return item.key ?? "None";
}

/** What the free onboarding preview's usage is called wherever it is listed apart. */
export const PREVIEW = "Onboarding preview (free)";

/**
 * The table's rows in the chart's order: by day in date order, otherwise the biggest spenders
 * first (ties by name), so the table reads as the chart above it does.
 */
export function tableRows<T extends Pick<UsageGroup, "key" | "label" | "priceMicros">>(
  items: readonly T[],
  groupBy: UsageGroupBy,
): T[] {
  const rows = [...items];
  if (groupBy === "day") return rows.sort((a, b) => (a.key ?? "").localeCompare(b.key ?? ""));
  return rows.sort(
    (a, b) =>
      b.priceMicros - a.priceMicros || groupName(a, groupBy).localeCompare(groupName(b, groupBy)),
  );
}

export interface ChartRow {
  /** Unique per bar: two sessions may share a title. */
  id: string;
  name: string;
  priceMicros: number;
}

/** The most days the chart fills in; a longer window shows only its days with spend. */
export const MAX_CHART_DAYS = 400;

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The bars of the spend chart, named as the table names them. By day they run in date order, every
 * UTC day of the report's window included (a day without spend is a zero bar, so a quiet week reads
 * as one, not as days side by side); otherwise the biggest spenders first, at most `max` of them
 * (the rest are in the table).
 */
export function chartRows(
  items: readonly UsageGroup[],
  groupBy: UsageGroupBy,
  { max = 12, window }: { max?: number; window?: { from: string; to: string } } = {},
): ChartRow[] {
  const rows = items.map((item, index) => ({
    id: `${item.key ?? "none"}:${index}`,
    name: groupName(item, groupBy),
    priceMicros: item.priceMicros,
  }));
  if (groupBy === "day") return window ? everyDay(rows, window) : rows;
  return rows.sort((a, b) => b.priceMicros - a.priceMicros).slice(0, max);
}

/** `rows` (one per day with spend, named `YYYY-MM-DD`) with a zero bar for each day between. */
function everyDay(rows: ChartRow[], window: { from: string; to: string }): ChartRow[] {
  const from = Date.parse(window.from);
  const to = Date.parse(window.to);
  if (Number.isNaN(from) || Number.isNaN(to) || to <= from) return rows;
  const first = Math.floor(from / DAY_MS);
  // `to` is exclusive: a window ending at midnight does not reach into that day.
  const last = Math.ceil(to / DAY_MS) - 1;
  if (last - first + 1 > MAX_CHART_DAYS) return rows;
  const spent = new Map(rows.map((row) => [row.name, row]));
  const days: ChartRow[] = [];
  for (let day = first; day <= last; day++) {
    const name = new Date(day * DAY_MS).toISOString().slice(0, 10);
    days.push(spent.get(name) ?? { id: `${name}:empty`, name, priceMicros: 0 });
  }
  return days;
}
