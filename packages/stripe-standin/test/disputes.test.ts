/**
 * A dispute's whole lifecycle through the test controls, as Stripe documents it: opened (created,
 * funds withdrawn), answered (updated, under review), then won (closed, funds reinstated) or
 * lost (closed). Every event is checked as a receiver sees it: signed, in order, each object the
 * dispute at that moment with its balance transactions.
 */
import type Stripe from "stripe";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DISPUTE_FEE, type StripeStandin, startStripeStandin } from "../src/index.ts";
import {
  type Receiver,
  rejection,
  startReceiver,
  stripeClient,
  topUpParams,
  verify,
} from "./helpers.ts";

const SECRET = "whsec_disputes_test";

let standin: StripeStandin;
let stripe: Stripe;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  standin = await startStripeStandin({
    webhookUrl: receiver.url,
    webhookSecret: SECRET,
    retry: { attempts: 2, baseDelayMs: 1 },
  });
  stripe = stripeClient(standin);
});

afterAll(async () => {
  await standin.close();
  await receiver.close();
});

beforeEach(async () => {
  await standin.reset();
  receiver.clear();
});

async function paidCharge() {
  const session = await stripe.checkout.sessions.create(topUpParams());
  return (await standin.pay(session.id)).charge;
}

/** A control call as a test outside Node makes it: JSON over HTTP. */
async function control(path: string, body: Record<string, unknown> = {}) {
  const res = await fetch(`${standin.url}/__standin${path}`, {
    method: "POST",
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Stripe.Dispute & { error?: unknown } };
}

/** The dispute events received so far, verified as the platform verifies them. */
async function disputeEvents(): Promise<Stripe.Event[]> {
  await standin.idle();
  const received = receiver.received.filter((r) => r.event.type.startsWith("charge.dispute."));
  return Promise.all(received.map((r) => verify(stripe, r, SECRET)));
}

const disputeOf = (event: Stripe.Event) => event.data.object as Stripe.Dispute;

describe("a dispute's lifecycle (test controls)", () => {
  it("won: created, funds_withdrawn, updated, closed, funds_reinstated, with the balance transactions of each moment", async () => {
    const charge = await paidCharge();
    const opened = await control(`/charges/${charge.id}/dispute`, { reason: "fraudulent" });
    expect(opened.status).toBe(200);
    const id = opened.body.id;
    expect(opened.body).toMatchObject({
      object: "dispute",
      amount: 2_000,
      charge: charge.id,
      payment_intent: charge.payment_intent,
      currency: "usd",
      status: "needs_response",
      reason: "fraudulent",
      is_charge_refundable: false,
      evidence: { uncategorized_text: null, enhanced_evidence: {} },
      evidence_details: { has_evidence: false, submission_count: 0, past_due: false },
      payment_method_details: { type: "card", card: { case_type: "chargeback" } },
    });
    expect((await control(`/disputes/${id}/respond`, { evidence: "delivered" })).status).toBe(200);
    expect((await control(`/disputes/${id}/close`, { status: "won" })).status).toBe(200);

    const events = await disputeEvents();
    expect(events.map((e) => [e.type, disputeOf(e).status])).toEqual([
      ["charge.dispute.created", "needs_response"],
      ["charge.dispute.funds_withdrawn", "needs_response"],
      ["charge.dispute.updated", "under_review"],
      ["charge.dispute.closed", "won"],
      ["charge.dispute.funds_reinstated", "won"],
    ]);
    for (const event of events) expect(disputeOf(event).id).toBe(id);
    // Withdrawn with Stripe's fee when it opens; the amount (not the fee) back when it is won.
    const withdrawal = {
      object: "balance_transaction",
      type: "adjustment",
      reporting_category: "dispute",
      amount: -2_000,
      fee: DISPUTE_FEE,
      net: -2_000 - DISPUTE_FEE,
      source: id,
      currency: "usd",
      description: `Chargeback withdrawal for ${charge.id}`,
      fee_details: [expect.objectContaining({ amount: DISPUTE_FEE, type: "stripe_fee" })],
    };
    const reinstatement = {
      object: "balance_transaction",
      type: "adjustment",
      reporting_category: "dispute_reversal",
      amount: 2_000,
      fee: 0,
      net: 2_000,
      source: id,
      description: `Chargeback reversal for ${charge.id}`,
      fee_details: [],
    };
    const [created, withdrawn, updated, , reinstated] = events.map(disputeOf);
    expect(created?.balance_transactions).toEqual([expect.objectContaining(withdrawal)]);
    expect(withdrawn?.balance_transactions).toEqual([expect.objectContaining(withdrawal)]);
    expect(reinstated?.balance_transactions).toEqual([
      expect.objectContaining(withdrawal),
      expect.objectContaining(reinstatement),
    ]);
    expect(updated?.evidence.uncategorized_text).toBe("delivered");
    expect(updated?.evidence_details).toMatchObject({ has_evidence: true, submission_count: 1 });
    const update = events[2] as Stripe.Event & { data: { previous_attributes?: unknown } };
    expect(update.data.previous_attributes).toMatchObject({ status: "needs_response" });
    // The API answers the dispute as it ended.
    const read = await stripe.disputes.retrieve(id);
    expect(read.status).toBe("won");
    expect(read.balance_transactions.map((t) => t.amount)).toEqual([-2_000, 2_000]);
  });

  it("lost: created, funds_withdrawn, closed; the funds stay withdrawn", async () => {
    const charge = await paidCharge();
    const dispute = await standin.disputes.open(charge.id, { amount: 1_500 });
    await standin.disputes.close(dispute.id, "lost");
    const events = await disputeEvents();
    expect(events.map((e) => [e.type, disputeOf(e).status])).toEqual([
      ["charge.dispute.created", "needs_response"],
      ["charge.dispute.funds_withdrawn", "needs_response"],
      ["charge.dispute.closed", "lost"],
    ]);
    const closed = disputeOf(events[2] as Stripe.Event);
    expect(closed.amount).toBe(1_500);
    expect(closed.balance_transactions.map((t) => t.net)).toEqual([-1_500 - DISPUTE_FEE]);
    expect((await stripe.charges.retrieve(charge.id)).disputed).toBe(true);
    expect(await stripe.disputes.list({ charge: charge.id })).toMatchObject({
      data: [expect.objectContaining({ id: dispute.id, status: "lost" })],
    });
  });

  it("refuses what Stripe refuses, changing nothing: a second dispute, a bad amount, a closed dispute, a refund of a disputed charge", async () => {
    const charge = await paidCharge();
    for (const body of [{ amount: 0 }, { amount: 2_001 }, { amount: "5" }, { reason: "bored" }]) {
      const refused = await control(`/charges/${charge.id}/dispute`, body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
    }
    expect((await control("/charges/ch_test_nope/dispute")).status).toBe(404);
    const dispute = await standin.disputes.open(charge.id);
    expect((await control(`/charges/${charge.id}/dispute`)).status).toBe(400);
    const refund = await rejection(stripe.refunds.create({ charge: charge.id }));
    expect(refund).toMatchObject({ code: "charge_disputed" });
    expect((await control(`/disputes/${dispute.id}/close`, { status: "maybe" })).status).toBe(400);
    await standin.disputes.close(dispute.id, "lost");
    expect((await control(`/disputes/${dispute.id}/close`, { status: "won" })).status).toBe(400);
    expect((await control(`/disputes/${dispute.id}/respond`)).status).toBe(400);
    expect((await control("/disputes/dp_test_nope/close", { status: "won" })).status).toBe(404);
    const events = await disputeEvents();
    expect(events.map((e) => e.type)).toEqual([
      "charge.dispute.created",
      "charge.dispute.funds_withdrawn",
      "charge.dispute.closed",
    ]);
    expect((await stripe.disputes.retrieve(dispute.id)).status).toBe("lost");
  });

  it("a charge refunded in full can still be disputed: both movements stand at Stripe", async () => {
    const charge = await paidCharge();
    await stripe.refunds.create({ charge: charge.id });
    const dispute = await standin.disputes.open(charge.id);
    expect(dispute.amount).toBe(2_000);
    expect((await stripe.charges.retrieve(charge.id)).amount_refunded).toBe(2_000);
    await standin.idle();
    expect(receiver.types()).toEqual(
      expect.arrayContaining([
        "charge.refunded",
        "charge.dispute.created",
        "charge.dispute.funds_withdrawn",
      ]),
    );
  });
});
