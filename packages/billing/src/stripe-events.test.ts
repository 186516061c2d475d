import { describe, expect, it } from "vitest";
import { CreditLedger } from "./ledger.ts";
import { MemoryLedgerStore } from "./memory-ledger-store.ts";
import {
  applyStripeAction,
  isStripeCreditAction,
  isStripeLedgerAction,
  type StripeEventMapping,
} from "./stripe-actions.ts";
import { mapStripeEvent, type StripeEvent } from "./stripe-events.ts";

const NOW = Date.UTC(2026, 10, 29, 12, 0, 0);

let eventCounter = 0;
function event(type: string, object: Record<string, unknown>): StripeEvent {
  eventCounter += 1;
  return { id: `evt_${eventCounter}`, type, data: { object } };
}

function checkoutSession(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: "cs_test_1",
    object: "checkout.session",
    mode: "payment",
    payment_status: "paid",
    status: "complete",
    amount_total: 2_500,
    currency: "usd",
    client_reference_id: "org_1",
    metadata: { orgId: "org_1" },
    payment_intent: "pi_1",
    ...over,
  };
}

function charge(amountRefunded: number, over: Record<string, unknown> = {}) {
  return {
    id: "ch_1",
    object: "charge",
    amount: 2_500,
    amount_refunded: amountRefunded,
    currency: "usd",
    payment_intent: "pi_1",
    metadata: { orgId: "org_1" },
    refunded: amountRefunded === 2_500,
    ...over,
  };
}

function dispute(over: Record<string, unknown> = {}) {
  return {
    id: "dp_1",
    object: "dispute",
    amount: 1_000,
    currency: "usd",
    charge: "ch_1",
    payment_intent: "pi_1",
    status: "needs_response",
    metadata: {},
    ...over,
  };
}

function ledgerWith() {
  return new CreditLedger(new MemoryLedgerStore());
}

function apply(ledger: CreditLedger, mapping: StripeEventMapping) {
  if (!isStripeCreditAction(mapping)) return null;
  return applyStripeAction(ledger, mapping, NOW);
}

describe("mapStripeEvent: checkout", () => {
  it("maps a paid completed session to a top-up keyed by the session", () => {
    const e = event("checkout.session.completed", checkoutSession());
    expect(mapStripeEvent(e)).toEqual({
      type: "topup",
      eventId: e.id,
      claimedOrgId: "org_1",
      checkoutSessionId: "cs_test_1",
      paymentIntentId: "pi_1",
      amountMicros: 25_000_000,
      idempotencyKey: "stripe:checkout:cs_test_1",
    });
  });

  it("waits on an unpaid completed session, and credits its async success", () => {
    const unpaid = event(
      "checkout.session.completed",
      checkoutSession({ payment_status: "unpaid" }),
    );
    expect(mapStripeEvent(unpaid)).toMatchObject({
      type: "ignore",
      reason: "payment_not_completed",
    });
    const succeeded = event("checkout.session.async_payment_succeeded", checkoutSession());
    expect(mapStripeEvent(succeeded)).toMatchObject({
      type: "topup",
      amountMicros: 25_000_000,
      idempotencyKey: "stripe:checkout:cs_test_1",
    });
    const failed = event("checkout.session.async_payment_failed", checkoutSession());
    expect(mapStripeEvent(failed)).toMatchObject({
      type: "ignore",
      reason: "unhandled_event_type",
    });
  });

  it("passes on the org a session names only as a claim, and maps a session naming none", () => {
    // A Payment Link takes client_reference_id from its URL: whoever opens it writes this.
    const onlyMetadata = checkoutSession({ client_reference_id: null });
    expect(mapStripeEvent(event("checkout.session.completed", onlyMetadata))).toMatchObject({
      type: "topup",
      claimedOrgId: "org_1",
    });
    const neither = checkoutSession({ client_reference_id: null, metadata: {} });
    expect(mapStripeEvent(event("checkout.session.completed", neither))).toMatchObject({
      type: "topup",
      claimedOrgId: null,
    });
    const both = checkoutSession({ metadata: { orgId: "org_2" } });
    expect(mapStripeEvent(event("checkout.session.completed", both))).toMatchObject({
      type: "topup",
      claimedOrgId: "org_1",
    });
    expect(mapStripeEvent(event("checkout.session.completed", both))).not.toHaveProperty("orgId");
  });

  it("refuses other currencies and malformed amounts, ignores non-payment sessions", () => {
    expect(
      mapStripeEvent(event("checkout.session.completed", checkoutSession({ currency: "eur" }))),
    ).toMatchObject({ type: "reject", reason: "unsupported_currency" });
    expect(
      mapStripeEvent(event("checkout.session.completed", checkoutSession({ amount_total: 12.5 }))),
    ).toMatchObject({ type: "reject", reason: "malformed" });
    expect(
      mapStripeEvent(event("checkout.session.completed", checkoutSession({ amount_total: null }))),
    ).toMatchObject({ type: "reject", reason: "malformed" });
    expect(
      mapStripeEvent(event("checkout.session.completed", { object: "charge", id: "ch_1" })),
    ).toMatchObject({ type: "reject", reason: "malformed" });
    expect(
      mapStripeEvent(
        event("checkout.session.completed", checkoutSession({ mode: "subscription" })),
      ),
    ).toMatchObject({ type: "ignore", reason: "not_a_payment_session" });
    expect(
      mapStripeEvent(
        event(
          "checkout.session.completed",
          checkoutSession({ payment_status: "no_payment_required", amount_total: 0 }),
        ),
      ),
    ).toMatchObject({ type: "ignore", reason: "no_payment_required" });
    expect(mapStripeEvent(event("customer.created", { object: "customer" }))).toMatchObject({
      type: "ignore",
      reason: "unhandled_event_type",
    });
  });
});

