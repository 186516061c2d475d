import type { BillingSummary, UsageReport } from "@parley/shared";
import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { membersApi } from "../features/members/members-api.ts";
import { api } from "../lib/api.ts";
import { billingApi } from "../lib/billing-api.ts";
import { dataRightsApi } from "../lib/data-rights-api.ts";
import { knowledgeApi } from "../lib/knowledge-api.ts";
import { orgsApi } from "../lib/orgs-api.ts";
import { renderInApp } from "../test/render.tsx";
import BillingPage from "./billing-page.tsx";

const session = vi.hoisted(() => ({ role: "owner" as "owner" | "admin" | "member" }));
vi.mock("../lib/session.tsx", () => ({
  useSession: () => ({
    org: { id: "org_1", name: "Acme", role: session.role, createdAt: "x" },
  }),
  canManage: (org: { role: string } | null) => org?.role === "owner" || org?.role === "admin",
}));

const summary = (over: Partial<BillingSummary> = {}): BillingSummary => ({
  orgId: "org_1",
  currency: "usd",
  availableMicros: 4_200,
  heldMicros: 1_500,
  postedMicros: 5_700,
  orgMonthlyLimitMicros: 50_000_000,
  memberDailyLimitMicros: 5_000,
  lowBalanceMicros: null,
  runwayAlertDays: null,
  alertWebhookUrl: null,
  limitWarningPct: 80,
  forecast: { windowDays: 7, spentMicros: 0, dailyRateMicros: 0, daysLeft: null, runsOutAt: null },
  grants: [],
  ...over,
});

const report = (priceMicros: number): UsageReport => ({
  from: "2026-12-01T00:00:00.000Z",
  to: "2026-12-02T00:00:00.000Z",
  groupBy: "day",
  items: [],
  nextCursor: null,
  totals: {
    requests: 0,
    billableRequests: 0,
    promptTokens: 0,
    completionTokens: 0,
    cachedPromptTokens: 0,
    reasoningTokens: 0,
    costMicros: 0,
    priceMicros,
  },
});

beforeEach(() => {
  session.role = "owner";
  vi.spyOn(billingApi, "usage").mockResolvedValue(report(12_500_000));
  vi.spyOn(billingApi, "activity").mockResolvedValue({ items: [], nextCursor: null });
  vi.spyOn(billingApi, "ledger").mockResolvedValue({ items: [], nextCursor: null });
  vi.spyOn(billingApi, "alerts").mockResolvedValue({ items: [], nextCursor: null });
  vi.spyOn(dataRightsApi, "orgExports").mockResolvedValue({ items: [], nextCursor: null });
  vi.spyOn(billingApi, "myLimits").mockResolvedValue({ warningPct: 80, limits: [] });
  vi.spyOn(billingApi, "limitRules").mockResolvedValue({ items: [] });
  vi.spyOn(membersApi, "members").mockResolvedValue({ items: [], nextCursor: null });
  vi.spyOn(orgsApi, "projects").mockResolvedValue({ items: [], nextCursor: null });
  vi.spyOn(knowledgeApi, "storage").mockResolvedValue({
    orgId: "org_1",
    usedBytes: 3 * 1024 * 1024,
    quotaBytes: 50 * 1024 * 1024,
    documents: 3,
    maxDocumentBytes: 5 * 1024 * 1024,
  });
});

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

