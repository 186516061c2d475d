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

import { type Forecast, forecastDays, forecastRunway, runwayBelow } from "./forecast.ts";
import {
  type GrantBounds,
  isLeaseId,
  type LeaseInput,
  type LeaseLimit,
  type LeaseResult,
  type LeaseSettled,
  type LeaseUsage,
  sizeGrant,
} from "./lease.ts";
import type {
  AlertKind,
  AlertRow,
  EntryKind,
  EntryRow,
  HoldRow,
  LedgerStore,
  LotRow,
  NewEntryRow,
  UsageOutcome,
  UsageRow,
} from "./ledger-store.ts";
import {
  LIMIT_PERIODS,
  type LimitPeriod,
  type LimitRule,
  type LimitRules,
  NO_LIMIT_RULES,
  periodKey,
  periodResetsAt,
} from "./limit-rules.ts";
import { assertGrantTerms, expiryKey, type GrantTerms, Lots, lotId, sameTerms } from "./lots.ts";
import {
  addMicros,
  assertMicros,
  assertNonNegativeMicros,
  assertPositiveMicros,
  subtractMicros,
} from "./money.ts";
import type { TokenUsage } from "./pricing.ts";

/** Spend controls and alert thresholds; every limit is in micro-dollars and `null` means none. */
export interface LedgerConfig {
  /** Settled spend + open holds of the org per UTC calendar month. */
  orgMonthlyLimitMicros: number | null;
  /** Settled spend + open holds of each member per UTC day. */
  memberDailyLimitMicros: number | null;
  /** An alert fires when `available` drops below this, once per funding (top-up or grant). */
  lowBalanceMicros: number | null;
  /** Percentages of each limit that fire an alert, once per period. */
  alertThresholdsPct: readonly number[];
  /**
   * An alert fires when the balance lasts fewer days than this at the last 7 days' spend rate
   * (forecast.ts), once per funding and threshold.
   */
  runwayAlertDays: number | null;
  /**
   * Limits on one member (in place of `memberDailyLimitMicros` for them), on a member by
   * themselves, and on one project, per day, week or month (limit-rules.ts).
   */
  limitRules: LimitRules;
}

export const DEFAULT_LEDGER_CONFIG: LedgerConfig = {
  orgMonthlyLimitMicros: null,
  memberDailyLimitMicros: null,
  lowBalanceMicros: null,
  alertThresholdsPct: [50, 80, 100],
  runwayAlertDays: null,
  limitRules: NO_LIMIT_RULES,
};

export interface Balance {
  postedMicros: number;
  heldMicros: number;
  availableMicros: number;
}

/**
 * The limits of a principal who is not a member: an end user of one of the org's apps (the app's
 * per-end-user limits). Given with a reserve or a lease, they apply in place of the member daily
 * limit, over the same counters (the principal's spend per UTC day and month, plus its open holds),
 * and no member alert fires for the principal. `null` is no limit.
 */
export interface EndUserLimits {
  dailyMicros: number | null;
  /** Per UTC week from Monday (2026-12-02); absent: none. */
  weeklyMicros?: number | null;
  monthlyMicros: number | null;
}

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

export type SpendLimitScope =
  | "org_monthly"
  | "member_daily"
  | "end_user_daily"
  | "end_user_monthly"
  | `${"member" | "own" | "project" | "end_user"}_weekly`
  | `${"member" | "own" | "project"}_monthly`
  | "own_daily"
  | "project_daily";

/** A rule's scope: `project_weekly`, `own_daily`... (`member_daily` is the member day's own). */
function ruleScope(rule: Pick<LimitRule, "subject" | "period">): SpendLimitScope {
  const adverb = { day: "daily", week: "weekly", month: "monthly" } as const;
  return `${rule.subject}_${adverb[rule.period]}` as SpendLimitScope;
}

/** The period a limit of this scope counts over. */
export function scopePeriod(scope: SpendLimitScope): LimitPeriod {
  return scope.endsWith("_daily") ? "day" : scope.endsWith("_weekly") ? "week" : "month";
}