describe("applying checkout events", () => {
  it("credits one payment once whatever the duplicates and their order", () => {
    const orders: string[][] = [
      ["completed", "completed", "async"],
      ["async", "completed"],
      ["unpaid", "async", "async", "completed"],
    ];
    for (const order of orders) {
      const ledger = ledgerWith();
      for (const step of order) {
        const e =
          step === "async"
            ? event("checkout.session.async_payment_succeeded", checkoutSession())
            : event(
                "checkout.session.completed",
                checkoutSession(step === "unpaid" ? { payment_status: "unpaid" } : {}),
              );
        const result = apply(ledger, mapStripeEvent(e));
        if (result !== null) expect(result.ok).toBe(true);
      }
      expect(ledger.balance().postedMicros).toBe(25_000_000);
      expect(ledger.entries()).toHaveLength(1);
      expect(ledger.entries()[0]).toMatchObject({
        kind: "topup",
        amountMicros: 25_000_000,
        idempotencyKey: "stripe:checkout:cs_test_1",
        reference: "cs_test_1",
      });
    }
  });

  it("credits two sessions separately", () => {
    const ledger = ledgerWith();
    apply(ledger, mapStripeEvent(event("checkout.session.completed", checkoutSession())));
    apply(
      ledger,
      mapStripeEvent(
        event("checkout.session.completed", checkoutSession({ id: "cs_test_2", amount_total: 1 })),
      ),
    );
    expect(ledger.balance().postedMicros).toBe(25_010_000);
  });
});

describe("mapStripeEvent: refunds and disputes", () => {
  it("maps a charge's running total refunded, never reading the org it names", () => {
    const e = event("charge.refunded", charge(1_000));
    expect(mapStripeEvent(e)).toEqual({
      type: "refund",
      eventId: e.id,
      chargeId: "ch_1",
      paymentIntentId: "pi_1",
      refundedMicros: 10_000_000,
    });
    expect(
      mapStripeEvent(event("charge.refunded", charge(1_000, { payment_intent: null }))),
    ).toMatchObject({ type: "refund", paymentIntentId: null });
  });

  it("maps a dispute's withdrawal from created or funds_withdrawn, and its reinstatement", () => {
    for (const type of ["charge.dispute.created", "charge.dispute.funds_withdrawn"]) {
      const e = event(type, dispute({ metadata: { orgId: "org_9" } }));
      expect(mapStripeEvent(e)).toEqual({
        type: "dispute",
        eventId: e.id,
        disputeId: "dp_1",
        chargeId: "ch_1",
        paymentIntentId: "pi_1",
        amountMicros: 10_000_000,
      });
    }
    expect(
      mapStripeEvent(event("charge.dispute.funds_reinstated", dispute({ status: "won" }))),
    ).toMatchObject({ type: "dispute_reinstated", disputeId: "dp_1", amountMicros: 10_000_000 });
    for (const type of ["charge.dispute.closed", "charge.dispute.updated"]) {
      expect(mapStripeEvent(event(type, dispute({ status: "lost" })))).toMatchObject({
        type: "ignore",
        reason: "unhandled_event_type",
      });
    }
  });

  it("accepts an expanded charge and ignores inquiries", () => {
    expect(
      mapStripeEvent(event("charge.dispute.created", dispute({ charge: { id: "ch_9" } }))),
    ).toMatchObject({ type: "dispute", chargeId: "ch_9" });
    expect(
      mapStripeEvent(
        event("charge.dispute.created", dispute({ status: "warning_needs_response" })),
      ),
    ).toMatchObject({ type: "ignore", reason: "dispute_inquiry" });
  });

  it("refuses a non-USD refund or dispute", () => {
    expect(
      mapStripeEvent(event("charge.refunded", charge(100, { currency: "gbp" }))),
    ).toMatchObject({ type: "reject", reason: "unsupported_currency" });
    expect(
      mapStripeEvent(event("charge.dispute.created", dispute({ currency: "eur" }))),
    ).toMatchObject({ type: "reject", reason: "unsupported_currency" });
  });
});

