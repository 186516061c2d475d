import { describe, expect, it } from "vitest";
import {
  afterReport,
  canDraw,
  DEFAULT_LEASE_POLICY,
  type LeaseInput,
  leaseAsk,
  leaseId,
  nextExpectedCall,
  sizeGrant,
} from "./lease.ts";
import { CreditLedger } from "./ledger.ts";
import { MemoryLedgerStore } from "./memory-ledger-store.ts";
import { nodeSqliteExecutor } from "./node-sqlite-executor.test-support.ts";
import { SqlLedgerStore } from "./sql-ledger-store.ts";
import { createUsageRollups } from "./usage-rollups.ts";

const NOW = Date.UTC(2026, 11, 1, 12);
const unbounded = { orgHeadroomMicros: null, memberHeadroomMicros: null };

function ledgerWith(balance: number, config = {}) {
  const ledger = new CreditLedger(new MemoryLedgerStore(), config);
  ledger.post({ kind: "grant", amountMicros: balance, idempotencyKey: "g", now: NOW });
  return ledger;
}

const ask = (session: string, over: Partial<LeaseInput> = {}): LeaseInput => ({
  leaseId: leaseId(session, 0),
  memberId: "m",
  projectId: "p",
  sessionId: session,
  usages: [],
  keepMicros: 0,
  wantMicros: 1000,
  minMicros: 100,
  now: NOW,
  ttlMs: 60_000,
  ...over,
});

describe("end-user leases", () => {
  it("sizes a grant under the end user's limits and settles into their counters", () => {
    const ledger = ledgerWith(10_000_000);
    const endUserLimits = { dailyMicros: 5_000, monthlyMicros: 100_000 };
    // Two shares (this lease and one more): a 2,000 ask fits under 5,000 / 2.
    const first = ledger.lease(ask("s1", { memberId: "eu_1", endUserLimits, wantMicros: 2_000 }));
    expect(first).toMatchObject({ ok: true, refusedBy: null, lease: { amountMicros: 2_000 } });
    const usage = {
      requestId: "call-1",
      drawMicros: 1_000,
      costMicros: 3_000,
      priceMicros: 3_000,
      tokens: { promptTokens: 1, completionTokens: 1, cachedPromptTokens: 0, reasoningTokens: 0 },
      model: "m",
      generationIds: [],
      billable: true,
    };
    // 3,000 spent today: the room left (2,000 / 2 shares) is under the ask: refused by the day.
    const second = ledger.lease(
      ask("s1", { memberId: "eu_1", endUserLimits, usages: [usage], wantMicros: 2_000 }),
    );
    expect(second).toMatchObject({ ok: true, refusedBy: "end_user_daily", lease: null });
  });
});

describe("sizeGrant", () => {
  it("grants the whole ask when it is a fair share of what is free", () => {
    expect(
      sizeGrant(
        { wantMicros: 500, keepMicros: 0, minMicros: 100 },
        { freeMicros: 10_000, otherLeases: 3, ...unbounded },
      ),
    ).toEqual({ grantMicros: 500, refusedBy: null });
  });

  it("refuses an ask over a fair share (every lease, this one and one more)", () => {
    const ask = { wantMicros: 500, keepMicros: 0, minMicros: 100 };
    expect(sizeGrant(ask, { freeMicros: 2500, otherLeases: 3, ...unbounded })).toEqual({
      grantMicros: 500,
      refusedBy: null,
    });
    expect(sizeGrant(ask, { freeMicros: 2499, otherLeases: 3, ...unbounded })).toEqual({
      grantMicros: 0,
      refusedBy: "balance",
    });
  });

  it("refuses, naming the limit, when the room under it is too small", () => {
    expect(
      sizeGrant(
        { wantMicros: 500, keepMicros: 0, minMicros: 300 },
        { freeMicros: 10_000, otherLeases: 0, orgHeadroomMicros: 999, memberHeadroomMicros: null },
      ),
    ).toEqual({ grantMicros: 0, refusedBy: "org_monthly" });
    expect(
      sizeGrant(
        { wantMicros: 500, keepMicros: 200, minMicros: 300 },
        { freeMicros: 10_000, otherLeases: 0, orgHeadroomMicros: null, memberHeadroomMicros: 1399 },
      ),
    ).toEqual({ grantMicros: 0, refusedBy: "member_daily" });
  });
});