/** One limit on a principal's own spend (not the org's), with what is committed under it. */
export interface PrincipalLimit {
  scope: SpendLimitScope;
  limitMicros: number;
  /** Settled spend in the period plus the open holds it counts. */
  committedMicros: number;
  /** Settled spend in the period alone (what a warning compares). */
  spentMicros: number;
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

/** Who a request belongs to; only used by a settle that has no hold. */
export interface Attribution {
  memberId: string;
  projectId: string | null;
  sessionId: string | null;
}

export interface SettleInput {
  requestId: string;
  /** What the provider charged (its reported cost, or the price table's cost). */
  costMicros: number;
  /** What the org is charged: the cost with markup. Must be 0 when `billable` is false. */
  priceMicros: number;
  tokens: TokenUsage;
  model: string;
  generationIds: readonly string[];
  billable: boolean;
  now: number;
  /**
   * When the call was made (its caller's clock), which dates its usage: a call reported later (a
   * lease's batch, a retry after a reset) counts when it happened, so a read that asks every
   * session to report first sees it inside its window. Never later than `now`, nor earlier than
   * `MAX_USAGE_AGE_MS` before it; `now` when absent.
   */
  at?: number;
  /** Required for a settle without a hold; when a hold exists it must match the hold's. */
  attribution?: Attribution;
}

/** How far before the settle a call's own time may date its usage (a day). */
export const MAX_USAGE_AGE_MS = 86_400_000;

/** The time a call's usage is dated by (`SettleInput.at`, bounded). */
function usageTime(input: SettleInput): number {
  const at = input.at ?? input.now;
  return Math.min(input.now, Math.max(at, input.now - MAX_USAGE_AGE_MS));
}

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

export interface PostInput {
  kind: Exclude<EntryKind, "usage">;
  /** Positive for `grant` and `topup`; non-zero for `adjustment`. */
  amountMicros: number;
  idempotencyKey: string;
  reference?: string | null;
  memo?: string | null;
  now: number;
  /**
   * The lot a credit opens. Absent: a top-up is `top_up`, a grant `promotion`, a positive
   * adjustment `adjustment`, each with no expiry. Ignored for a debit.
   */
  grant?: GrantTerms;
  /** For a debit (a refund, a dispute): the funding whose lot it takes from first. */
  fundingRef?: string | null;
}

export interface PostCumulativeInput {
  kind: Exclude<EntryKind, "usage">;
  /** Groups the entries; also the prefix of each entry's idempotency key. */
  reference: string;
  /** The total the entries under `reference` must reach (negative for refunds). */
  totalMicros: number;
  memo?: string | null;
  now: number;
  /** For debits: the funding whose lot they take from first (the refunded top-up's). */
  fundingRef?: string | null;
}

export interface ExpireGrantsResult {
  /** Lots this call expired, each with its expiry entry (null when nothing was left of it). */
  expired: { lot: LotRow; entry: EntryRow | null }[];
  /** The soonest expiry among lots still live, for the next alarm; null when none. */
  nextExpiresAt: number | null;
  alerts: AlertRow[];
}

export type PostResult =
  | {
      ok: true;
      /** The entry posted (or replayed); null when there was nothing left to post. */
      entry: EntryRow | null;
      replayed: boolean;
      alerts: AlertRow[];
    }
  | { ok: false; reason: "conflict"; existing: EntryRow };

export interface ReconcileReport {
  ok: boolean;
  postedMicros: number;
  entriesSumMicros: number;
  heldMicros: number;
  openHoldsSumMicros: number;
  /** Human-readable mismatches; empty when ok. */
  problems: string[];
}

const POSTED = "posted";
const HELD = "held";
/** Seq of the latest credit entry: a low-balance alert fires once per funding. */
const FUNDED_AT = "funded_at_seq";
/** The posted balance right after that credit (automatic top-up: did it end a crossing?). */
const FUNDED_BALANCE = "funded_balance";

/** UTC calendar month of a timestamp: `2026-11`. */
export function utcMonth(now: number): string {
  return new Date(now).toISOString().slice(0, 7);
}

/** UTC day of a timestamp: `2026-11-29`. */
export function utcDay(now: number): string {
  return new Date(now).toISOString().slice(0, 10);
}

function orgSpendCounter(month: string): string {
  return `spend:org:${month}`;
}

/** The org's billable spend per UTC day (the forecast's window). */
function orgDaySpendCounter(day: string): string {
  return `spend:org-day:${day}`;
}

function memberSpendCounter(day: string, memberId: string): string {
  return `spend:member:${day}:${memberId}`;
}

/** A principal's spend per UTC month (an end user's monthly limit; kept for members too). */
function memberMonthSpendCounter(month: string, memberId: string): string {
  return `spend:member-month:${month}:${memberId}`;
}

/** A member's spend per UTC week (from Monday), for their weekly limits. */
function memberWeekSpendCounter(week: string, memberId: string): string {
  return `spend:member-week:${week}:${memberId}`;
}

/** A project's spend per period, for its limits. */
function projectSpendCounter(period: LimitPeriod, now: number, projectId: string): string {
  return `spend:project-${period}:${periodKey(period, now)}:${projectId}`;
}

/** A member's spend counter of a period (day and month were kept before the rules). */
function memberPeriodCounter(period: LimitPeriod, now: number, memberId: string): string {
  switch (period) {
    case "day":
      return memberSpendCounter(utcDay(now), memberId);
    case "week":
      return memberWeekSpendCounter(periodKey("week", now), memberId);
    case "month":
      return memberMonthSpendCounter(utcMonth(now), memberId);
  }
}

/** Every spend counter a billable charge moves: the org's, the member's and the project's. */
function spendCounters(now: number, memberId: string, projectId: string | null): string[] {
  const names = [
    orgSpendCounter(utcMonth(now)),
    orgDaySpendCounter(utcDay(now)),
    ...LIMIT_PERIODS.map((period) => memberPeriodCounter(period, now, memberId)),
  ];
  if (projectId !== null) {
    names.push(...LIMIT_PERIODS.map((period) => projectSpendCounter(period, now, projectId)));
  }
  return names;
}

/** Whose member alerts a request may fire: none for an end user (they are not members). */
function alertMember(input: { memberId: string; endUserLimits?: EndUserLimits }): string | null {
  return input.endUserLimits === undefined ? input.memberId : null;
}

function usageKey(requestId: string): string {
  return `usage:${requestId}`;
}

function assertEndUserLimits(limits: EndUserLimits | undefined): void {
  if (limits === undefined) return;
  if (limits.dailyMicros !== null) assertNonNegativeMicros(limits.dailyMicros, "limit");
  if (limits.monthlyMicros !== null) assertNonNegativeMicros(limits.monthlyMicros, "limit");
  const weekly = limits.weeklyMicros ?? null;
  if (weekly !== null) assertNonNegativeMicros(weekly, "limit");
}

function assertId(value: string, label: string): void {
  if (typeof value !== "string" || value.length === 0) {
    throw new RangeError(`${label} must be a non-empty string`);
  }
}

function assertTime(value: number, label: string): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${label} must be a non-negative integer timestamp in ms`);
  }
}

function assertCount(value: number, label: string): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${label} must be a non-negative safe integer`);
  }
}

