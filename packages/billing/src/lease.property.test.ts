import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  afterReport,
  canDraw,
  DEFAULT_LEASE_POLICY,
  type LeaseUsage,
  type LocalLease,
  leaseAsk,
  leaseId,
} from "./lease.ts";
import { CreditLedger } from "./ledger.ts";
import type { LedgerConfig } from "./ledger-config.ts";
import { utcDay, utcMonth } from "./ledger-counters.ts";
import type { LedgerStore } from "./ledger-store.ts";
import { type LimitRules, periodKey } from "./limit-rules.ts";
import { MemoryLedgerStore } from "./memory-ledger-store.ts";
import { nodeSqliteExecutor } from "./node-sqlite-executor.test-support.ts";
import { SqlLedgerStore } from "./sql-ledger-store.ts";

/**
 * Random interleavings of what sessions and the org do to leases (docs/2026-12-01-metering-leases.md):
 * a call drawn on a lease or on a per-call hold, its end, a report with a renewal, a replayed
 * report (a reset after it landed), a return, expiry, time passing, a top-up, a refund, a limit
 * change, a member removed and a session erased. Each simulated session runs the agent's own lease
 * arithmetic (`canDraw`, `leaseAsk`, `afterReport`) against the real ledger, and after every step
 * the invariants of the design are checked.
 */

const MINUTE = 60_000;
const START = Date.UTC(2026, 10, 30, 22, 0, 0);
const SESSIONS = 5;
const POLICY = DEFAULT_LEASE_POLICY;

type Op =
  | { type: "call"; s: number; max: number }
  | { type: "finish"; s: number; mode: "under" | "exact" | "over"; frac: number }
  | { type: "report"; s: number }
  | { type: "replay"; s: number }
  | { type: "return"; s: number }
  | { type: "expire" }
  | { type: "advance"; ms: number }
  | { type: "topup"; amount: number }
  | { type: "refund"; amount: number }
  | { type: "limit"; org: number | null; member: number | null; project: number | null }
  | { type: "remove"; s: number }
  | { type: "erase"; s: number };

