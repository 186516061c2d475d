import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CreditLedger } from "./ledger.ts";
import { nodeSqliteExecutor } from "./node-sqlite-executor.test-support.ts";
import { SqlLedgerStore } from "./sql-ledger-store.ts";
import { createUsageRollups, USAGE_SUMS, usageGroups, usageReport } from "./usage-rollups.ts";

const DAY = 86_400_000;
const START = Date.UTC(2026, 10, 20);

interface Call {
  at: number;
  member: string;
  project: string | null;
  session: string | null;
  model: string;
  prompt: number;
  completion: number;
  price: number;
  billable: boolean;
}

/** An account on Node's SQLite with the rollups, and the calls settled through the real ledger. */
function account(calls: readonly Call[], rollupsFirst = true) {
  const executor = nodeSqliteExecutor();
  const store = new SqlLedgerStore(executor);
  store.migrate();
  if (rollupsFirst) createUsageRollups(executor);
  const ledger = new CreditLedger(store);
  ledger.post({
    kind: "grant",
    amountMicros: 1_000_000_000,
    idempotencyKey: "grant",
    reference: null,
    memo: null,
    now: START,
  });
  calls.forEach((call, i) => {
    const requestId = `turn-${i}:0`;
    if (call.billable) {
      const hold = ledger.reserve({
        requestId,
        amountMicros: call.price + 1,
        memberId: call.member,
        projectId: call.project,
        sessionId: call.session,
        now: call.at,
        ttlMs: 60_000,
      });
      expect(hold.ok).toBe(true);
    }
    const settled = ledger.settle({
      requestId,
      costMicros: call.price,
      priceMicros: call.billable ? call.price : 0,
      tokens: {
        promptTokens: call.prompt,
        completionTokens: call.completion,
        cachedPromptTokens: 0,
        reasoningTokens: 0,
      },
      model: call.model,
      generationIds: [],
      billable: call.billable,
      now: call.at,
      ...(call.billable
        ? {}
        : {
            attribution: {
              memberId: call.member,
              projectId: call.project,
              sessionId: call.session,
            },
          }),
    });
    expect(settled.ok).toBe(true);
  });
  if (!rollupsFirst) createUsageRollups(executor); // an account older than its rollups
  return executor;
}

/** What each group must add up to, straight from the calls. */
function expected(
  calls: readonly Call[],
  groupBy: "day" | "model" | "member" | "project" | "session",
  from: number,
  to: number,
  memberId?: string,
) {
  const groups = new Map<string | null, Record<(typeof USAGE_SUMS)[number], number>>();
  for (const call of calls) {
    if (call.at < from || call.at >= to) continue;
    if (memberId !== undefined && call.member !== memberId) continue;
    const key =
      groupBy === "day"
        ? new Date(Math.floor(call.at / DAY) * DAY).toISOString().slice(0, 10)
        : groupBy === "model"
          ? call.model
          : groupBy === "member"
            ? call.member
            : groupBy === "project"
              ? call.project
              : call.session;
    const sums = groups.get(key) ?? Object.fromEntries(USAGE_SUMS.map((f) => [f, 0]));
    sums.requests += 1;
    sums.billableRequests += call.billable ? 1 : 0;
    sums.promptTokens += call.prompt;
    sums.completionTokens += call.completion;
    sums.costMicros += call.price;
    sums.priceMicros += call.billable ? call.price : 0;
    groups.set(key, sums as Record<(typeof USAGE_SUMS)[number], number>);
  }
  return groups;
}

const call = fc.record({
  at: fc.integer({ min: START, max: START + 9 * DAY }),
  member: fc.constantFrom("m1", "m2", "m3"),
  project: fc.constantFrom("p1", "p2", null),
  session: fc.constantFrom("s1", "s2", "s3", null),
  model: fc.constantFrom("a/model", "b/model"),
  prompt: fc.integer({ min: 0, max: 5_000 }),
  completion: fc.integer({ min: 0, max: 2_000 }),
  price: fc.integer({ min: 1, max: 50_000 }),
  billable: fc.boolean(),
});

