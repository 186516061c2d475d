import { describe, expect, it } from "vitest";
import { CreditLedger } from "./ledger.ts";
import { expiryKey, LEGACY_LOT_ID } from "./lots.ts";
import { MemoryLedgerStore } from "./memory-ledger-store.ts";
import { nodeSqliteExecutor } from "./node-sqlite-executor.test-support.ts";
import type { SettleInput } from "./settlement.ts";
import { SqlLedgerStore } from "./sql-ledger-store.ts";

const T0 = Date.UTC(2026, 11, 1, 12);
const DAY = 86_400_000;

function setup() {
  const store = new MemoryLedgerStore();
  return { store, ledger: new CreditLedger(store) };
}

let requests = 0;
/** Reserves and settles one call of `price`: the usage entry draws the lots. */
function spend(ledger: CreditLedger, price: number, now = T0): void {
  const requestId = `r${++requests}`;
  const reserved = ledger.reserve({
    requestId,
    amountMicros: price,
    memberId: "m",
    projectId: null,
    sessionId: null,
    now,
    ttlMs: 60_000,
  });
  expect(reserved.ok).toBe(true);
  const settle: SettleInput = {
    requestId,
    costMicros: 0,
    priceMicros: price,
    tokens: { promptTokens: 1, completionTokens: 1, cachedPromptTokens: 0, reasoningTokens: 0 },
    model: "m",
    generationIds: [],
    billable: true,
    now,
  };
  expect(ledger.settle(settle).ok).toBe(true);
}

function remaining(ledger: CreditLedger, now = T0): Record<string, number> {
  return Object.fromEntries(ledger.grants(now).map((lot) => [lot.id, lot.remainingMicros]));
}

