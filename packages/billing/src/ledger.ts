/**
 * The credit ledger of one organization: append-only entries, two-phase holds, spend limits and
 * threshold alerts, over a synchronous {@link LedgerStore}.
 *
 * Balance. `posted` is the sum of all entries, `held` the sum of open holds, and
 * `available = posted − held`. Both totals are cached in counters and checked by `reconcile()`.
 *
 * Admission. A reserve is admitted only when `available ≥ amount` (and within the spend limits),
 * so an admitted reserve never takes `available` below zero.
 *
 * Overdraft bound. Only three things lower `available` without a reserve: a settle whose charge
 * exceeds its open hold (by exactly `charge − hold`, its overrun), a late settle after the hold
 * expired (by the whole charge), and a negative adjustment (a refund or dispute of credits already
 * spent). So at any time `available ≥ −(sum of the overruns of holds that were open when
 * `available` was last ≥ 0, plus late charges and negative adjustments since)`. With holds sized by
 * `maxCallCostMicros` for one model step, an overrun only happens when the provider charges more
 * than the price table predicts, and the overdraft is at most one step's overrun per concurrent
 * request. A settle with a charge above its hold still posts the whole charge: the money was spent.
 *
 * Late settle. A hold resolves once. A settle for a released hold is refused (`hold_released`: the
 * caller declared no model call happened). A settle for an expired hold is a late settle: the
 * provider did charge, so the usage is posted anyway, without a hold (`outcome: "settled_late"`,
 * `overrunMicros` = the whole charge), and the hold stays `expired`. Set the hold TTL above the
 * longest possible model call so that a late settle means a crash or a stuck alarm, not routine.
 * Holds expire only through `expire(now)`: an open hold past its `expiresAt` still settles normally.
 *
 * Lots (grants). Every credit entry opens a lot (its source, priority and expiry: lots.ts) and
 * every debit takes from lots at the moment it posts: usage at settle (never at reserve: holds
 * stay amounts), a refund or dispute from its own top-up's lot first, an expiry from its own lot
 * only. Draws take the soonest-expiring lot first, then the lower priority, then the oldest.
 * `expireGrants(now)` (the account's alarm) posts one entry per due lot, of minus its remainder,
 * keyed by the lot: a fourth thing that can lower `available` without a reserve (credits held
 * for calls in flight can expire under them; the calls still settle in full).
 *
 * Parts. `CreditLedger` is the one door; each operation lives with its concern, and every part
 * writes money through the book (ledger-book.ts: the totals, entries with their lots, holds):
 * a call's own hold in call-holds.ts (reserve, settle, release, expire), a session's lease in
 * lease-reports.ts, credits and their expiry in credits.ts, the limits in spend-limits.ts, the
 * alerts in alert-triggers.ts, the counters' names in ledger-counters.ts and what a settle says
 * in settlement.ts. Each operation is one store transaction.
 */

import { AlertTriggers } from "./alert-triggers.ts";
import {
  CallHolds,
  type ExpireResult,
  type ReleaseResult,
  type ReserveInput,
  type ReserveResult,
  type SettleResult,
} from "./call-holds.ts";
import {
  Credits,
  type ExpireGrantsResult,
  type PostCumulativeInput,
  type PostInput,
  type PostResult,
} from "./credits.ts";
import type { Forecast } from "./forecast.ts";
import type { LeaseInput, LeaseResult } from "./lease.ts";
import { LeaseReports } from "./lease-reports.ts";
import { type Balance, LedgerBook, type ReconcileReport } from "./ledger-book.ts";
import { assertLedgerConfig, DEFAULT_LEDGER_CONFIG, type LedgerConfig } from "./ledger-config.ts";
import type { AlertRow, EntryRow, HoldRow, LedgerStore, LotRow } from "./ledger-store.ts";
import type { SettleInput } from "./settlement.ts";
import { type Principal, type PrincipalLimit, SpendLimits } from "./spend-limits.ts";

/**
 * One organization's credits. Every method is synchronous and runs in one store transaction, so a
 * Durable Object (the single writer per org) gets atomic reserve/settle without awaiting. Expected
 * outcomes (refusals, replays, conflicts) are return values; a `RangeError` means a caller bug
 * (a non-integer amount, an empty id).
 */
export class CreditLedger {
  readonly config: LedgerConfig;
  readonly #book: LedgerBook;
  readonly #limits: SpendLimits;
  readonly #alerts: AlertTriggers;
  readonly #holds: CallHolds;
  readonly #leases: LeaseReports;
  readonly #credits: Credits;

