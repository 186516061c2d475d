import type {
  EndUserLimits,
  LeaseInput,
  PostResult,
  SettleInput,
  UsageReportQuery,
} from "@parley/billing";

/** What callers send a BillingAccount (billing-account.ts), and what some calls answer. */

export interface ReserveRequest {
  requestId: string;
  amountMicros: number;
  memberId: string;
  projectId: string | null;
  sessionId: string | null;
  /** How long the hold lives before the alarm voids it. */
  ttlMs?: number;
  /** Set for an end user's call: their app's limits. */
  endUserLimits?: EndUserLimits;
}

export type SettleRequest = Omit<SettleInput, "now">;

/** A session's report to its lease, with a renewal or a return (`CreditLedger.lease`). */
export type LeaseRequest = Omit<LeaseInput, "now">;

/** A usage report's query; `memberId` restricts it to one member (what a plain member may see). */
export type UsageQuery = UsageReportQuery;

/**
 * A Stripe credit applied, already applied, or refused: `unrecognized` (not a charge of this
 * account's) or `pending` (the charge is still waiting for Stripe's answer: ask again later).
 */
export type StripeApplyResult =
  | { status: "duplicate" }
  | { status: "applied"; result: PostResult }
  | { status: "unrecognized" }
  | { status: "pending" };
