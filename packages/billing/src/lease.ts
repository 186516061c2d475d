/**
 * Session credit leases (docs/2026-12-01-metering-leases.md): a lease is a hold on the org's
 * account owned by one session, `lease:<sessionId>:<n>`, that the session draws on locally, one
 * model call at a time, and reports to in batches. This file holds the lease's types, the pure
 * arithmetic of sizing a grant and the session's side; the account applies a report in one store
 * transaction (lease-reports.ts).
 */

import type { AlertRow, HoldRow } from "./ledger-store.ts";
import type { SettleInput } from "./settlement.ts";
import type { EndUserLimits, SpendLimitScope } from "./spend-limits.ts";

/** The prefix of every lease's hold id: what tells a lease from a per-call hold. */
export const LEASE_PREFIX = "lease:";

/** The hold id of a session's `n`th lease (ids are never reused, so each renewal keeps its id). */
export function leaseId(sessionId: string, n: number): string {
  return `${LEASE_PREFIX}${sessionId}:${n}`;
}

export function isLeaseId(requestId: string): boolean {
  return requestId.startsWith(LEASE_PREFIX);
}

/** One model call drawn on a lease, as the session reports it: a settle, plus what it drew. */
export interface LeaseUsage extends Omit<SettleInput, "now" | "attribution"> {
  /** The call's maximum cost, taken from the lease before the call was made. */
  drawMicros: number;
}

export interface LeaseInput {
  leaseId: string;
  memberId: string;
  /** Set when `memberId` is an end user's id: their app's limits (see `EndUserLimits`). */
  endUserLimits?: EndUserLimits;
  projectId: string | null;
  sessionId: string;
  /** Calls drawn on this lease that the account has not been told of, each keyed by its request id. */
  usages: readonly LeaseUsage[];
  /**
   * What the lease must still cover after this report: the draws of calls in flight. The account
   * never shrinks a lease below it (those calls were admitted against it).
   */
  keepMicros: number;
  /** The grant asked for, over `keepMicros`; 0 returns the lease (all but `keepMicros`). */
  wantMicros: number;
  /** The least grant worth having over `keepMicros` (one call's maximum); less is not granted. */
  minMicros: number;
  now: number;
  ttlMs: number;
}

/** How one reported call was settled. */
export type LeaseSettled =
  | {
      requestId: string;
      ok: true;
      /** `settled` was covered by the open lease; `settled_late` came after it closed. */
      outcome: "settled" | "settled_late" | "metered";
      replayed: boolean;
      /** The part of the charge the lease did not cover. */
      overrunMicros: number;
    }
  | { requestId: string; ok: false; reason: "conflict"; message: string };

/** What bounded a grant that was refused; null when the grant was made or only returned. */
export type LeaseLimit = "balance" | SpendLimitScope;

export type LeaseResult =
  | ({ ok: true } & LeaseReport)
  | { ok: false; reason: "conflict"; message: string };

export interface LeaseReport {
  /** The lease's hold after the report, or null when none is open (returned, expired, refused). */
  lease: HoldRow | null;
  settled: LeaseSettled[];
  /** Why the grant asked for was not made: the session draws per-call holds until it is. */
  refusedBy: LeaseLimit | null;
  alerts: AlertRow[];
}

/** What a grant may be, before the ask: each bound is over the lease's own current amount. */
export interface GrantBounds {
  /** Available credits if this lease held nothing. */
  freeMicros: number;
  /** Open leases other than this one. */
  otherLeases: number;
  /** Room under the org's monthly limit if this lease held nothing; null when there is no limit. */
  orgHeadroomMicros: number | null;
  /** The same under the member's daily limit. */
  memberHeadroomMicros: number | null;
  /** The same under an end user's daily and monthly limits (absent or null: none). */
  endUserDailyHeadroomMicros?: number | null;
  endUserMonthlyHeadroomMicros?: number | null;
  /** The same under each other limit that applies (a member's own, a project's; limit-rules.ts). */
  ruleHeadroom?: readonly { limit: SpendLimitScope; micros: number }[];
}

/**
 * The grant over `keep` a lease gets: the whole ask, or nothing. It is made only while the ask
 * is at most a fair share of what is free and of the room under each limit: the share of every
 * other open lease, this one and one more (`otherLeases + 2`), so two hundred sessions of one org
 * split the balance instead of the first ones taking it all, and a lease never takes what a call
 * held on its own would need. Refused (with the bound that refused it) otherwise: near any limit
 * every call is held on its own, and exactly the affordable calls run.
 */
