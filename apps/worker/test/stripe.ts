import { env } from "cloudflare:test";
import Stripe from "stripe";
import { billingAccount } from "../src/billing/account.ts";
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

export async function balanceOf(orgId: string) {
  return (await billingAccount(env, orgId).balance()).postedMicros;
}
