import { describe, expect, it } from "vitest";
import { AccountStore, type BillingSettings } from "./account-store.ts";
import { nodeSqliteExecutor } from "./node-sqlite-executor.test-support.ts";

function account() {
  const executor = nodeSqliteExecutor();
  const store = new AccountStore(executor);
  store.migrate();
  store.migrate(); // idempotent
  return { executor, store };
}

const none: BillingSettings = {
  orgMonthlyLimitMicros: null,
  memberDailyLimitMicros: null,
  lowBalanceMicros: null,
  runwayAlertDays: null,
  alertWebhookUrl: null,
  limitWarningPct: 80,
};

describe("account store", () => {
  it("has no settings and no org before it is opened, and opening twice keeps the first org", () => {
    const { store } = account();
    expect(store.settings()).toEqual(none);
    expect(store.orgId()).toBeUndefined();
    store.open("org_a");
    store.open("org_b");
    expect(store.orgId()).toBe("org_a");
    expect(store.settings()).toEqual(none);
  });

  it("replaces every setting on write (null clears one) and keeps the org id recorded first", () => {
    const { store } = account();
    const set: BillingSettings = {
      orgMonthlyLimitMicros: 50_000_000,
      memberDailyLimitMicros: 2_000_000,
      lowBalanceMicros: 1_000_000,
      runwayAlertDays: 7,
      alertWebhookUrl: "https://hooks.example.com/parley",
      limitWarningPct: 90,
    };
    // A first write opens the account too.
    store.writeSettings("org_a", set);
    expect(store.orgId()).toBe("org_a");
    expect(store.settings()).toEqual(set);
    const next: BillingSettings = {
      orgMonthlyLimitMicros: 70_000_000,
      memberDailyLimitMicros: null,
      lowBalanceMicros: 3_000_000,
      runwayAlertDays: null,
      alertWebhookUrl: null,
      // No warning at all: kept apart from "never set" (the default 80).
      limitWarningPct: null,
    };
    store.writeSettings("org_b", next);
    expect(store.settings()).toEqual(next);
    expect(store.orgId()).toBe("org_a");
  });

  it("gives settings made before the runway alert its column, keeping what they held", () => {
    const executor = nodeSqliteExecutor();
    for (const _ of executor.exec(
      `CREATE TABLE billing_settings (id INTEGER PRIMARY KEY CHECK (id = 1), org_id TEXT NOT NULL,
        org_monthly_limit_micros INTEGER, member_daily_limit_micros INTEGER,
        low_balance_micros INTEGER, alert_webhook_url TEXT)`,
    ));
    for (const _ of executor.exec(
      "INSERT INTO billing_settings (id, org_id, low_balance_micros) VALUES (1, 'org_old', 5)",
    ));
    const store = new AccountStore(executor);
    store.migrate();
    store.migrate();
    expect(store.settings()).toEqual({ ...none, lowBalanceMicros: 5 });
    store.writeSettings("org_old", { ...none, runwayAlertDays: 3 });
    expect(store.settings().runwayAlertDays).toBe(3);
  });

  it("remembers each Stripe event applied", () => {
    const { executor, store } = account();
    expect(store.stripeEventSeen("evt_1")).toBe(false);
    store.recordStripeEvent({ id: "evt_1", type: "checkout.session.completed" }, 1_000);
    expect(store.stripeEventSeen("evt_1")).toBe(true);
    expect(store.stripeEventSeen("evt_2")).toBe(false);
    expect([...executor.exec("SELECT * FROM stripe_events")]).toEqual([
      { event_id: "evt_1", type: "checkout.session.completed", processed_at: 1_000 },
    ]);
    // The event id is the key: recording it twice is an error, not a second row.
    expect(() => store.recordStripeEvent({ id: "evt_1", type: "x" }, 2_000)).toThrow();
  });

  it("admits preview turns up to the cap per day, counting only admitted ones", () => {
    const { store } = account();
    expect(store.admitPreviewTurn("2026-12-01", 2)).toEqual({ ok: true, used: 1 });
    expect(store.admitPreviewTurn("2026-12-01", 2)).toEqual({ ok: true, used: 2 });
    expect(store.admitPreviewTurn("2026-12-01", 2)).toEqual({ ok: false, used: 2 });
    expect(store.admitPreviewTurn("2026-12-01", 2)).toEqual({ ok: false, used: 2 });
    // A raised cap admits again from the same count; another day starts at zero.
    expect(store.admitPreviewTurn("2026-12-01", 3)).toEqual({ ok: true, used: 3 });
    expect(store.admitPreviewTurn("2026-12-02", 2)).toEqual({ ok: true, used: 1 });
    expect(store.admitPreviewTurn("2026-12-03", 0)).toEqual({ ok: false, used: 0 });
  });
});