  constructor(store: LedgerStore, config: Partial<LedgerConfig> = {}) {
    this.config = { ...DEFAULT_LEDGER_CONFIG, ...config };
    assertLedgerConfig(this.config);
    this.#book = new LedgerBook(store);
    this.#limits = new SpendLimits(this.#book, this.config);
    this.#alerts = new AlertTriggers(this.#book, this.#limits, this.config);
    this.#holds = new CallHolds(this.#book, this.#limits, this.#alerts);
    this.#leases = new LeaseReports(this.#book, this.#limits, this.#alerts);
    this.#credits = new Credits(this.#book, this.#alerts);
  }

  /** Posted, held and available credits, from the cached totals. */
  balance(): Balance {
    return this.#book.balance();
  }

  /** The hold of a request, whatever its status, or null. */
  hold(requestId: string): HoldRow | null {
    return this.#book.store.getHold(requestId);
  }

  /** Entries after `afterSeq`, oldest first (for the ledger page). */
  entries(afterSeq = 0, limit = 100): EntryRow[] {
    return this.#book.store.listEntries(afterSeq, limit);
  }

  /**
   * How long the available balance lasts at the last 7 UTC days' billable spend (forecast.ts),
   * from the org's per-day spend counters.
   */
  forecast(now: number): Forecast {
    return this.#book.forecast(now);
  }

  /**
   * Seq of the latest credit entry (0 before any): the balance can only fall below a threshold
   * again after a credit, so it names a threshold crossing (low-balance alerts, auto top-up).
   */
  fundingSeq(): number {
    return this.#book.fundingSeq();
  }

  /** The posted balance right after the latest credit entry (0 before any). */
  fundedBalance(): number {
    return this.#book.fundedBalance();
  }

  /**
   * The grants whose credits are left, in draw order. Before an account's first entry since lots
   * exist, its whole balance shows as the opening lot (not yet written).
   */
  grants(now: number): LotRow[] {
    return this.#book.liveLots(now);
  }

  /** The limits on a principal's calls with their spend and when each resets (spend-limits.ts). */
  limitStatus(input: Principal & { now: number }): (PrincipalLimit & { resetsAt: number })[] {
    return this.#limits.status(input);
  }

  /**
   * Checks the cached totals against the rows: posted must equal the sum of entries, held the sum
   * of open holds, and the lots the balance. Reads only; run it from a scheduled check or after a
   * migration.
   */
  reconcile(): ReconcileReport {
    return this.#book.reconcile();
  }

  /** Reserves credits for one request before its model call (call-holds.ts). */
  reserve(input: ReserveInput): ReserveResult {
    return this.#holds.reserve(input);
  }

  /** Settles a request to what it actually cost, exactly once (call-holds.ts). */
  settle(input: SettleInput): SettleResult {
    return this.#holds.settle(input);
  }

  /** Releases an open hold without charging: the request made no model call (call-holds.ts). */
  release(requestId: string, now: number): ReleaseResult {
    return this.#holds.release(requestId, now);
  }

  /** Voids every open hold past its expiry; call it from the account's alarm (call-holds.ts). */
  expire(now: number): ExpireResult {
    return this.#holds.expire(now);
  }

  /**
   * Reports a session's calls to its lease and renews or returns the lease, in one transaction
   * (lease-reports.ts; docs/2026-12-01-metering-leases.md).
   */
  lease(input: LeaseInput): LeaseResult {
    return this.#leases.report(input);
  }

  /** Posts a grant, top-up or adjustment once per idempotency key (credits.ts). */
  post(input: PostInput): PostResult {
    return this.#credits.post(input);
  }

  /** Brings the entries under a reference to a running total, such as Stripe's refunds (credits.ts). */
  postCumulative(input: PostCumulativeInput): PostResult {
    return this.#credits.postCumulative(input);
  }

  /** Expires every live lot that is due, once; call it from the account's alarm (credits.ts). */
  expireGrants(now: number): ExpireGrantsResult {
    return this.#credits.expireGrants(now);
  }

  /**
   * Records an alert raised outside the ledger's own checks (a failed automatic top-up), once per
   * key like every alert. Returns the new row to deliver, or null if it had fired already.
   */
  raiseAlert(alert: Omit<AlertRow, "key" | "firedAt">, now: number): AlertRow | null {
    return this.#alerts.raise(alert, now);
  }

  /**
   * The org-wide alerts the account's state calls for now, fired (recorded once each): after a
   * setting changed, so a low-balance threshold set above the balance fires at once rather than at
   * the next call, and a new limit already passed says so (alert-triggers.ts).
   */
  checkAlerts(now: number): AlertRow[] {
    return this.#book.store.transact(() => this.#alerts.collect(now, null, null));
  }
}
