import { describe, expect, it } from "vitest";
import type { AlertRow, HoldRow, LedgerStore, UsageRow } from "./ledger-store.ts";
import { MemoryLedgerStore } from "./memory-ledger-store.ts";
import { nodeSqliteExecutor } from "./node-sqlite-executor.test-support.ts";
import { SqlLedgerStore } from "./sql-ledger-store.ts";

function sqlStore(): SqlLedgerStore {
  const store = new SqlLedgerStore(nodeSqliteExecutor());
  store.migrate();
  store.migrate(); // idempotent
  return store;
}

const stores: [string, () => LedgerStore][] = [
  ["memory", () => new MemoryLedgerStore()],
  ["sqlite", sqlStore],
];

const hold: HoldRow = {
  requestId: "r1",
  amountMicros: 500,
  memberId: "m1",
  projectId: null,
  sessionId: "s1",
  status: "open",
  createdAt: 1,
  expiresAt: 100,
  resolvedAt: null,
};

const usage: UsageRow = {
  requestId: "r1",
  memberId: "m1",
  projectId: "p1",
  sessionId: null,
  model: "x/y",
  promptTokens: 10,
  completionTokens: 20,
  cachedPromptTokens: 3,
  reasoningTokens: 4,
  costMicros: 40,
  priceMicros: 50,
  billable: 1,
  generationIds: '["g1"]',
  outcome: "settled",
  holdMicros: 500,
  createdAt: 7,
};

const alert: AlertRow = {
  key: "k",
  kind: "low_balance",
  memberId: null,
  period: "entry-1",
  thresholdPct: null,
  limitMicros: 100,
  levelMicros: 5,
  firedAt: 9,
};

