import { describe, expect, it } from "vitest";
import type { ReserveInput, ReserveResult, SettleResult } from "./call-holds.ts";
import type { PostResult } from "./credits.ts";
import { CreditLedger } from "./ledger.ts";
import type { LedgerConfig } from "./ledger-config.ts";
import type { AlertRow, UsageRow } from "./ledger-store.ts";
import { MemoryLedgerStore } from "./memory-ledger-store.ts";
import type { SettleInput } from "./settlement.ts";

const T0 = Date.UTC(2026, 10, 29, 12, 0, 0); // 2026-11-29T12:00:00Z
const TTL = 10 * 60_000;

type AnyResult = ReserveResult | SettleResult | PostResult;

function alertsIn(result: AnyResult): AlertRow[] {
  return "alerts" in result ? result.alerts : [];
}

function setup(config: Partial<LedgerConfig> = {}, grantMicros = 1_000_000) {
  const store = new MemoryLedgerStore();
  const ledger = new CreditLedger(store, config);
  if (grantMicros > 0) {
    const granted = ledger.post({
      kind: "grant",
      amountMicros: grantMicros,
      idempotencyKey: "signup-grant",
      now: T0,
    });
    expect(granted.ok).toBe(true);
  }
  return { store, ledger };
}

function reserveInput(
  requestId: string,
  amountMicros: number,
  over: Partial<ReserveInput> = {},
): ReserveInput {
  return {
    requestId,
    amountMicros,
    memberId: "m1",
    projectId: "p1",
    sessionId: "s1",
    now: T0,
    ttlMs: TTL,
    ...over,
  };
}

function settleInput(
  requestId: string,
  priceMicros: number,
  over: Partial<SettleInput> = {},
): SettleInput {
  return {
    requestId,
    costMicros: Math.floor(priceMicros / 2),
    priceMicros,
    tokens: {
      promptTokens: 1200,
      completionTokens: 300,
      cachedPromptTokens: 1000,
      reasoningTokens: 0,
    },
    model: "openai/gpt-4o-mini",
    generationIds: ["gen-1", "gen-2"],
    billable: true,
    now: T0 + 1_000,
    ...over,
  };
}

describe("posting entries", () => {
  it("starts empty and keeps a running balance on each entry", () => {
    const { ledger } = setup({}, 0);
    expect(ledger.balance()).toEqual({ postedMicros: 0, heldMicros: 0, availableMicros: 0 });
    ledger.post({ kind: "grant", amountMicros: 500, idempotencyKey: "g", now: T0 });
    ledger.post({
      kind: "topup",
      amountMicros: 2_000,
      idempotencyKey: "t",
      reference: "cs_1",
      now: T0,
    });
    ledger.post({ kind: "adjustment", amountMicros: -300, idempotencyKey: "a", now: T0 });
    expect(ledger.balance()).toEqual({
      postedMicros: 2_200,
      heldMicros: 0,
      availableMicros: 2_200,
    });
    expect(
      ledger.entries().map((e) => [e.seq, e.kind, e.amountMicros, e.balanceAfterMicros]),
    ).toEqual([
      [1, "grant", 500, 500],
      [2, "topup", 2_000, 2_500],
      [3, "adjustment", -300, 2_200],
    ]);
    expect(ledger.entries(1, 1).map((e) => e.seq)).toEqual([2]);
  });

  it("replays the same key once and reports a conflict for different parameters", () => {
    const { ledger } = setup({}, 0);
    const first = ledger.post({ kind: "topup", amountMicros: 700, idempotencyKey: "k", now: T0 });
    const again = ledger.post({
      kind: "topup",
      amountMicros: 700,
      idempotencyKey: "k",
      now: T0 + 5,
    });
    expect(first.ok && again.ok).toBe(true);
    if (!first.ok || !again.ok) return;
    expect(again.replayed).toBe(true);
    expect(again.entry).toEqual(first.entry);
    const conflict = ledger.post({
      kind: "topup",
      amountMicros: 701,
      idempotencyKey: "k",
      now: T0,
    });
    expect(conflict).toEqual({ ok: false, reason: "conflict", existing: first.entry });
    const otherKind = ledger.post({
      kind: "grant",
      amountMicros: 700,
      idempotencyKey: "k",
      now: T0,
    });
    expect(otherKind.ok).toBe(false);
    expect(ledger.balance().postedMicros).toBe(700);
  });

  it("refuses amounts of the wrong sign as programming errors", () => {
    const { ledger } = setup({}, 0);
    expect(() =>
      ledger.post({ kind: "topup", amountMicros: -1, idempotencyKey: "x", now: T0 }),
    ).toThrow(RangeError);
    expect(() =>
      ledger.post({ kind: "adjustment", amountMicros: 0, idempotencyKey: "x", now: T0 }),
    ).toThrow(RangeError);
    expect(() =>
      ledger.post({ kind: "grant", amountMicros: 0.5, idempotencyKey: "x", now: T0 }),
    ).toThrow(RangeError);
    expect(ledger.entries()).toEqual([]);
  });

  it("posts a cumulative total only once and only forwards", () => {
    const { ledger } = setup({}, 10_000);
    const post = (totalMicros: number) =>
      ledger.postCumulative({
        kind: "adjustment",
        reference: "refunds:ch_1",
        totalMicros,
        now: T0,
      });
    const first = post(-1_000);
    expect(first.ok && first.entry?.amountMicros).toBe(-1_000);
    const second = post(-3_000);
    expect(second.ok && second.entry?.amountMicros).toBe(-2_000);
    // a retry of the second and a late arrival of the first change nothing
    const retry = post(-3_000);
    expect(retry.ok && retry.replayed).toBe(true);
    const late = post(-1_000);
    expect(late.ok && late.replayed).toBe(true);
    const stale = post(-2_000);
    expect(stale).toEqual({ ok: true, entry: null, replayed: false, alerts: [] });
    expect(ledger.balance().postedMicros).toBe(7_000);
    expect(post(0)).toEqual({ ok: true, entry: null, replayed: false, alerts: [] });
  });
});

