import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { UsageRow } from "./ledger-store.ts";
import { nodeSqliteExecutor } from "./node-sqlite-executor.test-support.ts";
import { SqlLedgerStore } from "./sql-ledger-store.ts";
import {
  type ActivityRowsQuery,
  activityRows,
  sessionSpend,
  spendBySession,
  usageRows,
} from "./usage-events.ts";
import { createUsageRollups } from "./usage-rollups.ts";

const START = Date.UTC(2026, 10, 20);

interface Event {
  requestId: string;
  at: number;
  member: string | null;
  project: string | null;
  session: string | null;
  model: string;
  price: number;
}

const usage = (event: Event): UsageRow => ({
  requestId: event.requestId,
  memberId: event.member,
  projectId: event.project,
  sessionId: event.session,
  model: event.model,
  promptTokens: 10,
  completionTokens: 5,
  cachedPromptTokens: 0,
  reasoningTokens: 0,
  costMicros: event.price,
  priceMicros: event.price,
  billable: event.price > 0 ? 1 : 0,
  generationIds: "[]",
  outcome: event.price > 0 ? "settled" : "metered",
  holdMicros: null,
  createdAt: event.at,
});

/** An account on Node's SQLite (ledger tables and rollups) holding these usage events. */
function account(events: readonly Event[]) {
  const executor = nodeSqliteExecutor();
  const store = new SqlLedgerStore(executor);
  store.migrate();
  createUsageRollups(executor);
  for (const event of events) store.insertUsage(usage(event));
  return executor;
}

const byTimeThenId = (a: Event, b: Event) =>
  a.at - b.at || (a.requestId < b.requestId ? -1 : a.requestId > b.requestId ? 1 : 0);

// Few distinct times, so many events share a created_at and paging must break ties by request id.
const events = fc.uniqueArray(
  fc.record({
    requestId: fc.stringMatching(/^[a-z0-9:-]{1,8}$/),
    at: fc.integer({ min: 0, max: 5 }).map((i) => START + i * 1_000),
    member: fc.constantFrom("m1", "m2", null),
    project: fc.constantFrom("p1", "p2", null),
    session: fc.constantFrom("s1", "s2", null),
    model: fc.constantFrom("a/model", "b/model"),
    price: fc.integer({ min: 0, max: 1_000 }),
  }),
  { selector: (event) => event.requestId, maxLength: 40 },
);

const window = fc
  .tuple(fc.integer({ min: -1, max: 6 }), fc.integer({ min: 0, max: 7 }))
  .map(([from, span]) => ({ from: START + from * 1_000, to: START + (from + span) * 1_000 }));

