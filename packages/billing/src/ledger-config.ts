/**
 * A ledger's configuration: the org's spend limits, the rules on members and projects
 * (limit-rules.ts), and what fires an alert. Read by the limits (spend-limits.ts) and the alerts
 * (alert-triggers.ts); the BillingAccount builds it from its own tables (account-store.ts).
 */

import { type LimitRules, NO_LIMIT_RULES } from "./limit-rules.ts";
import { assertMicros, assertNonNegativeMicros } from "./money.ts";

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

/** Checks a whole configuration; a `RangeError` names what is wrong (a caller bug). */
export function assertLedgerConfig(config: LedgerConfig): void {
  const { orgMonthlyLimitMicros, memberDailyLimitMicros, lowBalanceMicros } = config;
  if (orgMonthlyLimitMicros !== null) assertNonNegativeMicros(orgMonthlyLimitMicros, "limit");
  if (memberDailyLimitMicros !== null) assertNonNegativeMicros(memberDailyLimitMicros, "limit");
  if (lowBalanceMicros !== null) assertMicros(lowBalanceMicros, "lowBalanceMicros");
  for (const pct of config.alertThresholdsPct) {
    if (!Number.isSafeInteger(pct) || pct <= 0) throw new RangeError("bad alert threshold");
  }
  const days = config.runwayAlertDays;
  if (days !== null && (!Number.isSafeInteger(days) || days <= 0)) {
    throw new RangeError("bad runway alert days");
  }
}