export function sizeGrant(
  ask: { wantMicros: number; keepMicros: number; minMicros: number },
  bounds: GrantBounds,
): { grantMicros: number; refusedBy: null } | { grantMicros: 0; refusedBy: LeaseLimit } {
  const shares = bounds.otherLeases + 2;
  const room = (micros: number) => Math.floor(Math.max(0, micros) / shares) - ask.keepMicros;
  const limits: [number | null, LeaseLimit][] = [
    [bounds.freeMicros, "balance"],
    [bounds.orgHeadroomMicros, "org_monthly"],
    [bounds.memberHeadroomMicros, "member_daily"],
    [bounds.endUserDailyHeadroomMicros ?? null, "end_user_daily"],
    [bounds.endUserMonthlyHeadroomMicros ?? null, "end_user_monthly"],
    ...(bounds.ruleHeadroom ?? []).map((one): [number, LeaseLimit] => [one.micros, one.limit]),
  ];
  const want = Math.max(ask.wantMicros, ask.minMicros);
  for (const [micros, limit] of limits) {
    if (micros !== null && room(micros) < want) return { grantMicros: 0, refusedBy: limit };
  }
  return { grantMicros: want, refusedBy: null };
}

/**
 * A session's side of its lease, as the agent keeps it durably: what the account granted (the
 * lease's hold as last reported) and what was drawn since (the maxima of calls in flight, plus the
 * prices of settled calls the account has not been told of). `granted - drawn` is what the next
 * calls may draw without asking.
 */
export interface LocalLease {
  id: string;
  grantedMicros: number;
  drawnMicros: number;
  expiresAt: number;
}

/** How a session sizes its asks: a few expected calls of headroom over one call's maximum. */
export interface LeasePolicy {
  /** Expected calls a grant should cover (K). */
  steps: number;
  /** How long a lease lives unless renewed. */
  ttlMs: number;
  /**
   * No call is drawn on a lease closer than this to its expiry (the longest a call may run): a
   * call drawn on a lease always ends before the account could expire it.
   */
  callMs: number;
}

export const DEFAULT_LEASE_POLICY: LeasePolicy = {
  steps: 16,
  ttlMs: 20 * 60_000,
  callMs: 10 * 60_000,
};

/** The ask of a renewal: `want` over what is kept, at least one call's maximum (`min`). */
export function leaseAsk(
  policy: LeasePolicy,
  maxCallMicros: number,
  expectedCallMicros: number,
): { wantMicros: number; minMicros: number } {
  const expected = Math.min(maxCallMicros, Math.max(1, expectedCallMicros));
  return { wantMicros: maxCallMicros + policy.steps * expected, minMicros: maxCallMicros };
}

/**
 * What a session expects its next call to cost, after a call priced `priceMicros`: that price for
 * the first call, then a running average that gives each new price a quarter of the weight, so
 * the asks follow the session's recent calls without jumping at one dear one.
 */
export function nextExpectedCall(expectedMicros: number | null, priceMicros: number): number {
  return expectedMicros === null ? priceMicros : Math.round((expectedMicros * 3 + priceMicros) / 4);
}

/** Whether a call of at most `maxCallMicros` may be drawn on the lease now, without asking. */
export function canDraw(
  lease: LocalLease | null,
  maxCallMicros: number,
  now: number,
  policy: LeasePolicy,
): lease is LocalLease {
  return (
    lease !== null &&
    now + policy.callMs < lease.expiresAt &&
    lease.grantedMicros - lease.drawnMicros >= maxCallMicros
  );
}

/**
 * Whether to renew in the background after a draw: fewer than two expected calls (over one
 * maximum) left, or half the time gone in which calls may still be drawn. A steady session renews
 * before it runs dry or out of time.
 */
export function shouldRenew(
  lease: LocalLease,
  maxCallMicros: number,
  expectedCallMicros: number,
  now: number,
  policy: LeasePolicy,
): boolean {
  const left = lease.grantedMicros - lease.drawnMicros;
  return (
    left < maxCallMicros + 2 * Math.max(1, expectedCallMicros) ||
    lease.expiresAt - now < policy.callMs + (policy.ttlMs - policy.callMs) / 2
  );
}

/**
 * The session's lease once the account answered a report: the prices it was told of leave
 * `drawn` (the account took them from the hold), and the grant is the hold as it is now. Null
 * when the account has no open lease under this id any more (returned, expired or refused).
 */
export function afterReport(
  lease: LocalLease,
  reportedMicros: number,
  hold: HoldRow | null,
): LocalLease | null {
  if (hold === null) return null;
  return {
    id: lease.id,
    grantedMicros: hold.amountMicros,
    drawnMicros: Math.max(0, lease.drawnMicros - reportedMicros),
    expiresAt: hold.expiresAt,
  };
}
