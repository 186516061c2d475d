import type { BillingSummary } from "@parley/shared";
import type { BillingAlert } from "../../lib/api.ts";
import { formatMicros } from "../../lib/money.ts";

const DAY_MS = 24 * 60 * 60 * 1000;

/** `YYYY-MM-DD` of a moment, in UTC (limits and the usage report count UTC days). */
export const utcDay = (at: Date): string => at.toISOString().slice(0, 10);

/** The first day of the moment's month, UTC: where the monthly limit starts counting. */
export const utcMonthStart = (at: Date): string => `${at.toISOString().slice(0, 7)}-01`;

/** The day after a `YYYY-MM-DD` date, as the API's exclusive end. */
export const dayAfter = (date: string): string =>
  utcDay(new Date(Date.parse(`${date}T00:00:00Z`) + DAY_MS));

/**
 * The query for the dates the reader picked (UTC days, both inclusive), as the API's half-open
 * range; none is the API's default.
 */
export function dayRange(from: string, to: string): { from?: string; to?: string } {
  return { ...(from ? { from } : {}), ...(to ? { to: dayAfter(to) } : {}) };
}

/**
 * The spend limits as one sentence a person can act on: what may be spent, per what, and when it
 * starts again. The worker counts the month from the 1st and the day from 00:00, both UTC.
 */
export function limitsSentence(
  summary: Pick<BillingSummary, "orgMonthlyLimitMicros" | "memberDailyLimitMicros">,
): string {
  const org =
    summary.orgMonthlyLimitMicros === null
      ? "Your organization has no monthly spend limit"
      : `Your organization may spend up to ${formatMicros(summary.orgMonthlyLimitMicros, { precise: true })} a month (resets on the 1st, UTC)`;
  const member =
    summary.memberDailyLimitMicros === null
      ? "members have no daily limit"
      : `each member up to ${formatMicros(summary.memberDailyLimitMicros, { precise: true })} a day (resets at 00:00 UTC)`;
  return `${org}; ${member}.`;
}

/** The low-balance alert in words. */
export function lowBalanceSentence(summary: Pick<BillingSummary, "lowBalanceMicros">): string {
  return summary.lowBalanceMicros === null
    ? "No low-balance alert is set."
    : `An alert fires when the available balance falls below ${formatMicros(summary.lowBalanceMicros, { precise: true })}.`;
}

/** An alert's period as the worker words it ("December 2026", "2026-12-01 (UTC)"), or none. */
export const alertPeriod = (alert: BillingAlert): string | null => alert.period;

/** One sentence for an alert, as the worker words it (packages/billing `alertMessage`). */
export const alertMessage = (alert: BillingAlert): string => alert.message;

export const ALERT_KIND_LABELS: Record<string, string> = {
  org_monthly_spend: "Monthly limit",
  member_daily_spend: "Member daily limit",
  low_balance: "Low balance",
  low_runway: "Balance forecast",
};

export type Delivery =
  | { state: "delivered"; label: string; tone: "success" }
  | { state: "retrying"; label: string; tone: "warning" }
  | { state: "parked"; label: string; tone: "danger"; reason: string }
  | { state: "none"; label: string; tone: "neutral" };

/** Where an alert's webhook delivery stands, as a badge says it. */
export function alertDelivery(alert: BillingAlert, webhookSet = true): Delivery {
  if (alert.deliveredAt !== null)
    return { state: "delivered", label: "Delivered", tone: "success" };
  if (alert.parkedReason !== null) {
    return { state: "parked", label: "Not delivered", tone: "danger", reason: alert.parkedReason };
  }
  if (alert.attempts > 0) {
    return {
      state: "retrying",
      label: `Retrying (${alert.attempts} ${alert.attempts === 1 ? "attempt" : "attempts"})`,
      tone: "warning",
    };
  }
  return webhookSet
    ? { state: "none", label: "Waiting to send", tone: "neutral" }
    : { state: "none", label: "No webhook set", tone: "neutral" };
}

/** Counts with thousands separators. */
export const count = (value: number): string => value.toLocaleString("en-US");

/** A timestamp as a short local date and time. */
export const when = (iso: string): string =>
  new Date(iso).toLocaleString("en-US", {
    month: "short",
    day: "numeric",
    year: "numeric",
    hour: "numeric",
    minute: "2-digit",
  });
