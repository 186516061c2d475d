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
 */

import { AlertTriggers, alertMember } from "./alert-triggers.ts";
import {
  Credits,
  type ExpireGrantsResult,
  type PostCumulativeInput,
  type PostInput,
  type PostResult,
} from "./credits.ts";
import type { Forecast } from "./forecast.ts";
import { assertId, assertTime } from "./input-checks.ts";
import { isLeaseId, type LeaseInput, type LeaseResult } from "./lease.ts";
import { LeaseReports } from "./lease-reports.ts";
import { type Balance, LedgerBook, type ReconcileReport } from "./ledger-book.ts";
import { assertLedgerConfig, DEFAULT_LEDGER_CONFIG, type LedgerConfig } from "./ledger-config.ts";
import type {
  AlertRow,
  EntryRow,
  HoldRow,
  LedgerStore,
  LotRow,
  UsageOutcome,
  UsageRow,
} from "./ledger-store.ts";
import { assertPositiveMicros } from "./money.ts";
import {
  type Attribution,
  assertSettle,
  overrun,
  type SettleInput,
  sameAttribution,
  sameSettle,
  usageKey,
  usageRow,
  usageTime,
} from "./settlement.ts";
import {
  assertEndUserLimits,
  type EndUserLimits,
  type Principal,
  type PrincipalLimit,
  type SpendLimitScope,
  SpendLimits,
} from "./spend-limits.ts";

export interface ReserveInput {
  requestId: string;
  amountMicros: number;
  memberId: string;
  projectId: string | null;
  sessionId: string | null;
  now: number;
  ttlMs: number;
  /** Set when `memberId` is an end user's id: their app's limits (see `EndUserLimits`). */
  endUserLimits?: EndUserLimits;
}

export type ReserveResult =
  | { ok: true; hold: HoldRow; replayed: boolean; alerts: AlertRow[] }
  | {
      ok: false;
      reason: "insufficient_credits";
      availableMicros: number;
      requiredMicros: number;
      alerts: AlertRow[];
    }
  | {
      ok: false;
      reason: "spend_limit";
      limit: SpendLimitScope;
      limitMicros: number;
      committedMicros: number;
      requiredMicros: number;
      alerts: AlertRow[];
    }
  | { ok: false; reason: "conflict"; message: string };

export type SettleResult =
  | {
      ok: true;
      outcome: UsageOutcome;
      replayed: boolean;
      usage: UsageRow;
      /** The usage entry; null when nothing was charged. */
      entry: EntryRow | null;
      /** The part of the charge not covered by an open hold. */
      overrunMicros: number;
      alerts: AlertRow[];
    }
  | { ok: false; reason: "conflict"; message: string }
  | { ok: false; reason: "hold_released"; hold: HoldRow }
  | { ok: false; reason: "no_hold" };

export type ReleaseResult =
  | { ok: true; hold: HoldRow; replayed: boolean }
  | { ok: false; reason: "unknown_request" }
  | { ok: false; reason: "already_resolved"; hold: HoldRow };

export interface ExpireResult {
  /** Holds this call voided, as they are now. */
  expired: HoldRow[];
  /** The earliest expiry among holds still open, for the next alarm; null when none. */
  nextExpiresAt: number | null;
}

/**
 * One organization's credits. Every method is synchronous and runs in one store transaction, so a
 * Durable Object (the single writer per org) gets atomic reserve/settle without awaiting. Expected
 * outcomes (refusals, replays, conflicts) are return values; a `RangeError` means a caller bug
 * (a non-integer amount, an empty id).
 */
export class CreditLedger {
  readonly config: LedgerConfig;
  readonly #store: LedgerStore;
  readonly #book: LedgerBook;
  readonly #limits: SpendLimits;
  readonly #alerts: AlertTriggers;
  readonly #leases: LeaseReports;
  readonly #credits: Credits;

