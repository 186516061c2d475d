/**
 * Pure mapping from verified Stripe webhook events to what they mean for Parley (the actions of
 * stripe-actions.ts). Signature verification, recording `event.id`, and finding the org's
 * BillingAccount belong to the route; this module only decides what an event means for the
 * ledger, so that applying every event any number of times, in any order, credits each payment
 * exactly once.
 *
 * Nothing here says which org an event is for. What an event names (`client_reference_id`,
 * `metadata.orgId`) is a claim anyone who can make a Checkout Session or a PaymentIntent on the
 * account can write (a Payment Link takes `?client_reference_id=` from its URL), so it is passed
 * on as `claimedOrgId` and credits nothing by itself: the route credits only what Parley's own
 * records say it started (issue 28.1, docs/2026-12-06-stripe-trust.md).
 *
 * Keys:
 * - a top-up is keyed by its Checkout Session id (`stripe:checkout:<cs_id>`), so
 *   `checkout.session.completed` (paid) and `checkout.session.async_payment_succeeded` for the same
 *   session, and their retries, grant once;
 * - an automatic top-up (an off-session PaymentIntent whose metadata names its charge) is credited
 *   once under `stripe:payment-intent:<pi_id>`, on `payment_intent.succeeded` only;
 * - refunds (a charge's cumulative `amount_refunded`), dispute withdrawals (`created` or
 *   `funds_withdrawn`) and reinstatements are reports about one payment, which `ReversalStore`
 *   (reversals.ts) turns into at most what the payment paid, under `stripe:reversals:<pi_id>`.
 */

import { centsToMicros } from "./money.ts";
import type { StripeEventMapping, StripeRejectedEvent } from "./stripe-actions.ts";

/** The fields of a Stripe `Event` this module reads; pass the verified event as is. */
export interface StripeEvent {
  id: string;
  type: string;
  data: { object: unknown };
}

/** Metadata key (on the Checkout Session, and on its PaymentIntent) naming the org. */
export const STRIPE_ORG_METADATA_KEY = "orgId";

/** Metadata key on an automatic top-up's PaymentIntent naming its charge (`auto-topup-<seq>`). */
export const STRIPE_AUTO_TOP_UP_METADATA_KEY = "autoTopUp";

/** Stripe events this module maps; every other type is ignored. */
export const HANDLED_STRIPE_EVENT_TYPES = [
  "checkout.session.completed",
  "checkout.session.async_payment_succeeded",
  "payment_intent.succeeded",
  "payment_intent.payment_failed",
  "charge.refunded",
  "charge.dispute.created",
  "charge.dispute.funds_withdrawn",
  "charge.dispute.funds_reinstated",
] as const;

type Json = Record<string, unknown>;

function isRecord(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function stringField(object: Json, key: string): string | null {
  const value = object[key];
  return typeof value === "string" && value.length > 0 ? value : null;
}

/** An id field that Stripe may send as a string or as an expanded object. */
function idField(object: Json, key: string): string | null {
  const value = object[key];
  if (typeof value === "string" && value.length > 0) return value;
  return isRecord(value) ? stringField(value, "id") : null;
}

function metadataOrg(object: Json): string | null {
  const metadata = object.metadata;
  return isRecord(metadata) ? stringField(metadata, STRIPE_ORG_METADATA_KEY) : null;
}

class MalformedEvent extends Error {}

function requireString(object: Json, key: string): string {
  const value = stringField(object, key);
  if (value === null) throw new MalformedEvent(`missing ${key}`);
  return value;
}

function requireAmount(object: Json, key: string): number {
  const value = object[key];
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new MalformedEvent(`${key} must be a non-negative integer`);
  }
  return value;
}

/** USD only: Stripe amounts are in the currency's minor unit, cents for USD. */
function usdMinorToMicros(object: Json): number | null {
  const currency = stringField(object, "currency");
  return currency?.toLowerCase() === "usd" ? centsToMicros(requireAmount(object, "amount")) : null;
}

function requireObject(event: StripeEvent, expected: string): Json {
  const object = event.data?.object;
  if (!isRecord(object) || object.object !== expected) {
    throw new MalformedEvent(`data.object is not a ${expected}`);
  }
  return object;
}

function unsupportedCurrency(event: StripeEvent, object: Json): StripeRejectedEvent {
  return {
    type: "reject",
    eventId: event.id,
    reason: "unsupported_currency",
    message: `currency ${String(object.currency)} is not supported (USD only)`,
  };
}

function mapCheckoutSession(event: StripeEvent, requirePaid: boolean): StripeEventMapping {
  const session = requireObject(event, "checkout.session");
  if (session.mode === "setup" && requirePaid) return mapCardSaved(event, session);
  if (session.mode !== "payment") {
    return { type: "ignore", eventId: event.id, reason: "not_a_payment_session" };
  }
  if (session.payment_status === "no_payment_required") {
    return { type: "ignore", eventId: event.id, reason: "no_payment_required" };
  }
  // `completed` arrives with `unpaid` for delayed methods (bank debits); their credit waits for
  // `async_payment_succeeded`, which grants under the same key.
  if (requirePaid && session.payment_status !== "paid") {
    return { type: "ignore", eventId: event.id, reason: "payment_not_completed" };
  }
  const checkoutSessionId = requireString(session, "id");
  if (stringField(session, "currency")?.toLowerCase() !== "usd") {
    return unsupportedCurrency(event, session);
  }
  const amountTotal = requireAmount(session, "amount_total");
  if (amountTotal === 0) return { type: "ignore", eventId: event.id, reason: "zero_amount" };
  return {
    type: "topup",
    eventId: event.id,
    claimedOrgId: stringField(session, "client_reference_id") ?? metadataOrg(session),
    checkoutSessionId,
    paymentIntentId: idField(session, "payment_intent"),
    amountMicros: centsToMicros(amountTotal),
    idempotencyKey: `stripe:checkout:${checkoutSessionId}`,
  };
}

