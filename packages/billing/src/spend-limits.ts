/**
 * Spend limits (docs/2026-12-02-billing-features.md): the org's monthly limit, a member's daily
 * limit or the rules an admin set on them and their own (limit-rules.ts), an end user's app
 * limits, and the rules on a project. Each counts committed spend: what its period settled (the
 * spend counters, ledger-counters.ts) plus the open holds it covers, so a call is refused before it
 * runs, not after. A reserve or a lease grant is checked against them, the chat's warning reads
 * them (`status`), and the alerts fire on them (alert-triggers.ts).
 */

import { assertId, assertTime } from "./input-checks.ts";
import type { LedgerBook } from "./ledger-book.ts";
import type { LedgerConfig } from "./ledger-config.ts";
import {
  memberPeriodCounter,
  orgSpendCounter,
  projectSpendCounter,
  utcMonth,
} from "./ledger-counters.ts";
import { type LimitPeriod, type LimitRule, periodResetsAt } from "./limit-rules.ts";
import { assertNonNegativeMicros } from "./money.ts";

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

/** Whose calls a limit is asked about: a member or an end user, in a project or none. */
export interface Principal {
  memberId: string;
  projectId: string | null;
  /** Set when `memberId` is an end user's id: their app's limits (see `EndUserLimits`). */
  endUserLimits?: EndUserLimits;
}

export function assertEndUserLimits(limits: EndUserLimits | undefined): void {
  if (limits === undefined) return;
  if (limits.dailyMicros !== null) assertNonNegativeMicros(limits.dailyMicros, "limit");
  if (limits.monthlyMicros !== null) assertNonNegativeMicros(limits.monthlyMicros, "limit");
  const weekly = limits.weeklyMicros ?? null;
  if (weekly !== null) assertNonNegativeMicros(weekly, "limit");
}

/** One ledger's limits, read from its book inside the caller's transaction. */
export class SpendLimits {
  readonly #book: LedgerBook;
  readonly #config: LedgerConfig;

  constructor(book: LedgerBook, config: LedgerConfig) {
    this.#book = book;
    this.#config = config;
  }

  /** The org's monthly limit with its spend this month plus every open hold; null when none. */
  org(now: number): PrincipalLimit | null {
    const limitMicros = this.#config.orgMonthlyLimitMicros;
    if (limitMicros === null) return null;
    const spentMicros = this.#book.store.getCounter(orgSpendCounter(utcMonth(now)));
    const committedMicros = spentMicros + this.#book.balance().heldMicros;
    return { scope: "org_monthly", limitMicros, committedMicros, spentMicros };
  }

  /**
   * The first limit a new hold of `amountMicros` would take past its limit, the org's first;
   * null when every limit has room for it.
   */
  exceeded(now: number, who: Principal, amountMicros: number): PrincipalLimit | null {
    const over = (limit: PrincipalLimit) =>
      limit.committedMicros + amountMicros > limit.limitMicros;
    const org = this.org(now);
    if (org !== null && over(org)) return org;
    return this.principal(now, who).find(over) ?? null;
  }

  /**
   * The limits that apply to a principal's calls in a project, with their spend so far and when
   * each resets: the org's monthly limit first, then the principal's and the project's. What the
   * chat's warning reads; counts settled spend, so ask the lease holders to report first.
   */
  status(input: Principal & { now: number }): (PrincipalLimit & { resetsAt: number })[] {
    assertId(input.memberId, "memberId");
    assertEndUserLimits(input.endUserLimits);
    assertTime(input.now, "now");
    const org = this.org(input.now);
    const limits = [...(org === null ? [] : [org]), ...this.principal(input.now, input)];
    return limits.map((limit) => ({
      ...limit,
      resetsAt: periodResetsAt(scopePeriod(limit.scope), input.now),
    }));
  }

  /** A member's spend today plus their open holds: what the member daily limit counts. */
  memberDayCommitted(now: number, memberId: string): number {
    const store = this.#book.store;
    return (
      store.getCounter(memberPeriodCounter("day", now, memberId)) + store.sumOpenHolds(memberId)
    );
  }

  /**
   * The limits on one principal's own spend that are set: for a member, the rules an admin set on
   * them (or else the org's member daily limit) and their own; for an end user (`endUserLimits`
   * given) their app's daily, weekly and monthly limits instead; and the rules on the project, for
   * everyone. Each with the spend in its period plus the open holds that count under it.
   */
  principal(now: number, who: Principal): PrincipalLimit[] {
    const { memberId, projectId, endUserLimits: endUser } = who;
    const store = this.#book.store;
    const limits: PrincipalLimit[] = [];
    let memberHeld: number | undefined;
    const memberLimit = (scope: SpendLimitScope, limitMicros: number, period: LimitPeriod) => {
      memberHeld ??= store.sumOpenHolds(memberId);
      const spentMicros = store.getCounter(memberPeriodCounter(period, now, memberId));
      limits.push({ scope, limitMicros, committedMicros: spentMicros + memberHeld, spentMicros });
    };
    if (endUser === undefined) {
      const rules = this.#config.limitRules;
      const set = rules.rulesFor("member", memberId);
      const fallback = this.#config.memberDailyLimitMicros;
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
      const rules = this.#config.limitRules.rulesFor("project", projectId);
      const held = rules.length > 0 ? store.sumOpenProjectHolds(projectId) : 0;
      for (const rule of rules) {
        const spentMicros = store.getCounter(projectSpendCounter(rule.period, now, projectId));
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
}
