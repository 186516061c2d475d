import { describe, expect, it } from "vitest";
import {
  type AutoTopUpSettings,
  autoTopUpKey,
  checkAutoTopUpSettings,
  type SavedCard,
} from "./auto-top-up.ts";
import { AutoTopUpStore } from "./auto-top-up-store.ts";
import { CreditLedger } from "./ledger.ts";
import { MemoryLedgerStore } from "./memory-ledger-store.ts";
import { nodeSqliteExecutor } from "./node-sqlite-executor.test-support.ts";

const NOW = Date.UTC(2026, 11, 3, 12);
const NEXT_MONTH = Date.UTC(2027, 0, 1, 0, 0, 1);
const DOLLAR = 1_000_000;

const ON: AutoTopUpSettings = {
  enabled: true,
  thresholdMicros: 5 * DOLLAR,
  amountMicros: 20 * DOLLAR,
  monthlyCapMicros: 50 * DOLLAR,
};

const CARD: SavedCard = {
  customerId: "cus_1",
  paymentMethodId: "pm_1",
  brand: "visa",
  last4: "4242",
  expMonth: 12,
  expYear: 2029,
  savedAt: NOW,
};

function store(settings: AutoTopUpSettings = ON, card: SavedCard | null = CARD) {
  const topUp = new AutoTopUpStore(nodeSqliteExecutor());
  topUp.migrate();
  if (card) topUp.saveCard(card);
  topUp.configure(settings);
  return topUp;
}

const below = {
  availableMicros: 4 * DOLLAR,
  fundingSeq: 3,
  fundedBalanceMicros: 4 * DOLLAR,
  now: NOW,
};
/** After a credit that took the posted balance to $24 (above the $5 threshold). */
const credited = (fundingSeq: number) => ({
  ...below,
  fundingSeq,
  fundedBalanceMicros: 24 * DOLLAR,
});
const begun = (topUp: AutoTopUpStore, input = below) => {
  const due = topUp.due(input);
  if (due === null) throw new Error("not due");
  expect(topUp.begin(due, NOW)).toBe(true);
  return due.key;
};

