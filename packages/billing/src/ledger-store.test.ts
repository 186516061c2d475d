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