/** A completed setup session: a card to keep, if Parley started the session (the route checks). */
function mapCardSaved(event: StripeEvent, session: Json): StripeEventMapping {
  const setupIntentId = idField(session, "setup_intent");
  if (setupIntentId === null) throw new MalformedEvent("missing setup_intent");
  return {
    type: "card_saved",
    eventId: event.id,
    claimedOrgId: metadataOrg(session),
    checkoutSessionId: requireString(session, "id"),
    setupIntentId,
    customerId: idField(session, "customer"),
  };
}

/**
 * An automatic top-up's PaymentIntent: paid (a credit of what Stripe received) or failed. Every
 * other PaymentIntent (a Checkout payment's) is credited through its session and ignored here.
 */
function mapPaymentIntent(event: StripeEvent, succeeded: boolean): StripeEventMapping {
  const intent = requireObject(event, "payment_intent");
  const metadata = isRecord(intent.metadata) ? intent.metadata : {};
  const chargeKey = stringField(metadata, STRIPE_AUTO_TOP_UP_METADATA_KEY);
  if (chargeKey === null) {
    return { type: "ignore", eventId: event.id, reason: "not_an_auto_top_up" };
  }
  const claimedOrgId = metadataOrg(intent);
  const paymentIntentId = requireString(intent, "id");
  if (!succeeded) {
    const error = isRecord(intent.last_payment_error) ? intent.last_payment_error : {};
    return {
      type: "auto_topup_failed",
      eventId: event.id,
      claimedOrgId,
      chargeKey,
      paymentIntentId,
      code: stringField(error, "code") ?? "card_declined",
    };
  }
  if (stringField(intent, "currency")?.toLowerCase() !== "usd") {
    return unsupportedCurrency(event, intent);
  }
  const received = requireAmount(intent, "amount_received");
  if (received === 0) return { type: "ignore", eventId: event.id, reason: "zero_amount" };
  return {
    type: "auto_topup",
    eventId: event.id,
    claimedOrgId,
    chargeKey,
    paymentIntentId,
    amountMicros: centsToMicros(received),
    idempotencyKey: `stripe:payment-intent:${paymentIntentId}`,
  };
}

function mapRefund(event: StripeEvent): StripeEventMapping {
  const charge = requireObject(event, "charge");
  const chargeId = requireString(charge, "id");
  if (stringField(charge, "currency")?.toLowerCase() !== "usd") {
    return unsupportedCurrency(event, charge);
  }
  const refunded = requireAmount(charge, "amount_refunded");
  if (refunded === 0) return { type: "ignore", eventId: event.id, reason: "zero_amount" };
  // The charge's metadata may name an org: not read. The payment's own record says whose it is.
  return {
    type: "refund",
    eventId: event.id,
    chargeId,
    paymentIntentId: idField(charge, "payment_intent"),
    refundedMicros: centsToMicros(refunded),
  };
}

function mapDispute(event: StripeEvent, reinstated: boolean): StripeEventMapping {
  const dispute = requireObject(event, "dispute");
  const disputeId = requireString(dispute, "id");
  const status = stringField(dispute, "status") ?? "";
  // An inquiry (`warning_*`) moves no funds; it becomes a dispute with its own events if escalated.
  if (!reinstated && status.startsWith("warning_")) {
    return { type: "ignore", eventId: event.id, reason: "dispute_inquiry" };
  }
  const amountMicros = usdMinorToMicros(dispute);
  if (amountMicros === null) return unsupportedCurrency(event, dispute);
  if (amountMicros === 0) return { type: "ignore", eventId: event.id, reason: "zero_amount" };
  return {
    type: reinstated ? "dispute_reinstated" : "dispute",
    eventId: event.id,
    disputeId,
    chargeId: idField(dispute, "charge"),
    paymentIntentId: idField(dispute, "payment_intent"),
    amountMicros,
  };
}

/**
 * Maps a verified Stripe event to what the ledger should do. Never throws on event content: a
 * malformed object is a `reject` with reason `malformed`. The amount always comes from Stripe's
 * object (`amount_total`, `amount_refunded`, the dispute's `amount`), converted from USD cents.
 */
export function mapStripeEvent(event: StripeEvent): StripeEventMapping {
  try {
    switch (event.type) {
      case "checkout.session.completed":
        return mapCheckoutSession(event, true);
      case "checkout.session.async_payment_succeeded":
        return mapCheckoutSession(event, false);
      case "payment_intent.succeeded":
        return mapPaymentIntent(event, true);
      case "payment_intent.payment_failed":
        return mapPaymentIntent(event, false);
      case "charge.refunded":
        return mapRefund(event);
      case "charge.dispute.created":
      case "charge.dispute.funds_withdrawn":
        return mapDispute(event, false);
      case "charge.dispute.funds_reinstated":
        return mapDispute(event, true);
      default:
        return { type: "ignore", eventId: event.id, reason: "unhandled_event_type" };
    }
  } catch (error) {
    if (!(error instanceof MalformedEvent || error instanceof RangeError)) throw error;
    return { type: "reject", eventId: event.id, reason: "malformed", message: error.message };
  }
}