  constructor(store: LedgerStore, config: Partial<LedgerConfig> = {}) {
    this.#store = store;
    this.#book = new LedgerBook(store);
    this.config = { ...DEFAULT_LEDGER_CONFIG, ...config };
    assertLedgerConfig(this.config);
    this.#limits = new SpendLimits(this.#book, this.config);
    this.#alerts = new AlertTriggers(this.#book, this.#limits, this.config);
    this.#leases = new LeaseReports(this.#book, this.#limits, this.#alerts);
    this.#credits = new Credits(this.#book, this.#alerts);
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
   * Records an alert raised outside the ledger's own checks (a failed automatic top-up), once per
   * key like every alert. Returns the new row to deliver, or null if it had fired already.
   */
  raiseAlert(alert: Omit<AlertRow, "key" | "firedAt">, now: number): AlertRow | null {
    return this.#alerts.raise(alert, now);
  }

  /** Posted, held and available credits, from the cached totals. */
  balance(): Balance {
    return this.#book.balance();
  }

  /** The hold of a request, whatever its status, or null. */
  hold(requestId: string): HoldRow | null {
    return this.#store.getHold(requestId);
  }

  /** Entries after `afterSeq`, oldest first (for the ledger page). */
  entries(afterSeq = 0, limit = 100): EntryRow[] {
    return this.#store.listEntries(afterSeq, limit);
  }

  /**
   * Reserves credits for one request before the model call. Admitted only when
   * `available ≥ amountMicros` and the spend limits allow it. Replaying a request id with the same
   * amount and attribution returns the existing hold while it is open and changes nothing; once the
   * hold is settled, released or expired a replay is a conflict (a resolved hold never admits a new
   * call); different parameters are a conflict. A refusal records nothing but alerts, so the same request
   * id may be retried after a top-up. Returns the alerts that newly fired.
   */
  reserve(input: ReserveInput): ReserveResult {
    assertId(input.requestId, "requestId");
    assertId(input.memberId, "memberId");
    assertPositiveMicros(input.amountMicros, "amountMicros");
    assertEndUserLimits(input.endUserLimits);
    assertTime(input.now, "now");
    if (!Number.isSafeInteger(input.ttlMs) || input.ttlMs <= 0) {
      throw new RangeError("ttlMs must be a positive integer");
    }
    if (isLeaseId(input.requestId)) {
      return {
        ok: false,
        reason: "conflict",
        message: "a lease is granted by lease(), not reserve()",
      };
    }
    return this.#store.transact((): ReserveResult => {
      const existing = this.#store.getHold(input.requestId);
      if (existing !== null) {
        const same =
          existing.amountMicros === input.amountMicros &&
          existing.memberId === input.memberId &&
          existing.projectId === input.projectId &&
          existing.sessionId === input.sessionId;
        if (!same) {
          return {
            ok: false,
            reason: "conflict",
            message: `request ${input.requestId} was reserved with different parameters`,
          };
        }
        // A replay answers only while the hold is still open: a settled, released or expired hold
        // admits no further call, or a reused id would run a model call that is never charged.
        if (existing.status !== "open") {
          return {
            ok: false,
            reason: "conflict",
            message: `request ${input.requestId} was already ${existing.status}`,
          };
        }
        return { ok: true, hold: existing, replayed: true, alerts: [] };
      }
      if (this.#store.getUsage(input.requestId) !== null) {
        return {
          ok: false,
          reason: "conflict",
          message: `request ${input.requestId} was already settled without a reservation`,
        };
      }

      const { availableMicros } = this.balance();
      if (availableMicros < input.amountMicros) {
        return {
          ok: false,
          reason: "insufficient_credits",
          availableMicros,
          requiredMicros: input.amountMicros,
          alerts: this.#alerts.collect(input.now, alertMember(input), null),
        };
      }

      const limit = this.#limits.exceeded(input.now, input, input.amountMicros);
      if (limit !== null) {
        return {
          ok: false,
          reason: "spend_limit",
          limit: limit.scope,
          limitMicros: limit.limitMicros,
          committedMicros: limit.committedMicros,
          requiredMicros: input.amountMicros,
          alerts: this.#alerts.collect(input.now, alertMember(input), limit.scope),
        };
      }

      const hold: HoldRow = {
        requestId: input.requestId,
        amountMicros: input.amountMicros,
        memberId: input.memberId,
        projectId: input.projectId,
        sessionId: input.sessionId,
        status: "open",
        createdAt: input.now,
        expiresAt: input.now + input.ttlMs,
        resolvedAt: null,
      };
      this.#book.openHold(hold);
      const alerts = this.#alerts.collect(input.now, alertMember(input), null);
      return { ok: true, hold, replayed: false, alerts };
    });
  }

  /**
   * Settles a request to what it actually cost, exactly once. With an open hold: the hold is
   * resolved and the whole `priceMicros` is charged, even above the hold (the overrun is reported).
   * With an expired hold: a late settle, charged without a hold (see the module doc). With a
   * released hold: refused. With no hold: a non-billable request is metered (a usage event at
   * price 0, the balance untouched); a billable one is refused (`no_hold`). Replays with the same
   * parameters return the first result without charging again; different parameters are a conflict.
   */
  settle(input: SettleInput): SettleResult {
    assertSettle(input);

    return this.#store.transact((): SettleResult => {
      const previous = this.#store.getUsage(input.requestId);
      if (previous !== null) {
        if (!sameSettle(previous, input)) {
          return {
            ok: false,
            reason: "conflict",
            message: `request ${input.requestId} was settled with different parameters`,
          };
        }
        return this.#replayedSettle(previous);
      }

      const hold = this.#store.getHold(input.requestId);
      if (hold !== null && isLeaseId(hold.requestId)) {
        return {
          ok: false,
          reason: "conflict",
          message: "a lease is settled by lease(), not settle()",
        };
      }
      if (hold !== null && input.attribution !== undefined && !sameAttribution(hold, input)) {
        return {
          ok: false,
          reason: "conflict",
          message: `request ${input.requestId} was reserved for a different member, project or session`,
        };
      }
      if (hold === null) {
        if (input.billable) return { ok: false, reason: "no_hold" };
        const usage = this.#insertUsage(input, input.attribution ?? null, "metered", null);
        return {
          ok: true,
          outcome: "metered",
          replayed: false,
          usage,
          entry: null,
          overrunMicros: 0,
          alerts: [],
        };
      }
      if (hold.status === "released") return { ok: false, reason: "hold_released", hold };
      if (hold.status === "settled") {
        // settle writes the hold and the usage event in one transaction: one without the other
        // means the store lost a write.
        throw new Error(`hold ${hold.requestId} is settled but has no usage event`);
      }

      const late = hold.status === "expired";
      if (!late) this.#book.resolveHold(hold, "settled", input.now);
      const charge = input.billable ? input.priceMicros : 0;
      let entry: EntryRow | null = null;
      if (charge > 0) {
        entry = this.#book.postEntry({
          kind: "usage",
          amountMicros: -charge,
          idempotencyKey: usageKey(hold.requestId),
          reference: hold.requestId,
          memo: input.model,
          createdAt: usageTime(input),
        });
        this.#book.addSpend(input.now, hold.memberId, hold.projectId, charge);
      }
      const outcome: UsageOutcome = late ? "settled_late" : "settled";
      const usage = this.#insertUsage(input, hold, outcome, hold.amountMicros);
      return {
        ok: true,
        outcome,
        replayed: false,
        usage,
        entry,
        overrunMicros: overrun(outcome, charge, hold.amountMicros),
        alerts: this.#alerts.collect(input.now, hold.memberId, null),
      };
    });
  }

  /**
   * Reports a session's calls to its lease and renews or returns the lease, in one transaction
   * (lease-reports.ts; docs/2026-12-01-metering-leases.md).
   */
  lease(input: LeaseInput): LeaseResult {
    return this.#leases.report(input);
  }

  /**
   * The limits that apply to a principal's calls in a project, with their spend so far and when
   * each resets: the org's monthly limit first, then the principal's and the project's. What the
   * chat's warning reads; counts settled spend, so ask the lease holders to report first.
   */
  limitStatus(input: Principal & { now: number }): (PrincipalLimit & { resetsAt: number })[] {
    return this.#limits.status(input);
  }

  /**
   * Releases an open hold without charging: the request made no model call. Releasing a released
   * hold is a replay; a settled or expired hold is refused (`already_resolved`).
   */
  release(requestId: string, now: number): ReleaseResult {
    assertId(requestId, "requestId");
    assertTime(now, "now");
    return this.#store.transact((): ReleaseResult => {
      const hold = this.#store.getHold(requestId);
      if (hold === null) return { ok: false, reason: "unknown_request" };
      if (hold.status === "released") return { ok: true, hold, replayed: true };
      if (hold.status !== "open") return { ok: false, reason: "already_resolved", hold };
      this.#book.resolveHold(hold, "released", now);
      return {
        ok: true,
        hold: { ...hold, status: "released", resolvedAt: now },
        replayed: false,
      };
    });
  }

  /**
   * Voids every open hold whose `expiresAt ≤ now`, returning their credits to `available`. Call it
   * from the Durable Object's alarm and schedule the next alarm at `nextExpiresAt`.
   */
  expire(now: number): ExpireResult {
    assertTime(now, "now");
    return this.#store.transact((): ExpireResult => {
      const expired: HoldRow[] = [];
      let nextExpiresAt: number | null = null;
      const open = this.#store.listOpenHolds().sort((a, b) => a.expiresAt - b.expiresAt);
      for (const hold of open) {
        if (hold.expiresAt <= now) {
          this.#book.resolveHold(hold, "expired", now);
          expired.push({ ...hold, status: "expired", resolvedAt: now });
        } else if (nextExpiresAt === null || hold.expiresAt < nextExpiresAt) {
          nextExpiresAt = hold.expiresAt;
        }
      }
      return { expired, nextExpiresAt };
    });
  }

  /** Posts a grant, top-up or adjustment once per idempotency key (credits.ts). */
  post(input: PostInput): PostResult {
    return this.#credits.post(input);
  }

  /** Brings the entries under a reference to a running total, such as Stripe's refunds (credits.ts). */
  postCumulative(input: PostCumulativeInput): PostResult {
    return this.#credits.postCumulative(input);
  }

  /**
   * Checks the cached totals against the rows: posted must equal the sum of entries, and held the
   * sum of open holds. Reads only; run it from a scheduled check or after a migration.
   */
  reconcile(): ReconcileReport {
    return this.#book.reconcile();
  }

  /**
   * The grants whose credits are left, in draw order. Before an account's first entry since lots
   * exist, its whole balance shows as the opening lot (not yet written).
   */
  grants(now: number): LotRow[] {
    return this.#book.liveLots(now);
  }

  /** Expires every live lot that is due, once; call it from the account's alarm (credits.ts). */
  expireGrants(now: number): ExpireGrantsResult {
    return this.#credits.expireGrants(now);
  }

  #insertUsage(
    input: SettleInput,
    who: Attribution | null,
    outcome: UsageOutcome,
    holdMicros: number | null,
  ): UsageRow {
    const usage = usageRow(input, who, outcome, holdMicros);
    this.#store.insertUsage(usage);
    return usage;
  }

  #replayedSettle(usage: UsageRow): SettleResult {
    const entry = this.#store.getEntryByKey(usageKey(usage.requestId));
    return {
      ok: true,
      outcome: usage.outcome,
      replayed: true,
      usage,
      entry,
      overrunMicros: overrun(usage.outcome, usage.priceMicros, usage.holdMicros ?? 0),
      alerts: [],
    };
  }
}
