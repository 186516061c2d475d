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