describe("usage rollups", () => {
  it("report exactly what the events add up to, for every grouping, window (partial days included) and member", () => {
    fc.assert(
      fc.property(
        fc.array(call, { maxLength: 60 }),
        fc.integer({ min: START - DAY, max: START + 10 * DAY }),
        fc.integer({ min: 1, max: 11 * DAY }),
        fc.constantFrom(undefined, "m1", "m2"),
        fc.boolean(),
        (calls, from, span, memberId, rollupsFirst) => {
          const executor = account(calls, rollupsFirst);
          for (const groupBy of ["day", "model", "member", "project", "session"] as const) {
            const report = usageGroups(
              usageReport(executor, {
                groupBy,
                from,
                to: from + span,
                ...(memberId ? { memberId } : {}),
              }),
            );
            const want = expected(calls, groupBy, from, from + span, memberId);
            expect(new Set(report.map((g) => g.key))).toEqual(new Set(want.keys()));
            for (const group of report) {
              const sums = want.get(group.key);
              for (const field of USAGE_SUMS) {
                const expectedValue =
                  field === "cachedPromptTokens" || field === "reasoningTokens" ? 0 : sums?.[field];
                expect(group[field], `${groupBy} ${String(group.key)} ${field}`).toBe(
                  expectedValue,
                );
              }
            }
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe("an account from before the per-session running totals", () => {
  it("drops the daily session rollup and its trigger, and builds the totals from its events", () => {
    const calls: Call[] = [0, 1, 2, 3].map((i) => ({
      at: START + i * DAY,
      member: "m1",
      project: "p1",
      session: i < 3 ? "s1" : "s2",
      model: "a/model",
      prompt: 10,
      completion: 5,
      price: 100 + i,
      billable: true,
    }));
    const executor = account(calls.slice(0, 2), false);
    // The earlier daily rollup by session, as those versions created it.
    executor.exec(`CREATE TABLE usage_by_session (day INTEGER NOT NULL, session_id TEXT NOT NULL,
      member_id TEXT NOT NULL, requests INTEGER NOT NULL, PRIMARY KEY (session_id, member_id, day))`);
    executor.exec(`CREATE TRIGGER usage_by_session_insert AFTER INSERT ON usage_events BEGIN
      INSERT INTO usage_by_session VALUES (NEW.created_at / 86400000, COALESCE(NEW.session_id, ''),
        COALESCE(NEW.member_id, ''), 1); END`);
    createUsageRollups(executor);
    const tables = [...executor.exec("SELECT name FROM sqlite_schema")].map((row) => row.name);
    expect(tables).not.toContain("usage_by_session");
    expect(tables).not.toContain("usage_by_session_insert");
    // Later calls land in the totals (an insert would fail if the old trigger were left).
    const ledger = new CreditLedger(new SqlLedgerStore(executor));
    calls.slice(2).forEach((later, i) => {
      const settled = ledger.settle({
        requestId: `later-${i}`,
        costMicros: later.price,
        priceMicros: 0,
        tokens: {
          promptTokens: 10,
          completionTokens: 5,
          cachedPromptTokens: 0,
          reasoningTokens: 0,
        },
        model: later.model,
        generationIds: [],
        billable: false,
        now: later.at,
        attribution: { memberId: "m1", projectId: "p1", sessionId: later.session },
      });
      expect(settled.ok).toBe(true);
    });
    const report = usageGroups(
      usageReport(executor, { groupBy: "session", from: START + DAY, to: START + 4 * DAY }),
    );
    expect(report.map((group) => [group.key, group.requests, group.costMicros])).toEqual([
      ["s1", 2, 101 + 102],
      ["s2", 1, 103],
    ]);
  });
});
