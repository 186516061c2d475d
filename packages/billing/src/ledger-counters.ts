/**
 * The names of the ledger's counters (`ledger_counters`): the cached totals `reconcile()` checks
 * against the rows, and the spend per period that limits, alerts and the forecast read. A name is
 * the whole key of a counter, so a period's spend starts at 0 when its day, week or month begins:
 * nothing resets it.
 */

import { LIMIT_PERIODS, type LimitPeriod, periodKey } from "./limit-rules.ts";

/** The sum of all entries. */
export const POSTED = "posted";
/** The sum of open holds. */
export const HELD = "held";
/** Seq of the latest credit entry: a low-balance alert fires once per funding. */
export const FUNDED_AT = "funded_at_seq";
/** The posted balance right after that credit (automatic top-up: did it end a crossing?). */
export const FUNDED_BALANCE = "funded_balance";

/** UTC calendar month of a timestamp: `2026-11`. */
export function utcMonth(now: number): string {
  return new Date(now).toISOString().slice(0, 7);
}

/** UTC day of a timestamp: `2026-11-29`. */
export function utcDay(now: number): string {
  return new Date(now).toISOString().slice(0, 10);
}

/** The org's billable spend per UTC month (its monthly limit). */
export function orgSpendCounter(month: string): string {
  return `spend:org:${month}`;
}

/** The org's billable spend per UTC day (the forecast's window). */
export function orgDaySpendCounter(day: string): string {
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
export function projectSpendCounter(period: LimitPeriod, now: number, projectId: string): string {
  return `spend:project-${period}:${periodKey(period, now)}:${projectId}`;
}

/** A member's spend counter of a period (day and month were kept before the rules). */
export function memberPeriodCounter(period: LimitPeriod, now: number, memberId: string): string {
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
export function spendCounters(now: number, memberId: string, projectId: string | null): string[] {
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