describe("reserve", () => {
  it("holds credits and leaves posted untouched", () => {
    const { ledger } = setup();
    const result = ledger.reserve(reserveInput("r1", 300_000));
    expect(result).toEqual({
      ok: true,
      replayed: false,
      alerts: [],
      hold: {
        requestId: "r1",
        amountMicros: 300_000,
        memberId: "m1",
        projectId: "p1",
        sessionId: "s1",
        status: "open",
        createdAt: T0,
        expiresAt: T0 + TTL,
        resolvedAt: null,
      },
    });
    expect(ledger.balance()).toEqual({
      postedMicros: 1_000_000,
      heldMicros: 300_000,
      availableMicros: 700_000,
    });
  });

  it("admits exactly the available amount and refuses one micro more", () => {
    const { ledger } = setup();
    expect(ledger.reserve(reserveInput("r1", 400_000)).ok).toBe(true);
    expect(ledger.reserve(reserveInput("r2", 600_001))).toEqual({
      ok: false,
      reason: "insufficient_credits",
      availableMicros: 600_000,
      requiredMicros: 600_001,
      alerts: [],
    });
    expect(ledger.reserve(reserveInput("r2", 600_000)).ok).toBe(true);
    expect(ledger.balance().availableMicros).toBe(0);
  });

  it("lets a refused request id be retried after a top-up", () => {
    const { ledger } = setup({}, 100);
    expect(ledger.reserve(reserveInput("r1", 500)).ok).toBe(false);
    expect(ledger.hold("r1")).toBeNull();
    ledger.post({ kind: "topup", amountMicros: 400, idempotencyKey: "t1", now: T0 });
    expect(ledger.reserve(reserveInput("r1", 500)).ok).toBe(true);
  });

  it("replays the same request and refuses different parameters as a conflict", () => {
    const { ledger } = setup();
    ledger.reserve(reserveInput("r1", 300_000));
    const replay = ledger.reserve(reserveInput("r1", 300_000, { now: T0 + 50 }));
    expect(replay.ok && replay.replayed).toBe(true);
    expect(replay.ok && replay.hold.createdAt).toBe(T0);
    for (const changed of [{ amountMicros: 300_001 }, { memberId: "m2" }, { sessionId: null }]) {
      const result = ledger.reserve({ ...reserveInput("r1", 300_000), ...changed });
      expect(result.ok === false && result.reason).toBe("conflict");
    }
    expect(ledger.balance().heldMicros).toBe(300_000);
  });

  it("admits exactly k of N reservations when the balance covers k", () => {
    for (const [n, k] of [
      [10, 3],
      [5, 0],
      [8, 8],
      [1, 1],
    ] as const) {
      const amount = 12_345;
      const { ledger } = setup({}, k * amount + amount - 1);
      const admitted = Array.from({ length: n }, (_, i) =>
        ledger.reserve(reserveInput(`r${i}`, amount)),
      ).filter((r) => r.ok).length;
      expect(admitted).toBe(k);
      expect(ledger.balance().availableMicros).toBe(amount - 1);
    }
  });

  it("refuses bad input as programming errors", () => {
    const { ledger } = setup();
    expect(() => ledger.reserve(reserveInput("r1", 0))).toThrow(RangeError);
    expect(() => ledger.reserve(reserveInput("r1", 1.5))).toThrow(RangeError);
    expect(() => ledger.reserve(reserveInput("", 1))).toThrow(RangeError);
    expect(() => ledger.reserve(reserveInput("r1", 1, { ttlMs: 0 }))).toThrow(RangeError);
    expect(ledger.balance().heldMicros).toBe(0);
  });
});

