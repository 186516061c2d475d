import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { reversalAccount } from "./reversals.test-support.ts";
import type { ReversalReport } from "./reversals.ts";

/**
 * Stripe's reports about payments (their top-up, each charge's growing refund total, each
 * dispute's withdrawal reported twice and maybe its reinstatement), delivered in any order, any
 * number of times: every delivery leaves each payment's reversals between 0 and what it paid, and
 * the last leaves the same state as delivering them once, in order.
 */

type Report = { kind: "paid"; paymentRef: string; paidMicros: number } | ReversalReport;

interface History {
  reports: Report[];
  /** What each payment's reversals must take in the end (the module's rule, written again). */
  expected: Map<string, { paid: number; taken: number; excess: number }>;
}

const paymentArb = (index: number): fc.Arbitrary<History> =>
  fc.integer({ min: 1, max: 1_000 }).chain((paid) =>
    fc
      .record({
        charges: fc.array(
          fc.array(fc.integer({ min: 0, max: paid }), { minLength: 1, maxLength: 3 }),
          { maxLength: 2 },
        ),
        disputes: fc.array(
          fc.record({
            amount: fc.integer({ min: 1, max: paid }),
            reinstated: fc.boolean(),
          }),
          { maxLength: 2 },
        ),
      })
      .map(({ charges, disputes }) => {
        const paymentRef = `pi_${index}`;
        const reports: Report[] = [{ kind: "paid", paymentRef, paidMicros: paid }];
        let refunded = 0;
        charges.forEach((totals, c) => {
          // A running total only grows at Stripe: each event carries the total so far.
          const running = [...totals].sort((x, y) => x - y);
          for (const total of running) {
            reports.push({
              paymentRef,
              paidMicros: paid,
              kind: "refund",
              sourceId: `ch_${index}_${c}`,
              chargeId: null,
              amountMicros: total,
            });
          }
          refunded += running.at(-1) ?? 0;
        });
        let disputed = 0;
        disputes.forEach((d, n) => {
          const base = {
            paymentRef,
            paidMicros: paid,
            sourceId: `dp_${index}_${n}`,
            chargeId: `ch_${index}_0`,
            amountMicros: d.amount,
          };
          // created and funds_withdrawn both report the withdrawal.
          reports.push({ ...base, kind: "dispute" }, { ...base, kind: "dispute" });
          if (d.reinstated) reports.push({ ...base, kind: "dispute_reinstated" });
          else disputed += d.amount;
        });
        const taken = Math.min(paid, refunded + disputed);
        return {
          reports,
          expected: new Map([[paymentRef, { paid, taken, excess: refunded + disputed - taken }]]),
        };
      }),
  );

const historyArb: fc.Arbitrary<History> = fc.tuple(paymentArb(1), paymentArb(2)).map(([a, b]) => ({
  reports: [...a.reports, ...b.reports],
  expected: new Map([...a.expected, ...b.expected]),
}));

/** Every report at least once, in a shuffled order, some of them again. */
const deliveryArb = (history: History): fc.Arbitrary<Report[]> =>
  fc
    .tuple(
      fc.shuffledSubarray(history.reports, {
        minLength: history.reports.length,
        maxLength: history.reports.length,
      }),
      fc.array(fc.tuple(fc.nat(history.reports.length - 1), fc.nat(history.reports.length * 2)), {
        maxLength: 8,
      }),
    )
    .map(([order, repeats]) => {
      const out = [...order];
      for (const [which, at] of repeats) {
        const report = history.reports[which];
        if (report !== undefined) out.splice(Math.min(at, out.length), 0, report);
      }
      return out;
    });

function deliver(reports: readonly Report[], expected: History["expected"]) {
  const a = reversalAccount();
  for (const report of reports) {
    if (report.kind === "paid") a.pay(report.paymentRef, report.paidMicros);
    else a.report(report);
    expect(a.ledger.reconcile().problems).toEqual([]);
    for (const [paymentRef, { paid }] of expected) {
      const state = a.reversals.get(a.store, paymentRef);
      if (state === null) continue;
      // Never more than the payment paid, never a credit beyond what was taken.
      expect(state.reversedMicros).toBeGreaterThanOrEqual(0);
      expect(state.reversedMicros).toBeLessThanOrEqual(paid);
    }
  }
  return {
    balance: a.ledger.balance().postedMicros,
    payments: [...expected.keys()].map((paymentRef) => {
      const state = a.reversals.get(a.store, paymentRef);
      return state === null ? null : { ...state, version: undefined };
    }),
  };
}

describe("ReversalStore properties", () => {
  it("any order, any replays: at most what each payment paid, and the same end as once in order", () => {
    fc.assert(
      fc.property(
        historyArb.chain((history) => fc.tuple(fc.constant(history), deliveryArb(history))),
        ([history, delivery]) => {
          const once = deliver(history.reports, history.expected);
          const shuffled = deliver(delivery, history.expected);
          expect(shuffled).toEqual(once);
          let paid = 0;
          let taken = 0;
          for (const [paymentRef, want] of history.expected) {
            paid += want.paid;
            taken += want.taken;
            const state = once.payments.find((p) => p?.paymentRef === paymentRef);
            if (state) {
              expect(state.reversedMicros).toBe(want.taken);
              expect(state.excessMicros).toBe(want.excess);
            } else expect(want.taken).toBe(0);
          }
          expect(once.balance).toBe(paid - taken);
        },
      ),
      { numRuns: 200 },
    );
  });
});
