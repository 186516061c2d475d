import type { BillingSummary, LimitRule } from "@parley/shared";
import { cleanup, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { membersApi } from "../features/members/members-api.ts";
import { api } from "../lib/api.ts";
import { billingApi } from "../lib/billing-api.ts";
import { dataRightsApi } from "../lib/data-rights-api.ts";
import { orgsApi } from "../lib/orgs-api.ts";
import { renderInApp } from "../test/render.tsx";
import BillingPage from "./billing-page.tsx";

/** The chat's button when a limit stopped a message leads to exactly that limit's setting. */
const session = vi.hoisted(() => ({ role: "owner" as "owner" | "admin" | "member" }));
vi.mock("../lib/session.tsx", () => ({
  useSession: () => ({
    org: { id: "org_1", name: "Acme", role: session.role, createdAt: "x" },
    me: { id: "usr_me", email: "me@example.com", name: "Me" },
  }),
  canManage: (org: { role: string } | null) => org?.role === "owner" || org?.role === "admin",
}));

const summary: BillingSummary = {
  orgId: "org_1",
  currency: "usd",
  availableMicros: 4_200_000,
  heldMicros: 0,
  postedMicros: 4_200_000,
  orgMonthlyLimitMicros: 50_000_000,
  memberDailyLimitMicros: 5_000_000,
  lowBalanceMicros: null,
  runwayAlertDays: null,
  alertWebhookUrl: null,
  limitWarningPct: 80,
  forecast: { windowDays: 7, spentMicros: 0, dailyRateMicros: 0, daysLeft: null, runsOutAt: null },
  grants: [],
};

const rule = (over: Partial<LimitRule>): LimitRule => ({
  subject: "member",
  subjectId: "usr_me",
  label: "Me",
  period: "week",
  amountMicros: 1_000_000,
  updatedAt: "2026-12-01T00:00:00.000Z",
  ...over,
});

beforeEach(() => {
  session.role = "owner";
  vi.spyOn(api, "billing").mockResolvedValue(summary);
  vi.spyOn(billingApi, "usage").mockResolvedValue({
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
      priceMicros: 0,
    },
  });
  vi.spyOn(billingApi, "alerts").mockResolvedValue({ items: [], nextCursor: null });
  vi.spyOn(billingApi, "autoTopUp").mockRejectedValue(new Error("not in this test"));
  vi.spyOn(dataRightsApi, "orgExports").mockResolvedValue({ items: [], nextCursor: null });
  vi.spyOn(billingApi, "myLimits").mockResolvedValue({ warningPct: 80, limits: [] });
  vi.spyOn(billingApi, "limitRules").mockResolvedValue({ items: [] });
  vi.spyOn(membersApi, "members").mockResolvedValue({
    items: [
      {
        userId: "usr_me",
        email: "me@example.com",
        name: "Me",
        role: "owner",
        createdAt: "2026-12-01T00:00:00.000Z",
      },
    ],
    nextCursor: null,
  } as never);
  vi.spyOn(orgsApi, "projects").mockResolvedValue({
    items: [{ id: "prj_1", name: "Launch", orgId: "org_1" }],
    nextCursor: null,
  } as never);
});

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const focused = () => document.activeElement as HTMLElement | null;

describe("a link to one limit", () => {
  it("opens the daily limit per member when that stopped the member, not the org's monthly field", async () => {
    await renderInApp(<BillingPage />, { path: "/billing#limit:member_daily:usr_me" });
    const field = await screen.findByLabelText("Daily limit per member (USD)");
    await waitFor(() => expect(focused()).toBe(field));
    expect(screen.getByRole("tab", { name: "Settings" }).getAttribute("aria-selected")).toBe(
      "true",
    );
  });

  it("opens the member's own rule, filled in, when they have limits of their own", async () => {
    vi.spyOn(billingApi, "limitRules").mockResolvedValue({ items: [rule({ period: "day" })] });
    await renderInApp(<BillingPage />, { path: "/billing#limit:member_daily:usr_me" });
    const rules = await screen.findByRole("region", { name: "Limits on members and projects" });
    const amount = within(rules).getByLabelText("Amount (USD)");
    await waitFor(() => expect(focused()).toBe(amount));
    expect((within(rules).getByLabelText("On") as HTMLSelectElement).value).toBe("member:usr_me");
    expect((within(rules).getByLabelText("Period") as HTMLSelectElement).value).toBe("day");
  });

  it("opens a project's weekly limit in the rules form, filled in for that project", async () => {
    await renderInApp(<BillingPage />, { path: "/billing#limit:project_weekly:prj_1" });
    const rules = await screen.findByRole("region", { name: "Limits on members and projects" });
    const amount = within(rules).getByLabelText("Amount (USD)");
    await waitFor(() => expect(focused()).toBe(amount));
    await waitFor(() =>
      expect((within(rules).getByLabelText("On") as HTMLSelectElement).value).toBe("project:prj_1"),
    );
    expect((within(rules).getByLabelText("Period") as HTMLSelectElement).value).toBe("week");
  });

  it("opens a member's own limit on the overview, where they change it themselves", async () => {
    session.role = "member";
    await renderInApp(<BillingPage />, { path: "/billing#limit:own_daily" });
    const mine = await screen.findByRole("region", { name: "Your limits" });
    const amount = within(mine).getByLabelText("Amount (USD)");
    await waitFor(() => expect(focused()).toBe(amount));
    expect((within(mine).getByLabelText("Period") as HTMLSelectElement).value).toBe("day");
  });

  it("opens the org's monthly field for the org's monthly limit", async () => {
    await renderInApp(<BillingPage />, { path: "/billing#limit:org_monthly" });
    const field = await screen.findByLabelText("Monthly limit for the organization (USD)");
    await waitFor(() => expect(focused()).toBe(field));
  });
});
