import { z } from "zod";
import { microsSchema as billingMicros } from "./billing.ts";
import type { Page } from "./pagination.ts";
import { pageSchemaOf } from "./responses.ts";

/**
 * What the platform operator reads of Stripe's side (`GET /api/operator/stripe/*`, issue 28):
 * verified events Parley acknowledged without acting on them as they asked, and payments whose
 * refunds and disputes at Stripe passed what they paid. docs/2026-12-06-stripe-trust.md.
 */

/** Why an event credited (or saved, or took back) nothing. */
export const UNRECOGNIZED_REASONS = [
  "checkout_not_started",
  "setup_not_started",
  "auto_top_up_not_started",
  "unknown_payment",
  "no_payment_intent",
  "amount_mismatch",
] as const;
export type UnrecognizedReason = (typeof UNRECOGNIZED_REASONS)[number];

export interface UnrecognizedStripeEvent {
  /** Stripe's event id (look it up in Stripe's dashboard). */
  eventId: string;
  /** Stripe's event type. */
  type: string;
  reason: UnrecognizedReason;
  /** The Checkout Session, PaymentIntent, charge or dispute the event is about. */
  objectId: string;
  paymentIntentId: string | null;
  /** The org the event named (client_reference_id or metadata), when shaped like an org id. */
  claimedOrgId: string | null;
  /** What it would have credited or taken back, in micro-dollars; null when it names none. */
  amountMicros: number | null;
  receivedAt: string;
  /** A refund or dispute held for its payment, applied once the payment was recorded. */
  resolvedAt: string | null;
}

export interface ReversalExcess {
  paymentIntentId: string;
  orgId: string;
  /** What the payment credited. */
  amountMicros: number;
  /** Refunded at Stripe. */
  refundedMicros: number;
  /** Disputed at Stripe and not given back. */
  disputedMicros: number;
  /** Taken back from the org's credits: at most `amountMicros`. */
  reversedMicros: number;
  /** What Stripe took beyond the payment: refunded + disputed - reversed. Not taken from credits. */
  excessMicros: number;
  createdAt: string;
}

const iso = z
  .string()
  .meta({ description: "ISO 8601 timestamp", examples: ["2026-12-06T09:30:00.000Z"] });
const micros = billingMicros.meta({
  description: "integer micro-dollars (1 USD = 1,000,000)",
  examples: [5_000_000],
});

export const unrecognizedStripeEventSchema = z
  .strictObject({
    eventId: z.string(),
    type: z.string(),
    reason: z.enum(UNRECOGNIZED_REASONS),
    objectId: z.string(),
    paymentIntentId: z.string().nullable(),
    claimedOrgId: z.string().nullable().describe("Named by the event; never trusted"),
    amountMicros: micros.nullable(),
    receivedAt: iso,
    resolvedAt: iso.nullable(),
  })
  .meta({ id: "UnrecognizedStripeEvent" });
export const unrecognizedStripeEventPageSchema = pageSchemaOf(unrecognizedStripeEventSchema).meta({
  id: "UnrecognizedStripeEventPage",
});

export const reversalExcessSchema = z
  .strictObject({
    paymentIntentId: z.string(),
    orgId: z.string(),
    amountMicros: micros,
    refundedMicros: micros,
    disputedMicros: micros,
    reversedMicros: micros,
    excessMicros: micros,
    createdAt: iso,
  })
  .meta({ id: "ReversalExcess" });
export const reversalExcessPageSchema = pageSchemaOf(reversalExcessSchema).meta({
  id: "ReversalExcessPage",
});

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameType = <A, B>(_proof: Same<A, B>) => undefined;
sameType<z.output<typeof unrecognizedStripeEventPageSchema>, Page<UnrecognizedStripeEvent>>(true);
sameType<z.output<typeof reversalExcessPageSchema>, Page<ReversalExcess>>(true);