describe("CreditLedger.lease", () => {
  it("opens a lease as a hold that counts against available", () => {
    const ledger = ledgerWith(10_000);
    const result = ledger.lease(ask("s1"));
    expect(result.ok && result.lease?.amountMicros).toBe(1000);
    expect(ledger.balance()).toMatchObject({ heldMicros: 1000, availableMicros: 9000 });
  });

  it("settles reported calls once, out of the lease, and renews it", () => {
    const ledger = ledgerWith(10_000);
    ledger.lease(ask("s1"));
    const usage = {
      requestId: "turn-1:0",
      costMicros: 100,
      priceMicros: 120,
      tokens: { promptTokens: 1, completionTokens: 1, cachedPromptTokens: 0, reasoningTokens: 0 },
      model: "m",
      generationIds: ["g1"],
      billable: true,
      drawMicros: 300,
    };
    const first = ledger.lease(ask("s1", { usages: [usage], wantMicros: 1000 }));
    expect(first.ok && first.settled).toEqual([
      { requestId: "turn-1:0", ok: true, outcome: "settled", replayed: false, overrunMicros: 0 },
    ]);
    expect(ledger.balance()).toMatchObject({ postedMicros: 9880, heldMicros: 1000 });
    const again = ledger.lease(ask("s1", { usages: [usage], wantMicros: 0 }));
    expect(again.ok && again.settled[0]).toMatchObject({ ok: true, replayed: true });
    expect(again.ok && again.lease).toBeNull();
    expect(ledger.balance()).toMatchObject({ postedMicros: 9880, heldMicros: 0 });
    expect(ledger.reconcile().ok).toBe(true);
  });

  it("keeps what a call in flight drew when the lease is returned or refused", () => {
    const ledger = ledgerWith(10_000, { orgMonthlyLimitMicros: 5000 });
    ledger.lease(ask("s1"));
    const returned = ledger.lease(ask("s1", { keepMicros: 300, wantMicros: 0 }));
    expect(returned.ok && returned.lease?.amountMicros).toBe(300);
    const refused = ledger.lease(ask("s1", { keepMicros: 300, wantMicros: 2400 }));
    expect(refused.ok && [refused.lease?.amountMicros, refused.refusedBy]).toEqual([
      300,
      "org_monthly",
    ]);
  });

  it("never reopens a closed lease, and keeps leases and per-call holds apart", () => {
    const ledger = ledgerWith(10_000);
    ledger.lease(ask("s1"));
    ledger.expire(NOW + 60_000);
    const late = ledger.lease(ask("s1", { now: NOW + 61_000 }));
    expect(late.ok && late.lease).toBeNull();
    expect(
      ledger.reserve({
        requestId: leaseId("s1", 1),
        amountMicros: 10,
        memberId: "m",
        projectId: "p",
        sessionId: "s1",
        now: NOW,
        ttlMs: 1000,
      }),
    ).toMatchObject({ ok: false, reason: "conflict" });
    const other = ledger.lease(ask("s2", { memberId: "x", leaseId: leaseId("s1", 0) }));
    expect(other).toMatchObject({ ok: false, reason: "conflict" });
  });
});

