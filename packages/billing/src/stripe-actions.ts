/**
 * What a verified Stripe event means for Parley, as stripe-events.ts maps it: a credit (a Checkout
 * top-up, a paid automatic top-up), a report about a payment's refunds or dispute, a change to
 * the automatic top-up that moves no money, or nothing; and how a credit is applied to the
 * ledger, once per payment whatever the number and order of the events that name it. A reversal
 * is applied by `ReversalStore` (reversals.ts), at most what its payment paid.
 */

import type { PostResult } from "./credits.ts";
import type { CreditLedger } from "./ledger.ts";
import type { ReversalReport } from "./reversals.ts";

/** A credit for a completed Checkout Session; apply with `CreditLedger.post`. */
export interface StripeTopupAction {
  type: "topup";
  eventId: string;
  /** The org the session names (client_reference_id, else metadata): a claim, never trusted. */
  claimedOrgId: string | null;
  checkoutSessionId: string;
  paymentIntentId: string | null;
  amountMicros: number;
  idempotencyKey: string;
}

/** A charge's refunds so far (Stripe's running total), a report about the payment it belongs to. */
export interface StripeRefundAction {
  type: "refund";
  eventId: string;
  chargeId: string;
  /** The payment; null for a charge made without a PaymentIntent (never one of Parley's). */
  paymentIntentId: string | null;
  refundedMicros: number;
}

/** A dispute's withdrawal (`dispute`) or its reinstatement, a report about the disputed payment. */
export interface StripeDisputeAction {
  type: "dispute" | "dispute_reinstated";
  eventId: string;
  disputeId: string;
  chargeId: string | null;
  paymentIntentId: string | null;
  amountMicros: number;
}

/** A paid automatic top-up; apply with `CreditLedger.post`, and mark its charge paid. */
export interface StripeAutoTopUpAction {
  type: "auto_topup";
  eventId: string;
  /** The org the intent's metadata names: where to look for the charge, never proof of it. */
  claimedOrgId: string | null;
  /** The charge's key (`auto-topup-<seq>`), from the PaymentIntent's metadata. */
  chargeKey: string;
  paymentIntentId: string;
  amountMicros: number;
  idempotencyKey: string;
}

/** What credits an org: a Checkout top-up or an automatic one. */
export type StripeCreditAction = StripeTopupAction | StripeAutoTopUpAction;

/** What takes credits back: a report about a payment's refunds or dispute. */
export type StripeReversalAction = StripeRefundAction | StripeDisputeAction;

/** An action that changes the ledger. */
export type StripeLedgerAction = StripeCreditAction | StripeReversalAction;

/** A card saved through Checkout in setup mode: read its SetupIntent and keep the card. */
export interface StripeCardSavedAction {
  type: "card_saved";
  eventId: string;
  /** The org the setup session's metadata names: a claim, never trusted. */
  claimedOrgId: string | null;
  checkoutSessionId: string;
  setupIntentId: string;
  customerId: string | null;
}

/** An automatic top-up that failed (declined, or the bank wants the cardholder): pause it. */
export interface StripeAutoTopUpFailedAction {
  type: "auto_topup_failed";
  eventId: string;
  /** The org the intent's metadata names: where to look for the charge, never proof of it. */
  claimedOrgId: string | null;
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
  reason: "unsupported_currency" | "malformed";
  message: string;
}

export type StripeEventMapping =
  | StripeLedgerAction
  | StripeAutoTopUpStateAction
  | StripeIgnoredEvent
  | StripeRejectedEvent;

/** Whether a mapping changes the ledger (rather than the card, or nothing at all). */
export function isStripeLedgerAction(mapping: StripeEventMapping): mapping is StripeLedgerAction {
  return isStripeCreditAction(mapping) || isStripeReversalAction(mapping);
}

export function isStripeCreditAction(mapping: StripeEventMapping): mapping is StripeCreditAction {
  return mapping.type === "topup" || mapping.type === "auto_topup";
}

export function isStripeReversalAction(
  mapping: StripeEventMapping,
): mapping is StripeReversalAction {
  return (
    mapping.type === "refund" || mapping.type === "dispute" || mapping.type === "dispute_reinstated"
  );
}

/** A reversal as `ReversalStore.apply` takes it, with what the payment paid (Parley's record). */
export function reversalReport(
  action: StripeReversalAction & { paymentIntentId: string },
  paidMicros: number,
): ReversalReport {
  return action.type === "refund"
    ? {
        paymentRef: action.paymentIntentId,
        paidMicros,
        kind: "refund",
        sourceId: action.chargeId,
        chargeId: null,
        amountMicros: action.refundedMicros,
      }
    : {
        paymentRef: action.paymentIntentId,
        paidMicros,
        kind: action.type,
        sourceId: action.disputeId,
        chargeId: action.chargeId,
        amountMicros: action.amountMicros,
      };
}

/**
 * Applies a credit to the org's ledger (inside the BillingAccount, in the same transaction that
 * records `event.id`). Idempotent: applying the same action, or another event's action for the
 * same payment, posts at most once. Reversals go through `ReversalStore.apply` (reversals.ts).
 */
export function applyStripeAction(
  ledger: CreditLedger,
  action: StripeCreditAction,
  now: number,
): PostResult {
  if (action.type === "topup") {
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
  }
  return ledger.post({
    kind: "topup",
    amountMicros: action.amountMicros,
    idempotencyKey: action.idempotencyKey,
    reference: action.paymentIntentId,
    memo: "Automatic top-up",
    now,
    grant: { source: "top_up", fundingRef: action.paymentIntentId },
  });
}
