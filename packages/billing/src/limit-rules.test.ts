import { describe, expect, it } from "vitest";
import type { ReserveInput } from "./call-holds.ts";
import { type LeaseInput, leaseId } from "./lease.ts";
import { CreditLedger } from "./ledger.ts";
import {
  type LimitRule,
  LimitRuleStore,
  type LimitRules,
  periodKey,
  periodResetsAt,
  periodStart,
} from "./limit-rules.ts";
import { MemoryLedgerStore } from "./memory-ledger-store.ts";
import { nodeSqliteExecutor } from "./node-sqlite-executor.test-support.ts";
import type { SettleInput } from "./settlement.ts";

// Wednesday 2026-12-02 12:00 UTC; that week started on Monday 2026-11-30.
const WED = Date.UTC(2026, 11, 2, 12);
const MONDAY_NEXT = Date.UTC(2026, 11, 7);
const TTL = 60_000;

function rules(list: Omit<LimitRule, "updatedAt">[]): LimitRules {
  return {
    rulesFor: (subject, subjectId) =>
      list
        .filter((rule) => rule.subject === subject && rule.subjectId === subjectId)
        .map((rule) => ({ ...rule, updatedAt: 0 })),
  };
}

function ledgerWith(
  list: Omit<LimitRule, "updatedAt">[],
  memberDailyLimitMicros = null as number | null,
) {
  const ledger = new CreditLedger(new MemoryLedgerStore(), {
    limitRules: rules(list),
    memberDailyLimitMicros,
  });
  ledger.post({ kind: "grant", amountMicros: 100_000_000, idempotencyKey: "g", now: WED });
  return ledger;
}

const reserve = (id: string, amountMicros: number, over: Partial<ReserveInput> = {}) => ({
  requestId: id,
  amountMicros,
  memberId: "m1",
  projectId: "p1",
  sessionId: "s1",
  now: WED,
  ttlMs: TTL,
  ...over,
});

const settle = (id: string, priceMicros: number, now: number): SettleInput => ({
  requestId: id,
  costMicros: priceMicros,
  priceMicros,
  tokens: { promptTokens: 1, completionTokens: 1, cachedPromptTokens: 0, reasoningTokens: 0 },
  model: "m",
  generationIds: [],
  billable: true,
  now,
});

/** Reserves and settles one call at `now`; returns the reserve's result. */
function spend(ledger: CreditLedger, id: string, micros: number, over: Partial<ReserveInput> = {}) {
  const now = over.now ?? WED;
  const result = ledger.reserve(reserve(id, micros, over));
  if (result.ok) expect(ledger.settle(settle(id, micros, now + 1)).ok).toBe(true);
  return result;
}

describe("limit periods", () => {
  it("starts a day at midnight, a week on Monday and a month on the 1st, all UTC", () => {
    expect(new Date(periodStart("day", WED)).toISOString()).toBe("2026-12-02T00:00:00.000Z");
    expect(new Date(periodStart("week", WED)).toISOString()).toBe("2026-11-30T00:00:00.000Z");
    expect(new Date(periodStart("month", WED)).toISOString()).toBe("2026-12-01T00:00:00.000Z");
    expect(periodKey("week", WED)).toBe("2026-11-30");
    expect(periodKey("month", WED)).toBe("2026-12");
  });

  it("resets at the next period's first millisecond, across years and on a Sunday", () => {
    const newYearsEve = Date.UTC(2026, 11, 31, 23, 59, 59, 999);
    expect(periodResetsAt("day", newYearsEve)).toBe(Date.UTC(2027, 0, 1));
    expect(periodResetsAt("month", newYearsEve)).toBe(Date.UTC(2027, 0, 1));
    // 2026-12-06 is a Sunday: its week ends at Monday 00:00.
    const sunday = Date.UTC(2026, 11, 6, 23, 59, 59, 999);
    expect(periodResetsAt("week", sunday)).toBe(MONDAY_NEXT);
    expect(periodStart("week", MONDAY_NEXT)).toBe(MONDAY_NEXT);
    expect(periodResetsAt("week", WED)).toBe(MONDAY_NEXT);
  });
});