function offSessionIntent(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    object: "payment_intent",
    id: "pi_auto_1",
    amount: 2000,
    amount_received: 2000,
    currency: "usd",
    status: "succeeded",
    metadata: { orgId: "org_1", autoTopUp: "auto-topup-7" },
    last_payment_error: null,
    ...over,
  };
}

describe("mapStripeEvent: automatic top-up", () => {
  it("credits a paid automatic top-up once, by its PaymentIntent, from what Stripe received", () => {
    const e = event("payment_intent.succeeded", offSessionIntent({ amount_received: 1500 }));
    const mapping = mapStripeEvent(e);
    expect(mapping).toEqual({
      type: "auto_topup",
      eventId: e.id,
      claimedOrgId: "org_1",
      chargeKey: "auto-topup-7",
      paymentIntentId: "pi_auto_1",
      amountMicros: 15_000_000,
      idempotencyKey: "stripe:payment-intent:pi_auto_1",
    });
    const ledger = ledgerWith();
    expect(apply(ledger, mapping)).toMatchObject({ ok: true, replayed: false });
    // The same payment redelivered under another event id credits nothing more.
    const again = event("payment_intent.succeeded", offSessionIntent({ amount_received: 1500 }));
    expect(apply(ledger, mapStripeEvent(again))).toMatchObject({ ok: true, replayed: true });
    expect(ledger.balance().postedMicros).toBe(15_000_000);
  });

  it("ignores a Checkout payment's PaymentIntent: its session credits it", () => {
    const intent = offSessionIntent({ metadata: { orgId: "org_1" } });
    expect(mapStripeEvent(event("payment_intent.succeeded", intent))).toMatchObject({
      type: "ignore",
      reason: "not_an_auto_top_up",
    });
    expect(mapStripeEvent(event("payment_intent.payment_failed", intent))).toMatchObject({
      type: "ignore",
      reason: "not_an_auto_top_up",
    });
  });

  it("maps a failed automatic top-up to its charge and Stripe's code, moving no money", () => {
    const failed = offSessionIntent({
      status: "requires_payment_method",
      amount_received: 0,
      last_payment_error: { type: "card_error", code: "authentication_required" },
    });
    const mapping = mapStripeEvent(event("payment_intent.payment_failed", failed));
    expect(mapping).toMatchObject({
      type: "auto_topup_failed",
      claimedOrgId: "org_1",
      chargeKey: "auto-topup-7",
      paymentIntentId: "pi_auto_1",
      code: "authentication_required",
    });
    expect(isStripeLedgerAction(mapping)).toBe(false);
  });

  it("maps an automatic top-up naming no org with no claim, refuses another currency or a bad amount", () => {
    expect(
      mapStripeEvent(
        event("payment_intent.succeeded", offSessionIntent({ metadata: { autoTopUp: "k" } })),
      ),
    ).toMatchObject({ type: "auto_topup", claimedOrgId: null, chargeKey: "k" });
    expect(
      mapStripeEvent(event("payment_intent.succeeded", offSessionIntent({ currency: "eur" }))),
    ).toMatchObject({ type: "reject", reason: "unsupported_currency" });
    expect(
      mapStripeEvent(event("payment_intent.succeeded", offSessionIntent({ amount_received: -1 }))),
    ).toMatchObject({ type: "reject", reason: "malformed" });
    expect(
      mapStripeEvent(event("payment_intent.succeeded", offSessionIntent({ amount_received: 0 }))),
    ).toMatchObject({ type: "ignore", reason: "zero_amount" });
  });

  it("maps a completed setup session to the card to keep (the route checks it is Parley's)", () => {
    const setup = checkoutSession({
      mode: "setup",
      payment_status: "no_payment_required",
      amount_total: null,
      payment_intent: null,
      setup_intent: "seti_1",
      customer: "cus_1",
    });
    const e = event("checkout.session.completed", setup);
    expect(mapStripeEvent(e)).toEqual({
      type: "card_saved",
      eventId: e.id,
      claimedOrgId: "org_1",
      checkoutSessionId: "cs_test_1",
      setupIntentId: "seti_1",
      customerId: "cus_1",
    });
    expect(
      mapStripeEvent(event("checkout.session.completed", { ...setup, metadata: {} })),
    ).toMatchObject({ type: "card_saved", claimedOrgId: null });
    expect(
      mapStripeEvent(event("checkout.session.completed", { ...setup, setup_intent: null })),
    ).toMatchObject({ type: "reject", reason: "malformed" });
  });
});