describe("usage event queries", () => {
  it("page the CSV export oldest first without repeating or skipping events at the same time", () => {
    fc.assert(
      fc.property(
        events,
        window,
        fc.integer({ min: 1, max: 4 }),
        fc.constantFrom(undefined, "m1", "m2"),
        (list, { from, to }, limit, memberId) => {
          const executor = account(list);
          const paged: string[] = [];
          let after: { createdAt: number; requestId: string } | undefined;
          for (let pages = 0; ; pages++) {
            expect(pages).toBeLessThanOrEqual(list.length + 1);
            const page = usageRows(executor, {
              from,
              to,
              limit,
              ...(memberId === undefined ? {} : { memberId }),
              ...(after === undefined ? {} : { after }),
            });
            expect(page.length).toBeLessThanOrEqual(limit);
            paged.push(...page.map((row) => row.requestId));
            const last = page.at(-1);
            if (page.length < limit || last === undefined) break;
            after = { createdAt: last.createdAt, requestId: last.requestId };
          }
          const want = list
            .filter((e) => e.at >= from && e.at < to)
            .filter((e) => memberId === undefined || e.member === memberId)
            .sort(byTimeThenId)
            .map((e) => e.requestId);
          expect(paged).toEqual(want);
        },
      ),
      { numRuns: 150 },
    );
  });

  it("page the activity list newest first, filtered, without repeating or skipping events at the same time", () => {
    const filters = fc.record(
      {
        memberId: fc.constantFrom("m1", "m2"),
        projectId: fc.constantFrom("p1", "p2"),
        sessionId: fc.constantFrom("s1", "s2"),
        model: fc.constantFrom("a/model", "b/model"),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(
        events,
        window,
        fc.integer({ min: 1, max: 4 }),
        filters,
        (list, { from, to }, limit, filter) => {
          const executor = account(list);
          const paged: string[] = [];
          let before: ActivityRowsQuery["before"];
          for (let pages = 0; ; pages++) {
            expect(pages).toBeLessThanOrEqual(list.length + 1);
            const page = activityRows(executor, {
              from,
              to,
              limit,
              ...filter,
              ...(before === undefined ? {} : { before }),
            });
            expect(page.length).toBeLessThanOrEqual(limit);
            paged.push(...page.map((row) => row.requestId));
            const last = page.at(-1);
            if (page.length < limit || last === undefined) break;
            before = { createdAt: last.createdAt, requestId: last.requestId };
          }
          const want = list
            .filter((e) => e.at >= from && e.at < to)
            .filter((e) => filter.memberId === undefined || e.member === filter.memberId)
            .filter((e) => filter.projectId === undefined || e.project === filter.projectId)
            .filter((e) => filter.sessionId === undefined || e.session === filter.sessionId)
            .filter((e) => filter.model === undefined || e.model === filter.model)
            .sort(byTimeThenId)
            .reverse()
            .map((e) => e.requestId);
          expect(paged).toEqual(want);
        },
      ),
      { numRuns: 150 },
    );
  });

  it("page through events that share one created_at by request id, both ways", () => {
    const ids = ["b", "a", "d", "c", "e"];
    const list = ids.map(
      (requestId): Event => ({
        requestId,
        at: START,
        member: "m1",
        project: null,
        session: null,
        model: "x",
        price: 1,
      }),
    );
    const executor = account(list);
    for (const limit of [1, 2]) {
      const forward: string[] = [];
      let after: { createdAt: number; requestId: string } | undefined;
      const backward: string[] = [];
      let before: { createdAt: number; requestId: string } | undefined;
      for (let page = 0; page < 5; page++) {
        const next = usageRows(executor, {
          from: START,
          to: START + 1,
          limit,
          ...(after && { after }),
        });
        forward.push(...next.map((row) => row.requestId));
        const last = next.at(-1);
        if (last) after = { createdAt: last.createdAt, requestId: last.requestId };
        const older = activityRows(executor, {
          from: START,
          to: START + 1,
          limit,
          ...(before && { before }),
        });
        backward.push(...older.map((row) => row.requestId));
        const oldest = older.at(-1);
        if (oldest) before = { createdAt: oldest.createdAt, requestId: oldest.requestId };
      }
      expect(forward).toEqual(["a", "b", "c", "d", "e"]);
      expect(backward).toEqual(["e", "d", "c", "b", "a"]);
    }
  });

  it("return whole usage rows", () => {
    const event: Event = {
      requestId: "turn-1:0",
      at: START,
      member: "m1",
      project: null,
      session: "s1",
      model: "a/model",
      price: 42,
    };
    const executor = account([event]);
    expect(usageRows(executor, { from: START, to: START + 1, limit: 10 })).toEqual([usage(event)]);
    expect(activityRows(executor, { from: START, to: START + 1, limit: 10 })).toEqual([
      usage(event),
    ]);
    // [from, to): an event at `to` is outside.
    expect(usageRows(executor, { from: START - 1, to: START, limit: 10 })).toEqual([]);
    expect(activityRows(executor, { from: START - 1, to: START, limit: 10 })).toEqual([]);
  });

  it("sum each session's spend and calls", () => {
    const list: Event[] = [
      {
        requestId: "a",
        at: START,
        member: "m1",
        project: null,
        session: "s1",
        model: "x",
        price: 30,
      },
      {
        requestId: "b",
        at: START,
        member: "m2",
        project: null,
        session: "s1",
        model: "x",
        price: 12,
      },
      // A free (metered) call counts as a call at no price.
      {
        requestId: "c",
        at: START,
        member: "m1",
        project: null,
        session: "s1",
        model: "x",
        price: 0,
      },
      {
        requestId: "d",
        at: START,
        member: "m1",
        project: null,
        session: "s2",
        model: "x",
        price: 7,
      },
      {
        requestId: "e",
        at: START,
        member: "m1",
        project: null,
        session: null,
        model: "x",
        price: 99,
      },
    ];
    const executor = account(list);
    expect(spendBySession(executor, ["s1", "s2", "s3"])).toEqual({ s1: 42, s2: 7 });
    expect(spendBySession(executor, ["s2"])).toEqual({ s2: 7 });
    expect(spendBySession(executor, [])).toEqual({});
    expect(sessionSpend(executor, "s1")).toEqual({ priceMicros: 42, requests: 3 });
    expect(sessionSpend(executor, "s2")).toEqual({ priceMicros: 7, requests: 1 });
    expect(sessionSpend(executor, "s3")).toEqual({ priceMicros: 0, requests: 0 });
  });
});