function crossed(levelMicros: number, limitMicros: number, pct: number): boolean {
  // level / limit ≥ pct / 100, without rounding or overflow.
  return limitMicros > 0 && BigInt(levelMicros) * 100n >= BigInt(limitMicros) * BigInt(pct);
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
  readonly #lots: Lots;

  constructor(store: LedgerStore, config: Partial<LedgerConfig> = {}) {
    this.#store = store;
    this.#lots = new Lots(store);
    this.config = { ...DEFAULT_LEDGER_CONFIG, ...config };
    const { orgMonthlyLimitMicros, memberDailyLimitMicros, lowBalanceMicros } = this.config;
    if (orgMonthlyLimitMicros !== null) assertNonNegativeMicros(orgMonthlyLimitMicros, "limit");
    if (memberDailyLimitMicros !== null) assertNonNegativeMicros(memberDailyLimitMicros, "limit");
    if (lowBalanceMicros !== null) assertMicros(lowBalanceMicros, "lowBalanceMicros");
    for (const pct of this.config.alertThresholdsPct) {
      if (!Number.isSafeInteger(pct) || pct <= 0) throw new RangeError("bad alert threshold");
    }
    const days = this.config.runwayAlertDays;
    if (days !== null && (!Number.isSafeInteger(days) || days <= 0)) {
      throw new RangeError("bad runway alert days");
    }
  }

  /**
   * How long the available balance lasts at the last 7 UTC days' billable spend (forecast.ts),
   * from the org's per-day spend counters.
   */
  forecast(now: number): Forecast {
    const spentMicros = forecastDays(now).reduce(
      (sum, day) => sum + this.#store.getCounter(orgDaySpendCounter(day)),
      0,
    );
    return forecastRunway({ availableMicros: this.balance().availableMicros, spentMicros, now });
  }

  /**
   * Seq of the latest credit entry (0 before any): the balance can only fall below a threshold
   * again after a credit, so it names a threshold crossing (low-balance alerts, auto top-up).
   */
  fundingSeq(): number {
    return this.#store.getCounter(FUNDED_AT);
  }

  /** The posted balance right after the latest credit entry (0 before any). */
  fundedBalance(): number {
    return this.#store.getCounter(FUNDED_BALANCE);
  }

  /**
   * Records an alert raised outside the ledger's own checks (a failed automatic top-up), once per
   * key like every alert. Returns the new row to deliver, or null if it had fired already.
   */
  raiseAlert(alert: Omit<AlertRow, "key" | "firedAt">, now: number): AlertRow | null {
    const key = alertKey(alert);
    if (this.#store.getAlert(key) !== null) return null;
    const row: AlertRow = { ...alert, key, firedAt: now };
    this.#store.transact(() => this.#store.insertAlert(row));
    return row;
  }

  /** Posted, held and available credits, from the cached totals. */
  balance(): Balance {
    const postedMicros = this.#store.getCounter(POSTED);
    const heldMicros = this.#store.getCounter(HELD);
    return { postedMicros, heldMicros, availableMicros: postedMicros - heldMicros };
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

      const { availableMicros, heldMicros } = this.balance();
      if (availableMicros < input.amountMicros) {
        return {
          ok: false,
          reason: "insufficient_credits",
          availableMicros,
          requiredMicros: input.amountMicros,
          alerts: this.#collectAlerts(input.now, alertMember(input), null),
        };
      }

      const orgLimit = this.config.orgMonthlyLimitMicros;
      if (orgLimit !== null) {
        const committed = this.#store.getCounter(orgSpendCounter(utcMonth(input.now))) + heldMicros;
        if (committed + input.amountMicros > orgLimit) {
          return {
            ok: false,
            reason: "spend_limit",
            limit: "org_monthly",
            limitMicros: orgLimit,
            committedMicros: committed,
            requiredMicros: input.amountMicros,
            alerts: this.#collectAlerts(input.now, alertMember(input), "org_monthly"),
          };
        }
      }
      const principal = this.#principalLimits(
        input.now,
        input.memberId,
        input.endUserLimits,
        input.projectId,
      );
      for (const limit of principal) {
        if (limit.committedMicros + input.amountMicros > limit.limitMicros) {
          return {
            ok: false,
            reason: "spend_limit",
            limit: limit.scope,
            limitMicros: limit.limitMicros,
            committedMicros: limit.committedMicros,
            requiredMicros: input.amountMicros,
            alerts: this.#collectAlerts(input.now, alertMember(input), limit.scope),
          };
        }
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
      this.#store.insertHold(hold);
      this.#addCounter(HELD, hold.amountMicros);
      const alerts = this.#collectAlerts(input.now, alertMember(input), null);
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
      if (!late) {
        this.#store.resolveHold(hold.requestId, "settled", input.now);
        this.#addCounter(HELD, -hold.amountMicros);
      }
      const charge = input.billable ? input.priceMicros : 0;
      let entry: EntryRow | null = null;
      if (charge > 0) {
        entry = this.#postEntry({
          kind: "usage",
          amountMicros: -charge,
          idempotencyKey: usageKey(hold.requestId),
          reference: hold.requestId,
          memo: input.model,
          createdAt: usageTime(input),
        });
        for (const name of spendCounters(input.now, hold.memberId, hold.projectId)) {
          this.#addCounter(name, charge);
        }
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
        alerts: this.#collectAlerts(input.now, hold.memberId, null),
      };
    });
  }

  /**
   * Reports to a session's lease and renews or returns it, in one transaction
   * (docs/2026-12-01-metering-leases.md). Each reported call is settled exactly once under its own
   * request id: charged in full, the part the open lease covers coming out of the lease's hold (a
   * call after the lease closed is charged late, without a hold: the provider did charge). Then,
   * with `wantMicros > 0`, the lease is sized again (`sizeGrant`: the ask, cut to a fair share of
   * the free balance and to the room under each limit) and its expiry moved on; a grant under
   * `minMicros` is refused and the lease shrinks to what calls in flight drew (`keepMicros`), so
   * the session falls back to per-call holds near any limit. With `wantMicros` 0 the lease is
   * returned: it keeps only `keepMicros`, and closes when that is 0. A closed lease is never
   * reopened: the session asks under a new id.
   */
  lease(input: LeaseInput): LeaseResult {
    assertId(input.leaseId, "leaseId");
    assertId(input.memberId, "memberId");
    assertId(input.sessionId, "sessionId");
    if (!isLeaseId(input.leaseId)) throw new RangeError("a lease id starts with 'lease:'");
    assertNonNegativeMicros(input.keepMicros, "keepMicros");
    assertNonNegativeMicros(input.wantMicros, "wantMicros");
    assertPositiveMicros(input.minMicros, "minMicros");
    assertEndUserLimits(input.endUserLimits);
    assertTime(input.now, "now");
    if (!Number.isSafeInteger(input.ttlMs) || input.ttlMs <= 0) {
      throw new RangeError("ttlMs must be a positive integer");
    }
    const who: Attribution = {
      memberId: input.memberId,
      projectId: input.projectId,
      sessionId: input.sessionId,
    };
    for (const usage of input.usages) {
      assertSettle({ ...usage, now: input.now, attribution: who });
      assertNonNegativeMicros(usage.drawMicros, "drawMicros");
    }
    return this.#store.transact((): LeaseResult => {
      // The counters a report reads and moves, in one read.
      this.#store.loadCounters([
        POSTED,
        HELD,
        ...spendCounters(input.now, who.memberId, who.projectId),
      ]);
      const existing = this.#store.getHold(input.leaseId);
      const same =
        existing === null ||
        (existing.memberId === who.memberId &&
          existing.projectId === who.projectId &&
          existing.sessionId === who.sessionId);
      if (!same) {
        return {
          ok: false,
          reason: "conflict",
          message: `lease ${input.leaseId} belongs to a different member, project or session`,
        };
      }
      const hold = existing;
      const open = hold?.status === "open";
      // The report's entries are written together below; the lots must be opened from the
      // balance before them.
      this.#lots.open(this.#store.getCounter(POSTED), input.now);
      // What the open lease still holds once the reported calls came out of it; the hold row is
      // written once, below (a hold is never 0: it is resized or closed).
      let current = open ? hold.amountMicros : 0;
      let charged = 0;
      // The report's calls are looked up, and their rows written, a statement for all of them.
      const ids = input.usages.map((usage) => usage.requestId);
      const batch: ReportBatch = {
        known: new Map(this.#store.getUsages(ids).map((row) => [row.requestId, row])),
        ownHolds: new Set(this.#store.getHolds(ids).map((row) => row.requestId)),
        entries: [],
        usages: [],
      };
      const settled = input.usages.map((usage) => {
        const { result, coveredMicros, chargedMicros } = this.#settleOnLease(
          usage,
          input,
          who,
          open,
          current,
          batch,
        );
        current -= coveredMicros;
        charged += chargedMicros;
        return result;
      });
      const inserted = this.#store.insertEntries(batch.entries);
      this.#store.insertUsages(batch.usages);
      // The lots, call by call in the report's order, over one read of them.
      this.#lots.takeEach(
        inserted.map((entry) => ({ entrySeq: entry.seq, amountMicros: -entry.amountMicros })),
      );
      // The period's spend, once for the whole report.
      if (charged > 0) {
        for (const name of spendCounters(input.now, who.memberId, who.projectId)) {
          this.#addCounter(name, charged);
        }
      }
      let refusedBy: LeaseLimit | null = null;
      let amount = Math.min(current, input.keepMicros);
      if (input.wantMicros > 0 && (hold === null || hold.status === "open")) {
        // The counters still count the lease at its amount before this report.
        const sized = sizeGrant(input, this.#grantBounds(input, open ? hold.amountMicros : 0));
        refusedBy = sized.refusedBy;
        if (sized.refusedBy === null) amount = input.keepMicros + sized.grantMicros;
      }
      // A lease keeps what calls in flight drew on it, whatever the bounds: they were admitted.
      if (hold?.status === "open") amount = Math.max(amount, input.keepMicros);
      const lease = this.#resizeLease(input, hold, amount);
      return {
        ok: true,
        lease,
        settled,
        refusedBy,
        alerts: this.#collectAlerts(input.now, alertMember(input), null),
      };
    });
  }

  /** The bounds on a lease's grant, as if it held nothing (`current`: what the counters count it at). */
  #grantBounds(input: LeaseInput, current: number): GrantBounds {
    const { availableMicros, heldMicros } = this.balance();
    const otherLeases = this.#store.countOpenLeases() - (current > 0 ? 1 : 0);
    const orgLimit = this.config.orgMonthlyLimitMicros;
    const principal = this.#principalLimits(
      input.now,
      input.memberId,
      input.endUserLimits,
      input.projectId,
    );
    const room = (limit: PrincipalLimit) => limit.limitMicros - (limit.committedMicros - current);
    const headroom = (scope: SpendLimitScope): number | null => {
      const limit = principal.find((one) => one.scope === scope);
      return limit === undefined ? null : room(limit);
    };
    const named = new Set<SpendLimitScope>(["member_daily", "end_user_daily", "end_user_monthly"]);
    return {
      freeMicros: availableMicros + current,
      otherLeases,
      orgHeadroomMicros:
        orgLimit === null
          ? null
          : orgLimit -
            (this.#store.getCounter(orgSpendCounter(utcMonth(input.now))) + heldMicros - current),
      memberHeadroomMicros: headroom("member_daily"),
      endUserDailyHeadroomMicros: headroom("end_user_daily"),
      endUserMonthlyHeadroomMicros: headroom("end_user_monthly"),
      ruleHeadroom: principal
        .filter((limit) => !named.has(limit.scope))
        .map((limit) => ({ limit: limit.scope, micros: room(limit) })),
    };
  }

  /**
   * The limits that apply to a principal's calls in a project, with their spend so far and when
   * each resets: the org's monthly limit first, then the principal's and the project's. What the
   * chat's warning reads; counts settled spend, so ask the lease holders to report first.
   */
  limitStatus(input: {
    now: number;
    memberId: string;
    projectId: string | null;
    endUserLimits?: EndUserLimits;
  }): (PrincipalLimit & { resetsAt: number })[] {
    assertId(input.memberId, "memberId");
    assertEndUserLimits(input.endUserLimits);
    assertTime(input.now, "now");
    const limits: PrincipalLimit[] = [];
    const orgLimit = this.config.orgMonthlyLimitMicros;
    if (orgLimit !== null) {
      const spentMicros = this.#store.getCounter(orgSpendCounter(utcMonth(input.now)));
      limits.push({
        scope: "org_monthly",
        limitMicros: orgLimit,
        committedMicros: spentMicros + this.balance().heldMicros,
        spentMicros,
      });
    }
    limits.push(
      ...this.#principalLimits(input.now, input.memberId, input.endUserLimits, input.projectId),
    );
    return limits.map((limit) => ({
      ...limit,
      resetsAt: periodResetsAt(scopePeriod(limit.scope), input.now),
    }));
  }

  /** Opens, resizes or closes a lease's hold to `amount`; returns it as it now is (null: closed). */
  #resizeLease(input: LeaseInput, hold: HoldRow | null, amount: number): HoldRow | null {
    const expiresAt = input.now + input.ttlMs;
    if (hold === null) {
      if (amount <= 0) return null;
      const opened: HoldRow = {
        requestId: input.leaseId,
        amountMicros: amount,
        memberId: input.memberId,
        projectId: input.projectId,
        sessionId: input.sessionId,
        status: "open",
        createdAt: input.now,
        expiresAt,
        resolvedAt: null,
      };
      this.#store.insertHold(opened);
      this.#addCounter(HELD, amount);
      return opened;
    }
    if (hold.status !== "open") return null;
    if (amount <= 0) {
      this.#store.resolveHold(hold.requestId, "released", input.now);
      this.#addCounter(HELD, -hold.amountMicros);
      return null;
    }
    this.#store.resizeHold(hold.requestId, amount, expiresAt);
    this.#addCounter(HELD, amount - hold.amountMicros);
    return { ...hold, amountMicros: amount, expiresAt };
  }

  /**
   * Settles one call drawn on a lease, once: covered by the open lease as far as it goes. Its rows
   * join the report's `batch`, which also answers whether it was settled before (in this report
   * or an earlier one) or has a hold of its own.
   */
  #settleOnLease(
    usage: LeaseUsage,
    input: LeaseInput,
    who: Attribution,
    open: boolean,
    leftMicros: number,
    batch: ReportBatch,
  ): { result: LeaseSettled; coveredMicros: number; chargedMicros: number } {
    const settle: SettleInput = { ...usage, now: input.now, attribution: who };
    const refused = (message: string) => ({
      result: { requestId: usage.requestId, ok: false, reason: "conflict", message } as const,
      coveredMicros: 0,
      chargedMicros: 0,
    });
    const previous = batch.known.get(usage.requestId);
    if (previous !== undefined) {
      if (!sameSettle(previous, settle)) {
        return refused(`request ${usage.requestId} was settled with different parameters`);
      }
      const overrunMicros = overrun(
        previous.outcome,
        previous.priceMicros,
        previous.holdMicros ?? 0,
      );
      return {
        result: {
          requestId: usage.requestId,
          ok: true,
          outcome: previous.outcome,
          replayed: true,
          overrunMicros,
        },
        coveredMicros: 0,
        chargedMicros: 0,
      };
    }
    if (batch.ownHolds.has(usage.requestId)) {
      return refused(`request ${usage.requestId} has a hold of its own, not a draw on a lease`);
    }
    const charge = usage.billable ? usage.priceMicros : 0;
    const covered = open ? Math.min(charge, leftMicros) : 0;
    if (charge > 0) {
      batch.entries.push({
        kind: "usage",
        amountMicros: -charge,
        balanceAfterMicros: this.#addCounter(POSTED, -charge),
        idempotencyKey: usageKey(usage.requestId),
        reference: usage.requestId,
        memo: usage.model,
        createdAt: usageTime(settle),
      });
    }
    const outcome: UsageOutcome = !usage.billable ? "metered" : open ? "settled" : "settled_late";
    const row = usageRow(settle, who, outcome, usage.drawMicros);
    batch.usages.push(row);
    batch.known.set(row.requestId, row);
    return {
      result: {
        requestId: usage.requestId,
        ok: true,
        outcome,
        replayed: false,
        overrunMicros: charge - covered,
      },
      coveredMicros: covered,
      chargedMicros: charge,
    };
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
      this.#store.resolveHold(requestId, "released", now);
      this.#addCounter(HELD, -hold.amountMicros);
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
          this.#store.resolveHold(hold.requestId, "expired", now);
          this.#addCounter(HELD, -hold.amountMicros);
          expired.push({ ...hold, status: "expired", resolvedAt: now });
        } else if (nextExpiresAt === null || hold.expiresAt < nextExpiresAt) {
          nextExpiresAt = hold.expiresAt;
        }
      }
      return { expired, nextExpiresAt };
    });
  }

  /**
   * Posts a grant, top-up or adjustment once per idempotency key. Replaying the key with the same
   * kind, amount, reference and memo returns the original entry; anything else is a conflict.
   * Returns the alerts newly fired (a negative adjustment can cross the low-balance threshold).
   */
  post(input: PostInput): PostResult {
    assertId(input.idempotencyKey, "idempotencyKey");
    assertTime(input.now, "now");
    if (input.kind === "adjustment") {
      assertMicros(input.amountMicros, "amountMicros");
      if (input.amountMicros === 0) throw new RangeError("an adjustment must not be zero");
    } else {
      assertPositiveMicros(input.amountMicros, "amountMicros");
    }
    const terms = input.grant ?? defaultTerms(input.kind);
    assertGrantTerms(terms);
    const reference = input.reference ?? null;
    const memo = input.memo ?? null;
    return this.#store.transact((): PostResult => {
      const existing = this.#store.getEntryByKey(input.idempotencyKey);
      if (existing !== null) {
        // A replayed grant names the same terms as its lot (accounts from before lots have none).
        const lot = existing.amountMicros > 0 ? this.#store.getLot(lotId(existing.seq)) : null;
        const same =
          existing.kind === input.kind &&
          existing.amountMicros === input.amountMicros &&
          existing.reference === reference &&
          existing.memo === memo &&
          (lot === null || sameTerms(lot, terms));
        return same
          ? { ok: true, entry: existing, replayed: true, alerts: [] }
          : { ok: false, reason: "conflict", existing };
      }
      const entry = this.#postEntry(
        {
          kind: input.kind,
          amountMicros: input.amountMicros,
          idempotencyKey: input.idempotencyKey,
          reference,
          memo,
          createdAt: input.now,
        },
        { terms, fundingRef: input.fundingRef ?? null },
      );
      return {
        ok: true,
        entry,
        replayed: false,
        alerts: this.#collectAlerts(input.now, null, null),
      };
    });
  }

  /**
   * Brings the sum of entries under `reference` to `totalMicros`, for sources that report a running
   * total (Stripe's cumulative `amount_refunded`). Posts only the difference, keyed by reference and
   * total, and only in the direction of the total's sign: a total already reached or passed (a
   * retried or out-of-order event) posts nothing. So retries and reordering never double-count.
   */
  postCumulative(input: PostCumulativeInput): PostResult {
    assertId(input.reference, "reference");
    assertMicros(input.totalMicros, "totalMicros");
    assertTime(input.now, "now");
    if (input.kind !== "adjustment" && input.totalMicros <= 0) {
      throw new RangeError(`${input.kind} totals must be positive`);
    }
    return this.#store.transact((): PostResult => {
      const idempotencyKey = `${input.reference}#${input.totalMicros}`;
      const existing = this.#store.getEntryByKey(idempotencyKey);
      if (existing !== null) return { ok: true, entry: existing, replayed: true, alerts: [] };
      const current = this.#store.sumEntriesByReference(input.reference);
      const delta = subtractMicros(input.totalMicros, current);
      // A total of 0 has no direction: nothing to post.
      const towardsTotal = input.totalMicros < 0 ? delta < 0 : input.totalMicros > 0 && delta > 0;
      if (!towardsTotal) return { ok: true, entry: null, replayed: false, alerts: [] };
      const entry = this.#postEntry(
        {
          kind: input.kind,
          amountMicros: delta,
          idempotencyKey,
          reference: input.reference,
          memo: input.memo ?? null,
          createdAt: input.now,
        },
        { terms: defaultTerms(input.kind), fundingRef: input.fundingRef ?? null },
      );
      return {
        ok: true,
        entry,
        replayed: false,
        alerts: this.#collectAlerts(input.now, null, null),
      };
    });
  }

  /**
   * Checks the cached totals against the rows: posted must equal the sum of entries, and held the
   * sum of open holds. Reads only; run it from a scheduled check or after a migration.
   */
  reconcile(): ReconcileReport {
    const { postedMicros, heldMicros } = this.balance();
    const entriesSumMicros = this.#store.sumEntries();
    const openHoldsSumMicros = this.#store
      .listOpenHolds()
      .reduce((sum, hold) => sum + hold.amountMicros, 0);
    const problems: string[] = [];
    if (postedMicros !== entriesSumMicros) {
      problems.push(`posted ${postedMicros} ≠ sum of entries ${entriesSumMicros}`);
    }
    if (heldMicros !== openHoldsSumMicros) {
      problems.push(`held ${heldMicros} ≠ sum of open holds ${openHoldsSumMicros}`);
    }
    problems.push(...this.#lots.problems(postedMicros));
    return {
      ok: problems.length === 0,
      postedMicros,
      entriesSumMicros,
      heldMicros,
      openHoldsSumMicros,
      problems,
    };
  }

  #addCounter(name: string, delta: number): number {
    const value = addMicros(this.#store.getCounter(name), delta);
    this.#store.setCounter(name, value);
    return value;
  }

  /**
   * Posts one entry and moves the lots with it: a credit opens its lot (`terms`), a debit takes
   * from `lot` (an expiry's own), or from the lot of `fundingRef` first, then in draw order.
   */
  #postEntry(
    entry: Omit<EntryRow, "seq" | "balanceAfterMicros">,
    lots: { terms?: GrantTerms; fundingRef?: string | null; lot?: LotRow } = {},
  ): EntryRow {
    this.#lots.open(this.#store.getCounter(POSTED), entry.createdAt);
    const balanceAfterMicros = this.#addCounter(POSTED, entry.amountMicros);
    const row = this.#store.insertEntry({ ...entry, balanceAfterMicros });
    if (entry.kind !== "usage" && entry.amountMicros > 0) {
      this.#store.setCounter(FUNDED_AT, row.seq);
      this.#store.setCounter(FUNDED_BALANCE, balanceAfterMicros);
    }
    if (entry.amountMicros > 0) {
      this.#lots.fund(row, lots.terms ?? defaultTerms(entry.kind));
    } else {
      const first =
        lots.lot ??
        (lots.fundingRef ? this.#store.getLotByFundingRef(lots.fundingRef) : null) ??
        null;
      this.#lots.take(-entry.amountMicros, row.seq, first);
    }
    return row;
  }

  /**
   * The grants whose credits are left, in draw order. Before an account's first entry since lots
   * exist, its whole balance shows as the opening lot (not yet written).
   */
  grants(now: number): LotRow[] {
    return this.#lots.live(this.#store.getCounter(POSTED), now);
  }

  /**
   * Expires every live lot whose `expiresAt ≤ now`, once: an entry of minus what is left of it
   * (nothing when it is empty), keyed by the lot (`grant-expiry:<id>`), so a second run, a replay
   * or a reset object never takes it twice, and an expiry never takes more than its lot's
   * remainder. Call it from the account's alarm; schedule the next one at `nextExpiresAt`.
   */
  expireGrants(now: number): ExpireGrantsResult {
    assertTime(now, "now");
    return this.#store.transact((): ExpireGrantsResult => {
      this.#lots.open(this.#store.getCounter(POSTED), now);
      const expired: ExpireGrantsResult["expired"] = [];
      for (const lot of this.#store.listDueLots(now)) {
        const key = expiryKey(lot.id);
        let entry = this.#store.getEntryByKey(key);
        if (entry === null && lot.remainingMicros > 0) {
          entry = this.#postEntry(
            {
              kind: "adjustment",
              amountMicros: -lot.remainingMicros,
              idempotencyKey: key,
              reference: lot.id,
              memo: "Grant expired",
              createdAt: now,
            },
            { lot },
          );
        }
        this.#lots.markExpired(lot, now, entry?.seq ?? null);
        expired.push({ lot: { ...lot, remainingMicros: 0, expiredAt: now }, entry });
      }
      const alerts = expired.some((one) => one.entry !== null)
        ? this.#collectAlerts(now, null, null)
        : [];
      return { expired, nextExpiresAt: this.#store.nextLotExpiry(), alerts };
    });
  }

  /**
   * The org-wide alerts the account's state calls for now, fired (recorded once each): after a
   * setting changed, so a low-balance threshold set above the balance fires at once rather than at
   * the next call, and a new limit already passed says so.
   */
  checkAlerts(now: number): AlertRow[] {
    return this.#store.transact(() => this.#collectAlerts(now, null, null));
  }

  #memberCommitted(now: number, memberId: string): number {
    return (
      this.#store.getCounter(memberSpendCounter(utcDay(now), memberId)) +
      this.#store.sumOpenHolds(memberId)
    );
  }

  /**
   * The limits on one principal's own spend that are set: for a member, the rules an admin set on
   * them (or else the org's member daily limit) and their own; for an end user (`endUser` given)
   * their app's daily and monthly limits instead; and the rules on the project, for everyone. Each
   * with the spend in its period plus the open holds that count under it.
   */
  #principalLimits(
    now: number,
    memberId: string,
    endUser: EndUserLimits | undefined,
    projectId: string | null,
  ): PrincipalLimit[] {
    const limits: PrincipalLimit[] = [];
    let memberHeld: number | undefined;
    const memberLimit = (scope: SpendLimitScope, limitMicros: number, period: LimitPeriod) => {
      memberHeld ??= this.#store.sumOpenHolds(memberId);
      const spentMicros = this.#store.getCounter(memberPeriodCounter(period, now, memberId));
      limits.push({ scope, limitMicros, committedMicros: spentMicros + memberHeld, spentMicros });
    };
    if (endUser === undefined) {
      const rules = this.config.limitRules;
      const set = rules.rulesFor("member", memberId);
      const fallback = this.config.memberDailyLimitMicros;
      if (set.length === 0 && fallback !== null) memberLimit("member_daily", fallback, "day");
      for (const rule of [...set, ...rules.rulesFor("own", memberId)]) {
        memberLimit(ruleScope(rule), rule.amountMicros, rule.period);
      }
    } else {
      if (endUser.dailyMicros !== null) memberLimit("end_user_daily", endUser.dailyMicros, "day");
      const weekly = endUser.weeklyMicros ?? null;
      if (weekly !== null) memberLimit("end_user_weekly", weekly, "week");
      if (endUser.monthlyMicros !== null) {
        memberLimit("end_user_monthly", endUser.monthlyMicros, "month");
      }
    }
    if (projectId !== null) {
      const rules = this.config.limitRules.rulesFor("project", projectId);
      const held = rules.length > 0 ? this.#store.sumOpenProjectHolds(projectId) : 0;
      for (const rule of rules) {
        const spentMicros = this.#store.getCounter(
          projectSpendCounter(rule.period, now, projectId),
        );
        limits.push({
          scope: ruleScope(rule),
          limitMicros: rule.amountMicros,
          committedMicros: spentMicros + held,
          spentMicros,
        });
      }
    }
    return limits;
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

  /**
   * Fires the alerts whose threshold the current state has crossed and that have not fired in this
   * period. Spend alerts measure committed spend (settled this period + open holds), the quantity
   * the limits enforce; a refusal by a limit fires its thresholds of 100% and above. Of one limit's
   * thresholds, only the highest crossed fires: a step that crosses 50, 80 and 100% at once fires
   * the 100% alert alone (three alerts at once said the same thing three times), and a lower
   * threshold never fires after a higher one in the same period (spend that dips, as a hold is
   * released, and rises again does not fire the lower ones it skipped).
   */
  #collectAlerts(
    now: number,
    memberId: string | null,
    refusedBy: SpendLimitScope | null,
  ): AlertRow[] {
    const fired: AlertRow[] = [];
    const { heldMicros, availableMicros } = this.balance();
    const fire = (alert: Omit<AlertRow, "key" | "firedAt">): void => {
      const key = alertKey(alert);
      if (this.#store.getAlert(key) !== null) return;
      const row: AlertRow = { ...alert, key, firedAt: now };
      this.#store.insertAlert(row);
      fired.push(row);
    };
    const spendAlerts = (
      kind: AlertKind,
      scope: SpendLimitScope,
      limitMicros: number,
      levelMicros: number,
      period: string,
      member: string | null,
    ): void => {
      const series = { kind, period, memberId: member, limitMicros };
      const descending = [...this.config.alertThresholdsPct].sort((a, b) => b - a);
      const highest = descending.find(
        (pct) => crossed(levelMicros, limitMicros, pct) || (refusedBy === scope && pct >= 100),
      );
      if (highest === undefined) return;
      const higherFired = descending.some(
        (pct) =>
          pct > highest &&
          this.#store.getAlert(alertKey({ ...series, thresholdPct: pct })) !== null,
      );
      if (!higherFired) fire({ ...series, thresholdPct: highest, levelMicros });
    };

    const orgLimit = this.config.orgMonthlyLimitMicros;
    if (orgLimit !== null) {
      const month = utcMonth(now);
      const level = this.#store.getCounter(orgSpendCounter(month)) + heldMicros;
      spendAlerts("org_monthly_spend", "org_monthly", orgLimit, level, month, null);
    }
    const memberLimit = this.config.memberDailyLimitMicros;
    // A member with limits of their own set by an admin is not under the default daily limit.
    if (
      memberLimit !== null &&
      memberId !== null &&
      this.config.limitRules.rulesFor("member", memberId).length === 0
    ) {
      const level = this.#memberCommitted(now, memberId);
      spendAlerts("member_daily_spend", "member_daily", memberLimit, level, utcDay(now), memberId);
    }
    const lowBalance = this.config.lowBalanceMicros;
    if (lowBalance !== null && availableMicros < lowBalance) {
      fire({
        kind: "low_balance",
        period: `entry-${this.#store.getCounter(FUNDED_AT)}`,
        memberId: null,
        thresholdPct: null,
        limitMicros: lowBalance,
        levelMicros: availableMicros,
      });
    }
    const runwayDays = this.config.runwayAlertDays;
    if (runwayDays !== null) {
      const forecast = this.forecast(now);
      if (runwayBelow(forecast, runwayDays, availableMicros)) {
        fire({
          kind: "low_runway",
          // Once per funding and threshold: a top-up re-arms it, as a new threshold does.
          period: `runway-${runwayDays}d-entry-${this.#store.getCounter(FUNDED_AT)}`,
          memberId: null,
          thresholdPct: null,
          limitMicros: forecast.dailyRateMicros * runwayDays,
          levelMicros: availableMicros,
        });
      }
    }
    return fired;
  }
}

