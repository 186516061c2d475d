import { describe, expect, it } from "vitest";
import { alertMessage, alertPeriodLabel, autoTopUpFailurePeriod, formatUsd } from "./alerts.ts";
import type { AlertRow } from "./ledger-store.ts";

const alert = (overrides: Partial<AlertRow>): AlertRow => ({
  key: "k",
  kind: "org_monthly_spend",
  memberId: null,
  period: "2026-12",
  thresholdPct: 80,
  limitMicros: 100_000_000,
  levelMicros: 80_500_000,
  firedAt: 0,
  ...overrides,
});

describe("alert wording", () => {
  it("formats micro-dollars for people", () => {
    expect(formatUsd(0)).toBe("$0.00");
    expect(formatUsd(1_200)).toBe("$0.0012");
    expect(formatUsd(1_234_500_000)).toBe("$1,234.50");
    expect(formatUsd(-5_000_000)).toBe("-$5.00");
    expect(formatUsd(1)).toBe("$0.000001");
  });

  it("names the period readably, and none for low balance", () => {
    expect(alertPeriodLabel(alert({}))).toBe("December 2026");
    expect(alertPeriodLabel(alert({ kind: "member_daily_spend", period: "2026-12-01" }))).toBe(
      "2026-12-01 (UTC)",
    );
    expect(alertPeriodLabel(alert({ kind: "low_balance", period: "entry-7" }))).toBeNull();
    expect(alertPeriodLabel(alert({ kind: "low_runway", period: "runway-5d-entry-7" }))).toBeNull();
    expect(
      alertMessage(
        alert({
          kind: "low_runway",
          period: "runway-5d-entry-7",
          thresholdPct: null,
          limitMicros: 5_500_000,
          levelMicros: 1_600_000,
        }),
      ),
    ).toBe(
      "At the last 7 days' spend rate the available balance of $1.60 lasts less than 5 days (5 days would need $5.50).",
    );
  });

  it("says which limit or threshold, and how much", () => {
    expect(alertMessage(alert({}))).toBe(
      "Organization spend reached 80% of its monthly limit: $80.50 of $100.00 in December 2026.",
    );
    expect(
      alertMessage(
        alert({
          kind: "member_daily_spend",
          period: "2026-12-01",
          memberId: "m1",
          thresholdPct: 100,
          limitMicros: 5_000_000,
          levelMicros: 5_000_000,
        }),
      ),
    ).toBe(
      "A member's spend reached 100% of the daily member limit: $5.00 of $5.00 on 2026-12-01 (UTC).",
    );
    expect(
      alertMessage(
        alert({
          kind: "low_balance",
          period: "entry-7",
          thresholdPct: null,
          limitMicros: 5_000_000,
          levelMicros: 4_200_000,
        }),
      ),
    ).toBe("The available balance fell to $4.20, below the low-balance threshold of $5.00.");
  });

  it("says a limit stopped a reply when the 100% alert fired below the limit", () => {
    expect(
      alertMessage(alert({ thresholdPct: 100, limitMicros: 1_000_000, levelMicros: 987_000 })),
    ).toBe(
      "The monthly limit stopped a reply that would have gone over it: $0.987 of $1.00 spent or reserved in December 2026.",
    );
    expect(
      alertMessage(
        alert({
          kind: "member_daily_spend",
          period: "2026-12-01",
          memberId: "m1",
          thresholdPct: 100,
          limitMicros: 5_000_000,
          levelMicros: 4_990_000,
        }),
      ),
    ).toBe(
      "The daily member limit stopped a reply that would have gone over it: $4.99 of $5.00 spent or reserved on 2026-12-01 (UTC).",
    );
  });

  it("says why an automatic top-up failed and that it is paused", () => {
    const failed = (code: string) =>
      alert({
        kind: "auto_top_up_failed",
        period: autoTopUpFailurePeriod("auto-topup-4", code),
        thresholdPct: null,
        limitMicros: 20_000_000,
        levelMicros: 3_500_000,
      });
    expect(alertPeriodLabel(failed("card_declined"))).toBeNull();
    expect(alertMessage(failed("card_declined"))).toBe(
      "An automatic top-up of $20.00 was not paid: the card was declined (card_declined). Automatic top-up is paused until a card is saved again or it is turned back on; the balance is $3.50.",
    );
    expect(alertMessage(failed("authentication_required"))).toContain(
      "asked for the cardholder's authentication",
    );
  });
});
