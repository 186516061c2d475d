import { describe, expect, it } from "vitest";
import { reversalAccount } from "./reversals.test-support.ts";
import type { ReversalReport } from "./reversals.ts";
import { reversalReference } from "./reversals.ts";
import { reversalReport, type StripeReversalAction } from "./stripe-actions.ts";
import { mapStripeEvent } from "./stripe-events.ts";

const NOW = Date.UTC(2026, 11, 6, 12);
const DOLLAR = 1_000_000;

const refund = (micros: number, paid = 5 * DOLLAR): ReversalReport => ({
  paymentRef: "pi_1",
  paidMicros: paid,
  kind: "refund",
  sourceId: "ch_1",
  chargeId: null,
  amountMicros: micros,
});
const dispute = (micros: number, paid = 5 * DOLLAR): ReversalReport => ({
  paymentRef: "pi_1",
  paidMicros: paid,
  kind: "dispute",
  sourceId: "dp_1",
  chargeId: "ch_1",
  amountMicros: micros,
});
const reinstated = (micros: number, paid = 5 * DOLLAR): ReversalReport => ({
  ...dispute(micros, paid),
  kind: "dispute_reinstated",
});

describe("ReversalStore: a payment's reversals take at most what it paid", () => {
  it("the probe: $5 paid, refunded in full, then disputed for $5 takes $5, not $10; the excess is kept", () => {
    const a = reversalAccount();
    a.pay("pi_1", 5 * DOLLAR);
    a.report(refund(5 * DOLLAR));
    const { reversals } = a.report(dispute(5 * DOLLAR));
    expect(a.ledger.balance().postedMicros).toBe(0);
    expect(reversals).toEqual({
      paymentRef: "pi_1",
      paidMicros: 5 * DOLLAR,
      refundedMicros: 5 * DOLLAR,
      disputedMicros: 5 * DOLLAR,
      reversedMicros: 5 * DOLLAR,
      excessMicros: 5 * DOLLAR,
      // The refund (a fact and an entry), then the dispute (a fact, no entry).
      version: 2,
    });
    // Won: the dispute took nothing from credits, so its reinstatement gives nothing back.
    const won = a.report(reinstated(5 * DOLLAR));
    expect(won.result).toMatchObject({ ok: true, entry: null });
    expect(won.reversals).toMatchObject({ reversedMicros: 5 * DOLLAR, excessMicros: 0 });
    expect(a.ledger.balance().postedMicros).toBe(0);
    expect(a.ledger.reconcile().ok).toBe(true);
  });

  it("a won dispute gives back what it took, once; replays and the second withdrawal event post nothing", () => {
    const a = reversalAccount();
    a.pay("pi_1", 25 * DOLLAR);
    const first = a.report(dispute(10 * DOLLAR, 25 * DOLLAR));
    expect(first.result).toMatchObject({ ok: true, entry: { amountMicros: -10 * DOLLAR } });
    // created and funds_withdrawn both report the withdrawal.
    expect(a.report(dispute(10 * DOLLAR, 25 * DOLLAR)).result).toMatchObject({ entry: null });
    expect(a.ledger.balance().postedMicros).toBe(15 * DOLLAR);
    const back = a.report(reinstated(10 * DOLLAR, 25 * DOLLAR));
    expect(back.result).toMatchObject({
      entry: { amountMicros: 10 * DOLLAR, memo: "Stripe dispute reinstated" },
    });
    expect(a.report(reinstated(10 * DOLLAR, 25 * DOLLAR)).result).toMatchObject({ entry: null });
    expect(a.ledger.balance().postedMicros).toBe(25 * DOLLAR);
    expect(a.ledger.entries().map((e) => [e.amountMicros, e.idempotencyKey])).toEqual([
      [25 * DOLLAR, "stripe:payment-intent:pi_1"],
      [-10 * DOLLAR, "stripe:reversals:pi_1#1"],
      [10 * DOLLAR, "stripe:reversals:pi_1#2"],
    ]);
  });

  it("a partial refund and a dispute of the whole charge take the payment once; winning gives back only the dispute's share", () => {
    const a = reversalAccount();
    a.pay("pi_1", 25 * DOLLAR);
    a.report(refund(10 * DOLLAR, 25 * DOLLAR));
    const disputed = a.report(dispute(25 * DOLLAR, 25 * DOLLAR));
    expect(disputed.reversals).toMatchObject({
      reversedMicros: 25 * DOLLAR,
      excessMicros: 10 * DOLLAR,
    });
    expect(a.ledger.balance().postedMicros).toBe(0);
    const won = a.report(reinstated(25 * DOLLAR, 25 * DOLLAR));
    expect(won.result).toMatchObject({ entry: { amountMicros: 15 * DOLLAR } });
    expect(won.reversals).toMatchObject({ reversedMicros: 10 * DOLLAR, excessMicros: 0 });
  });

  it("an older, smaller refund total arriving late takes nothing back", () => {
    const a = reversalAccount();
    a.pay("pi_1", 5 * DOLLAR);
    a.report(refund(4 * DOLLAR));
    expect(a.report(refund(1 * DOLLAR)).result).toMatchObject({ entry: null });
    expect(a.ledger.balance().postedMicros).toBe(1 * DOLLAR);
  });

  it("counts refunds and disputes posted before the cap existed, so an upgrade never takes twice", () => {
    const a = reversalAccount();
    a.pay("pi_1", 5 * DOLLAR);
    // What the earlier version posted for a full refund, under its own reference.
    a.ledger.postCumulative({
      kind: "adjustment",
      reference: "stripe:refunds:ch_1",
      totalMicros: -5 * DOLLAR,
      now: NOW,
      fundingRef: "pi_1",
    });
    const { reversals } = a.report(dispute(5 * DOLLAR));
    expect(a.ledger.balance().postedMicros).toBe(0);
    expect(reversals).toMatchObject({
      refundedMicros: 5 * DOLLAR,
      reversedMicros: 5 * DOLLAR,
      excessMicros: 5 * DOLLAR,
    });
  });

  it("gives back what an earlier version took beyond the payment, on the payment's next report", () => {
    const a = reversalAccount();
    a.pay("pi_1", 5 * DOLLAR);
    for (const reference of ["stripe:refunds:ch_1", "stripe:dispute:dp_1"]) {
      a.ledger.postCumulative({
        kind: "adjustment",
        reference,
        totalMicros: -5 * DOLLAR,
        now: NOW,
        fundingRef: "pi_1",
      });
    }
    expect(a.ledger.balance().postedMicros).toBe(-5 * DOLLAR);
    const { result } = a.report(dispute(5 * DOLLAR));
    expect(result).toMatchObject({
      entry: { amountMicros: 5 * DOLLAR, memo: "Stripe reversals capped at what the payment paid" },
    });
    expect(a.ledger.balance().postedMicros).toBe(0);
  });

  it("takes from the payment's own top-up first, and into debt when the credits were spent", () => {
    const a = reversalAccount();
    a.ledger.post({
      kind: "grant",
      amountMicros: 3 * DOLLAR,
      idempotencyKey: "promo",
      now: NOW,
      grant: { source: "promotion" },
    });
    a.pay("pi_1", 5 * DOLLAR);
    a.report(dispute(2 * DOLLAR));
    const lots = a.ledger.grants(NOW);
    expect(lots.map((lot) => [lot.source, lot.remainingMicros])).toEqual([
      ["promotion", 3 * DOLLAR],
      ["top_up", 3 * DOLLAR],
    ]);
    a.ledger.reserve({
      requestId: "r1",
      amountMicros: 6 * DOLLAR,
      memberId: "m1",
      projectId: null,
      sessionId: null,
      now: NOW,
      ttlMs: 60_000,
    });
    a.report(refund(5 * DOLLAR));
    expect(a.ledger.balance()).toEqual({
      postedMicros: 3 * DOLLAR,
      heldMicros: 6 * DOLLAR,
      availableMicros: -3 * DOLLAR,
    });
    expect(a.ledger.reconcile().ok).toBe(true);
  });

  it("keeps payments apart, and refuses a negative amount", () => {
    const a = reversalAccount();
    a.pay("pi_1", 5 * DOLLAR);
    a.pay("pi_2", 7 * DOLLAR);
    a.report(refund(5 * DOLLAR));
    a.report({ ...refund(7 * DOLLAR, 7 * DOLLAR), paymentRef: "pi_2", sourceId: "ch_2" });
    expect(a.ledger.balance().postedMicros).toBe(0);
    expect(a.store.sumEntriesByReference(reversalReference("pi_2"))).toBe(-7 * DOLLAR);
    expect(() => a.report(refund(-1))).toThrow(RangeError);
    expect(a.reversals.get(a.store, "pi_none")).toBeNull();
  });
});

describe("reversalReport", () => {
  it("turns mapped refund and dispute events into reports about the payment", () => {
    const refunded = mapStripeEvent({
      id: "evt_1",
      type: "charge.refunded",
      data: {
        object: {
          object: "charge",
          id: "ch_1",
          amount: 500,
          amount_refunded: 500,
          currency: "usd",
          payment_intent: "pi_1",
        },
      },
    }) as StripeReversalAction & { paymentIntentId: string };
    expect(reversalReport(refunded, 5 * DOLLAR)).toEqual(refund(5 * DOLLAR));
    const won = mapStripeEvent({
      id: "evt_2",
      type: "charge.dispute.funds_reinstated",
      data: {
        object: {
          object: "dispute",
          id: "dp_1",
          amount: 500,
          currency: "usd",
          charge: "ch_1",
          payment_intent: "pi_1",
          status: "won",
        },
      },
    }) as StripeReversalAction & { paymentIntentId: string };
    expect(reversalReport(won, 5 * DOLLAR)).toEqual(reinstated(5 * DOLLAR));
  });
});
