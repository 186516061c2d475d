import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CreditLedger } from "./ledger.ts";
import { utcDay, utcMonth } from "./ledger-counters.ts";
import type { HoldRow, HoldStatus, LedgerStore } from "./ledger-store.ts";
import { MemoryLedgerStore } from "./memory-ledger-store.ts";
import { nodeSqliteExecutor } from "./node-sqlite-executor.test-support.ts";
import type { SettleInput } from "./settlement.ts";
import { SqlLedgerStore } from "./sql-ledger-store.ts";

const HOUR = 3_600_000;
// Starts a few hours before a UTC day and month boundary, so runs cross both.
const START = Date.UTC(2026, 10, 30, 20, 0, 0);
const MEMBERS = 3;

type Op =
  | {
      type: "reserve";
      fresh: boolean;
      same: boolean;
      req: number;
      amount: number;
      member: number;
      ttl: number;
    }
  | {
      type: "settle";
      req: number;
      mode: "under" | "exact" | "over" | "free";
      frac: number;
      extra: number;
    }
  | { type: "replaySettle"; pick: number }
  | { type: "release"; req: number }
  | { type: "expire" }
  | { type: "advance"; ms: number }
  | { type: "topup"; key: number; amount: number }
  | { type: "refund"; amount: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      type: fc.constant("reserve" as const),
      fresh: fc.boolean(),
      same: fc.boolean(),
      req: fc.nat(),
      amount: fc.integer({ min: 1, max: 400 }),
      member: fc.nat(MEMBERS - 1),
      ttl: fc.integer({ min: 1, max: 3 * HOUR }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      type: fc.constant("settle" as const),
      req: fc.nat(),
      mode: fc.constantFrom("under" as const, "exact" as const, "over" as const, "free" as const),
      frac: fc.integer({ min: 0, max: 100 }),
      extra: fc.integer({ min: 1, max: 150 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ type: fc.constant("replaySettle" as const), pick: fc.nat() }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ type: fc.constant("release" as const), req: fc.nat() }),
  },
  { weight: 1, arbitrary: fc.record({ type: fc.constant("expire" as const) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant("advance" as const),
      ms: fc.integer({ min: 1, max: 4 * HOUR }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant("topup" as const),
      key: fc.nat(4),
      amount: fc.integer({ min: 1, max: 1_000 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      type: fc.constant("refund" as const),
      amount: fc.integer({ min: 1, max: 300 }),
    }),
  },
);

interface ModelHold {
  amount: number;
  member: string;
  status: HoldStatus;
  expiresAt: number;
}

/** An independent, obviously-correct model of the ledger's money. */
class Model {
  posted = 0;
  held = 0;
  holds = new Map<string, ModelHold>();
  settled = new Map<string, SettleInput>();
  orgSpend = new Map<string, number>();
  memberSpend = new Map<string, number>();
  topups = new Map<string, number>();
  usageEntries = 0;

  memberHeld(member: string): number {
    let sum = 0;
    for (const hold of this.holds.values()) {
      if (hold.status === "open" && hold.member === member) sum += hold.amount;
    }
    return sum;
  }

  charge(member: string, price: number, now: number): void {
    if (price === 0) return;
    this.posted -= price;
    this.usageEntries += 1;
    const month = utcMonth(now);
    this.orgSpend.set(month, (this.orgSpend.get(month) ?? 0) + price);
    const key = `${utcDay(now)}:${member}`;
    this.memberSpend.set(key, (this.memberSpend.get(key) ?? 0) + price);
  }
}

function settleInputFor(
  requestId: string,
  price: number,
  billable: boolean,
  now: number,
  member: string,
): SettleInput {
  return {
    requestId,
    costMicros: Math.floor(price / 2),
    priceMicros: price,
    tokens: { promptTokens: price, completionTokens: 7, cachedPromptTokens: 0, reasoningTokens: 0 },
    model: "m",
    generationIds: [`gen-${requestId}`],
    billable,
    now,
    attribution: { memberId: member, projectId: "p", sessionId: requestId },
  };
}

function runScenario(
  makeStore: () => LedgerStore,
  orgLimit: number | null,
  memberLimit: number | null,
  initialGrant: number,
  ops: readonly Op[],
): void {
  const store = makeStore();
  const ledger = new CreditLedger(store, {
    orgMonthlyLimitMicros: orgLimit,
    memberDailyLimitMicros: memberLimit,
    lowBalanceMicros: 100,
  });
  const model = new Model();
  let now = START;
  // Sum of overruns, late charges and refunds since `available` was last ≥ 0: the overdraft bound.
  let overdraftAllowance = 0;
  let refundSeq = 0;
  const ids: string[] = [];
  // An id already used (most of the time), or one never seen, so every path is reached.
  const pickId = (req: number): string => {
    const id = ids[req % Math.max(1, ids.length)];
    return id === undefined || req % 8 === 7 ? `unknown-${req}` : id;
  };
  const finalHolds = new Map<string, HoldRow>();

  if (initialGrant > 0) {
    ledger.post({ kind: "grant", amountMicros: initialGrant, idempotencyKey: "signup", now });
    model.posted += initialGrant;
  }

  for (const op of ops) {
    switch (op.type) {
      case "reserve": {
        const requestId = op.fresh || ids.length === 0 ? `req-${ids.length}` : pickId(op.req);
        if (!ids.includes(requestId)) ids.push(requestId);
        const previousHold = model.holds.get(requestId);
        const replay = op.same && previousHold !== undefined;
        const member = replay ? previousHold.member : `member-${op.member}`;
        const amount = replay ? previousHold.amount : op.amount;
        const result = ledger.reserve({
          requestId,
          amountMicros: amount,
          memberId: member,
          projectId: "p",
          sessionId: requestId,
          now,
          ttlMs: op.ttl,
        });
        const existing = model.holds.get(requestId);
        const available = model.posted - model.held;
        const orgCommitted = (model.orgSpend.get(utcMonth(now)) ?? 0) + model.held;
        const memberCommitted =
          (model.memberSpend.get(`${utcDay(now)}:${member}`) ?? 0) + model.memberHeld(member);
        if (existing !== undefined) {
          // A replay is answered only while the hold is open: a resolved hold admits nothing new.
          const same =
            existing.amount === amount && existing.member === member && existing.status === "open";
          expect(result.ok ? "replayed" : result.reason).toBe(same ? "replayed" : "conflict");
          expect(result.ok && result.replayed).toBe(same);
        } else if (model.settled.has(requestId)) {
          expect(result.ok === false && result.reason).toBe("conflict");
        } else if (available < amount) {
          expect(result.ok === false && result.reason).toBe("insufficient_credits");
        } else if (orgLimit !== null && orgCommitted + amount > orgLimit) {
          expect(result.ok === false && result.reason === "spend_limit" && result.limit).toBe(
            "org_monthly",
          );
        } else if (memberLimit !== null && memberCommitted + amount > memberLimit) {
          expect(result.ok === false && result.reason === "spend_limit" && result.limit).toBe(
            "member_daily",
          );
        } else {
          expect(result.ok && !result.replayed).toBe(true);
          model.holds.set(requestId, {
            amount,
            member,
            status: "open",
            expiresAt: now + op.ttl,
          });
          model.held += amount;
          // Admission never goes below zero, and keeps within the limits.
          expect(model.posted - model.held).toBeGreaterThanOrEqual(0);
          if (orgLimit !== null) expect(orgCommitted + amount).toBeLessThanOrEqual(orgLimit);
          if (memberLimit !== null) {
            expect(memberCommitted + amount).toBeLessThanOrEqual(memberLimit);
          }
        }
        break;
      }
      case "settle":
      case "replaySettle": {
        let input: SettleInput;
        if (op.type === "replaySettle") {
          const previous = [...model.settled.values()];
          const picked = previous[op.pick % Math.max(1, previous.length)];
          if (picked === undefined) break;
          input = { ...picked, now };
        } else {
          const requestId = pickId(op.req);
          const hold = model.holds.get(requestId);
          const base = hold?.amount ?? 200;
          const price =
            op.mode === "free"
              ? 0
              : op.mode === "under"
                ? Math.floor((base * op.frac) / 100)
                : op.mode === "exact"
                  ? base
                  : base + op.extra;
          input = settleInputFor(
            requestId,
            price,
            op.mode !== "free",
            now,
            hold?.member ?? `member-${op.frac % MEMBERS}`,
          );
        }
        const postedBefore = model.posted;
        const result = ledger.settle(input);
        const previous = model.settled.get(input.requestId);
        const hold = model.holds.get(input.requestId);
        if (previous !== undefined) {
          const same =
            JSON.stringify({ ...previous, now: 0 }) === JSON.stringify({ ...input, now: 0 });
          expect(result.ok ? "replayed" : result.reason).toBe(same ? "replayed" : "conflict");
        } else if (hold === undefined) {
          if (input.billable) {
            expect(result).toEqual({ ok: false, reason: "no_hold" });
          } else {
            expect(result.ok && result.outcome).toBe("metered");
            model.settled.set(input.requestId, input);
          }
        } else if (hold.status === "released") {
          expect(result.ok === false && result.reason).toBe("hold_released");
        } else if (hold.status === "open") {
          expect(result.ok && result.outcome).toBe("settled");
          hold.status = "settled";
          model.held -= hold.amount;
          model.charge(hold.member, input.priceMicros, now);
          const overrun = Math.max(0, input.priceMicros - hold.amount);
          expect(result.ok && result.overrunMicros).toBe(overrun);
          overdraftAllowance += overrun;
          model.settled.set(input.requestId, input);
        } else {
          expect(hold.status).toBe("expired");
          expect(result.ok && result.outcome).toBe("settled_late");
          model.charge(hold.member, input.priceMicros, now);
          overdraftAllowance += input.priceMicros;
          model.settled.set(input.requestId, input);
        }
        if (!result.ok || result.replayed) expect(model.posted).toBe(postedBefore);
        break;
      }
      case "release": {
        const requestId = pickId(op.req);
        const result = ledger.release(requestId, now);
        const hold = model.holds.get(requestId);
        if (hold === undefined) {
          expect(result).toEqual({ ok: false, reason: "unknown_request" });
        } else if (hold.status === "released") {
          expect(result.ok && result.replayed).toBe(true);
        } else if (hold.status === "open") {
          expect(result.ok && !result.replayed).toBe(true);
          hold.status = "released";
          model.held -= hold.amount;
        } else {
          expect(result.ok === false && result.reason).toBe("already_resolved");
        }
        break;
      }
      case "expire": {
        const result = ledger.expire(now);
        const expected: string[] = [];
        for (const [requestId, hold] of model.holds) {
          if (hold.status === "open" && hold.expiresAt <= now) {
            hold.status = "expired";
            model.held -= hold.amount;
            expected.push(requestId);
          }
        }
        expect(result.expired.map((h) => h.requestId).sort()).toEqual(expected.sort());
        break;
      }
      case "advance":
        now += op.ms;
        break;
      case "topup": {
        const key = `topup-${op.key}`;
        const result = ledger.post({
          kind: "topup",
          amountMicros: op.amount,
          idempotencyKey: key,
          now,
        });
        const previous = model.topups.get(key);
        if (previous === undefined) {
          expect(result.ok && !result.replayed).toBe(true);
          model.topups.set(key, op.amount);
          model.posted += op.amount;
        } else {
          expect(result.ok ? "replayed" : result.reason).toBe(
            previous === op.amount ? "replayed" : "conflict",
          );
        }
        break;
      }
      case "refund": {
        refundSeq += 1;
        ledger.post({
          kind: "adjustment",
          amountMicros: -op.amount,
          idempotencyKey: `refund-${refundSeq}`,
          now,
        });
        model.posted -= op.amount;
        overdraftAllowance += op.amount;
        break;
      }
    }

    // After every step: the cached totals equal the rows, and both equal the model.
    const report = ledger.reconcile();
    expect(report.problems).toEqual([]);
    const balance = ledger.balance();
    expect(balance).toEqual({
      postedMicros: model.posted,
      heldMicros: model.held,
      availableMicros: model.posted - model.held,
    });
    // The overdraft bound.
    expect(balance.availableMicros).toBeGreaterThanOrEqual(-overdraftAllowance);
    if (balance.availableMicros >= 0) overdraftAllowance = 0;
    // No hold resolves twice: a resolved hold never changes again.
    for (const [requestId, modelHold] of model.holds) {
      const hold = ledger.hold(requestId);
      expect(hold?.status).toBe(modelHold.status);
      if (hold === null || hold.status === "open") continue;
      const first = finalHolds.get(requestId);
      if (first === undefined) finalHolds.set(requestId, hold);
      else expect(hold).toEqual(first);
    }
    // One usage entry per charged request, never more.
    const usageEntries = ledger.entries(0, 10_000).filter((entry) => entry.kind === "usage");
    expect(usageEntries).toHaveLength(model.usageEntries);
    expect(new Set(usageEntries.map((entry) => entry.reference)).size).toBe(usageEntries.length);
  }
}

function sqliteStore(): LedgerStore {
  const store = new SqlLedgerStore(nodeSqliteExecutor());
  store.migrate();
  return store;
}

const stores: [string, () => LedgerStore, number][] = [
  ["memory", () => new MemoryLedgerStore(), 400],
  ["sqlite", sqliteStore, 200],
];

describe.each(stores)("ledger properties (%s store)", (_name, makeStore, numRuns) => {
  it("keeps every invariant under random interleavings of operations", () => {
    fc.assert(
      fc.property(
        fc.option(fc.integer({ min: 0, max: 6_000 }), { nil: null, freq: 2 }),
        fc.option(fc.integer({ min: 0, max: 3_000 }), { nil: null, freq: 2 }),
        fc.integer({ min: 0, max: 5_000 }),
        fc.array(opArb, { minLength: 10, maxLength: 80, size: "max" }),
        (orgLimit, memberLimit, grant, ops) => {
          runScenario(makeStore, orgLimit, memberLimit, grant, ops);
        },
      ),
      { numRuns },
    );
  });

  it("admits exactly k of N concurrent reservations when the balance covers k", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.nat(),
        fc.nat(),
        (n, amount, kSeed, slackSeed) => {
          const k = kSeed % (n + 1);
          const slack = slackSeed % amount; // less than one more reservation
          const ledger = new CreditLedger(makeStore());
          if (k * amount + slack > 0) {
            ledger.post({
              kind: "grant",
              amountMicros: k * amount + slack,
              idempotencyKey: "g",
              now: START,
            });
          }
          const results = Array.from({ length: n }, (_, i) =>
            ledger.reserve({
              requestId: `r${i}`,
              amountMicros: amount,
              memberId: `m${i % 3}`,
              projectId: null,
              sessionId: null,
              now: START,
              ttlMs: 60_000,
            }),
          );
          expect(results.filter((r) => r.ok)).toHaveLength(k);
          expect(results.slice(0, k).every((r) => r.ok)).toBe(true);
          expect(results.slice(k).every((r) => !r.ok && r.reason === "insufficient_credits")).toBe(
            true,
          );
          expect(ledger.balance().availableMicros).toBe(slack);
          expect(ledger.reconcile().ok).toBe(true);
        },
      ),
      { numRuns: Math.min(numRuns, 200) },
    );
  });
});