describe("BillingPage", () => {
  it("shows the balance to the sub-cent, what replies hold, and the month against the limit in words", async () => {
    vi.spyOn(api, "billing").mockResolvedValue(summary());
    await renderInApp(<BillingPage />, { path: "/billing" });
    const hero = await screen.findByRole("region", { name: "Available balance" });
    expect(within(hero).getByText("$0.0042")).toBeTruthy();
    expect(hero.textContent).toMatch(/\$0\.0015 held by chats in progress/);
    expect(within(hero).getByRole("button", { name: "Top up" })).toBeTruthy();
    const limits = screen.getByRole("region", { name: "Spend limits" });
    expect(limits.textContent).toContain(
      "Your organization may spend up to $50.00 a month (resets on the 1st, UTC); each member up to $0.005 a day (resets at 00:00 UTC).",
    );
    const bar = await within(limits).findByRole("progressbar", {
      name: "Spend this month against the monthly limit",
    });
    expect(bar.getAttribute("aria-valuenow")).toBe("25");
    expect(bar.getAttribute("aria-valuetext")).toBe("$12.50 of $50.00 spent this month (25%)");
  });

  it("shows the org's document storage against its quota, to members too (issue 31.1)", async () => {
    session.role = "member";
    vi.spyOn(api, "billing").mockResolvedValue(summary());
    await renderInApp(<BillingPage />, { path: "/billing" });
    const storage = await screen.findByRole("region", { name: "Document storage" });
    const meter = await within(storage).findByTestId("storage-meter");
    expect(meter.textContent).toContain("3 MB of 50 MB used");
    expect(meter.textContent).toContain("3 documents in the organization");
    expect(within(storage).getByRole("meter").getAttribute("aria-valuetext")).toBe("3 MB of 50 MB");
    expect(knowledgeApi.storage).toHaveBeenCalledWith("org_1");
  });

  it("says how long the balance lasts at the last 7 days' rate, and warns under the forecast alert", async () => {
    vi.spyOn(api, "billing").mockResolvedValue(
      summary({
        availableMicros: 12_000_000,
        runwayAlertDays: 14,
        forecast: {
          windowDays: 7,
          spentMicros: 7_000_000,
          dailyRateMicros: 1_000_000,
          daysLeft: 12,
          runsOutAt: "2026-12-14T12:00:00.000Z",
        },
      }),
    );
    await renderInApp(<BillingPage />, { path: "/billing" });
    const hero = await screen.findByRole("region", { name: "Available balance" });
    expect(within(hero).getByTestId("forecast").textContent).toBe(
      "Lasts about 12 days at the last 7 days' rate ($1.00 a day), until Dec 14, 2026. Below your 14-day forecast alert.",
    );
    cleanup();
    vi.spyOn(api, "billing").mockResolvedValue(
      summary({
        forecast: {
          windowDays: 7,
          spentMicros: 119,
          dailyRateMicros: 17,
          daysLeft: 1_470_425.5,
          runsOutAt: "6052-10-22T00:00:00.000Z",
        },
      }),
    );
    await renderInApp(<BillingPage />, { path: "/billing" });
    const far = await screen.findByRole("region", { name: "Available balance" });
    // No date four thousand years out: more than a year is what a person can use.
    expect(within(far).getByTestId("forecast").textContent).toBe(
      "Lasts more than a year at the last 7 days' rate ($0.000017 a day).",
    );
    cleanup();
    vi.spyOn(api, "billing").mockResolvedValue(summary());
    await renderInApp(<BillingPage />, { path: "/billing" });
    const idle = await screen.findByRole("region", { name: "Available balance" });
    expect(within(idle).getByTestId("forecast").textContent).toBe(
      "No spend in the last 7 days: the balance is not running down.",
    );
  });

  it("says Payment received once, takes ?checkout out of the address, and re-reads the balance until the credit lands", async () => {
    const billing = vi
      .spyOn(api, "billing")
      .mockResolvedValueOnce(summary())
      .mockResolvedValue(summary({ availableMicros: 20_004_200, postedMicros: 20_005_700 }));
    const { router } = await renderInApp(<BillingPage />, { path: "/billing?checkout=success" });
    expect((await screen.findByText("Payment received.")).closest("[role=status]")).toBeTruthy();
    await waitFor(() => expect(router.state.location.search).toEqual({}));
    expect(router.state.location.href).toBe("/billing");
    await waitFor(
      () => expect(screen.getByText(/\$20\.00 was added to your balance/)).toBeTruthy(),
      {
        timeout: 5_000,
      },
    );
    expect(billing.mock.calls.length).toBeGreaterThanOrEqual(2);
    expect(screen.getByText("Payment received.")).toBeTruthy();
  });

  it("notes a cancelled checkout and drops the parameter", async () => {
    vi.spyOn(api, "billing").mockResolvedValue(summary());
    const { router } = await renderInApp(<BillingPage />, { path: "/billing?checkout=cancel" });
    expect(await screen.findByText("Checkout was cancelled; nothing was charged.")).toBeTruthy();
    await waitFor(() => expect(router.state.location.search).toEqual({}));
  });

  it("opens the top-up form from the balance's Top up", async () => {
    vi.spyOn(api, "billing").mockResolvedValue(summary());
    await renderInApp(<BillingPage />, { path: "/billing" });
    fireEvent.click(await screen.findByRole("button", { name: "Top up" }));
    const form = await screen.findByRole("form", { name: "Top up credits" });
    expect(within(form).getByLabelText("Amount in US dollars")).toBeTruthy();
  });

  it("focuses the limits form for #limits, where the chat's Raise the limit leads", async () => {
    vi.spyOn(api, "billing").mockResolvedValue(summary());
    await renderInApp(<BillingPage />, { path: "/billing#limits" });
    const field = await screen.findByLabelText("Monthly limit for the organization (USD)");
    await waitFor(() => expect(document.activeElement).toBe(field));
    expect(screen.getByRole("tab", { name: "Settings" }).getAttribute("aria-selected")).toBe(
      "true",
    );
  });

  it("shows a member the limits read-only and calls no endpoint the worker keeps for admins", async () => {
    session.role = "member";
    vi.spyOn(api, "billing").mockResolvedValue(summary());
    const usage = vi.spyOn(billingApi, "usage").mockResolvedValue(report(2_500));
    await renderInApp(<BillingPage />, { path: "/billing#ledger" });
    const limits = await screen.findByRole("region", { name: "Spend limits" });
    expect(limits.textContent).toMatch(/each member up to \$0\.005 a day/);
    const bar = await within(limits).findByRole("progressbar", {
      name: "Your spend today against the daily limit",
    });
    expect(bar.getAttribute("aria-valuetext")).toBe("You spent $0.0025 of your $0.005 today (50%)");
    expect(screen.queryByRole("button", { name: "Top up" })).toBeNull();
    expect(screen.queryByRole("button", { name: "Change limits" })).toBeNull();
    expect(screen.queryByRole("tab", { name: "Ledger" })).toBeNull();
    expect(screen.queryByRole("tab", { name: "Settings" })).toBeNull();
    expect(screen.queryByRole("button", { name: "Receipts and cards" })).toBeNull();
    fireEvent.mouseDown(screen.getByRole("tab", { name: "Activity" }));
    await screen.findByRole("region", { name: "Activity" });
    expect(billingApi.ledger).not.toHaveBeenCalled();
    expect(billingApi.alerts).not.toHaveBeenCalled();
    expect(usage.mock.calls.map((args) => args[1])).not.toContain("member");
  });
});