describe("settle", () => {
  it("resolves the hold and charges the price below the hold", () => {
    const { ledger, store } = setup();
    ledger.reserve(reserveInput("r1", 300_000));
    const result = ledger.settle(settleInput("r1", 120_000));
    const usage: UsageRow = {
      requestId: "r1",
      memberId: "m1",
      projectId: "p1",
      sessionId: "s1",
      model: "openai/gpt-4o-mini",
      promptTokens: 1200,
      completionTokens: 300,
      cachedPromptTokens: 1000,
      reasoningTokens: 0,
      costMicros: 60_000,
      priceMicros: 120_000,
      billable: 1,
      generationIds: '["gen-1","gen-2"]',
      outcome: "settled",
      holdMicros: 300_000,
      createdAt: T0 + 1_000,
    };
    expect(result).toEqual({
      ok: true,
      outcome: "settled",
      replayed: false,
      usage,
      entry: {
        seq: 2,
        kind: "usage",
        amountMicros: -120_000,
        balanceAfterMicros: 880_000,
        idempotencyKey: "usage:r1",
        reference: "r1",
        memo: "openai/gpt-4o-mini",
        createdAt: T0 + 1_000,
      },
      overrunMicros: 0,
      alerts: [],
    });
    expect(ledger.balance()).toEqual({
      postedMicros: 880_000,
      heldMicros: 0,
      availableMicros: 880_000,
    });
    expect(ledger.hold("r1")?.status).toBe("settled");
    expect(ledger.hold("r1")?.resolvedAt).toBe(T0 + 1_000);
    expect(store.allUsage()).toEqual([usage]);
  });

  it("charges the whole price above the hold and reports the overrun", () => {
    const { ledger } = setup({}, 100_000);
    ledger.reserve(reserveInput("r1", 100_000));
    const result = ledger.settle(settleInput("r1", 130_000));
    expect(result.ok && result.overrunMicros).toBe(30_000);
    expect(ledger.balance()).toEqual({
      postedMicros: -30_000,
      heldMicros: 0,
      availableMicros: -30_000,
    });
    // overdrawn: nothing more is admitted
    expect(ledger.reserve(reserveInput("r2", 1)).ok).toBe(false);
  });

  it("charges once however often it is replayed", () => {
    const { ledger, store } = setup();
    ledger.reserve(reserveInput("r1", 300_000));
    const first = ledger.settle(settleInput("r1", 120_000));
    for (let i = 0; i < 5; i++) {
      const again = ledger.settle(settleInput("r1", 120_000, { now: T0 + 9_000 }));
      expect(again).toEqual({ ...first, replayed: true });
    }
    expect(ledger.balance().postedMicros).toBe(880_000);
    expect(store.allUsage()).toHaveLength(1);
    expect(ledger.entries()).toHaveLength(2);
  });

  it("reports a conflict when a replay differs", () => {
    const { ledger } = setup();
    ledger.reserve(reserveInput("r1", 300_000));
    ledger.settle(settleInput("r1", 120_000));
    const variants: Partial<SettleInput>[] = [
      { priceMicros: 120_001 },
      { costMicros: 1 },
      { model: "other" },
      { generationIds: ["gen-1"] },
      {
        tokens: {
          promptTokens: 1,
          completionTokens: 300,
          cachedPromptTokens: 0,
          reasoningTokens: 0,
        },
      },
      { attribution: { memberId: "m2", projectId: "p1", sessionId: "s1" } },
    ];
    for (const variant of variants) {
      const result = ledger.settle(settleInput("r1", 120_000, variant));
      expect(result.ok === false && result.reason).toBe("conflict");
    }
    expect(ledger.balance().postedMicros).toBe(880_000);
  });

  it("refuses a settle attributed to someone other than the hold's member", () => {
    const { ledger } = setup();
    ledger.reserve(reserveInput("r1", 300_000));
    const result = ledger.settle(
      settleInput("r1", 1, { attribution: { memberId: "m1", projectId: "p2", sessionId: "s1" } }),
    );
    expect(result.ok === false && result.reason).toBe("conflict");
    expect(ledger.hold("r1")?.status).toBe("open");
    const matching = ledger.settle(
      settleInput("r1", 1, { attribution: { memberId: "m1", projectId: "p1", sessionId: "s1" } }),
    );
    expect(matching.ok).toBe(true);
  });

  it("meters a non-billable request without a hold at price 0", () => {
    const { ledger } = setup();
    const result = ledger.settle(
      settleInput("onb-1", 0, {
        billable: false,
        costMicros: 4_321,
        attribution: { memberId: "m1", projectId: "p1", sessionId: null },
      }),
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.outcome).toBe("metered");
    expect(result.entry).toBeNull();
    expect(result.usage).toMatchObject({
      memberId: "m1",
      projectId: "p1",
      sessionId: null,
      costMicros: 4_321,
      priceMicros: 0,
      billable: 0,
      holdMicros: null,
    });
    expect(ledger.balance().postedMicros).toBe(1_000_000);
    // the request id is spent: reserving it now would leave a hold nothing can settle
    const reserve = ledger.reserve(reserveInput("onb-1", 10));
    expect(reserve.ok === false && reserve.reason).toBe("conflict");
  });

  it("refuses a billable settle without a hold, and a non-billable one with a price", () => {
    const { ledger } = setup();
    expect(ledger.settle(settleInput("nope", 10))).toEqual({ ok: false, reason: "no_hold" });
    expect(() => ledger.settle(settleInput("nope", 10, { billable: false }))).toThrow(RangeError);
    expect(ledger.balance().postedMicros).toBe(1_000_000);
  });

  it("resolves a hold without charging when the request turns out non-billable", () => {
    const { ledger } = setup();
    ledger.reserve(reserveInput("r1", 300_000));
    const result = ledger.settle(settleInput("r1", 0, { billable: false }));
    expect(result.ok && result.outcome).toBe("settled");
    expect(result.ok && result.entry).toBeNull();
    expect(ledger.hold("r1")?.status).toBe("settled");
    expect(ledger.balance()).toEqual({
      postedMicros: 1_000_000,
      heldMicros: 0,
      availableMicros: 1_000_000,
    });
  });

  it("settles an open hold past its expiry time if expire has not run", () => {
    const { ledger } = setup();
    ledger.reserve(reserveInput("r1", 300_000));
    const result = ledger.settle(settleInput("r1", 100, { now: T0 + TTL + 5 }));
    expect(result.ok && result.outcome).toBe("settled");
    expect(ledger.balance().heldMicros).toBe(0);
  });

  it("leaves nothing behind when the store fails halfway", () => {
    class FailingStore extends MemoryLedgerStore {
      override insertUsage(): void {
        throw new Error("disk full");
      }
    }
    const store = new FailingStore();
    const ledger = new CreditLedger(store);
    ledger.post({ kind: "grant", amountMicros: 1_000, idempotencyKey: "g", now: T0 });
    ledger.reserve(reserveInput("r1", 600));
    expect(() => ledger.settle(settleInput("r1", 500))).toThrow("disk full");
    expect(ledger.balance()).toEqual({
      postedMicros: 1_000,
      heldMicros: 600,
      availableMicros: 400,
    });
    expect(ledger.hold("r1")?.status).toBe("open");
    expect(ledger.entries()).toHaveLength(1);
    expect(ledger.reconcile().ok).toBe(true);
  });
});

