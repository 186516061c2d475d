import type { BillingSummary } from "@parley/shared";
import { cleanup, fireEvent, render, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { billingApi } from "../../lib/billing-api.ts";
import { renderInApp } from "../../test/render.tsx";
import { ActivityTable } from "./activity-table.tsx";
import { BalanceHero } from "./balance-hero.tsx";

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const summary = (over: Partial<BillingSummary> = {}): BillingSummary => ({
  orgId: "org_1",
  currency: "usd",
  availableMicros: 4_996_725,
  heldMicros: 3_131,
  postedMicros: 4_999_856,
  orgMonthlyLimitMicros: null,
  memberDailyLimitMicros: null,
  lowBalanceMicros: null,
  runwayAlertDays: null,
  alertWebhookUrl: null,
  limitWarningPct: 80,
  forecast: { windowDays: 7, spentMicros: 0, dailyRateMicros: 0, daysLeft: null, runsOutAt: null },
  grants: [],
  ...over,
});

describe("the balance", () => {
  it("is one figure in dollars and cents, with the exact amount and what chats hold on demand", () => {
    render(<BalanceHero summary={summary()} canManage onTopUp={() => {}} />);
    expect(screen.getByTestId("balance").textContent).toBe("$4.99");
    const exact = screen.getByTestId("balance-exact");
    expect(exact.closest("[hidden]")).not.toBeNull();
    const toggle = screen.getByRole("button", { name: "Exact amount" });
    expect(toggle.getAttribute("aria-expanded")).toBe("false");
    fireEvent.click(toggle);
    expect(toggle.getAttribute("aria-expanded")).toBe("true");
    expect(exact.closest("[hidden]")).toBeNull();
    expect(exact.textContent).toBe("Exactly $4.996725 available.");
    expect(exact.parentElement?.textContent).toContain("$0.003131 held by chats in progress");
  });

  it("offers nothing more when the cents are the whole amount and nothing is held", () => {
    render(
      <BalanceHero
        summary={summary({ availableMicros: 5_000_000, heldMicros: 0 })}
        canManage
        onTopUp={() => {}}
      />,
    );
    expect(screen.getByTestId("balance").textContent).toBe("$5.00");
    expect(screen.queryByRole("button", { name: "Exact amount" })).toBeNull();
  });
});

describe("Activity on a phone", () => {
  it("puts its filters in a sheet behind one button that counts the ones in use", async () => {
    vi.spyOn(window, "matchMedia").mockImplementation(
      (query: string) =>
        ({
          matches: query.includes("max-width: 639px"),
          media: query,
          addEventListener: () => {},
          removeEventListener: () => {},
        }) as unknown as MediaQueryList,
    );
    vi.spyOn(billingApi, "usage").mockResolvedValue({
      from: "2000-01-01T00:00:00.000Z",
      to: "2026-12-02T00:00:00.000Z",
      groupBy: "model",
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
    vi.spyOn(billingApi, "activity").mockResolvedValue({ items: [], nextCursor: null });
    await renderInApp(<ActivityTable orgId="org_1" canManage />);
    // No filter fields on the page itself: one button.
    expect(screen.queryByLabelText("Model")).toBeNull();
    fireEvent.click(screen.getByRole("button", { name: "Filters" }));
    const sheet = await screen.findByRole("dialog", { name: "Filter activity" });
    fireEvent.change(within(sheet).getByLabelText("Member"), { target: { value: "" } });
    expect(within(sheet).getByLabelText("Model")).toBeTruthy();
    fireEvent.click(within(sheet).getByRole("button", { name: "Show calls" }));
    expect(screen.queryByRole("dialog")).toBeNull();
  });
});
