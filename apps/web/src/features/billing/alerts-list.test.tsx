import { cleanup, fireEvent, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { BillingAlert } from "../../lib/api.ts";
import { billingApi } from "../../lib/billing-api.ts";
import { renderInApp } from "../../test/render.tsx";
import { AlertsList } from "./alerts-list.tsx";

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const alert = (key: string, over: Partial<BillingAlert> = {}): BillingAlert => ({
  key,
  kind: "org_monthly_spend",
  memberId: null,
  period: "December 2026",
  periodKey: "2026-12",
  thresholdPct: 80,
  limitMicros: 50_000_000,
  levelMicros: 40_000_000,
  message:
    "Organization spend reached 80% of its monthly limit: $40.00 of $50.00 in December 2026.",
  firedAt: "2026-12-01T10:00:00.000Z",
  deliveredAt: null,
  attempts: 0,
  parkedReason: null,
  ...over,
});

describe("AlertsList", () => {
  it("words each alert and its period for people, with its delivery as a badge", async () => {
    vi.spyOn(billingApi, "alerts").mockResolvedValue({
      items: [
        alert("a3", { deliveredAt: "2026-12-01T10:00:05.000Z" }),
        // A low-balance alert has no period a person needs (its key is internal).
        alert("a2", {
          kind: "low_balance",
          message:
            "The available balance fell to $0.0042, below the low-balance threshold of $1.00.",
          period: null,
          periodKey: "entry-42",
          thresholdPct: null,
          limitMicros: 1_000_000,
          levelMicros: 4_200,
          attempts: 3,
        }),
        alert("a1", { parkedReason: "The webhook URL was removed" }),
      ],
      nextCursor: null,
    });
    await renderInApp(<AlertsList orgId="org_1" />);
    expect((await screen.findAllByText(/reached 80% of its monthly limit/)).length).toBe(2);
    expect(
      screen.getByText(
        "The available balance fell to $0.0042, below the low-balance threshold of $1.00.",
      ),
    ).toBeTruthy();
    expect(screen.queryByText(/entry-42/)).toBeNull();
    expect(screen.getAllByText("December 2026").length).toBe(2);
    expect(screen.getByText("Webhook: Delivered")).toBeTruthy();
    expect(screen.getByText("Webhook: Retrying (3 attempts)")).toBeTruthy();
    expect(screen.getByText("Webhook: Not delivered")).toBeTruthy();
    expect(screen.getByText(/not sent: The webhook URL was removed/)).toBeTruthy();
  });

  it("says no webhook is set rather than waiting to send", async () => {
    vi.spyOn(billingApi, "alerts").mockResolvedValue({ items: [alert("a1")], nextCursor: null });
    await renderInApp(<AlertsList orgId="org_1" webhookSet={false} />);
    expect(await screen.findByText("Webhook: No webhook set")).toBeTruthy();
  });

  it("pages with More alerts", async () => {
    const alerts = vi
      .spyOn(billingApi, "alerts")
      .mockResolvedValueOnce({ items: [alert("a2")], nextCursor: "c1" })
      .mockResolvedValueOnce({
        items: [alert("a1", { message: "Older alert.", kind: "member_daily_spend" })],
        nextCursor: null,
      });
    await renderInApp(<AlertsList orgId="org_1" />);
    fireEvent.click(await screen.findByRole("button", { name: "More alerts" }));
    await screen.findByText("Older alert.");
    expect(alerts.mock.calls).toEqual([
      ["org_1", undefined],
      ["org_1", "c1"],
    ]);
  });
});
