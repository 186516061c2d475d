import type { UsageGroup, UsageReport } from "@parley/shared";
import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../../lib/api.ts";
import { billingApi } from "../../lib/billing-api.ts";
import { renderInApp } from "../../test/render.tsx";
import { chartRows } from "./usage-data.ts";
import { UsagePanel } from "./usage-panel.tsx";
import { dayRange } from "./words.ts";

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const group = (key: string | null, label: string, priceMicros: number): UsageGroup => ({
  key,
  label,
  requests: 2,
  billableRequests: 2,
  promptTokens: 100,
  completionTokens: 50,
  cachedPromptTokens: 0,
  reasoningTokens: 0,
  costMicros: priceMicros,
  priceMicros,
});

const report = (groupBy: UsageReport["groupBy"], items: UsageGroup[]): UsageReport => ({
  from: "2026-11-01T00:00:00.000Z",
  to: "2026-12-01T00:00:00.000Z",
  groupBy,
  items,
  nextCursor: null,
  totals: {
    requests: items.reduce((sum, item) => sum + item.requests, 0),
    billableRequests: 0,
    promptTokens: items.reduce((sum, item) => sum + item.promptTokens, 0),
    completionTokens: items.reduce((sum, item) => sum + item.completionTokens, 0),
    cachedPromptTokens: 0,
    reasoningTokens: 0,
    costMicros: 0,
    priceMicros: items.reduce((sum, item) => sum + item.priceMicros, 0),
  },
});

describe("UsagePanel", () => {
  it("names models by the catalogue's display name, not their id", async () => {
    vi.spyOn(billingApi, "usage").mockImplementation(async (_org, groupBy) =>
      groupBy === "model"
        ? report("model", [
            group("parley/dev-fast", "Parley Dev Fast", 4_200),
            group("acme/unlisted", "acme/unlisted", 1_000),
          ])
        : report("day", [group("2026-11-02", "2026-11-02", 5_000)]),
    );
    await renderInApp(<UsagePanel orgId="org_1" canManage />);
    await screen.findByText("2026-11-02");
    fireEvent.change(screen.getByLabelText("Group by"), { target: { value: "model" } });
    const table = await screen.findByRole("table", { name: "Spend by model" });
    expect(within(table).getByText("Parley Dev Fast")).toBeTruthy();
    expect(table.textContent).not.toContain("parley/dev-fast");
    // A model the catalogue does not list keeps its id: the worker's label says so.
    expect(within(table).getByText("acme/unlisted")).toBeTruthy();
  });

  it("names members by their label, never their usr_ id, with a total", async () => {
    const usage = vi
      .spyOn(billingApi, "usage")
      .mockImplementation(async (_org, groupBy) =>
        groupBy === "member"
          ? report("member", [
              group("usr_abc123", "Ada Lovelace", 4_200),
              group("usr_def456", "Erased member", 1_000_000),
            ])
          : report("day", [group("2026-11-02", "2026-11-02", 5_000)]),
      );
    await renderInApp(<UsagePanel orgId="org_1" canManage />);
    await screen.findByText("2026-11-02");
    fireEvent.change(screen.getByLabelText("Group by"), { target: { value: "member" } });
    const table = await screen.findByRole("table", { name: "Spend by member" });
    expect(within(table).getByText("Ada Lovelace")).toBeTruthy();
    expect(within(table).getByText("Erased member")).toBeTruthy();
    expect(table.textContent).not.toMatch(/usr_/);
    expect(within(table).getByText("$0.0042")).toBeTruthy();
    const total = within(table).getByRole("rowheader", { name: "Total" }).closest("tr");
    expect(total?.textContent).toMatch(/4.*300.*\$1\.0042/);
    expect(usage).toHaveBeenLastCalledWith("org_1", "member", {});
  });

  it("asks for the days picked, the last one included", async () => {
    const usage = vi.spyOn(billingApi, "usage").mockResolvedValue(report("day", []));
    await renderInApp(<UsagePanel orgId="org_1" canManage={false} />);
    await screen.findByText("No usage in this period");
    fireEvent.change(screen.getByLabelText("From"), { target: { value: "2026-11-01" } });
    fireEvent.change(screen.getByLabelText("To"), { target: { value: "2026-11-15" } });
    await waitFor(() =>
      expect(usage).toHaveBeenLastCalledWith("org_1", "day", {
        from: "2026-11-01",
        to: "2026-11-16",
      }),
    );
    expect(screen.getByRole("heading", { name: /2026-11-01 to 2026-11-15/ })).toBeTruthy();
  });

  it("shows the server's refusal of a range", async () => {
    vi.spyOn(billingApi, "usage").mockRejectedValue(
      new ApiError("invalid_request", "from must be before to", 400, "query.from"),
    );
    await renderInApp(<UsagePanel orgId="org_1" canManage />);
    expect((await screen.findByRole("alert")).textContent).toMatch(/before to/);
  });
});

describe("chartRows", () => {
  it("names the bars by label, biggest spender first, and keeps two sessions of one title apart", () => {
    const rows = chartRows(
      [
        group("ses_1", "Untitled session", 10),
        group("ses_2", "Untitled session", 30),
        group("ses_3", "Quarterly plan", 20),
      ],
      "session",
    );
    expect(rows.map((row) => row.name)).toEqual([
      "Untitled session",
      "Quarterly plan",
      "Untitled session",
    ]);
    expect(new Set(rows.map((row) => row.id)).size).toBe(3);
    expect(JSON.stringify(rows.map((row) => row.name))).not.toMatch(/ses_/);
  });

  it("keeps days in date order", () => {
    const rows = chartRows(
      [group("2026-11-01", "2026-11-01", 30), group("2026-11-02", "2026-11-02", 10)],
      "day",
    );
    expect(rows.map((row) => row.name)).toEqual(["2026-11-01", "2026-11-02"]);
  });

  it("shows every day of the window by day, a day without spend as a zero bar", () => {
    const rows = chartRows(
      [group("2026-11-02", "2026-11-02", 30), group("2026-11-05", "2026-11-05", 10)],
      "day",
      { window: { from: "2026-11-01T00:00:00.000Z", to: "2026-11-06T00:00:00.000Z" } },
    );
    expect(rows.map((row) => [row.name, row.priceMicros])).toEqual([
      ["2026-11-01", 0],
      ["2026-11-02", 30],
      ["2026-11-03", 0],
      ["2026-11-04", 0],
      ["2026-11-05", 10],
    ]);
    expect(new Set(rows.map((row) => row.id)).size).toBe(5);
    // The default window runs to just after now: its last day is counted once.
    const open = chartRows([], "day", {
      window: { from: "2026-11-01T12:00:00.000Z", to: "2026-11-03T12:00:00.001Z" },
    });
    expect(open.map((row) => row.name)).toEqual(["2026-11-01", "2026-11-02", "2026-11-03"]);
  });
});

describe("dayRange", () => {
  it("turns the picked days into the API's half-open range, across a month end", () => {
    expect(dayRange("", "")).toEqual({});
    expect(dayRange("2026-10-31", "2026-11-30")).toEqual({ from: "2026-10-31", to: "2026-12-01" });
  });
});
