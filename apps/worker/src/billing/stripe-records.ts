import type { PaymentReversals, StripeReversalAction } from "@parley/billing";
import { isId } from "@parley/shared";

/**
 * Parley's own record, in D1, of what it started at Stripe and what became of it (migration
 * 0017): the Checkout Sessions it made, the payments it credited, the events it acknowledged
 * without acting on them for the operator, and each payment's reversals as its BillingAccount
 * computed them. The webhook trusts these, never what an event names (docs/2026-12-06-stripe-trust.md).
 */

/** A Checkout Session Parley made (routes/billing-checkout.ts, routes/billing-auto-top-up.ts). */
export interface StartedCheckout {
  orgId: string;
  mode: "payment" | "setup";
  /** What the payment session asked for; null in setup mode. */
  requestedMicros: number | null;
}

/**
 * Records a session Parley just made, before its URL is handed out, so its completion can be
 * trusted. A session replayed by Stripe's idempotency (the same key) is recorded once.
 */
export async function recordCheckout(
  db: D1Database,
  sessionId: string,
  checkout: StartedCheckout,
): Promise<void> {
  await db
    .prepare(
      `INSERT INTO stripe_checkouts (session_id, org_id, mode, requested_micros, created_at)
       VALUES (?, ?, ?, ?, ?) ON CONFLICT (session_id) DO NOTHING`,
    )
    .bind(sessionId, checkout.orgId, checkout.mode, checkout.requestedMicros, Date.now())
    .run();
}

export async function startedCheckout(
  db: D1Database,
  sessionId: string,
): Promise<StartedCheckout | null> {
  const row = await db
    .prepare("SELECT org_id, mode, requested_micros FROM stripe_checkouts WHERE session_id = ?")
    .bind(sessionId)
    .first<{ org_id: string; mode: StartedCheckout["mode"]; requested_micros: number | null }>();
  return row && { orgId: row.org_id, mode: row.mode, requestedMicros: row.requested_micros };
}

/** A payment Parley credited: whose it is and what it credited. */
export interface RecordedPayment {
  paymentIntentId: string;
  orgId: string;
  amountMicros: number;
}

export async function recordedPayment(
  db: D1Database,
  paymentIntentId: string,
): Promise<RecordedPayment | null> {
  const row = await db
    .prepare("SELECT org_id, amount_micros FROM stripe_payments WHERE payment_intent_id = ?")
    .bind(paymentIntentId)
    .first<{ org_id: string; amount_micros: number }>();
  return row && { paymentIntentId, orgId: row.org_id, amountMicros: row.amount_micros };
}

/** Lists a credited payment (the payments list, and the org refunds and disputes resolve to). */
export async function recordPayment(
  db: D1Database,
  payment: RecordedPayment & { checkoutSessionId: string | null },
): Promise<void> {
  await db
    .prepare(
      `INSERT INTO stripe_payments
         (payment_intent_id, checkout_session_id, org_id, amount_micros, created_at, source)
       VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    )
    .bind(
      payment.paymentIntentId,
      payment.checkoutSessionId,
      payment.orgId,
      payment.amountMicros,
      Date.now(),
      payment.checkoutSessionId === null ? "auto_top_up" : "checkout",
    )
    .run();
}

/**
 * Copies what became of a payment onto its row, for the payments list and the operator's excess
 * list. Only a newer state (its version) replaces the row's, so copies arriving out of order (two
 * events for one payment racing) never put an older one back.
 */
export async function notePaymentReversals(
  db: D1Database,
  reversals: PaymentReversals,
): Promise<void> {
  await db
    .prepare(
      `UPDATE stripe_payments SET refunded_micros = ?1, disputed_micros = ?2, disputed = ?3,
         reversed_micros = ?4, excess_micros = ?5, reversal_version = ?6
       WHERE payment_intent_id = ?7 AND reversal_version <= ?6`,
    )
    .bind(
      reversals.refundedMicros,
      reversals.disputedMicros,
      reversals.disputedMicros > 0 ? 1 : 0,
      reversals.reversedMicros,
      reversals.excessMicros,
      reversals.version,
      reversals.paymentRef,
    )
    .run();
}

/** Why a verified event was acknowledged without being acted on as it asked. */
export type UnrecognizedReason =
  /** A paid Checkout Session Parley never made (a Payment Link, another integration's). */
  | "checkout_not_started"
  /** A completed setup session Parley never made: no card is kept. */
  | "setup_not_started"
  /** A PaymentIntent naming an automatic top-up no org's account has. */
  | "auto_top_up_not_started"
  /** A refund or dispute of a payment Parley has no record of (held: applied if it comes). */
  | "unknown_payment"
  /** A refund or dispute of a charge made without a PaymentIntent: never one of Parley's. */
  | "no_payment_intent"
  /** A session of Parley's whose paid total differs from what it asked: the lower is credited. */
  | "amount_mismatch";

export interface UnrecognizedEvent {
  event: { id: string; type: string };
  reason: UnrecognizedReason;
  objectId: string;
  paymentIntentId: string | null;
  /** What the event named as its org: kept for the operator only if shaped like an org id. */
  claimedOrgId: string | null;
  amountMicros: number | null;
  /** A reversal kept to apply when its payment is recorded. */
  held?: StripeReversalAction;
}

/** Keeps an event for the operator; a redelivery of it is kept once. */
export async function recordUnrecognized(db: D1Database, item: UnrecognizedEvent): Promise<void> {
  const claimed =
    item.claimedOrgId !== null && isId("org", item.claimedOrgId) ? item.claimedOrgId : null;
  await db
    .prepare(
      `INSERT INTO stripe_unrecognized (event_id, event_type, reason, object_id, payment_intent_id,
         claimed_org_id, amount_micros, held, received_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (event_id) DO NOTHING`,
    )
    .bind(
      item.event.id,
      item.event.type,
      item.reason,
      item.objectId,
      item.paymentIntentId,
      claimed,
      item.amountMicros,
      item.held === undefined ? null : JSON.stringify(item.held),
      Date.now(),
    )
    .run();
}

/** Reversals held for a payment that is now recorded, oldest first. */
export async function heldReversals(
  db: D1Database,
  paymentIntentId: string,
): Promise<{ event: { id: string; type: string }; action: StripeReversalAction }[]> {
  const { results } = await db
    .prepare(
      `SELECT event_id, event_type, held FROM stripe_unrecognized
       WHERE payment_intent_id = ? AND held IS NOT NULL AND resolved_at IS NULL
       ORDER BY received_at, event_id`,
    )
    .bind(paymentIntentId)
    .all<{ event_id: string; event_type: string; held: string }>();
  return results.map((row) => ({
    event: { id: row.event_id, type: row.event_type },
    action: JSON.parse(row.held) as StripeReversalAction,
  }));
}

/** A held reversal was applied to its payment. */
export async function resolveHeld(db: D1Database, eventId: string): Promise<void> {
  await db
    .prepare(
      "UPDATE stripe_unrecognized SET resolved_at = ? WHERE event_id = ? AND resolved_at IS NULL",
    )
    .bind(Date.now(), eventId)
    .run();
}
