import type {
  StripeAutoTopUpAction,
  StripeAutoTopUpFailedAction,
  StripeCardSavedAction,
  StripeReversalAction,
  StripeTopupAction,
} from "@parley/billing";
import { AppError, isId } from "@parley/shared";
import { config } from "../env.ts";
import { billingAccount } from "./account.ts";
import { savedCardOf } from "./saved-card.ts";
import { stripeClient } from "./stripe.ts";
import {
  heldReversals,
  notePaymentReversals,
  type RecordedPayment,
  recordedPayment,
  recordPayment,
  recordUnrecognized,
  resolveHeld,
  startedCheckout,
} from "./stripe-records.ts";

/**
 * What a verified Stripe event does, deciding whose it is from Parley's own records only
 * (stripe-records.ts; docs/2026-12-06-stripe-trust.md). The org an event names is a claim:
 * a paid Checkout Session credits the org that made it through `/billing/checkout`; an automatic
 * top-up's PaymentIntent credits only if the account its metadata points to recorded it as its
 * charge; a refund or dispute belongs to the org of the payment Parley recorded. Anything else
 * credits nothing, is answered 2xx (a retry cannot change it) and is kept for the operator.
 */

export type StripeEventRef = { id: string; type: string };

/** What the webhook answers (`outcome`), beside the mapping's own `ignore` and `reject`. */
export type WebhookOutcome = "applied" | "duplicate" | "unrecognized" | "reject";

export interface Handled {
  outcome: WebhookOutcome;
  /** For the log line: why, never a payload or an org value. */
  reason: string | null;
  /**
   * A top-up this event credited now (not a duplicate, not refused by the ledger): what its
   * receipt mail says (mail/billing-mail.ts, sent by the route after it answers).
   */
  credited?: CreditedPayment;
}

export interface CreditedPayment {
  orgId: string;
  paymentIntentId: string;
  amountMicros: number;
  automatic: boolean;
}

/**
 * Whether an org id names an org of ours. A value not shaped like an id is not one (and
 * addressing a Durable Object by it would create one).
 */
async function orgExists(db: D1Database, orgId: string | null): Promise<boolean> {
  if (orgId === null || !isId("org", orgId)) return false;
  const row = await db
    .prepare("SELECT 1 AS found FROM organizations WHERE id = ?")
    .bind(orgId)
    .first();
  return row !== null;
}

/** The automatic top-up's charge is still waiting for Stripe's answer: Stripe redelivers later. */
function notYet(): never {
  throw new AppError(
    "conflict",
    "The automatic top-up this event names is not recorded yet; deliver it again later",
  );
}

/** A paid Checkout Session: credited only if Parley made it, to the org that made it. */
export async function creditCheckout(
  env: Env,
  event: StripeEventRef,
  action: StripeTopupAction,
): Promise<Handled> {
  const started = await startedCheckout(env.DB, action.checkoutSessionId);
  if (started === null || started.mode !== "payment" || started.requestedMicros === null) {
    await recordUnrecognized(env.DB, {
      event,
      reason: "checkout_not_started",
      objectId: action.checkoutSessionId,
      paymentIntentId: action.paymentIntentId,
      claimedOrgId: action.claimedOrgId,
      amountMicros: action.amountMicros,
    });
    return { outcome: "unrecognized", reason: "checkout_not_started" };
  }
  // Stripe's total is what was paid; a session of ours asks one fixed amount, so a different
  // total means something changed at Stripe: the lower of the two is credited, and it is listed.
  const amountMicros = Math.min(action.amountMicros, started.requestedMicros);
  if (action.amountMicros !== started.requestedMicros) {
    await recordUnrecognized(env.DB, {
      event,
      reason: "amount_mismatch",
      objectId: action.checkoutSessionId,
      paymentIntentId: action.paymentIntentId,
      claimedOrgId: action.claimedOrgId,
      amountMicros: action.amountMicros,
    });
  }
  const payment =
    action.paymentIntentId === null
      ? null
      : { paymentIntentId: action.paymentIntentId, orgId: started.orgId, amountMicros };
  if (payment !== null) {
    await recordPayment(env.DB, { ...payment, checkoutSessionId: action.checkoutSessionId });
  }
  const result = await billingAccount(env, started.orgId).applyStripeEvent(event, {
    ...action,
    amountMicros,
  });
  if (payment !== null) await applyHeld(env, payment);
  if (result.status === "duplicate") return { outcome: "duplicate", reason: null };
  const credited =
    payment !== null && result.status === "applied" && result.result.ok
      ? { ...payment, automatic: false }
      : undefined;
  return { outcome: "applied", reason: null, credited };
}

/** An automatic top-up paid: credited only if the named account's charge recorded its intent. */
export async function creditAutoTopUp(
  env: Env,
  event: StripeEventRef,
  action: StripeAutoTopUpAction,
): Promise<Handled> {
  const orgId = action.claimedOrgId;
  const result =
    orgId !== null && (await orgExists(env.DB, orgId))
      ? await billingAccount(env, orgId).applyStripeEvent(event, action)
      : ({ status: "unrecognized" } as const);
  if (result.status === "pending") notYet();
  if (result.status === "unrecognized" || orgId === null) {
    await recordUnrecognized(env.DB, {
      event,
      reason: "auto_top_up_not_started",
      objectId: action.paymentIntentId,
      paymentIntentId: action.paymentIntentId,
      claimedOrgId: orgId,
      amountMicros: action.amountMicros,
    });
    return { outcome: "unrecognized", reason: "auto_top_up_not_started" };
  }
  const payment = {
    paymentIntentId: action.paymentIntentId,
    orgId,
    amountMicros: action.amountMicros,
  };
  await recordPayment(env.DB, { ...payment, checkoutSessionId: null });
  await applyHeld(env, payment);
  if (result.status === "duplicate") return { outcome: "duplicate", reason: null };
  const credited = result.status === "applied" && result.result.ok;
  return {
    outcome: "applied",
    reason: null,
    credited: credited ? { ...payment, automatic: true } : undefined,
  };
}

