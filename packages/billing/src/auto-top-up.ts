/**
 * Automatic top-up (issue 16.1, 2026-12-03): an org's owners and admins save a card and set a
 * threshold, an amount and a monthly cap; when the available balance falls below the threshold
 * the BillingAccount charges the card off-session, once per crossing, and credits only what the
 * verified `payment_intent.succeeded` webhook says was paid.
 *
 * A crossing is the balance falling below the threshold from at or above it
 * (`AutoTopUpStore.due`); each has one charge key (`auto-topup-<n>`). A charge that leaves the
 * balance still below starts no new one. A charge that failed (declined, or needing the
 * cardholder's authentication) pauses automatic top-up until the card is saved again or an admin
 * saves it on again: it is never retried by itself.
 *
 * This file holds what the account shows and checks without a table: the settings, the card, the
 * charges and their states, a crossing's charge key and the retry backoff. Their tables and the
 * decisions over them are `AutoTopUpStore` (auto-top-up-store.ts).
 */
import { assertPositiveMicros, MICROS_PER_CENT } from "./money.ts";

export interface AutoTopUpSettings {
  enabled: boolean;
  /** A charge is made when the available balance falls below this. */
  thresholdMicros: number;
  /** What each automatic charge adds. */
  amountMicros: number;
  /** At most this much is charged automatically per UTC month (requested or paid). */
  monthlyCapMicros: number;
}

/** A card saved through Checkout in setup mode, as Stripe described it. */
export interface SavedCard {
  customerId: string;
  paymentMethodId: string;
  brand: string;
  last4: string;
  expMonth: number;
  expYear: number;
  savedAt: number;
}

export type AutoTopUpChargeStatus = "requested" | "succeeded" | "failed";

export interface AutoTopUpCharge {
  /** `auto-topup-<funding seq>`: the crossing it is for, unique. */
  key: string;
  amountMicros: number;
  status: AutoTopUpChargeStatus;
  paymentIntentId: string | null;
  /** Stripe's error code of a failed charge: `card_declined`, `authentication_required`, ... */
  failureCode: string | null;
  /** Requests made to Stripe for it (more than one only after Stripe could not be reached). */
  attempts: number;
  createdAt: number;
  updatedAt: number;
}

/** Why automatic top-up is stopped until someone acts. */
export interface AutoTopUpPause {
  code: string;
  chargeKey: string;
  at: number;
}

export interface AutoTopUpState {
  settings: AutoTopUpSettings;
  card: SavedCard | null;
  paused: AutoTopUpPause | null;
  /** Requested or paid automatically this UTC month, against the cap. */
  monthChargedMicros: number;
  /** The latest charges, newest first. */
  charges: AutoTopUpCharge[];
}

export const AUTO_TOP_UP_OFF: AutoTopUpSettings = {
  enabled: false,
  thresholdMicros: 0,
  amountMicros: 0,
  monthlyCapMicros: 0,
};

/** Backoff of a request to Stripe that got no answer: 1 minute, doubling, at most an hour. */
const RETRY_BASE_MS = 60_000;
const RETRY_MAX_MS = 60 * 60_000;

/** The charge key of the n-th crossing (also, with the org id, Stripe's idempotency key for it). */
export const autoTopUpKey = (crossing: number): string => `auto-topup-${crossing}`;

/** Checks the three amounts of enabled settings; throws RangeError naming the one that is wrong. */
export function checkAutoTopUpSettings(settings: AutoTopUpSettings): void {
  if (!settings.enabled) return;
  assertPositiveMicros(settings.thresholdMicros, "thresholdMicros");
  assertPositiveMicros(settings.amountMicros, "amountMicros");
  assertPositiveMicros(settings.monthlyCapMicros, "monthlyCapMicros");
  if (settings.amountMicros % MICROS_PER_CENT !== 0) {
    throw new RangeError("amountMicros must be a whole number of cents");
  }
  if (settings.monthlyCapMicros < settings.amountMicros) {
    throw new RangeError("monthlyCapMicros must be at least amountMicros");
  }
}

/** When a charge's next request to Stripe is due: at once, then after a doubling backoff. */
export function attemptAt(charge: AutoTopUpCharge): number {
  if (charge.attempts === 0) return charge.createdAt;
  return charge.updatedAt + Math.min(RETRY_BASE_MS * 2 ** (charge.attempts - 1), RETRY_MAX_MS);
}
