import { describe, expect, it } from "vitest";
import { AllowanceStore, allowanceGrant, allowancePeriod } from "./allowance.ts";
import { CreditLedger } from "./ledger.ts";
import { MemoryLedgerStore } from "./memory-ledger-store.ts";
import { nodeSqliteExecutor } from "./node-sqlite-executor.test-support.ts";

describe("allowancePeriod", () => {
  it("starts at 00:00 UTC of the latest billing day and ends at the next", () => {
    const day = allowancePeriod(Date.UTC(2026, 11, 15, 0, 0, 0), 15);
    expect(day).toEqual({
      start: Date.UTC(2026, 11, 15),
      end: Date.UTC(2027, 0, 15),
      key: "allowance:2026-12-15",
    });
    // A millisecond before the boundary is still the previous period.
    expect(allowancePeriod(Date.UTC(2026, 11, 15) - 1, 15).key).toBe("allowance:2026-11-15");
    // January before its billing day belongs to December's period.
    expect(allowancePeriod(Date.UTC(2027, 0, 3), 10)).toMatchObject({
      start: Date.UTC(2026, 11, 10),
      end: Date.UTC(2027, 0, 10),
    });
    expect(() => allowancePeriod(0, 29)).toThrow(RangeError);
  });
});

describe("allowanceGrant", () => {
  it("posts once per period and expires at the next renewal", () => {
    const ledger = new CreditLedger(new MemoryLedgerStore());
    const allowance = { amountMicros: 5_000, billingDay: 1 };
    const t = Date.UTC(2026, 11, 1, 9);
    expect(ledger.post(allowanceGrant(allowance, t))).toMatchObject({ ok: true, replayed: false });
    expect(ledger.post(allowanceGrant(allowance, t + 3_600_000))).toMatchObject({ replayed: true });
    expect(ledger.grants(t)).toMatchObject([
      { source: "monthly_allowance", expiresAt: Date.UTC(2027, 0, 1), remainingMicros: 5_000 },
    ]);
    const next = Date.UTC(2027, 0, 1);
    ledger.expireGrants(next);
    expect(ledger.post(allowanceGrant(allowance, next))).toMatchObject({ replayed: false });
    expect(ledger.balance().postedMicros).toBe(5_000);
    expect(ledger.reconcile().ok).toBe(true);
  });
});

describe("AllowanceStore", () => {
  it("keeps one row; 0 turns it off", () => {
    const store = new AllowanceStore(nodeSqliteExecutor());
    store.migrate();
    store.migrate();
    expect(store.get()).toBeNull();
    store.set({ amountMicros: 10, billingDay: 3 }, 1);
    store.set({ amountMicros: 20, billingDay: 4 }, 2);
    expect(store.get()).toEqual({ amountMicros: 20, billingDay: 4 });
    store.set({ amountMicros: 0, billingDay: 4 }, 3);
    expect(store.get()).toBeNull();
    expect(() => store.set({ amountMicros: 1, billingDay: 0 }, 4)).toThrow(RangeError);
  });
});
