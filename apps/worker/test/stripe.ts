import { env } from "cloudflare:test";
import Stripe from "stripe";
import { billingAccount } from "../src/billing/account.ts";
import { recordCheckout } from "../src/billing/stripe-records.ts";
import type { Delivered } from "./global-setup.ts";
import { api } from "./helpers.ts";

/** Stripe webhook deliveries signed as Stripe signs them, shared by the webhook and adversarial suites. */
export const stripe = new Stripe("sk_test_parley", { httpClient: Stripe.createFetchHttpClient() });
export const stripeCrypto = Stripe.createSubtleCryptoProvider();
let seq = 0;
export const uid = (prefix: string) =>
  `${prefix}_test_${Date.now().toString(36)}${(seq++).toString(36)}`;

/** The Stripe-Signature header for a payload, as Stripe computes it. */
export function sign(payload: string, options: { secret?: string; timestamp?: number } = {}) {
  return stripe.webhooks.generateTestHeaderStringAsync({
    payload,
    secret: options.secret ?? env.STRIPE_WEBHOOK_SECRET,
    timestamp: options.timestamp ?? Math.floor(Date.now() / 1000),
    cryptoProvider: stripeCrypto,
  });
}

/** Posts a payload to the webhook as is, with the given signature header (none when null). */
export function post(payload: string, signature: string | null) {
  return api("POST", "/api/webhooks/stripe", {
    headers: {
      "content-type": "application/json",
      ...(signature === null ? {} : { "stripe-signature": signature }),
    },
    rawBody: payload,
  });
}

export async function deliver(
  event: object,
  options: { secret?: string; timestamp?: number } = {},
) {
  const payload = JSON.stringify(event);
  return post(payload, await sign(payload, options));
}

/**
 * Records a Checkout Session for an org as `POST .../billing/checkout` does when it makes one:
 * only such a session is ever credited. For tests that sign their own events; the end-to-end
 * tests make real sessions through the route and the Stripe stand-in.
 */
export function startedSession(orgId: string, session: { id: string; cents: number }) {
  return recordCheckout(env.DB, session.id, {
    orgId,
    mode: "payment",
    requestedMicros: session.cents * 10_000,
  });
}

export function checkoutEvent(
  orgId: string,
  type: "checkout.session.completed" | "checkout.session.async_payment_succeeded",
  session: { id: string; paymentIntent: string; cents: number; paid?: boolean },
) {
  return {
    id: uid("evt"),
    object: "event",
    type,
    api_version: "2026-01-28.clover",
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    data: {
      object: {
        id: session.id,
        object: "checkout.session",
        mode: "payment",
        amount_total: session.cents,
        currency: "usd",
        client_reference_id: orgId,
        metadata: { orgId },
        payment_intent: session.paymentIntent,
        payment_status: session.paid === false ? "unpaid" : "paid",
        status: "complete",
      },
    },
  };
}

export function refundEvent(
  orgId: string | null,
  paymentIntent: string,
  refundedCents: number,
  totalCents: number,
) {
  return {
    id: uid("evt"),
    object: "event",
    type: "charge.refunded",
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    data: {
      object: {
        id: `ch_for_${paymentIntent}`,
        object: "charge",
        amount: totalCents,
        amount_refunded: refundedCents,
        currency: "usd",
        payment_intent: paymentIntent,
        metadata: orgId ? { orgId } : {},
        refunded: refundedCents === totalCents,
      },
    },
  };
}

/** A dispute event of Stripe's for a payment's charge (`ch_for_<pi>`, as `refundEvent` names it). */
export function disputeEvent(
  paymentIntent: string,
  cents: number,
  type:
    | "charge.dispute.created"
    | "charge.dispute.funds_withdrawn"
    | "charge.dispute.funds_reinstated" = "charge.dispute.created",
  dispute = `dp_for_${paymentIntent}`,
) {
  return {
    id: uid("evt"),
    object: "event",
    type,
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    data: {
      object: {
        id: dispute,
        object: "dispute",
        amount: cents,
        currency: "usd",
        charge: `ch_for_${paymentIntent}`,
        payment_intent: paymentIntent,
        status: type === "charge.dispute.funds_reinstated" ? "won" : "needs_response",
        metadata: {},
      },
    },
  };
}