describe("AutoTopUpStore", () => {
  it("is due once per crossing: below the threshold, with a card, not while a charge is in flight", () => {
    const topUp = store();
    expect(topUp.due({ ...below, availableMicros: 5 * DOLLAR })).toBeNull();
    const due = topUp.due(below);
    expect(due).toMatchObject({ key: autoTopUpKey(1), amountMicros: 20 * DOLLAR });
    expect(topUp.begin(due as NonNullable<typeof due>, NOW)).toBe(true);
    // The same crossing again (another turn racing past the threshold): nothing more.
    expect(topUp.begin(due as NonNullable<typeof due>, NOW)).toBe(false);
    expect(topUp.due(below)).toBeNull();
    expect(topUp.due(credited(4))).toBeNull();
    expect(topUp.inFlight().map((charge) => charge.key)).toEqual(["auto-topup-1"]);
  });

  it("starts no new crossing while the balance stays below, and the next once it was above again", () => {
    const topUp = store();
    const first = begun(topUp);
    topUp.succeeded(first, "pi_1", NOW);
    // Its credit left the posted balance below the threshold: no new crossing, however often asked.
    const stillBelow = { ...below, fundingSeq: 4, fundedBalanceMicros: 4.5 * DOLLAR };
    expect(topUp.due(stillBelow)).toBeNull();
    topUp.configure(ON);
    topUp.saveCard({ ...CARD, savedAt: NOW + 1 });
    expect(topUp.due(stillBelow)).toBeNull();
    // A credit that took it above, then a spend below: the next crossing.
    expect(topUp.due(credited(5))).toMatchObject({ key: "auto-topup-2" });
    // Or a check that saw it above: that arms the next crossing too.
    const other = store();
    other.succeeded(begun(other), "pi_1", NOW);
    expect(other.due(stillBelow)).toBeNull();
    expect(other.due({ ...stillBelow, availableMicros: 6 * DOLLAR })).toBeNull();
    expect(other.due(stillBelow)).toMatchObject({ key: "auto-topup-2" });
  });

  it("is never due when off, without a card, or when the month's cap has no room left", () => {
    expect(store({ ...ON, enabled: false }).due(below)).toBeNull();
    expect(store(ON, null).due(below)).toBeNull();
    const topUp = store();
    topUp.succeeded(begun(topUp), "pi_1", NOW);
    topUp.succeeded(begun(topUp, credited(4)), "pi_2", NOW);
    // 40 of 50 charged: another 20 would pass the cap.
    expect(topUp.monthCharged(NOW)).toBe(40 * DOLLAR);
    expect(topUp.due(credited(5))).toBeNull();
    // A new month has room again.
    expect(topUp.due({ ...credited(5), now: NEXT_MONTH })).not.toBeNull();
  });

  it("pauses after a failed charge until the card is saved again or the settings are saved on", () => {
    const topUp = store();
    const key = begun(topUp);
    expect(topUp.failed(key, "card_declined", "pi_1", NOW)).toBe(true);
    expect(topUp.failed(key, "card_declined", "pi_1", NOW)).toBe(false);
    expect(topUp.paused()).toEqual({ code: "card_declined", chargeKey: "auto-topup-1", at: NOW });
    // A failed charge does not count against the cap, and nothing is due while paused.
    expect(topUp.monthCharged(NOW)).toBe(0);
    expect(topUp.due(credited(4))).toBeNull();
    // Saving it on is the admin asking again: the crossing (no money moved) is owed once more.
    topUp.configure({ ...ON, amountMicros: 10 * DOLLAR });
    expect(topUp.paused()).toBeNull();
    expect(topUp.due(below)).toMatchObject({ key: "auto-topup-2", amountMicros: 10 * DOLLAR });
    const declined = store();
    declined.failed(begun(declined), "card_declined", null, NOW);
    declined.saveCard({ ...CARD, paymentMethodId: "pm_2", last4: "4444", savedAt: NOW + 1 });
    expect(declined.paused()).toBeNull();
    expect(declined.due(below)).toMatchObject({ key: "auto-topup-2" });
  });

  it("a paid charge never turns failed; a charge whose card was removed is dropped quietly", () => {
    const topUp = store();
    const key = begun(topUp);
    topUp.succeeded(key, "pi_1", NOW);
    expect(topUp.failed(key, "card_declined", "pi_1", NOW)).toBe(false);
    expect(topUp.charge(key)?.status).toBe("succeeded");
    const next = begun(topUp, credited(4));
    topUp.cancel(next, NOW);
    expect(topUp.charge(next)).toMatchObject({ status: "failed", failureCode: "card_removed" });
    expect(topUp.paused()).toBeNull();
  });

  it("knows its own PaymentIntents: a key in another intent's metadata proves nothing", () => {
    const topUp = store();
    // A key no charge has (the probe's forged `autoTopUp` metadata), or before any charge.
    expect(topUp.intentOwnership("auto-topup-1", "pi_forged")).toBe("not_ours");
    const key = begun(topUp);
    // Asked of Stripe, no answer yet: the webhook may come first; it is asked to come back.
    expect(topUp.intentOwnership(key, "pi_1")).toBe("pending");
    topUp.noteIntent(key, "pi_1", NOW);
    expect(topUp.intentOwnership(key, "pi_1")).toBe("ours");
    expect(topUp.intentOwnership(key, "pi_forged")).toBe("not_ours");
    topUp.succeeded(key, "pi_1", NOW);
    expect(topUp.intentOwnership(key, "pi_1")).toBe("ours");
    // A charge dropped before Stripe was asked has no intent: nothing can be it.
    const dropped = begun(topUp, credited(4));
    topUp.cancel(dropped, NOW);
    expect(topUp.intentOwnership(dropped, "pi_2")).toBe("not_ours");
  });

  it("keeps the newest card when an older card's webhook arrives late", () => {
    const topUp = store();
    expect(topUp.saveCard({ ...CARD, paymentMethodId: "pm_new", savedAt: NOW + 1000 })).toBe(true);
    expect(topUp.saveCard({ ...CARD, paymentMethodId: "pm_old", savedAt: NOW })).toBe(false);
    expect(topUp.card()?.paymentMethodId).toBe("pm_new");
  });

  it("forgets the card and stops when the card is removed", () => {
    const topUp = store();
    topUp.removeCard();
    expect(topUp.card()).toBeNull();
    expect(topUp.settings().enabled).toBe(false);
    expect(topUp.state(NOW)).toMatchObject({ card: null, paused: null, monthChargedMicros: 0 });
  });

  it("refuses enabled settings whose amounts are not positive or whose cap is below the amount", () => {
    expect(() => checkAutoTopUpSettings({ ...ON, thresholdMicros: 0 })).toThrow(/thresholdMicros/);
    expect(() => checkAutoTopUpSettings({ ...ON, amountMicros: 1.5 })).toThrow(/amountMicros/);
    expect(() => checkAutoTopUpSettings({ ...ON, amountMicros: 20_005_000 })).toThrow(/cents/);
    expect(() => checkAutoTopUpSettings({ ...ON, monthlyCapMicros: 10 * DOLLAR })).toThrow(
      /monthlyCapMicros/,
    );
    expect(() => checkAutoTopUpSettings({ ...ON, enabled: false, amountMicros: 0 })).not.toThrow();
    expect(() => store().configure({ ...ON, amountMicros: -1 })).toThrow(RangeError);
  });
});