describe("release and expire", () => {
  it("releases once, then replays, and refuses a settle", () => {
    const { ledger } = setup();
    ledger.reserve(reserveInput("r1", 300_000));
    const released = ledger.release("r1", T0 + 10);
    expect(released).toMatchObject({
      ok: true,
      replayed: false,
      hold: { status: "released", resolvedAt: T0 + 10 },
    });
    expect(ledger.balance().availableMicros).toBe(1_000_000);
    const again = ledger.release("r1", T0 + 20);
    expect(again).toMatchObject({ ok: true, replayed: true, hold: { resolvedAt: T0 + 10 } });
    const settle = ledger.settle(settleInput("r1", 10));
    expect(settle.ok === false && settle.reason).toBe("hold_released");
    expect(ledger.balance()).toEqual({
      postedMicros: 1_000_000,
      heldMicros: 0,
      availableMicros: 1_000_000,
    });
  });

  it("refuses to release an unknown, settled or expired hold", () => {
    const { ledger } = setup();
    expect(ledger.release("nope", T0)).toEqual({ ok: false, reason: "unknown_request" });
    ledger.reserve(reserveInput("settled", 100));
    ledger.settle(settleInput("settled", 50));
    const afterSettle = ledger.release("settled", T0);
    expect(afterSettle.ok === false && afterSettle.reason).toBe("already_resolved");
    ledger.reserve(reserveInput("expired", 100));
    ledger.expire(T0 + TTL);
    const afterExpiry = ledger.release("expired", T0 + TTL);
    expect(afterExpiry.ok === false && afterExpiry.reason).toBe("already_resolved");
    expect(ledger.balance()).toEqual({
      postedMicros: 999_950,
      heldMicros: 0,
      availableMicros: 999_950,
    });
  });

  it("voids exactly the holds past their expiry and tells when the next one expires", () => {
    const { ledger } = setup();
    ledger.reserve(reserveInput("a", 100, { ttlMs: 1_000 }));
    ledger.reserve(reserveInput("b", 200, { ttlMs: 2_000 }));
    ledger.reserve(reserveInput("c", 400, { ttlMs: 3_000 }));
    expect(ledger.expire(T0 + 999)).toEqual({ expired: [], nextExpiresAt: T0 + 1_000 });
    const result = ledger.expire(T0 + 2_000);
    expect(result.expired.map((h) => [h.requestId, h.status, h.resolvedAt])).toEqual([
      ["a", "expired", T0 + 2_000],
      ["b", "expired", T0 + 2_000],
    ]);
    expect(result.nextExpiresAt).toBe(T0 + 3_000);
    expect(ledger.balance().heldMicros).toBe(400);
    expect(ledger.expire(T0 + 2_000).expired).toEqual([]);
    expect(ledger.expire(T0 + 5_000)).toMatchObject({ nextExpiresAt: null });
    expect(ledger.balance().heldMicros).toBe(0);
  });

  it("posts a late settle after expiry without resolving the hold again", () => {
    const { ledger } = setup();
    ledger.reserve(reserveInput("r1", 300_000));
    ledger.expire(T0 + TTL);
    expect(ledger.balance().availableMicros).toBe(1_000_000);
    const late = ledger.settle(settleInput("r1", 250_000, { now: T0 + TTL + 1 }));
    expect(late).toMatchObject({
      ok: true,
      outcome: "settled_late",
      overrunMicros: 250_000,
      entry: { amountMicros: -250_000 },
      usage: { outcome: "settled_late", holdMicros: 300_000 },
    });
    expect(ledger.hold("r1")).toMatchObject({ status: "expired", resolvedAt: T0 + TTL });
    expect(ledger.balance()).toEqual({
      postedMicros: 750_000,
      heldMicros: 0,
      availableMicros: 750_000,
    });
    const replay = ledger.settle(settleInput("r1", 250_000, { now: T0 + TTL + 2 }));
    expect(replay.ok && replay.replayed).toBe(true);
    expect(ledger.balance().postedMicros).toBe(750_000);
    // a resolved hold admits no new call, whatever the replay
    const reserve = ledger.reserve(reserveInput("r1", 300_000));
    expect(reserve).toMatchObject({ ok: false, reason: "conflict" });
    expect(ledger.balance().heldMicros).toBe(0);
  });

  it.each(["settled", "released"] as const)(
    "a reserve replayed after the hold was %s is a conflict and holds nothing",
    (status) => {
      const { ledger } = setup();
      ledger.reserve(reserveInput("r1", 300_000));
      if (status === "settled") ledger.settle(settleInput("r1", 10));
      else ledger.release("r1", T0 + 10);
      const before = ledger.balance();
      const replay = ledger.reserve(reserveInput("r1", 300_000, { now: T0 + 20 }));
      expect(replay).toMatchObject({ ok: false, reason: "conflict" });
      expect(ledger.balance()).toEqual(before);
      expect(ledger.hold("r1")?.status).toBe(status);
    },
  );
});