/**
 * An alert's unique key: kind, period, member, threshold and limit value (a new limit re-arms its
 * alerts). A runway alert's "limit" is the balance its days need at the rate of the moment, which
 * moves with every call: its period (threshold and funding) is what it fires once for.
 */
function alertKey(
  alert: Pick<AlertRow, "kind" | "period" | "memberId" | "thresholdPct" | "limitMicros">,
): string {
  return [
    alert.kind,
    alert.period,
    alert.memberId ?? "",
    alert.thresholdPct ?? "",
    alert.kind === "low_runway" ? "" : alert.limitMicros,
  ].join("|");
}

/** The lot a credit opens when its poster names no terms. */
function defaultTerms(kind: EntryKind): GrantTerms {
  if (kind === "topup") return { source: "top_up" };
  if (kind === "grant") return { source: "promotion" };
  return { source: "adjustment" };
}

function overrun(outcome: UsageOutcome, chargeMicros: number, holdMicros: number): number {
  if (outcome === "settled_late") return chargeMicros;
  if (outcome === "metered") return 0;
  return Math.max(0, chargeMicros - holdMicros);
}

function sameAttribution(row: Attribution | UsageRow, input: SettleInput): boolean {
  const who = input.attribution;
  return (
    who === undefined ||
    (row.memberId === who.memberId &&
      row.projectId === who.projectId &&
      row.sessionId === who.sessionId)
  );
}