describe.each(stores)("LedgerStore contract (%s)", (_name, makeStore) => {
  it("appends entries with increasing seq and sums them", () => {
    const store = makeStore();
    const base = { memo: null, createdAt: 5, balanceAfterMicros: 0 };
    const a = store.insertEntry({
      ...base,
      kind: "grant",
      amountMicros: 10,
      idempotencyKey: "a",
      reference: "x",
    });
    const b = store.insertEntry({
      ...base,
      kind: "usage",
      amountMicros: -3,
      idempotencyKey: "b",
      reference: null,
    });
    const c = store.insertEntry({
      ...base,
      kind: "adjustment",
      amountMicros: -4,
      idempotencyKey: "c",
      reference: "x",
    });
    expect([a.seq, b.seq, c.seq]).toEqual([1, 2, 3]);
    expect(store.getEntryByKey("b")).toEqual(b);
    expect(store.getEntryByKey("zzz")).toBeNull();
    expect(store.listEntries(1, 1)).toEqual([b]);
    expect(store.listEntries(0, 10)).toEqual([a, b, c]);
    expect(store.sumEntries()).toBe(3);
    expect(store.sumEntriesByReference("x")).toBe(6);
    expect(store.sumEntriesByReference("none")).toBe(0);
    expect(() =>
      store.insertEntry({
        ...base,
        kind: "grant",
        amountMicros: 1,
        idempotencyKey: "a",
        reference: null,
      }),
    ).toThrow();
  });

  it("stores holds and resolves only open ones", () => {
    const store = makeStore();
    store.insertHold(hold);
    store.insertHold({ ...hold, requestId: "r2", expiresAt: 50 });
    expect(store.getHold("r1")).toEqual(hold);
    expect(
      store
        .listOpenHolds()
        .map((h) => h.requestId)
        .sort(),
    ).toEqual(["r1", "r2"]);
    store.resolveHold("r1", "released", 9);
    store.resolveHold("r1", "settled", 10); // no-op: not open
    expect(store.getHold("r1")).toEqual({ ...hold, status: "released", resolvedAt: 9 });
    expect(store.listOpenHolds().map((h) => h.requestId)).toEqual(["r2"]);
    expect(() => store.insertHold(hold)).toThrow();
  });

  it("stores usage events, counters and alerts", () => {
    const store = makeStore();
    store.insertUsage(usage);
    expect(store.getUsage("r1")).toEqual(usage);
    expect(store.getUsage("r2")).toBeNull();
    expect(() => store.insertUsage(usage)).toThrow();
    expect(store.getCounter("posted")).toBe(0);
    store.setCounter("posted", -42);
    store.setCounter("posted", 2 ** 52);
    expect(store.getCounter("posted")).toBe(2 ** 52);
    store.insertAlert(alert);
    expect(store.getAlert("k")).toEqual(alert);
    expect(store.getAlert("other")).toBeNull();
    expect(() => store.insertAlert(alert)).toThrow();
  });

  it("inserts and finds many rows at once, as a lease report does", () => {
    const store = makeStore();
    const base = { kind: "usage" as const, memo: "x/y", createdAt: 5 };
    store.insertEntry({
      ...base,
      amountMicros: 9,
      balanceAfterMicros: 9,
      idempotencyKey: "k0",
      reference: null,
    });
    // More rows than a Durable Object binds parameters (100): they go as one JSON value.
    const many = Array.from({ length: 40 }, (_, i) => ({
      ...base,
      amountMicros: -(i + 1),
      balanceAfterMicros: 9 - ((i + 1) * (i + 2)) / 2,
      idempotencyKey: `k${i + 1}`,
      reference: i % 2 === 0 ? `r${i}` : null,
    }));
    const rows = store.insertEntries(many);
    expect(rows.map((row) => row.seq)).toEqual(many.map((_, i) => i + 2));
    expect(store.listEntries(1, 100)).toEqual(rows);
    expect(store.insertEntries([])).toEqual([]);
    // One row new, one already there: neither is written.
    const again = many.slice(1, 2);
    const fresh = again.map((row) => ({ ...row, idempotencyKey: "k99" }));
    expect(() => store.insertEntries([...fresh, ...again])).toThrow();
    expect(store.getEntryByKey("k99")).toBeNull();

    const usages = many.map((_, i) => ({
      ...usage,
      requestId: `u${i}`,
      sessionId: i % 3 === 0 ? null : `s${i}`,
      holdMicros: i % 4 === 0 ? null : i,
      billable: (i % 2) as 0 | 1,
      outcome: i % 2 === 0 ? ("metered" as const) : ("settled_late" as const),
    }));
    store.insertUsages(usages);
    store.insertUsages([]);
    const byId = (a: { requestId: string }, b: { requestId: string }) =>
      a.requestId < b.requestId ? -1 : 1;
    expect(store.getUsages(["u3", "nope", "u0", "u3"]).sort(byId)).toEqual([usages[0], usages[3]]);
    expect(store.getUsages([])).toEqual([]);
    expect(store.getUsage("u39")).toEqual(usages[39]);
    expect(() =>
      store.insertUsages([{ ...usage, requestId: "new" }, ...usages.slice(5, 6)]),
    ).toThrow();
    expect(store.getUsage("new")).toBeNull();

    store.insertHold(hold);
    store.insertHold({ ...hold, requestId: "r2" });
    expect(store.getHolds(["r2", "zz", "r1"]).sort(byId)).toEqual([
      hold,
      { ...hold, requestId: "r2" },
    ]);
    expect(store.getHolds([])).toEqual([]);
  });

  it("reads its own counter writes inside a transaction and keeps them after", () => {
    const store = makeStore();
    store.setCounter("a", 5);
    const seen = store.transact(() => {
      store.setCounter("a", store.getCounter("a") + 1);
      store.setCounter("b", 7);
      const inner = store.transact(() => {
        store.setCounter("a", store.getCounter("a") + 10);
        return store.getCounter("a");
      });
      return [store.getCounter("a"), store.getCounter("b"), inner];
    });
    expect(seen).toEqual([16, 7, 16]);
    // Loaded at once, then read and moved as one by one.
    const loaded = store.transact(() => {
      store.loadCounters(["a", "never", "b"]);
      store.setCounter("b", store.getCounter("b") + 1);
      store.loadCounters(["b"]); // already kept: not read over the change
      return [store.getCounter("a"), store.getCounter("never"), store.getCounter("b")];
    });
    expect(loaded).toEqual([16, 0, 8]);
    store.loadCounters(["a"]); // outside a transaction: nothing kept, nothing changes
    expect([store.getCounter("b"), store.getCounter("never")]).toEqual([8, 0]);
    store.setCounter("b", 7);
    expect([store.getCounter("a"), store.getCounter("b")]).toEqual([16, 7]);
    // A transaction that fails after moving a counter leaves it where it was.
    expect(() =>
      store.transact(() => {
        store.setCounter("a", 0);
        throw new Error("boom");
      }),
    ).toThrow("boom");
    expect(store.getCounter("a")).toBe(16);
  });

  it("rolls back a failed transaction, including a nested one only", () => {
    const store = makeStore();
    expect(() =>
      store.transact(() => {
        store.setCounter("c", 1);
        store.insertHold(hold);
        throw new Error("boom");
      }),
    ).toThrow("boom");
    expect(store.getCounter("c")).toBe(0);
    expect(store.getHold("r1")).toBeNull();

    const result = store.transact(() => {
      store.setCounter("outer", 1);
      try {
        store.transact(() => {
          store.setCounter("inner", 1);
          throw new Error("inner");
        });
      } catch {
        // the inner failure is handled; the outer transaction goes on
      }
      return store.getCounter("inner");
    });
    expect(result).toBe(0);
    expect(store.getCounter("outer")).toBe(1);
  });
});