describe("lots", () => {
  it("opens a lot per credit, with the source its kind implies unless named", () => {
    const { ledger } = setup();
    ledger.post({ kind: "grant", amountMicros: 100, idempotencyKey: "a", now: T0 });
    ledger.post({ kind: "topup", amountMicros: 200, idempotencyKey: "b", now: T0 });
    ledger.post({
      kind: "grant",
      amountMicros: 300,
      idempotencyKey: "c",
      now: T0,
      grant: { source: "signup", priority: 10, expiresAt: T0 + DAY },
    });
    expect(
      ledger.grants(T0).map((lot) => [lot.id, lot.source, lot.priority, lot.expiresAt]),
    ).toEqual([
      ["grant-3", "signup", 10, T0 + DAY],
      ["grant-1", "promotion", 50, null],
      ["grant-2", "top_up", 50, null],
    ]);
  });

  it("draws the soonest-expiring lot first, then the lower priority, then the oldest", () => {
    const { ledger } = setup();
    const grant = (key: string, amount: number, priority: number, expiresAt: number | null) =>
      ledger.post({
        kind: "grant",
        amountMicros: amount,
        idempotencyKey: key,
        now: T0,
        grant: { source: "promotion", priority, expiresAt },
      });
    grant("never", 100, 0, null); // grant-1
    grant("late", 100, 0, T0 + 9 * DAY); // grant-2
    grant("soon-low", 100, 60, T0 + DAY); // grant-3
    grant("soon-high", 100, 40, T0 + DAY); // grant-4
    grant("soon-high-2", 100, 40, T0 + DAY); // grant-5
    spend(ledger, 150);
    expect(remaining(ledger)).toEqual({
      "grant-5": 50,
      "grant-3": 100,
      "grant-2": 100,
      "grant-1": 100,
    });
    spend(ledger, 200);
    expect(remaining(ledger)).toEqual({ "grant-2": 50, "grant-1": 100 });
    expect(ledger.reconcile().ok).toBe(true);
  });

  it("expires once, only what is left, and never below what the lot funded", () => {
    const { ledger } = setup();
    ledger.post({ kind: "topup", amountMicros: 1_000, idempotencyKey: "t", now: T0 });
    ledger.post({
      kind: "grant",
      amountMicros: 500,
      idempotencyKey: "promo",
      now: T0,
      grant: { source: "promotion", expiresAt: T0 + DAY },
    });
    spend(ledger, 300);
    expect(ledger.expireGrants(T0 + DAY - 1).expired).toEqual([]);
    const first = ledger.expireGrants(T0 + DAY);
    expect(first.expired).toHaveLength(1);
    expect(first.expired[0]?.entry).toMatchObject({
      kind: "adjustment",
      amountMicros: -200,
      idempotencyKey: expiryKey("grant-2"),
      reference: "grant-2",
    });
    expect(first.nextExpiresAt).toBeNull();
    expect(ledger.expireGrants(T0 + 2 * DAY).expired).toEqual([]);
    expect(ledger.balance().postedMicros).toBe(1_000);
    expect(remaining(ledger)).toEqual({ "grant-1": 1_000 });
    const expiries = ledger
      .entries(0, 100)
      .filter((e) => e.idempotencyKey.startsWith("grant-expiry"));
    expect(expiries).toHaveLength(1);
  });

  it("expires an empty lot without an entry", () => {
    const { ledger } = setup();
    ledger.post({
      kind: "grant",
      amountMicros: 100,
      idempotencyKey: "p",
      now: T0,
      grant: { source: "promotion", expiresAt: T0 + DAY },
    });
    spend(ledger, 100);
    const result = ledger.expireGrants(T0 + DAY);
    expect(result.expired.map((one) => one.entry)).toEqual([null]);
    expect(ledger.balance().postedMicros).toBe(0);
  });

  it("takes a refund from its own top-up's lot first", () => {
    const { ledger } = setup();
    ledger.post({
      kind: "topup",
      amountMicros: 1_000,
      idempotencyKey: "t1",
      now: T0,
      grant: { source: "top_up", fundingRef: "pi_1" },
    });
    ledger.post({
      kind: "grant",
      amountMicros: 500,
      idempotencyKey: "promo",
      now: T0,
      grant: { source: "promotion", expiresAt: T0 + DAY },
    });
    ledger.postCumulative({
      kind: "adjustment",
      reference: "stripe:refunds:ch_1",
      totalMicros: -400,
      now: T0,
      fundingRef: "pi_1",
    });
    expect(remaining(ledger)).toEqual({ "grant-2": 500, "grant-1": 600 });
    // A refund beyond its lot takes the rest in draw order.
    ledger.postCumulative({
      kind: "adjustment",
      reference: "stripe:refunds:ch_1",
      totalMicros: -1_100,
      now: T0,
      fundingRef: "pi_1",
    });
    expect(remaining(ledger)).toEqual({ "grant-2": 400 });
    expect(ledger.reconcile().ok).toBe(true);
  });

  it("keeps a debt when debits pass every lot, and the next credit pays it first", () => {
    const { ledger } = setup();
    ledger.post({ kind: "topup", amountMicros: 100, idempotencyKey: "t1", now: T0 });
    ledger.post({ kind: "adjustment", amountMicros: -250, idempotencyKey: "dispute", now: T0 });
    expect(ledger.balance().postedMicros).toBe(-150);
    expect(ledger.grants(T0)).toEqual([]);
    expect(ledger.reconcile().ok).toBe(true);
    ledger.post({
      kind: "grant",
      amountMicros: 200,
      idempotencyKey: "promo",
      now: T0,
      grant: { source: "promotion", expiresAt: T0 + DAY },
    });
    expect(ledger.grants(T0).map((lot) => [lot.grantedMicros, lot.remainingMicros])).toEqual([
      [200, 50],
    ]);
    // The expiry takes only what is left of the lot: the debt it paid stays paid.
    expect(ledger.expireGrants(T0 + DAY).expired[0]?.entry?.amountMicros).toBe(-50);
    expect(ledger.balance().postedMicros).toBe(0);
    expect(ledger.reconcile().ok).toBe(true);
  });

  it("refuses a replayed grant with other terms and answers one with the same", () => {
    const { ledger } = setup();
    const input = {
      kind: "grant" as const,
      amountMicros: 100,
      idempotencyKey: "promo",
      now: T0,
      grant: { source: "promotion" as const, expiresAt: T0 + DAY },
    };
    expect(ledger.post(input).ok).toBe(true);
    expect(ledger.post(input)).toMatchObject({ ok: true, replayed: true });
    expect(
      ledger.post({ ...input, grant: { ...input.grant, expiresAt: T0 + 2 * DAY } }),
    ).toMatchObject({ ok: false, reason: "conflict" });
    expect(() =>
      ledger.post({ ...input, idempotencyKey: "x", grant: { source: "promotion", priority: 101 } }),
    ).toThrow(RangeError);
  });

  it("replays a top-up whose second event names no payment intent (no conflict)", () => {
    const { ledger } = setup();
    const topup = { kind: "topup" as const, amountMicros: 100, idempotencyKey: "cs_1", now: T0 };
    ledger.post({ ...topup, grant: { source: "top_up", fundingRef: "pi_1" } });
    expect(
      ledger.post({ ...topup, grant: { source: "top_up", fundingRef: "cs_1" } }),
    ).toMatchObject({
      ok: true,
      replayed: true,
    });
  });

  it("turns a balance from before lots into one opening lot with no expiry", () => {
    for (const makeStore of [
      () => new MemoryLedgerStore(),
      () => {
        const store = new SqlLedgerStore(nodeSqliteExecutor());
        store.migrate();
        return store;
      },
    ]) {
      const store = makeStore();
      // An account as it was before lots: entries and the cached total, no lot.
      store.insertEntry({
        kind: "topup",
        amountMicros: 700,
        balanceAfterMicros: 700,
        idempotencyKey: "old",
        reference: null,
        memo: null,
        createdAt: T0 - DAY,
      });
      store.setCounter("posted", 700);
      const ledger = new CreditLedger(store);
      // A read shows it, and writes nothing.
      expect(ledger.grants(T0).map((lot) => [lot.id, lot.source, lot.remainingMicros])).toEqual([
        [LEGACY_LOT_ID, "legacy", 700],
      ]);
      expect(store.getLot(LEGACY_LOT_ID)).toBeNull();
      spend(ledger, 200);
      expect(store.getLot(LEGACY_LOT_ID)).toMatchObject({
        grantedMicros: 700,
        remainingMicros: 500,
        expiresAt: null,
      });
      expect(ledger.reconcile().ok).toBe(true);
    }
  });

  it("draws a lease report's charges from the lots", () => {
    const { ledger, store } = setup();
    ledger.post({
      kind: "grant",
      amountMicros: 300,
      idempotencyKey: "promo",
      now: T0,
      grant: { source: "promotion", expiresAt: T0 + DAY },
    });
    ledger.post({ kind: "topup", amountMicros: 1_000, idempotencyKey: "t", now: T0 });
    const lease = {
      leaseId: "lease:s1",
      memberId: "m",
      projectId: null,
      sessionId: "s1",
      minMicros: 1,
      ttlMs: 60_000,
      now: T0,
    };
    expect(ledger.lease({ ...lease, usages: [], keepMicros: 0, wantMicros: 500 }).ok).toBe(true);
    const call = (id: string, price: number) => ({
      requestId: id,
      costMicros: 0,
      priceMicros: price,
      drawMicros: price,
      tokens: { promptTokens: 1, completionTokens: 1, cachedPromptTokens: 0, reasoningTokens: 0 },
      model: "m",
      generationIds: [],
      billable: true,
    });
    const report = ledger.lease({
      ...lease,
      usages: [call("c1", 200), call("c2", 250)],
      keepMicros: 0,
      wantMicros: 0,
    });
    expect(report.ok).toBe(true);
    expect(remaining(ledger)).toEqual({ "grant-2": 850 });
    // Each call's share of each lot, recorded against its own entry, in draw order.
    expect(store.allLotDraws()).toEqual([
      { entrySeq: 3, lotId: "grant-1", micros: 200 },
      { entrySeq: 4, lotId: "grant-1", micros: 100 },
      { entrySeq: 4, lotId: "grant-2", micros: 150 },
    ]);
    expect(ledger.reconcile().ok).toBe(true);
  });
});