/** An automatic top-up failed: it pauses only if it is a charge of the named account's. */
export async function autoTopUpFailed(
  env: Env,
  event: StripeEventRef,
  action: StripeAutoTopUpFailedAction,
): Promise<Handled> {
  const orgId = action.claimedOrgId;
  const status =
    orgId !== null && (await orgExists(env.DB, orgId))
      ? await billingAccount(env, orgId).autoTopUpFailed(action)
      : "unrecognized";
  if (status === "pending") notYet();
  if (status === "applied") return { outcome: "applied", reason: null };
  await recordUnrecognized(env.DB, {
    event,
    reason: "auto_top_up_not_started",
    objectId: action.paymentIntentId,
    paymentIntentId: action.paymentIntentId,
    claimedOrgId: orgId,
    amountMicros: null,
  });
  return { outcome: "unrecognized", reason: "auto_top_up_not_started" };
}

/**
 * A card saved through Checkout in setup mode: kept only if Parley made the session, for the org
 * that made it, and the card is that org's own Stripe customer's.
 */
export async function saveCard(
  env: Env,
  event: StripeEventRef,
  action: StripeCardSavedAction,
): Promise<Handled> {
  const started = await startedCheckout(env.DB, action.checkoutSessionId);
  if (started === null || started.mode !== "setup") {
    await recordUnrecognized(env.DB, {
      event,
      reason: "setup_not_started",
      objectId: action.checkoutSessionId,
      paymentIntentId: null,
      claimedOrgId: action.claimedOrgId,
      amountMicros: null,
    });
    return { outcome: "unrecognized", reason: "setup_not_started" };
  }
  const org = await env.DB.prepare("SELECT stripe_customer_id FROM organizations WHERE id = ?")
    .bind(started.orgId)
    .first<{ stripe_customer_id: string | null }>();
  const intent = await stripeClient(config(env)).setupIntents.retrieve(action.setupIntentId, {
    expand: ["payment_method"],
  });
  const card = savedCardOf(intent);
  if (card === null || card.customerId !== org?.stripe_customer_id) {
    return { outcome: "reject", reason: "not_the_orgs_card" };
  }
  await billingAccount(env, started.orgId).saveCard(card);
  return { outcome: "applied", reason: null };
}

/**
 * A refund or dispute: applied to the org of the payment Parley recorded, capped at what that
 * payment paid. One of a payment not recorded (yet) is acknowledged and held: if the payment's
 * own event comes later (Stripe does not order deliveries), the payment applies it then.
 */
export async function reverse(
  env: Env,
  event: StripeEventRef,
  action: StripeReversalAction,
): Promise<Handled> {
  const paymentIntentId = action.paymentIntentId;
  const objectId = action.type === "refund" ? action.chargeId : action.disputeId;
  const amountMicros = action.type === "refund" ? action.refundedMicros : action.amountMicros;
  if (paymentIntentId === null) {
    await recordUnrecognized(env.DB, {
      event,
      reason: "no_payment_intent",
      objectId,
      paymentIntentId: null,
      claimedOrgId: null,
      amountMicros,
    });
    return { outcome: "unrecognized", reason: "no_payment_intent" };
  }
  let payment = await recordedPayment(env.DB, paymentIntentId);
  if (payment === null) {
    await recordUnrecognized(env.DB, {
      event,
      reason: "unknown_payment",
      objectId,
      paymentIntentId,
      claimedOrgId: null,
      amountMicros,
      held: action,
    });
    // The payment may have been recorded between the read and the hold, and have looked for held
    // reversals before this one was held: read once more, so one of the two applies it.
    payment = await recordedPayment(env.DB, paymentIntentId);
    if (payment === null) return { outcome: "unrecognized", reason: "unknown_payment" };
  }
  const status = await applyReversal(env, payment, event, { ...action, paymentIntentId });
  return { outcome: status, reason: null };
}

async function applyReversal(
  env: Env,
  payment: RecordedPayment,
  event: StripeEventRef,
  action: StripeReversalAction & { paymentIntentId: string },
): Promise<"applied" | "duplicate"> {
  const { status, reversals } = await billingAccount(env, payment.orgId).applyStripeReversal(
    event,
    action,
    payment.amountMicros,
  );
  await notePaymentReversals(env.DB, reversals);
  await resolveHeld(env.DB, event.id);
  return status;
}

/** Applies the reversals held for a payment now recorded (idempotent: each event once). */
async function applyHeld(env: Env, payment: RecordedPayment): Promise<void> {
  for (const held of await heldReversals(env.DB, payment.paymentIntentId)) {
    await applyReversal(env, payment, held.event, {
      ...held.action,
      paymentIntentId: payment.paymentIntentId,
    });
  }
}