export async function balanceOf(orgId: string) {
  return (await billingAccount(env, orgId).balance()).postedMicros;
}

/** The real client pointed at the Stripe stand-in the suite runs (global-setup.ts). */
export const standinStripe = new Stripe(env.STRIPE_SECRET_KEY, {
  httpClient: Stripe.createFetchHttpClient(),
  host: new URL(env.STRIPE_API_URL).hostname,
  port: Number(new URL(env.STRIPE_API_URL).port),
  protocol: "http",
});

/** The stand-in's webhook deliveries whose body mentions `match`, as the mailbox caught them. */
export async function stripeDeliveries(match: string): Promise<Delivered[]> {
  for (let i = 0; i < 100; i++) {
    const all = (await (
      await fetch(`${env.TEST_MAILBOX_URL}/?path=/stripe`)
    ).json()) as Delivered[];
    const found = all.filter((d) => d.body.includes(match));
    if (found.length > 0) return found;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no webhook mentioning ${match}`);
}

/** Delivers a caught webhook to the Worker byte for byte, with its signature. */
export async function replay(delivery: Delivered) {
  return api("POST", "/api/webhooks/stripe", {
    headers: {
      "content-type": "application/json",
      "stripe-signature": String(delivery.headers["stripe-signature"]),
    },
    rawBody: delivery.body,
  });
}

/** The caught delivery of an event of `type` mentioning `match`, once it arrived. */
export async function eventually(match: string, type: string): Promise<Delivered> {
  for (let i = 0; i < 100; i++) {
    const found = (await stripeDeliveries(match)).find((d) => JSON.parse(d.body).type === type);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no ${type} for ${match}`);
}

/**
 * A top-up as an admin makes it: `POST .../billing/checkout`, paid on the stand-in's page, its
 * `checkout.session.completed` delivered. Answers the ids Stripe gave the payment.
 */
export async function paidTopUp(orgId: string, token: string, amountMicros: number) {
  const checkout = await api<{ id: string }>("POST", `/api/orgs/${orgId}/billing/checkout`, {
    token,
    body: { amountMicros },
  });
  if (checkout.status !== 201) throw new Error(`checkout answered ${checkout.status}`);
  const paid = await fetch(
    `${env.STRIPE_API_URL}/__standin/checkout/sessions/${checkout.body.id}/pay`,
    { method: "POST", headers: { "content-type": "application/json" }, body: "{}" },
  );
  const { payment_intent, charge } = (await paid.json()) as {
    payment_intent: { id: string };
    charge: { id: string };
  };
  const completed = await replay(await eventually(checkout.body.id, "checkout.session.completed"));
  if ((completed.body as { outcome?: string }).outcome !== "applied") {
    throw new Error(`the payment was not credited: ${JSON.stringify(completed.body)}`);
  }
  return { sessionId: checkout.body.id, paymentIntent: payment_intent.id, charge: charge.id };
}

/** One of the operator's Stripe lists (`unrecognized` or `excess`), every item. */
export async function operatorStripeList(list: "unrecognized" | "excess") {
  const secret = (env as { OPERATOR_SECRET?: string }).OPERATOR_SECRET ?? "";
  const items: Record<string, unknown>[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`;
    const res = await api<{ items: Record<string, unknown>[]; nextCursor: string | null }>(
      "GET",
      `/api/operator/stripe/${list}?limit=100${query}`,
      { headers: { authorization: `Bearer ${secret}` } },
    );
    if (res.status !== 200) throw new Error(`the operator list answered ${res.status}`);
    items.push(...res.body.items);
    cursor = res.body.nextCursor;
  } while (cursor !== null);
  return items;
}