describe("reconcile", () => {
  it("is ok after a mix of operations and catches a drifted cache", () => {
    const { ledger, store } = setup();
    ledger.reserve(reserveInput("r1", 100_000));
    ledger.reserve(reserveInput("r2", 200_000));
    ledger.settle(settleInput("r1", 150_000));
    ledger.release("r2", T0);
    ledger.reserve(reserveInput("r3", 50_000));
    expect(ledger.reconcile()).toEqual({
      ok: true,
      postedMicros: 850_000,
      entriesSumMicros: 850_000,
      heldMicros: 50_000,
      openHoldsSumMicros: 50_000,
      problems: [],
    });
    store.setCounter("posted", 850_001);
    store.setCounter("held", 0);
    const report = ledger.reconcile();
    expect(report.ok).toBe(false);
    // The cached total disagrees with the entries, the open holds and the lots.
    expect(report.problems).toHaveLength(3);
    expect(report.problems[2]).toMatch(/^lots 850000 − debt 0 ≠ posted 850001$/);
  });
});

describe("spend limits", () => {
  it("refuses a reserve that would take the org past its monthly limit", () => {
    const { ledger } = setup({ orgMonthlyLimitMicros: 500_000 });
    ledger.reserve(reserveInput("r1", 200_000));
    ledger.settle(settleInput("r1", 150_000));
    ledger.reserve(reserveInput("r2", 300_000));
    // committed = 150_000 settled + 300_000 held
    expect(ledger.reserve(reserveInput("r3", 50_001))).toMatchObject({
      ok: false,
      reason: "spend_limit",
      limit: "org_monthly",
      limitMicros: 500_000,
      committedMicros: 450_000,
      requiredMicros: 50_001,
    });
    expect(ledger.reserve(reserveInput("r3", 50_000)).ok).toBe(true);
    expect(ledger.balance().heldMicros).toBe(350_000);
  });

  it("starts a new month in UTC with the held amounts still counted", () => {
    const endOfMonth = Date.UTC(2026, 10, 30, 23, 59, 0);
    const { ledger } = setup({ orgMonthlyLimitMicros: 100_000 });
    ledger.reserve(reserveInput("r1", 100_000, { now: endOfMonth }));
    ledger.settle(settleInput("r1", 100_000, { now: endOfMonth + 1_000 }));
    expect(ledger.reserve(reserveInput("r2", 1, { now: endOfMonth + 2_000 })).ok).toBe(false);
    const december = Date.UTC(2026, 11, 1, 0, 0, 0);
    expect(ledger.reserve(reserveInput("r2", 60_000, { now: december })).ok).toBe(true);
    expect(ledger.reserve(reserveInput("r3", 40_001, { now: december })).ok).toBe(false);
  });

  it("limits each member per UTC day, independently", () => {
    const { ledger } = setup({ memberDailyLimitMicros: 100_000 });
    expect(ledger.reserve(reserveInput("a1", 80_000, { memberId: "a" })).ok).toBe(true);
    expect(ledger.reserve(reserveInput("b1", 100_000, { memberId: "b" })).ok).toBe(true);
    expect(ledger.reserve(reserveInput("a2", 20_001, { memberId: "a" }))).toMatchObject({
      ok: false,
      reason: "spend_limit",
      limit: "member_daily",
      committedMicros: 80_000,
    });
    ledger.settle(settleInput("a1", 30_000));
    expect(ledger.reserve(reserveInput("a2", 70_000, { memberId: "a" })).ok).toBe(true);
    ledger.settle(settleInput("a2", 70_000));
    expect(ledger.reserve(reserveInput("a3", 1, { memberId: "a" })).ok).toBe(false);
    const tomorrow = Date.UTC(2026, 10, 30, 0, 0, 0);
    expect(ledger.reserve(reserveInput("a3", 100_000, { memberId: "a", now: tomorrow })).ok).toBe(
      true,
    );
  });

  it("limits an end user by their app's daily and monthly limits, not the member limit", () => {
    const { ledger } = setup({ memberDailyLimitMicros: 10 }, 10_000_000);
    const endUserLimits = { dailyMicros: 100_000, monthlyMicros: 150_000 };
    const eu = (id: string, amount: number, now = T0) =>
      ledger.reserve(reserveInput(id, amount, { memberId: "eu_1", now, endUserLimits }));
    // Far over the member limit (10): it does not apply to an end user.
    expect(eu("e1", 80_000).ok).toBe(true);
    expect(eu("e2", 20_001)).toMatchObject({
      ok: false,
      reason: "spend_limit",
      limit: "end_user_daily",
      limitMicros: 100_000,
      committedMicros: 80_000,
    });
    ledger.settle(settleInput("e1", 80_000));
    expect(eu("e2", 20_000).ok).toBe(true);
    ledger.settle(settleInput("e2", 20_000));
    // The next day the daily limit has room again; the month's does not (100,000 of 150,000).
    const tomorrow = Date.UTC(2026, 10, 30, 0, 0, 0);
    expect(eu("e3", 50_001, tomorrow)).toMatchObject({
      ok: false,
      limit: "end_user_monthly",
      committedMicros: 100_000,
    });
    expect(eu("e3", 50_000, tomorrow).ok).toBe(true);
    ledger.settle(settleInput("e3", 50_000, { now: tomorrow }));
    // A new month resets the monthly limit.
    expect(eu("e4", 100_000, Date.UTC(2026, 11, 1, 0, 0, 1)).ok).toBe(true);
    // Another end user is counted apart; no member alert fires for end users.
    const other = ledger.reserve(reserveInput("o1", 100_000, { memberId: "eu_2", endUserLimits }));
    expect(other.ok).toBe(true);
    expect(alertsIn(other).filter((alert) => alert.memberId !== null)).toEqual([]);
  });

  it("refuses end-user limits that are not non-negative integers", () => {
    const { ledger } = setup();
    expect(() =>
      ledger.reserve(
        reserveInput("x", 1, { endUserLimits: { dailyMicros: -1, monthlyMicros: null } }),
      ),
    ).toThrow(RangeError);
  });

  it("reports insufficient credits before a spend limit", () => {
    const { ledger } = setup({ orgMonthlyLimitMicros: 10 }, 5);
    const result = ledger.reserve(reserveInput("r1", 20));
    expect(result.ok === false && result.reason).toBe("insufficient_credits");
  });
});