describe("limits on a project, a member and a member's own", () => {
  it("stops a project at its weekly limit, for every member, until Monday 00:00 UTC", () => {
    const ledger = ledgerWith([
      { subject: "project", subjectId: "p1", period: "week", amountMicros: 10_000 },
    ]);
    expect(spend(ledger, "a", 6_000).ok).toBe(true);
    // Another member in the same project counts against the same week.
    const refused = spend(ledger, "b", 6_000, { memberId: "m2" });
    expect(refused).toMatchObject({
      ok: false,
      reason: "spend_limit",
      limit: "project_weekly",
      limitMicros: 10_000,
      committedMicros: 6_000,
    });
    // Another project is not limited.
    expect(spend(ledger, "c", 6_000, { projectId: "p2" }).ok).toBe(true);
    // The last millisecond of Sunday is still the same week; Monday starts again from zero.
    const sunday = Date.UTC(2026, 11, 6, 23, 59, 59, 999);
    expect(spend(ledger, "d", 6_000, { now: sunday }).ok).toBe(false);
    expect(spend(ledger, "e", 6_000, { now: MONDAY_NEXT }).ok).toBe(true);
  });

  it("counts a project's open holds, so two calls in flight cannot both pass", () => {
    const ledger = ledgerWith([
      { subject: "project", subjectId: "p1", period: "day", amountMicros: 10_000 },
    ]);
    expect(ledger.reserve(reserve("a", 6_000)).ok).toBe(true);
    expect(ledger.reserve(reserve("b", 6_000, { memberId: "m2" }))).toMatchObject({
      ok: false,
      limit: "project_daily",
      committedMicros: 6_000,
    });
  });

  it("puts an admin's limit on one member in place of the org's member daily limit", () => {
    const ledger = ledgerWith(
      [{ subject: "member", subjectId: "m1", period: "month", amountMicros: 50_000 }],
      5_000,
    );
    // m1 is over the org's daily 5,000 but under their own monthly 50,000.
    expect(spend(ledger, "a", 20_000).ok).toBe(true);
    expect(spend(ledger, "b", 40_000)).toMatchObject({ ok: false, limit: "member_monthly" });
    // m2 has no rule of their own: the daily default holds.
    expect(spend(ledger, "c", 6_000, { memberId: "m2" })).toMatchObject({
      ok: false,
      limit: "member_daily",
    });
  });

  it("adds a member's own limit on top of the admin's: it can only lower what they spend", () => {
    const ledger = ledgerWith(
      [{ subject: "own", subjectId: "m1", period: "day", amountMicros: 2_000 }],
      5_000,
    );
    expect(spend(ledger, "a", 1_500).ok).toBe(true);
    expect(spend(ledger, "b", 1_000)).toMatchObject({ ok: false, limit: "own_daily" });
    // An own limit above the admin's changes nothing: the admin's refuses first.
    const higher = ledgerWith(
      [{ subject: "own", subjectId: "m1", period: "day", amountMicros: 9_000 }],
      5_000,
    );
    expect(spend(higher, "a", 6_000)).toMatchObject({ ok: false, limit: "member_daily" });
  });

  it("keeps weekly counts for a member across days of the same week", () => {
    const ledger = ledgerWith([
      { subject: "member", subjectId: "m1", period: "week", amountMicros: 10_000 },
    ]);
    expect(spend(ledger, "mon", 4_000, { now: Date.UTC(2026, 10, 30, 8) }).ok).toBe(true);
    expect(spend(ledger, "wed", 4_000).ok).toBe(true);
    expect(spend(ledger, "thu", 4_000, { now: Date.UTC(2026, 11, 3, 8) })).toMatchObject({
      ok: false,
      limit: "member_weekly",
      committedMicros: 8_000,
    });
  });
});