describe("CreditLedger.fundingSeq", () => {
  it("names the latest credit, so a crossing after a top-up is a new one", () => {
    const ledger = new CreditLedger(new MemoryLedgerStore());
    expect(ledger.fundingSeq()).toBe(0);
    ledger.post({ kind: "grant", amountMicros: DOLLAR, idempotencyKey: "g", now: NOW });
    const first = ledger.fundingSeq();
    expect(first).toBeGreaterThan(0);
    ledger.reserve({
      requestId: "r1",
      amountMicros: DOLLAR / 2,
      memberId: "mem_1",
      projectId: null,
      sessionId: null,
      now: NOW,
      ttlMs: 60_000,
    });
    expect(ledger.fundingSeq()).toBe(first);
    ledger.post({ kind: "topup", amountMicros: DOLLAR, idempotencyKey: "t", now: NOW });
    expect(ledger.fundingSeq()).toBeGreaterThan(first);
  });
});

describe("AutoTopUpStore: asking Stripe", () => {
  it("asks at once, then after a doubling backoff while Stripe gives no answer", () => {
    const topUp = store();
    const key = autoTopUpKey(3);
    topUp.begin({ key, amountMicros: 20 * DOLLAR }, NOW);
    expect(topUp.nextAttemptAt()).toBe(NOW);
    expect(topUp.dueAttempts(NOW).map((charge) => charge.key)).toEqual([key]);
    topUp.noteAttempt(key, NOW);
    expect(topUp.nextAttemptAt()).toBe(NOW + 60_000);
    expect(topUp.dueAttempts(NOW + 59_999)).toEqual([]);
    topUp.noteAttempt(key, NOW + 60_000);
    expect(topUp.nextAttemptAt()).toBe(NOW + 180_000);
    // Answered: it waits for the webhook, not for another request.
    topUp.noteIntent(key, "pi_1", NOW + 60_000);
    expect(topUp.nextAttemptAt()).toBeNull();
    expect(topUp.dueAttempts(NOW + 3_600_000)).toEqual([]);
  });
});
