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
export function groupName(item: Pick<UsageGroup, "key" | "label">): string {
  if (item.label) return item.label;
  return item.key ?? "None";
}

export interface ChartRow {
  /** Unique per bar: two sessions may share a title. */
  id: string;
  name: string;
  priceMicros: number;
}

/**
 * The bars of the spend chart, named as the table names them. By day they run in date order;
 * otherwise the biggest spenders first, at most `max` of them (the rest are in the table).
 */
export function chartRows(
  items: readonly UsageGroup[],
  groupBy: UsageGroupBy,
  max = 12,
): ChartRow[] {
  const rows = items.map((item, index) => ({
    id: `${item.key ?? "none"}:${index}`,
    name: groupName(item),
    priceMicros: item.priceMicros,
  }));
  if (groupBy === "day") return rows;
  return rows.sort((a, b) => b.priceMicros - a.priceMicros).slice(0, max);
}