describe("leases under the rules", () => {
  const ask = (over: Partial<LeaseInput> = {}): LeaseInput => ({
    leaseId: leaseId("s1", 0),
    memberId: "m1",
    projectId: "p1",
    sessionId: "s1",
    usages: [],
    keepMicros: 0,
    wantMicros: 4_000,
    minMicros: 100,
    now: WED,
    ttlMs: TTL,
    ...over,
  });

  it("refuses a grant over a fair share of a project's room, naming the rule", () => {
    const ledger = ledgerWith([
      { subject: "project", subjectId: "p1", period: "month", amountMicros: 6_000 },
    ]);
    // Room 6,000 over two shares is 3,000: a 4,000 ask is refused, per-call holds take over.
    expect(ledger.lease(ask())).toMatchObject({
      ok: true,
      refusedBy: "project_monthly",
      lease: null,
    });
    expect(ledger.lease(ask({ wantMicros: 2_000 }))).toMatchObject({
      ok: true,
      refusedBy: null,
      lease: { amountMicros: 2_000 },
    });
  });

  it("counts a lease's reported calls in the project's and member's period counters", () => {
    const ledger = ledgerWith([
      { subject: "project", subjectId: "p1", period: "week", amountMicros: 10_000 },
      { subject: "own", subjectId: "m1", period: "week", amountMicros: 20_000 },
    ]);
    ledger.lease(ask({ wantMicros: 2_000 }));
    const usage = { ...settle("call-1", 3_000, WED), drawMicros: 2_000 };
    delete (usage as Partial<SettleInput>).now;
    ledger.lease(ask({ usages: [usage], wantMicros: 0 }));
    const status = ledger.limitStatus({ now: WED, memberId: "m1", projectId: "p1" });
    expect(
      status.map(({ scope, spentMicros, resetsAt }) => ({ scope, spentMicros, resetsAt })),
    ).toEqual([
      { scope: "own_weekly", spentMicros: 3_000, resetsAt: MONDAY_NEXT },
      { scope: "project_weekly", spentMicros: 3_000, resetsAt: MONDAY_NEXT },
    ]);
  });
});

describe("limitStatus", () => {
  it("lists the org's month, then the member's and the project's limits, with their resets", () => {
    const ledger = new CreditLedger(new MemoryLedgerStore(), {
      orgMonthlyLimitMicros: 1_000_000,
      memberDailyLimitMicros: 10_000,
      limitRules: rules([
        { subject: "project", subjectId: "p1", period: "day", amountMicros: 8_000 },
      ]),
    });
    ledger.post({ kind: "grant", amountMicros: 100_000, idempotencyKey: "g", now: WED });
    spend(ledger, "a", 2_500);
    expect(ledger.reserve(reserve("open", 1_000)).ok).toBe(true);
    expect(ledger.limitStatus({ now: WED, memberId: "m1", projectId: "p1" })).toEqual([
      {
        scope: "org_monthly",
        limitMicros: 1_000_000,
        spentMicros: 2_500,
        committedMicros: 3_500,
        resetsAt: Date.UTC(2027, 0, 1),
      },
      {
        scope: "member_daily",
        limitMicros: 10_000,
        spentMicros: 2_500,
        committedMicros: 3_500,
        resetsAt: Date.UTC(2026, 11, 3),
      },
      {
        scope: "project_daily",
        limitMicros: 8_000,
        spentMicros: 2_500,
        committedMicros: 3_500,
        resetsAt: Date.UTC(2026, 11, 3),
      },
    ]);
    // No project: no project limits.
    expect(ledger.limitStatus({ now: WED, memberId: "m1", projectId: null })).toHaveLength(2);
  });
});

describe("LimitRuleStore", () => {
  it("sets, replaces and removes one rule per subject and period, read back from memory", () => {
    const store = new LimitRuleStore(nodeSqliteExecutor());
    store.migrate();
    store.put({ subject: "project", subjectId: "p1", period: "week", amountMicros: 5 }, 1);
    store.put({ subject: "project", subjectId: "p1", period: "week", amountMicros: 7 }, 2);
    store.put({ subject: "project", subjectId: "p1", period: "day", amountMicros: 3 }, 3);
    store.put({ subject: "own", subjectId: "m1", period: "day", amountMicros: 1 }, 4);
    expect(store.rulesFor("project", "p1").map((rule) => [rule.period, rule.amountMicros])).toEqual(
      [
        ["day", 3],
        ["week", 7],
      ],
    );
    store.put({ subject: "project", subjectId: "p1", period: "day", amountMicros: null }, 5);
    expect(store.rulesFor("project", "p1")).toHaveLength(1);
    expect(store.rulesFor("member", "m1")).toEqual([]);
    expect(() =>
      store.put({ subject: "own", subjectId: "m1", period: "day", amountMicros: 0 }, 6),
    ).toThrow(RangeError);
  });
});