describe("alerts", () => {
  it("fire at 50, 80 and 100% of the org limit once per month, and again next month", () => {
    const { ledger, store } = setup({ orgMonthlyLimitMicros: 1_000 }, 10_000);
    const alertsOf = (result: AnyResult) => alertsIn(result).map((a) => a.thresholdPct);
    expect(alertsOf(ledger.reserve(reserveInput("r1", 499)))).toEqual([]);
    expect(alertsOf(ledger.reserve(reserveInput("r2", 1)))).toEqual([50]);
    expect(alertsOf(ledger.reserve(reserveInput("r3", 300)))).toEqual([80]);
    ledger.release("r3", T0);
    expect(alertsOf(ledger.reserve(reserveInput("r4", 300)))).toEqual([]);
    // a settle above the hold pushes committed spend to the limit
    expect(alertsOf(ledger.settle(settleInput("r4", 500)))).toEqual([100]);
    // refused at the limit; its 100% alert has already fired this month
    const refused = ledger.reserve(reserveInput("r5", 1));
    expect(refused.ok === false && refused.reason).toBe("spend_limit");
    expect(alertsOf(refused)).toEqual([]);
    const december = Date.UTC(2026, 11, 1, 0, 0, 0);
    // one step over 50 and 80% fires the highest crossed only
    expect(alertsOf(ledger.reserve(reserveInput("r6", 400, { now: december })))).toEqual([80]);
    expect(store.allAlerts().map((a) => [a.kind, a.period, a.thresholdPct, a.levelMicros])).toEqual(
      [
        ["org_monthly_spend", "2026-11", 50, 500],
        ["org_monthly_spend", "2026-11", 80, 800],
        ["org_monthly_spend", "2026-11", 100, 1_000],
        // r1 and r2 are still held in December: 500 + 400
        ["org_monthly_spend", "2026-12", 80, 900],
      ],
    );
  });

  it("fire only the highest threshold one step crosses, and never a lower one after it", () => {
    const { ledger, store } = setup({ orgMonthlyLimitMicros: 1_000 }, 10_000);
    const alertsOf = (result: AnyResult) => alertsIn(result).map((a) => a.thresholdPct);
    // 0 -> 120%: past 50, 80 and 100 at once
    expect(alertsOf(ledger.reserve(reserveInput("r1", 1_200)))).toEqual([100]);
    ledger.release("r1", T0);
    // back under, then over 50% again: the 50% it skipped does not fire late
    expect(alertsOf(ledger.reserve(reserveInput("r2", 600)))).toEqual([]);
    expect(store.allAlerts().map((a) => a.thresholdPct)).toEqual([100]);
  });

  it("fire the 100% alert when a limit refuses a reserve, once", () => {
    const { ledger } = setup({ memberDailyLimitMicros: 1_000 });
    ledger.reserve(reserveInput("r1", 400));
    const refused = ledger.reserve(reserveInput("r2", 700));
    expect(refused.ok).toBe(false);
    expect(refused.ok === false && refused.reason === "spend_limit" && refused.alerts).toEqual([
      {
        key: "member_daily_spend|2026-11-29|m1|100|1000",
        kind: "member_daily_spend",
        memberId: "m1",
        period: "2026-11-29",
        thresholdPct: 100,
        limitMicros: 1_000,
        levelMicros: 400,
        firedAt: T0,
      },
    ]);
    const again = ledger.reserve(reserveInput("r3", 700));
    expect(again.ok === false && again.reason === "spend_limit" && again.alerts).toEqual([]);
    // another member has their own alerts
    const other = ledger.reserve(reserveInput("r4", 600, { memberId: "m2" }));
    expect(other.ok && other.alerts.map((a) => [a.memberId, a.thresholdPct])).toEqual([["m2", 50]]);
  });

  it("forecast from the last 7 days' billable spend, and fire a runway alert once per funding", () => {
    const { ledger } = setup({ runwayAlertDays: 5 }, 10_000_000);
    const kinds = (result: AnyResult) => alertsIn(result).map((a) => `${a.kind}@${a.period}`);
    expect(ledger.forecast(T0)).toMatchObject({ spentMicros: 0, daysLeft: null });
    // Eight days ago: outside the window, so it does not count.
    const old = T0 - 8 * 86_400_000;
    ledger.reserve(reserveInput("old", 700_000, { now: old }));
    ledger.settle(settleInput("old", 700_000, { now: old + 1_000 }));
    expect(ledger.forecast(T0).spentMicros).toBe(0);
    // $1.40 today: $0.20 a day, and $7.90 left lasts 39.5 days: no alert.
    expect(kinds(ledger.reserve(reserveInput("r1", 1_400_000)))).toEqual([]);
    expect(kinds(ledger.settle(settleInput("r1", 1_400_000)))).toEqual([]);
    expect(ledger.forecast(T0)).toMatchObject({ spentMicros: 1_400_000, dailyRateMicros: 200_000 });
    expect(ledger.forecast(T0).daysLeft).toBe(39.5);
    // A non-billable call (the free preview) is no spend.
    ledger.reserve(reserveInput("free", 1_000));
    ledger.settle(settleInput("free", 0, { billable: false, costMicros: 1_000 }));
    expect(ledger.forecast(T0).spentMicros).toBe(1_400_000);
    // $6.30 more: $1.10 a day, $1.60 left lasts 1.4 days, under 5: it fires, once.
    ledger.reserve(reserveInput("r2", 6_300_000));
    const crossed = ledger.settle(settleInput("r2", 6_300_000));
    expect(kinds(crossed)).toEqual(["low_runway@runway-5d-entry-1"]);
    expect(alertsIn(crossed)[0]).toMatchObject({ limitMicros: 5_500_000, levelMicros: 1_600_000 });
    ledger.reserve(reserveInput("r3", 1_000));
    expect(kinds(ledger.settle(settleInput("r3", 1_000)))).toEqual([]);
    // A top-up re-arms it; one that makes the balance last fires nothing.
    const topup = ledger.post({
      kind: "topup",
      amountMicros: 100_000_000,
      idempotencyKey: "t",
      now: T0,
    });
    expect(kinds(topup)).toEqual([]);
    expect(ledger.forecast(T0).daysLeft).toBeGreaterThan(5);
  });

  it("keep reserving when the forecast is centuries out: a quiet, well-funded org (found by the outside probe)", () => {
    const { ledger } = setup({ runwayAlertDays: 30 }, 2_005_000_000_000);
    ledger.reserve(reserveInput("tiny", 200));
    expect(ledger.settle(settleInput("tiny", 112)).ok).toBe(true);
    // Before the fix the alert check's date overflowed and every later reserve threw.
    const next = ledger.reserve(reserveInput("next", 200));
    expect(next.ok).toBe(true);
    expect(ledger.forecast(T0)).toMatchObject({ dailyRateMicros: 16, runsOutAt: null });
  });

  it("fire low balance once per funding", () => {
    const { ledger } = setup({ lowBalanceMicros: 200_000 });
    const kinds = (result: AnyResult) => alertsIn(result).map((a) => `${a.kind}@${a.period}`);
    expect(kinds(ledger.reserve(reserveInput("r1", 800_000)))).toEqual([]);
    expect(kinds(ledger.reserve(reserveInput("r2", 1)))).toEqual(["low_balance@entry-1"]);
    expect(kinds(ledger.reserve(reserveInput("r3", 1)))).toEqual([]);
    expect(kinds(ledger.settle(settleInput("r1", 900_000)))).toEqual([]);
    const topup = ledger.post({
      kind: "topup",
      amountMicros: 50_000,
      idempotencyKey: "t",
      now: T0,
    });
    // still low after the top-up: a new funding, so it fires again
    expect(kinds(topup)).toEqual(["low_balance@entry-3"]);
    ledger.post({ kind: "topup", amountMicros: 1_000_000, idempotencyKey: "t2", now: T0 });
    const refund = ledger.post({
      kind: "adjustment",
      amountMicros: -1_000_000,
      idempotencyKey: "rf",
      now: T0,
    });
    expect(kinds(refund)).toEqual(["low_balance@entry-4"]);
  });
});