function assertSettle(input: SettleInput): void {
  assertId(input.requestId, "requestId");
  assertNonNegativeMicros(input.costMicros, "costMicros");
  assertNonNegativeMicros(input.priceMicros, "priceMicros");
  assertTime(input.now, "now");
  if (input.at !== undefined) assertTime(input.at, "at");
  assertCount(input.tokens.promptTokens, "promptTokens");
  assertCount(input.tokens.completionTokens, "completionTokens");
  assertCount(input.tokens.cachedPromptTokens, "cachedPromptTokens");
  assertCount(input.tokens.reasoningTokens, "reasoningTokens");
  if (!input.billable && input.priceMicros !== 0) {
    throw new RangeError("a non-billable settle must have priceMicros 0");
  }
  if (input.attribution !== undefined) assertId(input.attribution.memberId, "memberId");
}

/** A lease report's lookups and the rows it writes at its end, in one statement each. */
interface ReportBatch {
  /** Usage already settled under a request id: before this report, or earlier in it. */
  known: Map<string, UsageRow>;
  /** Request ids of the report that have a hold of their own (not draws on a lease). */
  ownHolds: Set<string>;
  entries: NewEntryRow[];
  usages: UsageRow[];
}

function usageRow(
  input: SettleInput,
  who: Attribution | null,
  outcome: UsageOutcome,
  holdMicros: number | null,
): UsageRow {
  return {
    requestId: input.requestId,
    memberId: who?.memberId ?? null,
    projectId: who?.projectId ?? null,
    sessionId: who?.sessionId ?? null,
    model: input.model,
    promptTokens: input.tokens.promptTokens,
    completionTokens: input.tokens.completionTokens,
    cachedPromptTokens: input.tokens.cachedPromptTokens,
    reasoningTokens: input.tokens.reasoningTokens,
    costMicros: input.costMicros,
    priceMicros: input.billable ? input.priceMicros : 0,
    billable: input.billable ? 1 : 0,
    generationIds: JSON.stringify(input.generationIds),
    outcome,
    holdMicros,
    createdAt: usageTime(input),
  };
}

function sameSettle(previous: UsageRow, input: SettleInput): boolean {
  return (
    previous.costMicros === input.costMicros &&
    previous.priceMicros === input.priceMicros &&
    previous.billable === (input.billable ? 1 : 0) &&
    previous.model === input.model &&
    previous.promptTokens === input.tokens.promptTokens &&
    previous.completionTokens === input.tokens.completionTokens &&
    previous.cachedPromptTokens === input.tokens.cachedPromptTokens &&
    previous.reasoningTokens === input.tokens.reasoningTokens &&
    previous.generationIds === JSON.stringify(input.generationIds) &&
    sameAttribution(previous, input)
  );
}
