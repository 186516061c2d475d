import type { ActivityItem, UsageReport } from "@parley/shared";
import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { billingApi } from "../../lib/billing-api.ts";
import { renderInApp } from "../../test/render.tsx";
import { ActivityTable } from "./activity-table.tsx";

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const call = (id: string, over: Partial<ActivityItem> = {}): ActivityItem => ({
  id,
  createdAt: "2026-12-01T10:00:00.000Z",
  member: { id: "usr_ada", label: "Ada Lovelace" },
  project: { id: "prj_1", label: "Launch" },
  session: { id: "ses_1", label: "Pricing questions" },
  model: "parley-dev",
  modelLabel: "Parley dev",
  promptTokens: 1_200,
  completionTokens: 300,
  cachedPromptTokens: 0,
  reasoningTokens: 0,
  costMicros: 3_000,
  priceMicros: 4_200,
  billable: true,
  kind: "model",
  ...over,
});

const options = (groupBy: UsageReport["groupBy"]): UsageReport => ({
  from: "2000-01-01T00:00:00.000Z",
  to: "2026-12-02T00:00:00.000Z",
  groupBy,
  nextCursor: null,
  items: (groupBy === "model"
    ? [
        ["parley-dev", "Parley dev"],
        ["other-model", "Other model"],
      ]
    : groupBy === "member"
      ? [["usr_ada", "Ada Lovelace"]]
      : [["prj_1", "Launch"]]
  ).map(([key, label]) => ({
    key: key ?? null,
    label: label ?? "",
    requests: 1,
    billableRequests: 1,
    promptTokens: 0,
    completionTokens: 0,
    cachedPromptTokens: 0,
    reasoningTokens: 0,
    costMicros: 0,
    priceMicros: 0,
  })),
  totals: {
    requests: 0,
    billableRequests: 0,
    promptTokens: 0,
    completionTokens: 0,
    cachedPromptTokens: 0,
    reasoningTokens: 0,
    costMicros: 0,
    priceMicros: 0,
  },
});

describe("ActivityTable", () => {
  it("lists each call with names (not ids), tokens and its cost to the micro-dollar", async () => {
    vi.spyOn(billingApi, "usage").mockImplementation(async (_org, groupBy) => options(groupBy));
    vi.spyOn(billingApi, "activity").mockResolvedValue({ items: [call("t1:0")], nextCursor: null });
    await renderInApp(<ActivityTable orgId="org_1" canManage />);
    const table = await screen.findByRole("table", { name: "Model and tool calls, newest first" });
    const row = within(table).getAllByRole("row")[1];
    expect(row?.textContent).toMatch(
      /Ada Lovelace.*Pricing questions.*Launch.*Parley dev.*1,500.*\$0\.0042/,
    );
    // The model by the catalogue's display name (`modelLabel`), its id on hover only.
    expect(row?.textContent).not.toContain("parley-dev");
    expect(within(row as HTMLElement).getByTitle("parley-dev").textContent).toBe("Parley dev");
    expect(table.textContent).not.toMatch(/usr_|ses_|prj_/);
  });

  it("shows a tool call as a tool call, by its source's name and tool, never its usage key", async () => {
    vi.spyOn(billingApi, "usage").mockImplementation(async (_org, groupBy) => options(groupBy));
    vi.spyOn(billingApi, "activity").mockResolvedValue({
      items: [
        call("tool:c1", {
          kind: "tool",
          model: "tool:tsrc_01m95abc:order_status",
          modelLabel: "Acme Shop orders · order_status",
          promptTokens: 0,
          completionTokens: 0,
        }),
      ],
      nextCursor: null,
    });
    await renderInApp(<ActivityTable orgId="org_1" canManage />);
    const table = await screen.findByRole("table", { name: "Model and tool calls, newest first" });
    const row = within(table).getAllByRole("row")[1] as HTMLElement;
    expect(within(row).getByText("Tool call")).toBeTruthy();
    expect(within(row).getByText("Acme Shop orders · order_status")).toBeTruthy();
    expect(table.textContent).not.toContain("tool:tsrc_");
    // No "0 tokens" for a call that has none.
    expect(row.textContent).toContain("—");
  });

  it("filters by model and days, and pages with More activity", async () => {
    vi.spyOn(billingApi, "usage").mockImplementation(async (_org, groupBy) => options(groupBy));
    const activity = vi
      .spyOn(billingApi, "activity")
      .mockImplementation(async (_org, filters, cursor) =>
        cursor
          ? { items: [call("t0:0", { session: null, project: null })], nextCursor: null }
          : { items: [call(`t1:${filters?.model ?? "all"}`)], nextCursor: "c1" },
      );
    await renderInApp(<ActivityTable orgId="org_1" canManage />);
    await screen.findByRole("table");
    const model = screen.getByLabelText("Model");
    await waitFor(() =>
      expect(within(model).getByRole("option", { name: "Other model" })).toBeTruthy(),
    );
    fireEvent.change(model, { target: { value: "other-model" } });
    fireEvent.change(screen.getByLabelText("From"), { target: { value: "2026-11-01" } });
    fireEvent.change(screen.getByLabelText("To"), { target: { value: "2026-11-30" } });
    await waitFor(() =>
      expect(activity).toHaveBeenLastCalledWith(
        "org_1",
        { model: "other-model", from: "2026-11-01", to: "2026-12-01" },
        undefined,
      ),
    );
    fireEvent.click(await screen.findByRole("button", { name: "More activity" }));
    await screen.findByText("Onboarding preview (free)");
    expect(activity).toHaveBeenLastCalledWith(
      "org_1",
      { model: "other-model", from: "2026-11-01", to: "2026-12-01" },
      "c1",
    );
  });

  it("gives a member no member filter: the worker shows them their own calls only", async () => {
    const usage = vi
      .spyOn(billingApi, "usage")
      .mockImplementation(async (_org, groupBy) => options(groupBy));
    vi.spyOn(billingApi, "activity").mockResolvedValue({ items: [], nextCursor: null });
    await renderInApp(<ActivityTable orgId="org_1" canManage={false} />);
    await screen.findByText("No activity yet");
    expect(screen.queryByLabelText("Member")).toBeNull();
    expect(usage.mock.calls.map((args) => args[1])).not.toContain("member");
  });
});
