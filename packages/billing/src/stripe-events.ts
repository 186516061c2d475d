/**
 * Pure mapping from verified Stripe webhook events to ledger operations. Signature verification,
 * recording `event.id`, and finding the org's BillingAccount belong to the route; this module only
 * decides what an event means for the ledger, so that applying every event any number of times, in
 * any order, credits each payment exactly once.
 *
 * Keys:
 * - a top-up is keyed by its Checkout Session id (`stripe:checkout:<cs_id>`), so
 *   `checkout.session.completed` (paid) and `checkout.session.async_payment_succeeded` for the same
 *   session, and their retries, grant once;
 * - refunds use the charge's cumulative `amount_refunded` as a running total under
 *   `stripe:refunds:<ch_id>` (see `CreditLedger.postCumulative`): only the not-yet-posted
 *   difference is debited, and an older, smaller total arriving late debits nothing;
 * - a dispute is debited once under `stripe:dispute:<dp_id>` whichever of `created` and
 *   `funds_withdrawn` arrives, and credited back once under `stripe:dispute-reinstated:<dp_id>`;
 * - an automatic top-up (an off-session PaymentIntent whose metadata names its charge) is credited
 *   once under `stripe:payment-intent:<pi_id>`, on `payment_intent.succeeded` only.
 */

import type { CreditLedger, PostResult } from "./ledger.ts";
import { centsToMicros } from "./money.ts";

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

/** Ids that let the route find the org when the event does not name it (refunds, disputes). */
export interface StripePaymentRefs {
  chargeId: string | null;
  paymentIntentId: string | null;
}

/** A credit for a completed Checkout Session; apply with `CreditLedger.post`. */
export interface StripeTopupAction {
  type: "topup";
  eventId: string;
  orgId: string;
  checkoutSessionId: string;
  paymentIntentId: string | null;
  amountMicros: number;
  idempotencyKey: string;
}

/** A running total of refunds of one charge (negative); apply with `CreditLedger.postCumulative`. */
export interface StripeRefundAction extends StripePaymentRefs {
  type: "refund";
  eventId: string;
  /** From the charge's metadata when present; otherwise the route resolves it from the refs. */
  orgId: string | null;
  reference: string;
  totalMicros: number;
}

/** A dispute debit (negative total) or its reinstatement (positive total). */
export interface StripeDisputeAction extends StripePaymentRefs {
  type: "dispute" | "dispute_reinstated";
  eventId: string;
  orgId: string | null;
  disputeId: string;
  reference: string;
  totalMicros: number;
}

/** A paid automatic top-up; apply with `CreditLedger.post`, and mark its charge paid. */
export interface StripeAutoTopUpAction {
  type: "auto_topup";
  eventId: string;
  orgId: string;
  /** The charge's key (`auto-topup-<seq>`), from the PaymentIntent's metadata. */
  chargeKey: string;
  paymentIntentId: string;
  amountMicros: number;
  idempotencyKey: string;
}

/** An action that changes the ledger. */
export type StripeLedgerAction =
  | StripeTopupAction
  | StripeRefundAction
  | StripeDisputeAction
  | StripeAutoTopUpAction;

/** A card saved through Checkout in setup mode: read its SetupIntent and keep the card. */
export interface StripeCardSavedAction {
  type: "card_saved";
  eventId: string;
  orgId: string;
  checkoutSessionId: string;
  setupIntentId: string;
  customerId: string | null;
}

/** An automatic top-up that failed (declined, or the bank wants the cardholder): pause it. */
export interface StripeAutoTopUpFailedAction {
  type: "auto_topup_failed";
  eventId: string;
  orgId: string;
  chargeKey: string;
  paymentIntentId: string;
  /** Stripe's error code: `card_declined`, `authentication_required`, ... */
  code: string;
}

/** An action on the org's automatic top-up that moves no money. */
export type StripeAutoTopUpStateAction = StripeCardSavedAction | StripeAutoTopUpFailedAction;

/** Acknowledge and do nothing (yet). */
export interface StripeIgnoredEvent {
  type: "ignore";
  eventId: string;
  reason:
    | "payment_not_completed"
    | "no_payment_required"
    | "not_a_payment_session"
    | "not_an_auto_top_up"
    | "zero_amount"
    | "dispute_inquiry"
    | "unhandled_event_type";
}

/** An event this module refuses to credit; log it and acknowledge it (a retry will not fix it). */
export interface StripeRejectedEvent {
  type: "reject";
  eventId: string;
  reason: "unsupported_currency" | "missing_org" | "org_mismatch" | "malformed";
  message: string;
}

export type StripeEventMapping =
  | StripeLedgerAction
  | StripeAutoTopUpStateAction
  | StripeIgnoredEvent
  | StripeRejectedEvent;

