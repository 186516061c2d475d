import type { UsageGroup } from "@parley/shared";
import { describe, expect, it } from "vitest";
import { chartRows, groupName, PREVIEW, tableRows } from "./usage-data.ts";

const group = (key: string | null, label: string, priceMicros: number): UsageGroup => ({
  key,
  label,
  requests: 1,
  billableRequests: priceMicros > 0 ? 1 : 0,
  promptTokens: 1,
  completionTokens: 1,
  cachedPromptTokens: 0,
  reasoningTokens: 0,
  costMicros: priceMicros,
  priceMicros,
});

describe("the usage table", () => {
  it("sorts as its chart does: biggest spenders first, so the two read alike", () => {
    const items = [group("m1", "Ada", 10), group("m2", "Bob", 300), group("m3", "Cy", 20)];
    const table = tableRows(items, "member").map((item) => groupName(item, "member"));
    const chart = chartRows(items, "member").map((row) => row.name);
    expect(table).toEqual(["Bob", "Cy", "Ada"]);
    expect(table).toEqual(chart);
  });

  it("runs by day in date order, as the chart's bars do", () => {
    const items = [group("2026-12-03", "2026-12-03", 1), group("2026-12-01", "2026-12-01", 5)];
    expect(tableRows(items, "day").map((item) => item.key)).toEqual(["2026-12-01", "2026-12-03"]);
  });

  it("names the onboarding preview's usage (no session) as the preview", () => {
    expect(groupName(group(null, "No session", 0), "session")).toBe(PREVIEW);
    expect(groupName(group(null, "No project", 0), "project")).toBe("No project");
  });
});

describe("the spend chart's axis", () => {
  it("runs $0 only when nothing was spent, and recharts' own range otherwise", async () => {
    const { spendAxis } = await import("./usage-chart.tsx");
    expect(spendAxis([{ priceMicros: 0 }, { priceMicros: 0 }])).toEqual({
      domain: [0, 1],
      ticks: [0],
    });
    expect(spendAxis([])).toEqual({ domain: [0, 1], ticks: [0] });
    expect(spendAxis([{ priceMicros: 0 }, { priceMicros: 1_500 }])).toEqual({
      domain: [0, "auto"],
    });
  });
});
