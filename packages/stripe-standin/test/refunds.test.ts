/**
 * After the money moved: partial and full refunds (cumulative `amount_refunded`, no
 * over-refund) and the billing portal's receipts (disputes: disputes.test.ts).
 */
import type Stripe from "stripe";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type StripeStandin, startStripeStandin } from "../src/index.ts";
import { type Receiver, startReceiver, stripeClient, topUpParams, verify } from "./helpers.ts";

const SECRET = "whsec_refunds_test";

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

async function paidTopUp(params?: Partial<Stripe.Checkout.SessionCreateParams>) {
  const session = await stripe.checkout.sessions.create(topUpParams(params));
  const { paymentIntent, charge } = await standin.pay(session.id);
  return { session, paymentIntent, charge };
}

async function refundEvents(): Promise<Stripe.Event[]> {
  await standin.idle();
  const refunds = receiver.received.filter((r) => r.event.type.includes("refund"));
  return Promise.all(refunds.map((r) => verify(stripe, r, SECRET)));
}

describe("POST /v1/refunds", () => {
  it("refunds partly then fully, with cumulative amount_refunded on charge.refunded", async () => {
    const { paymentIntent, charge } = await paidTopUp();
    const partial = await stripe.refunds.create(
      { payment_intent: paymentIntent.id, amount: 500, reason: "requested_by_customer" },
      { idempotencyKey: "refund-1" },
    );
    expect(partial).toMatchObject({
      object: "refund",
      amount: 500,
      charge: charge.id,
      payment_intent: paymentIntent.id,
      currency: "usd",
      status: "succeeded",
      reason: "requested_by_customer",
    });
    expect(partial.id).toMatch(/^re_test_/);
    expect(await stripe.charges.retrieve(charge.id)).toMatchObject({
      amount_refunded: 500,
      refunded: false,
    });

    const rest = await stripe.refunds.create({ charge: charge.id });
    expect(rest.amount).toBe(1500);
    expect(await stripe.charges.retrieve(charge.id)).toMatchObject({
      amount_refunded: 2000,
      refunded: true,
    });

    const events = await refundEvents();
    expect(
      events.map((e) => {
        const object = e.data.object as Stripe.Charge | Stripe.Refund;
        return object.object === "charge"
          ? [e.type, object.amount_refunded, object.refunded, e.data.previous_attributes]
          : [e.type, object.amount];
      }),
    ).toEqual([
      ["charge.refunded", 500, false, { amount_refunded: 0 }],
      ["refund.created", 500],
      ["charge.refunded", 2000, true, { amount_refunded: 500, refunded: false }],
      ["refund.created", 1500],
    ]);
    const first = events[0];
    expect(first?.request).toEqual({
      id: partial.lastResponse.requestId,
      idempotency_key: "refund-1",
    });

    const listed = await stripe.charges.retrieve(charge.id, { expand: ["refunds"] });
    expect(listed.refunds?.data.map((r) => r.id)).toEqual([rest.id, partial.id]);
  });

  it("refuses to refund more than what is left, and changes nothing", async () => {
    const { charge } = await paidTopUp();
    const over = await stripe.refunds.create({ charge: charge.id, amount: 2001 }).catch((e) => e);
    expect(over).toMatchObject({
      type: "StripeInvalidRequestError",
      code: "amount_too_large",
      param: "amount",
      message: "Refund amount ($20.01) is greater than unrefunded amount on charge ($20.00)",
    });
    await stripe.refunds.create({ charge: charge.id, amount: 2000 });
    const again = await stripe.refunds.create({ charge: charge.id, amount: 1 }).catch((e) => e);
    expect(again).toMatchObject({
      type: "StripeInvalidRequestError",
      code: "charge_already_refunded",
      message: `Charge ${charge.id} has already been refunded.`,
    });
    expect((await stripe.refunds.list()).data.map((r) => r.amount)).toEqual([2000]);
    expect((await refundEvents()).map((e) => e.type)).toEqual([
      "charge.refunded",
      "refund.created",
    ]);
  });

  it("refuses a refund of an unpaid or unknown payment", async () => {
    const session = await stripe.checkout.sessions.create(topUpParams());
    await standin.pay(session.id, { fail: true });
    const { payment_intent } = await stripe.checkout.sessions.retrieve(session.id);
    const unpaid = await stripe.refunds
      .create({ payment_intent: String(payment_intent) })
      .catch((e) => e);
    expect(unpaid).toMatchObject({ type: "StripeInvalidRequestError", param: "payment_intent" });
    const unknown = await stripe.refunds.create({ charge: "ch_test_nope" }).catch((e) => e);
    expect(unknown).toMatchObject({
      type: "StripeInvalidRequestError",
      code: "resource_missing",
      statusCode: 400,
      param: "charge",
    });
    const neither = await stripe.refunds.create({}).catch((e) => e);
    expect(neither).toMatchObject({ code: "parameter_missing" });
    expect(await stripe.refunds.list()).toMatchObject({ data: [] });
  });
});

describe("POST /v1/billing_portal/sessions", () => {
  it("returns a url serving the customer's payments and their receipts", async () => {
    const customer = await stripe.customers.create({
      email: "owner@example.com",
      name: "Acme Org",
      metadata: { org_id: "org_123" },
    });
    const { charge } = await paidTopUp({ customer: customer.id });
    expect(charge.customer).toBe(customer.id);
    await stripe.refunds.create({ charge: charge.id, amount: 250 });
    // Another customer's payment must not show up.
    await paidTopUp({ customer_email: "else@example.com" });

    const portal = await stripe.billingPortal.sessions.create({
      customer: customer.id,
      return_url: "http://127.0.0.1:8787/billing",
    });
    expect(portal).toMatchObject({
      object: "billing_portal.session",
      customer: customer.id,
      return_url: "http://127.0.0.1:8787/billing",
      livemode: false,
    });
    expect(portal.url).toBe(`${standin.url}/portal/${portal.id}`);
    const page = await fetch(portal.url);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("Acme Org");
    expect(html).toContain("$20.00 (refunded $2.50)");
    expect(html).toContain(`href="${charge.receipt_url}"`);
    expect(html.match(/Receipt<\/a>/g)).toHaveLength(1);
    expect(html).toContain('<a id="return" href="http://127.0.0.1:8787/billing">Return</a>');

    const receipt = await fetch(charge.receipt_url ?? "");
    expect(receipt.status).toBe(200);
    expect(await receipt.text()).toContain('<dd id="receipt-amount">$20.00</dd>');
  });

  it("refuses an unknown customer", async () => {
    const error = await stripe.billingPortal.sessions
      .create({ customer: "cus_test_nope" })
      .catch((e) => e);
    expect(error).toMatchObject({
      type: "StripeInvalidRequestError",
      code: "resource_missing",
      param: "customer",
      message: "No such customer: 'cus_test_nope'",
    });
  });
});