/** Whether a mapping changes the ledger (rather than the card, or nothing at all). */
export function isStripeLedgerAction(mapping: StripeEventMapping): mapping is StripeLedgerAction {
  return (
    mapping.type === "topup" ||
    mapping.type === "auto_topup" ||
    mapping.type === "refund" ||
    mapping.type === "dispute" ||
    mapping.type === "dispute_reinstated"
  );
}

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
  const fromReference = stringField(session, "client_reference_id");
  const fromMetadata = metadataOrg(session);
  if (fromReference !== null && fromMetadata !== null && fromReference !== fromMetadata) {
    return {
      type: "reject",
      eventId: event.id,
      reason: "org_mismatch",
      message: "client_reference_id and metadata name different orgs",
    };
  }
  const orgId = fromReference ?? fromMetadata;
  if (orgId === null) {
    return {
      type: "reject",
      eventId: event.id,
      reason: "missing_org",
      message: "neither client_reference_id nor metadata names an org",
    };
  }
  if (stringField(session, "currency")?.toLowerCase() !== "usd") {
    return unsupportedCurrency(event, session);
  }
  const amountTotal = requireAmount(session, "amount_total");
  if (amountTotal === 0) return { type: "ignore", eventId: event.id, reason: "zero_amount" };
  return {
    type: "topup",
    eventId: event.id,
    orgId,
    checkoutSessionId,
    paymentIntentId: idField(session, "payment_intent"),
    amountMicros: centsToMicros(amountTotal),
    idempotencyKey: `stripe:checkout:${checkoutSessionId}`,
  };
}

function missingOrg(event: StripeEvent, where: string): StripeRejectedEvent {
  return {
    type: "reject",
    eventId: event.id,
    reason: "missing_org",
    message: `${where} names no org`,
  };
}

/** A completed setup session of ours (its metadata names the org): a card to keep. */
function mapCardSaved(event: StripeEvent, session: Json): StripeEventMapping {
  const orgId = metadataOrg(session);
  if (orgId === null) return missingOrg(event, "the setup session's metadata");
  const setupIntentId = idField(session, "setup_intent");
  if (setupIntentId === null) throw new MalformedEvent("missing setup_intent");
  return {
    type: "card_saved",
    eventId: event.id,
    orgId,
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
  const orgId = metadataOrg(intent);
  if (orgId === null) return missingOrg(event, "the automatic top-up's metadata");
  const paymentIntentId = requireString(intent, "id");
  if (!succeeded) {
    const error = isRecord(intent.last_payment_error) ? intent.last_payment_error : {};
    return {
      type: "auto_topup_failed",
      eventId: event.id,
      orgId,
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
    orgId,
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
  return {
    type: "refund",
    eventId: event.id,
    orgId: metadataOrg(charge),
    chargeId,
    paymentIntentId: idField(charge, "payment_intent"),
    reference: `stripe:refunds:${chargeId}`,
    totalMicros: -centsToMicros(refunded),
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
    orgId: metadataOrg(dispute),
    disputeId,
    chargeId: idField(dispute, "charge"),
    paymentIntentId: idField(dispute, "payment_intent"),
    reference: `stripe:${reinstated ? "dispute-reinstated" : "dispute"}:${disputeId}`,
    totalMicros: reinstated ? amountMicros : -amountMicros,
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

/**
 * Applies a mapped action to the org's ledger (inside the BillingAccount, in the same transaction
 * that records `event.id`). Idempotent: applying the same action, or another event's action for
 * the same payment, refund total or dispute, posts at most once.
 */
export function applyStripeAction(
  ledger: CreditLedger,
  action: StripeLedgerAction,
  now: number,
): PostResult {
  switch (action.type) {
    case "topup":
      return ledger.post({
        kind: "topup",
        amountMicros: action.amountMicros,
        idempotencyKey: action.idempotencyKey,
        reference: action.checkoutSessionId,
        memo: "Stripe Checkout",
        now,
        // Refunds and disputes name the payment intent: they take from this top-up's lot first.
        grant: { source: "top_up", fundingRef: action.paymentIntentId ?? action.checkoutSessionId },
      });
    case "auto_topup":
      return ledger.post({
        kind: "topup",
        amountMicros: action.amountMicros,
        idempotencyKey: action.idempotencyKey,
        reference: action.paymentIntentId,
        memo: "Automatic top-up",
        now,
        grant: { source: "top_up", fundingRef: action.paymentIntentId },
      });
    case "refund":
      return ledger.postCumulative({
        kind: "adjustment",
        reference: action.reference,
        totalMicros: action.totalMicros,
        memo: "Stripe refund",
        now,
        fundingRef: action.paymentIntentId,
      });
    case "dispute":
    case "dispute_reinstated":
      return ledger.postCumulative({
        kind: "adjustment",
        reference: action.reference,
        totalMicros: action.totalMicros,
        memo: action.type === "dispute" ? "Stripe dispute" : "Stripe dispute reinstated",
        now,
        fundingRef: action.paymentIntentId,
      });
  }
}
