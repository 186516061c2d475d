import type { AlertRow } from "./ledger-store.ts";
import { formatMicros } from "./money.ts";

const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];

/**
 * Micro-dollars as a person reads them: `$1,234.50`, `$0.0012` (cents always shown, smaller
 * fractions only when there are any).
 */
export function formatUsd(micros: number): string {
  const [whole = "0", fraction = ""] = formatMicros(micros).replace(/^-/, "").split(".");
  const cents = fraction.replace(/0+$/, "").padEnd(2, "0");
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return `${micros < 0 ? "-" : ""}$${grouped}.${cents}`;
}

/**
 * An alert's period as a person reads it: `December 2026` for a monthly limit, `2026-12-01 (UTC)`
 * for a daily one, null for a low-balance alert (its period is internal: the funding it followed).
 */
export function alertPeriodLabel(alert: Pick<AlertRow, "kind" | "period">): string | null {
  if (alert.kind === "low_balance") return null;
  const month = /^(\d{4})-(\d{2})$/.exec(alert.period);
  if (month) return `${MONTHS[Number(month[2]) - 1] ?? month[2]} ${month[1]}`;
  if (/^\d{4}-\d{2}-\d{2}$/.test(alert.period)) return `${alert.period} (UTC)`;
  return alert.period;
}

/** One sentence saying which limit or threshold an alert is about, and how much. */
export function alertMessage(alert: AlertRow): string {
  const level = formatUsd(alert.levelMicros);
  const limit = formatUsd(alert.limitMicros);
  const period = alertPeriodLabel(alert);
  switch (alert.kind) {
    case "org_monthly_spend":
      return `Organization spend reached ${alert.thresholdPct}% of its monthly limit: ${level} of ${limit} in ${period}.`;
    case "member_daily_spend":
      return `A member's spend reached ${alert.thresholdPct}% of the daily member limit: ${level} of ${limit} on ${period}.`;
    case "low_balance":
      return `The available balance fell to ${level}, below the low-balance threshold of ${limit}.`;
  }
}
