import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CreditLedger } from "./ledger.ts";
import type { LedgerStore } from "./ledger-store.ts";
import { MemoryLedgerStore } from "./memory-ledger-store.ts";
import { nodeSqliteExecutor } from "./node-sqlite-executor.test-support.ts";
import { ReversalStore } from "./reversals.ts";
import { SqlLedgerStore } from "./sql-ledger-store.ts";

const HOUR = 3_600_000;
const START = Date.UTC(2026, 11, 1, 0);
/** What each payment of the reversal ops paid: refunds and disputes together take at most this. */
const PAID = 600;

type Op =
  | { type: "grant"; amount: number; priority: number; expiresIn: number | null; key: number }
  | { type: "topup"; amount: number; pi: number }
  | { type: "reversal"; pi: number; kind: "refund" | "dispute" | "reinstate"; amount: number }
  | { type: "spend"; price: number; over: number }
  | { type: "lease"; prices: number[] }
  | { type: "advance"; ms: number }
  | { type: "expire"; twice: boolean };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      type: fc.constant("grant" as const),
      amount: fc.integer({ min: 1, max: 800 }),
      priority: fc.integer({ min: 0, max: 3 }).map((n) => n * 25),
      expiresIn: fc.option(
        fc.integer({ min: 0, max: 6 }).map((n) => n * HOUR),
        { nil: null },
      ),
      key: fc.nat(6),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant("topup" as const),
      amount: fc.integer({ min: 1, max: 800 }),
      pi: fc.nat(3),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant("reversal" as const),
      pi: fc.nat(3),
      kind: fc.constantFrom("refund" as const, "dispute" as const, "reinstate" as const),
      amount: fc.integer({ min: 1, max: 900 }),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      type: fc.constant("spend" as const),
      price: fc.integer({ min: 1, max: 300 }),
      over: fc.integer({ min: 0, max: 50 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant("lease" as const),
      prices: fc.array(fc.integer({ min: 0, max: 120 }), { maxLength: 4 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant("advance" as const),
      ms: fc.integer({ min: 1, max: 3 * HOUR }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ type: fc.constant("expire" as const), twice: fc.boolean() }),
  },
);

interface ModelLot {
  id: string;
  seq: number;
  remaining: number;
  granted: number;
  priority: number;
  expiresAt: number | null;
  ref: string | null;
  expired: boolean;
}

/** An independent model of the lots: a list, a debt, and the draw order written out again. */
class Model {
  posted = 0;
  debt = 0;
  /** What debits took beyond the lots, in all (what no lot draw records). */
  debtTaken = 0;
  seq = 0;
  lots: ModelLot[] = [];
  charged = 0;
  prices = 0;

  order(): ModelLot[] {
    const key = (lot: ModelLot) => [
      lot.expiresAt ?? Number.MAX_SAFE_INTEGER,
      lot.priority,
      lot.seq,
    ];
    return this.lots
      .filter((lot) => !lot.expired && lot.remaining > 0)
      .sort((a, b) => {
        const [x, y] = [key(a), key(b)];
        for (let i = 0; i < 3; i++) {
          const d = (x[i] ?? 0) - (y[i] ?? 0);
          if (d !== 0) return d;
        }
        return 0;
      });
  }

  credit(amount: number, lot: Omit<ModelLot, "id" | "seq" | "remaining" | "granted" | "expired">) {
    this.seq += 1;
    this.posted += amount;
    const paid = Math.min(this.debt, amount);
    this.debt -= paid;
    this.lots.push({
      ...lot,
      id: `grant-${this.seq}`,
      seq: this.seq,
      granted: amount,
      remaining: amount - paid,
      expired: false,
    });
  }

  debit(amount: number, first: ModelLot | null = null): void {
    this.seq += 1;
    this.posted -= amount;
    let left = amount;
    const order = this.order().filter((lot) => lot !== first);
    for (const lot of first && !first.expired ? [first, ...order] : order) {
      const take = Math.min(left, lot.remaining);
      lot.remaining -= take;
      left -= take;
    }
    this.debt += left;
    this.debtTaken += left;
  }
}

function run(makeStore: () => LedgerStore, ops: readonly Op[]): void {
  const store = makeStore();
  const ledger = new CreditLedger(store);
  const model = new Model();
  let now = START;
  let request = 0;
  const grantKeys = new Map<
    string,
    { amount: number; priority: number; expiresAt: number | null }
  >();
  // Stripe's facts per payment, each only ever raised, and what they took from credits.
  const facts = new Map<number, { refund: number; withdrawn: number; reinstated: number }>();
  const taken = new Map<number, number>();
  const reversals = new ReversalStore(nodeSqliteExecutor());
  reversals.migrate();
  const expiredIds = new Set<string>();

  for (const op of ops) {
    switch (op.type) {
      case "grant": {
        const key = `promo-${op.key}`;
        const expiresAt = op.expiresIn === null ? null : now + op.expiresIn;
        const terms = { amount: op.amount, priority: op.priority, expiresAt };
        const result = ledger.post({
          kind: "grant",
          amountMicros: op.amount,
          idempotencyKey: key,
          now,
          grant: { source: "promotion", priority: op.priority, expiresAt },
        });
        const before = grantKeys.get(key);
        if (before === undefined) {
          expect(result.ok && !result.replayed).toBe(true);
          grantKeys.set(key, terms);
          model.credit(op.amount, { priority: op.priority, expiresAt, ref: null });
        } else {
          const same = JSON.stringify(before) === JSON.stringify(terms);
          expect(result.ok ? "replayed" : "conflict").toBe(same ? "replayed" : "conflict");
        }
        break;
      }
      case "topup": {
        const ref = `pi_${op.pi}_${model.seq}`;
        ledger.post({
          kind: "topup",
          amountMicros: op.amount,
          idempotencyKey: `topup-${ref}`,
          now,
          grant: { source: "top_up", fundingRef: `pi_${op.pi}` },
        });
        model.credit(op.amount, { priority: 50, expiresAt: null, ref: `pi_${op.pi}` });
        break;
      }
      case "reversal": {
        // Through the cap (reversals.ts): a payment's refunds and disputes take at most PAID.
        const pi = `pi_${op.pi}`;
        const kind = op.kind === "reinstate" ? "dispute_reinstated" : op.kind;
        reversals.apply(
          ledger,
          store,
          {
            paymentRef: pi,
            paidMicros: PAID,
            kind,
            sourceId: op.kind === "refund" ? `ch_${op.pi}` : `dp_${op.pi}`,
            chargeId: op.kind === "refund" ? null : `ch_${op.pi}`,
            amountMicros: op.amount,
          },
          now,
        );
        const fact = facts.get(op.pi) ?? { refund: 0, withdrawn: 0, reinstated: 0 };
        if (op.kind === "refund") fact.refund = Math.max(fact.refund, op.amount);
        if (op.kind === "dispute") fact.withdrawn = Math.max(fact.withdrawn, op.amount);
        if (op.kind === "reinstate") fact.reinstated = Math.max(fact.reinstated, op.amount);
        facts.set(op.pi, fact);
        const target = Math.min(PAID, fact.refund + Math.max(0, fact.withdrawn - fact.reinstated));
        const delta = target - (taken.get(op.pi) ?? 0);
        taken.set(op.pi, target);
        if (delta > 0) {
          const own = [...model.lots].reverse().find((lot) => !lot.expired && lot.ref === pi);
          model.debit(delta, own ?? null);
        } else if (delta < 0) {
          // Given back (a won dispute): a lot of its own, as any positive adjustment.
          model.credit(-delta, { priority: 50, expiresAt: null, ref: null });
        }
        expect(reversals.get(store, pi)?.reversedMicros).toBe(target);
        break;
      }
      case "spend": {
        // Reserve what the balance allows, settle with an overrun: the charge is the whole price.
        const requestId = `r${++request}`;
        const reserved = ledger.reserve({
          requestId,
          amountMicros: op.price,
          memberId: "m",
          projectId: null,
          sessionId: null,
          now,
          ttlMs: HOUR,
        });
        if (!reserved.ok) break;
        const price = op.price + op.over;
        const settled = ledger.settle({
          requestId,
          costMicros: 0,
          priceMicros: price,
          tokens: {
            promptTokens: 1,
            completionTokens: 0,
            cachedPromptTokens: 0,
            reasoningTokens: 0,
          },
          model: "m",
          generationIds: [],
          billable: true,
          now,
        });
        expect(settled.ok).toBe(true);
        model.prices += price;
        model.debit(price);
        break;
      }
      case "lease": {
        const id = `lease:${++request}`;
        const base = { leaseId: id, memberId: "m", projectId: null, sessionId: id };
        const opened = ledger.lease({
          ...base,
          usages: [],
          keepMicros: 0,
          wantMicros: 400,
          minMicros: 1,
          now,
          ttlMs: HOUR,
        });
        if (!opened.ok || opened.lease === null) break;
        const usages = op.prices.map((price, i) => ({
          requestId: `${id}-c${i}`,
          costMicros: 0,
          priceMicros: price,
          drawMicros: price,
          tokens: {
            promptTokens: 1,
            completionTokens: 0,
            cachedPromptTokens: 0,
            reasoningTokens: 0,
          },
          model: "m",
          generationIds: [],
          billable: true,
        }));
        const report = ledger.lease({
          ...base,
          usages,
          keepMicros: 0,
          wantMicros: 0,
          minMicros: 1,
          now,
          ttlMs: HOUR,
        });
        expect(report.ok).toBe(true);
        const total = op.prices.reduce((a, b) => a + b, 0);
        model.prices += total;
        if (total > 0) {
          model.seq += op.prices.filter((p) => p > 0).length - 1;
          model.debit(total);
        }
        break;
      }
      case "advance":
        now += op.ms;
        break;
      case "expire": {
        const due = model.lots.filter(
          (lot) => !lot.expired && lot.expiresAt !== null && lot.expiresAt <= now,
        );
        const result = ledger.expireGrants(now);
        if (op.twice) expect(ledger.expireGrants(now).expired).toEqual([]);
        expect(result.expired.map((one) => one.lot.id).sort()).toEqual(due.map((l) => l.id).sort());
        for (const one of result.expired) {
          const lot = due.find((l) => l.id === one.lot.id);
          if (lot === undefined) throw new Error("unexpected lot");
          // It takes exactly what was left, never more than the lot funded.
          expect(one.entry?.amountMicros ?? 0).toBe(0 - lot.remaining);
          expect(lot.remaining).toBeLessThanOrEqual(lot.granted);
          expect(expiredIds.has(lot.id)).toBe(false);
          expiredIds.add(lot.id);
          if (lot.remaining > 0) model.debit(lot.remaining, lot);
          lot.expired = true;
        }
        break;
      }
    }

    // After every step.
    expect(ledger.reconcile().problems).toEqual([]);
    const balance = ledger.balance();
    expect(balance.postedMicros).toBe(model.posted);
    const live = ledger.grants(now);
    expect(live.map((lot) => [lot.id, lot.remainingMicros])).toEqual(
      model.order().map((lot) => [lot.id, lot.remaining]),
    );
    const sum = live.reduce((total, lot) => total + lot.remainingMicros, 0);
    // Lots hold the balance; below zero they are empty and the rest is debt.
    if (balance.postedMicros >= 0) expect(sum).toBe(balance.postedMicros);
    else expect(sum).toBe(0);
    const entries = ledger.entries(0, 100_000);
    // Usage charged equals the sum of call prices.
    const usage = entries.filter((e) => e.kind === "usage").reduce((t, e) => t - e.amountMicros, 0);
    expect(usage).toBe(model.prices);
    // Every debit's lot shares add up to what lots covered of it, never more than the debit.
    if (store instanceof MemoryLedgerStore) {
      const drawn = new Map<number, number>();
      for (const draw of store.allLotDraws()) {
        drawn.set(draw.entrySeq, (drawn.get(draw.entrySeq) ?? 0) + draw.micros);
      }
      for (const entry of entries) {
        if (entry.amountMicros < 0) {
          expect(drawn.get(entry.seq) ?? 0).toBeLessThanOrEqual(-entry.amountMicros);
        } else expect(drawn.has(entry.seq)).toBe(false);
      }
      const total = [...drawn.values()].reduce((a, b) => a + b, 0);
      const debits = entries
        .filter((e) => e.amountMicros < 0)
        .reduce((t, e) => t - e.amountMicros, 0);
      expect(debits - total).toBe(model.debtTaken);
    }
    // Nothing expires twice.
    const expiryKeys = entries
      .map((e) => e.idempotencyKey)
      .filter((k) => k.startsWith("grant-expiry:"));
    expect(new Set(expiryKeys).size).toBe(expiryKeys.length);
    for (const key of expiryKeys)
      expect(expiredIds.has(key.slice("grant-expiry:".length))).toBe(true);
    expect(expiryKeys.every((key) => key.startsWith("grant-expiry:grant-"))).toBe(true);
  }
}

function sqliteStore(): LedgerStore {
  const store = new SqlLedgerStore(nodeSqliteExecutor());
  store.migrate();
  return store;
}

describe.each([
  ["memory", () => new MemoryLedgerStore(), 300],
  ["sqlite", sqliteStore, 100],
] as const)("lot properties (%s store)", (_name, makeStore, numRuns) => {
  it("keeps the lots equal to the balance under grants, usage, capped refunds and disputes, and expiry", () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 5, maxLength: 60 }), (ops) => run(makeStore, ops)),
      { numRuns },
    );
  });
});