const session = fc.nat(SESSIONS - 1);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 16,
    arbitrary: fc.record({
      type: fc.constant("call" as const),
      s: session,
      max: fc.integer({ min: 50, max: 400 }),
    }),
  },
  {
    weight: 16,
    arbitrary: fc.record({
      type: fc.constant("finish" as const),
      s: session,
      mode: fc.constantFrom("under" as const, "under" as const, "exact" as const, "over" as const),
      frac: fc.integer({ min: 0, max: 100 }),
    }),
  },
  { weight: 3, arbitrary: fc.record({ type: fc.constant("report" as const), s: session }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant("replay" as const), s: session }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant("return" as const), s: session }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant("expire" as const) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant("advance" as const),
      ms: fc.integer({ min: 1, max: 40 * MINUTE }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      type: fc.constant("topup" as const),
      amount: fc.integer({ min: 1, max: 5000 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      type: fc.constant("refund" as const),
      amount: fc.integer({ min: 1, max: 500 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      type: fc.constant("limit" as const),
      org: fc.option(fc.integer({ min: 0, max: 30_000 })),
      member: fc.option(fc.integer({ min: 0, max: 15_000 })),
      project: fc.option(fc.integer({ min: 0, max: 20_000 })),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      type: fc.constantFrom("remove" as const, "erase" as const),
      s: fc.nat(3 * SESSIONS - 1),
    }),
  },
);

interface Call {
  requestId: string;
  drawMicros: number;
  /** The lease it was drawn on, or null for a per-call hold. */
  lease: string | null;
}

interface Sim {
  id: string;
  member: string;
  /** The next lease's number: a closed lease's id is never asked for again. */
  n: number;
  lease: LocalLease | null;
  inFlight: Call | null;
  /** Settled calls drawn on leases, not yet reported, by lease id. */
  unreported: Map<string, LeaseUsage[]>;
  lastBatch: { leaseId: string; usages: LeaseUsage[] } | null;
  alive: boolean;
  calls: number;
  expected: number;
}

function usageFor(call: Call, price: number): LeaseUsage {
  return {
    requestId: call.requestId,
    costMicros: Math.floor(price / 2),
    priceMicros: price,
    tokens: { promptTokens: price, completionTokens: 3, cachedPromptTokens: 0, reasoningTokens: 0 },
    model: "m",
    generationIds: [`gen-${call.requestId}`],
    billable: true,
    drawMicros: call.drawMicros,
  };
}

/** A weekly limit on the one project every session is in (limit-rules.ts); null: none. */
const projectWeek = (amount: number | null): LimitRules => ({
  rulesFor: (subject, subjectId) =>
    amount !== null && subject === "project" && subjectId === "p"
      ? [{ subject, subjectId, period: "week", amountMicros: amount, updatedAt: 0 }]
      : [],
});

function runScenario(
  makeStore: () => LedgerStore,
  initial: { grant: number; org: number | null; member: number | null; project: number | null },
  ops: readonly Op[],
): void {
  const store = makeStore();
  let projectLimit = initial.project;
  let config: Partial<LedgerConfig> = {
    orgMonthlyLimitMicros: initial.org,
    memberDailyLimitMicros: initial.member,
    limitRules: projectWeek(projectLimit),
  };
  let ledger = new CreditLedger(store, config);
  let now = START;
  /** Every finished call's price: what must be charged, once each, in the end. */
  const prices = new Map<string, number>();
  /** The overdraft bound: overruns (a call above its draw, a call after its lease closed) and refunds. */
  let slack = 0;
  const sims: Sim[] = Array.from({ length: SESSIONS }, (_, i) => ({
    id: `s${i}`,
    member: `m${i % 3}`,
    n: 0,
    lease: null,
    inFlight: null,
    unreported: new Map(),
    lastBatch: null,
    alive: true,
    calls: 0,
    expected: 400,
  }));
  if (initial.grant > 0) {
    ledger.post({ kind: "grant", amountMicros: initial.grant, idempotencyKey: "signup", now });
  }

  /** One report to one lease: its unreported calls, then a renewal (`renew`) or a return. */
  const report = (sim: Sim, id: string, renew: boolean): void => {
    const usages = sim.unreported.get(id) ?? [];
    const reported = usages.reduce((sum, usage) => sum + usage.priceMicros, 0);
    const current = sim.lease?.id === id ? sim.lease : null;
    const keep = sim.inFlight?.lease === id ? sim.inFlight.drawMicros : 0;
    const max = sim.inFlight?.drawMicros ?? 400;
    const ask = leaseAsk(POLICY, max, sim.expected);
    const result = ledger.lease({
      leaseId: id,
      memberId: sim.member,
      projectId: "p",
      sessionId: sim.id,
      usages,
      keepMicros: keep,
      wantMicros: renew && current !== null && sim.alive ? ask.wantMicros : 0,
      minMicros: ask.minMicros,
      now,
      ttlMs: POLICY.ttlMs,
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    for (const settled of result.settled) {
      expect(settled.ok).toBe(true);
      if (!settled.ok || settled.replayed) continue;
      slack += settled.overrunMicros;
      // A call is charged past its lease only when the lease expired under it (the account's
      // alarm), never because it was returned or shrunk while the call was running.
      if (settled.outcome === "settled_late") expect(store.getHold(id)?.status).toBe("expired");
    }
    sim.unreported.delete(id);
    sim.lastBatch = usages.length > 0 ? { leaseId: id, usages } : sim.lastBatch;
    if (current !== null) {
      sim.lease = afterReport(current, reported, result.lease);
      if (sim.lease === null) sim.n += 1;
    }
  };

  /** A report to every lease the session has usage for, renewing the current one if asked. */
  const flush = (sim: Sim, renew: boolean): void => {
    for (const id of [...sim.unreported.keys()]) if (id !== sim.lease?.id) report(sim, id, false);
    if (sim.lease !== null) report(sim, sim.lease.id, renew);
  };

  /** A limit changed or a member left: the session stops drawing on its lease and returns it. */
  const dropLease = (sim: Sim): void => {
    if (sim.lease === null) return;
    report(sim, sim.lease.id, false);
    if (sim.lease !== null) {
      // Still open only because a call in flight drew on it: it closes when that call reports.
      sim.lease = null;
      sim.n += 1;
    }
  };

  const committed = (scope: "org" | "member" | "project", member: string): number => {
    const open = store.listOpenHolds();
    if (scope === "project") {
      return (
        store.getCounter(`spend:project-week:${periodKey("week", now)}:p`) +
        open.filter((h) => h.projectId === "p").reduce((sum, h) => sum + h.amountMicros, 0)
      );
    }
    if (scope === "org") {
      return (
        store.getCounter(`spend:org:${utcMonth(now)}`) +
        open.reduce((sum, hold) => sum + hold.amountMicros, 0)
      );
    }
    return (
      store.getCounter(`spend:member:${utcDay(now)}:${member}`) +
      open.filter((h) => h.memberId === member).reduce((sum, h) => sum + h.amountMicros, 0)
    );
  };

  for (const op of ops) {
    switch (op.type) {
      case "call": {
        const sim = sims[op.s] as Sim;
        if (!sim.alive || sim.inFlight !== null) break;
        const requestId = `${sim.id}:call-${sim.calls++}`;
        if (!canDraw(sim.lease, op.max, now, POLICY)) {
          // No lease, or too little left: ask for one (or more) first.
          if (sim.lease === null) {
            sim.lease = {
              id: leaseId(sim.id, sim.n),
              grantedMicros: 0,
              drawnMicros: 0,
              expiresAt: 0,
            };
          }
          const before = sim.expected;
          sim.expected = op.max;
          flush(sim, true);
          sim.expected = before;
        }
        if (canDraw(sim.lease, op.max, now, POLICY)) {
          sim.lease.drawnMicros += op.max;
          sim.inFlight = { requestId, drawMicros: op.max, lease: sim.lease.id };
          break;
        }
        // Near a limit: a per-call hold of exactly the call's maximum, as before leases.
        const reserve = () =>
          ledger.reserve({
            requestId,
            amountMicros: op.max,
            memberId: sim.member,
            projectId: "p",
            sessionId: sim.id,
            now,
            ttlMs: POLICY.callMs,
          });
        let held = reserve();
        if (!held.ok && store.listOpenHolds().some((h) => h.requestId.startsWith("lease:"))) {
          // The account takes back the other sessions' leases and tries once more, so a call is
          // never refused while credits sit unused in a lease.
          for (const other of sims) if (other !== sim) dropLease(other);
          held = reserve();
        }
        const balance = ledger.balance();
        const orgBefore = committed("org", sim.member);
        const memberBefore = committed("member", sim.member);
        const projectBefore = committed("project", sim.member);
        if (held.ok) {
          sim.inFlight = { requestId, drawMicros: op.max, lease: null };
        } else {
          // Invariant 5: a call is refused only when the org cannot afford it.
          const orgLimit = ledger.config.orgMonthlyLimitMicros;
          const memberLimit = ledger.config.memberDailyLimitMicros;
          const unaffordable =
            balance.availableMicros < op.max ||
            (orgLimit !== null && orgBefore + op.max > orgLimit) ||
            (memberLimit !== null && memberBefore + op.max > memberLimit) ||
            (projectLimit !== null && projectBefore + op.max > projectLimit);
          expect(unaffordable).toBe(true);
        }
        break;
      }
      case "finish": {
        const sim = sims[op.s] as Sim;
        const call = sim.inFlight;
        if (call === null) break;
        const price =
          op.mode === "under"
            ? Math.floor((call.drawMicros * op.frac) / 100)
            : op.mode === "exact"
              ? call.drawMicros
              : call.drawMicros + 1 + op.frac;
        prices.set(call.requestId, price);
        sim.inFlight = null;
        sim.expected = Math.max(1, Math.round((sim.expected + price) / 2));
        if (call.lease === null) {
          const settled = ledger.settle({ ...usageFor(call, price), now });
          expect(settled.ok).toBe(true);
          if (settled.ok) slack += settled.overrunMicros;
          break;
        }
        if (sim.lease?.id === call.lease) sim.lease.drawnMicros += price - call.drawMicros;
        const queue = sim.unreported.get(call.lease) ?? [];
        queue.push(usageFor(call, price));
        sim.unreported.set(call.lease, queue);
        // A session gone (removed, erased) reports what its last call cost and keeps nothing.
        if (!sim.alive) flush(sim, false);
        break;
      }
      case "report":
        flush(sims[op.s] as Sim, true);
        break;
      case "replay": {
        // A reset right after a report landed: the agent sends the same calls again (its lease
        // is durable, so it still keeps what its call in flight drew) and asks for nothing.
        const sim = sims[op.s] as Sim;
        const batch = sim.lastBatch;
        if (batch === null) break;
        const before = ledger.balance().postedMicros;
        // What had not been sent yet goes with it (the agent sends every pending call).
        const pending = sim.unreported.get(batch.leaseId) ?? [];
        const result = ledger.lease({
          leaseId: batch.leaseId,
          memberId: sim.member,
          projectId: "p",
          sessionId: sim.id,
          usages: [...batch.usages, ...pending],
          keepMicros: sim.inFlight?.lease === batch.leaseId ? sim.inFlight.drawMicros : 0,
          wantMicros: 0,
          minMicros: 1,
          now,
          ttlMs: POLICY.ttlMs,
        });
        // Invariant 2: a resent batch charges nothing twice.
        const replayed = result.ok ? result.settled.slice(0, batch.usages.length) : [];
        expect(replayed.every((s) => s.ok && s.replayed)).toBe(true);
        const pendingMicros = pending.reduce((sum, usage) => sum + usage.priceMicros, 0);
        expect(ledger.balance().postedMicros).toBe(before - pendingMicros);
        for (const settled of result.ok ? result.settled.slice(batch.usages.length) : []) {
          if (settled.ok) slack += settled.overrunMicros;
        }
        sim.unreported.delete(batch.leaseId);
        if (result.ok && sim.lease?.id === batch.leaseId) {
          sim.lease = afterReport(sim.lease, pendingMicros, result.lease);
          if (sim.lease === null) sim.n += 1;
        }
        break;
      }
      case "return":
        if ((sims[op.s] as Sim).inFlight === null) flush(sims[op.s] as Sim, false);
        break;
      case "expire":
        ledger.expire(now);
        for (const hold of store.listOpenHolds()) expect(hold.expiresAt).toBeGreaterThan(now);
        break;
      case "advance":
        now += op.ms;
        break;
      case "topup":
        ledger.post({
          kind: "topup",
          amountMicros: op.amount,
          idempotencyKey: `topup-${now}-${op.amount}`,
          now,
        });
        break;
      case "refund":
        ledger.post({
          kind: "adjustment",
          amountMicros: -op.amount,
          idempotencyKey: `refund-${now}-${op.amount}`,
          now,
        });
        slack += op.amount;
        break;
      case "limit": {
        projectLimit = op.project;
        config = {
          orgMonthlyLimitMicros: op.org,
          memberDailyLimitMicros: op.member,
          limitRules: projectWeek(projectLimit),
        };
        ledger = new CreditLedger(store, config);
        // The account pushes the change to every session with a lease: they draw no more on it.
        for (const sim of sims) dropLease(sim);
        // What calls already in flight drew may stand over the new limit: part of the bound.
        slack += Math.max(0, committed("org", ""));
        for (const sim of sims) slack += Math.max(0, committed("member", sim.member));
        slack += Math.max(0, committed("project", ""));
        break;
      }
      case "remove":
      case "erase": {
        // Rarer than the other ops: two in three pick no session.
        const sim = sims[op.s];
        if (sim === undefined || !sim.alive) break;
        sim.alive = false;
        flush(sim, false);
        dropLease(sim);
        break;
      }
    }

    // Invariant 1: the balance equals the sum of entries; held equals the open holds and leases.
    expect(ledger.reconcile().problems).toEqual([]);
    // Invariant 3: available never goes below minus the bound.
    expect(ledger.balance().availableMicros).toBeGreaterThanOrEqual(-slack);
    // Invariant 4: no limit is exceeded by more than the bound.
    const orgLimit = ledger.config.orgMonthlyLimitMicros;
    if (orgLimit !== null) expect(committed("org", "")).toBeLessThanOrEqual(orgLimit + slack);
    const memberLimit = ledger.config.memberDailyLimitMicros;
    if (memberLimit !== null) {
      for (const sim of sims) {
        expect(committed("member", sim.member)).toBeLessThanOrEqual(memberLimit + slack);
      }
    }
    if (projectLimit !== null) {
      expect(committed("project", "")).toBeLessThanOrEqual(projectLimit + slack);
    }
    // Invariant 6: a session removed or erased holds nothing once its last call is reported.
    for (const sim of sims) {
      if (sim.alive || sim.inFlight !== null) continue;
      expect(store.listOpenHolds().filter((h) => h.sessionId === sim.id)).toEqual([]);
    }
  }

  // The end: every call finishes and every session reports and returns.
  for (const sim of sims) {
    const call = sim.inFlight;
    if (call !== null) {
      prices.set(call.requestId, call.drawMicros);
      sim.inFlight = null;
      if (call.lease === null) {
        ledger.settle({ ...usageFor(call, call.drawMicros), now });
      } else {
        const queue = sim.unreported.get(call.lease) ?? [];
        queue.push(usageFor(call, call.drawMicros));
        sim.unreported.set(call.lease, queue);
      }
    }
    sim.alive = false;
    flush(sim, false);
  }
  // Invariant 2: what was charged is the sum of the calls' prices, each once.
  const charged = ledger
    .entries(0, 1_000_000)
    .filter((entry) => entry.kind === "usage")
    .reduce((sum, entry) => sum - entry.amountMicros, 0);
  const due = [...prices.values()].reduce((sum, price) => sum + price, 0);
  expect(charged).toBe(due);
  // Invariant 3: no lease outlives its session.
  expect(store.listOpenHolds()).toEqual([]);
  expect(ledger.balance().heldMicros).toBe(0);
}

const scenario = fc.record({
  grant: fc.integer({ min: 0, max: 20_000 }),
  org: fc.option(fc.integer({ min: 0, max: 30_000 })),
  member: fc.option(fc.integer({ min: 0, max: 15_000 })),
  project: fc.option(fc.integer({ min: 0, max: 20_000 })),
});

describe("leases over random interleavings", () => {
  it("keep every invariant on the memory store", () => {
    fc.assert(
      fc.property(
        scenario,
        fc.array(opArb, { minLength: 30, maxLength: 200, size: "max" }),
        (initial, ops) => runScenario(() => new MemoryLedgerStore(), initial, ops),
      ),
      { numRuns: 400 },
    );
  });

  it("keep every invariant on SQLite", () => {
    fc.assert(
      fc.property(
        scenario,
        fc.array(opArb, { minLength: 30, maxLength: 120, size: "max" }),
        (initial, ops) =>
          runScenario(
            () => {
              const store = new SqlLedgerStore(nodeSqliteExecutor());
              store.migrate();
              return store;
            },
            initial,
            ops,
          ),
      ),
      { numRuns: 80 },
    );
  });
});