describe.each([
  ["memory", () => new MemoryLedgerStore()],
  [
    "sqlite",
    () => {
      const sql = nodeSqliteExecutor();
      const store = new SqlLedgerStore(sql);
      store.migrate();
      createUsageRollups(sql);
      return store;
    },
  ],
])("a report's calls, looked up and written together (%s)", (_name, makeStore) => {
  const call = (requestId: string, priceMicros = 120) => ({
    requestId,
    costMicros: 100,
    priceMicros,
    tokens: { promptTokens: 1, completionTokens: 1, cachedPromptTokens: 0, reasoningTokens: 0 },
    model: "m",
    generationIds: [`g-${requestId}`],
    billable: true,
    drawMicros: 300,
  });

  it("settles a call listed twice in one report once, and refuses a different second one", () => {
    const ledger = new CreditLedger(makeStore());
    ledger.post({ kind: "grant", amountMicros: 10_000, idempotencyKey: "g", now: NOW });
    ledger.lease(ask("s1"));
    const report = ledger.lease(
      ask("s1", { usages: [call("a"), call("b"), call("a"), call("b", 999), call("c")] }),
    );
    expect(
      report.ok && report.settled.map((one) => [one.requestId, one.ok, one.ok && one.replayed]),
    ).toEqual([
      ["a", true, false],
      ["b", true, false],
      ["a", true, true],
      ["b", false, false],
      ["c", true, false],
    ]);
    expect(ledger.balance().postedMicros).toBe(10_000 - 3 * 120);
    // A later report of the same calls changes nothing.
    const replay = ledger.lease(ask("s1", { usages: [call("c"), call("a")] }));
    expect(replay.ok && replay.settled.every((one) => one.ok && one.replayed)).toBe(true);
    expect(ledger.balance().postedMicros).toBe(10_000 - 3 * 120);
    expect(ledger.entries().map((entry) => [entry.reference, entry.balanceAfterMicros])).toEqual([
      [null, 10_000],
      ["a", 9880],
      ["b", 9760],
      ["c", 9640],
    ]);
    expect(ledger.reconcile().ok).toBe(true);
  });

  it("dates each call by its own time, bounded by the report and a day before it", () => {
    const store = makeStore();
    const ledger = new CreditLedger(store);
    ledger.post({ kind: "grant", amountMicros: 10_000, idempotencyKey: "g", now: NOW });
    ledger.lease(ask("s1"));
    const day = 86_400_000;
    const report = ledger.lease(
      ask("s1", {
        now: NOW + day,
        usages: [
          { ...call("past"), at: NOW + day - 5_000 },
          { ...call("future"), at: NOW + 2 * day },
          { ...call("ancient"), at: NOW - day },
          call("undated"),
        ],
      }),
    );
    expect(report.ok).toBe(true);
    const dated = Object.fromEntries(
      store
        .getUsages(["past", "future", "ancient", "undated"])
        .map((row) => [row.requestId, row.createdAt]),
    );
    expect(dated).toEqual({
      past: NOW + day - 5_000,
      future: NOW + day,
      ancient: NOW,
      undated: NOW + day,
    });
    expect(ledger.entries().find((entry) => entry.reference === "past")?.createdAt).toBe(
      NOW + day - 5_000,
    );
  });

  it("refuses, in a report, a call that has a hold of its own, and settles the rest", () => {
    const ledger = new CreditLedger(makeStore());
    ledger.post({ kind: "grant", amountMicros: 10_000, idempotencyKey: "g", now: NOW });
    ledger.reserve({
      requestId: "own",
      amountMicros: 500,
      memberId: "m",
      projectId: "p",
      sessionId: "s1",
      now: NOW,
      ttlMs: 60_000,
    });
    ledger.lease(ask("s1"));
    const report = ledger.lease(ask("s1", { usages: [call("own"), call("x")] }));
    expect(report.ok && report.settled.map((one) => one.ok)).toEqual([false, true]);
    expect(ledger.balance()).toMatchObject({ postedMicros: 9880, heldMicros: 1500 });
    expect(ledger.reconcile().ok).toBe(true);
  });
});

describe("a session's side of its lease", () => {
  const policy = DEFAULT_LEASE_POLICY;
  it("asks for a few expected calls over one maximum", () => {
    expect(leaseAsk(policy, 1000, 50)).toEqual({ wantMicros: 1800, minMicros: 1000 });
  });

  it("expects the first call's price, then gives each new price a quarter of the weight", () => {
    expect(nextExpectedCall(null, 400)).toBe(400);
    expect(nextExpectedCall(400, 800)).toBe(500);
    expect(nextExpectedCall(500, 0)).toBe(375);
    // Rounded to whole micro-dollars: (3 × 1 + 2) / 4 = 1.25.
    expect(nextExpectedCall(1, 2)).toBe(1);
  });

  it("draws only with a call's maximum left and a call's time before expiry", () => {
    const lease = { id: "l", grantedMicros: 1000, drawnMicros: 200, expiresAt: NOW + policy.ttlMs };
    expect(canDraw(lease, 800, NOW, policy)).toBe(true);
    expect(canDraw(lease, 801, NOW, policy)).toBe(false);
    expect(canDraw(lease, 10, lease.expiresAt - policy.callMs, policy)).toBe(false);
    expect(canDraw(null, 10, NOW, policy)).toBe(false);
  });

  it("takes reported prices out of what was drawn, and the grant from the account", () => {
    const lease = { id: "l", grantedMicros: 1000, drawnMicros: 500, expiresAt: 1 };
    const hold = {
      requestId: "l",
      amountMicros: 900,
      memberId: "m",
      projectId: null,
      sessionId: "s",
      status: "open" as const,
      createdAt: 0,
      expiresAt: 99,
      resolvedAt: null,
    };
    expect(afterReport(lease, 200, hold)).toEqual({
      id: "l",
      grantedMicros: 900,
      drawnMicros: 300,
      expiresAt: 99,
    });
    expect(afterReport(lease, 200, null)).toBeNull();
  });
});
