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
  if (
    alert.kind === "low_balance" ||
    alert.kind === "low_runway" ||
    alert.kind === "auto_top_up_failed"
  ) {
    return null;
  }
  const month = /^(\d{4})-(\d{2})$/.exec(alert.period);
  if (month) return `${MONTHS[Number(month[2]) - 1] ?? month[2]} ${month[1]}`;
  if (/^\d{4}-\d{2}-\d{2}$/.test(alert.period)) return `${alert.period} (UTC)`;
  return alert.period;
}

/**
 * One sentence saying which limit or threshold an alert is about, and how much. Spend counts what
 * is reserved for replies under way. A 100% alert also fires when the limit refused a reply while
 * spend was still under it (the reply would have gone over): then it says so, not "reached 100%".
 */
export function alertMessage(alert: AlertRow): string {
  const level = formatUsd(alert.levelMicros);
  const limit = formatUsd(alert.limitMicros);
  const period = alertPeriodLabel(alert);
  const stopped =
    alert.thresholdPct !== null &&
    alert.thresholdPct >= 100 &&
    BigInt(alert.levelMicros) * 100n < BigInt(alert.limitMicros) * BigInt(alert.thresholdPct);
  switch (alert.kind) {
    case "org_monthly_spend":
      return stopped
        ? `The monthly limit stopped a reply that would have gone over it: ${level} of ${limit} spent or reserved in ${period}.`
        : `Organization spend reached ${alert.thresholdPct}% of its monthly limit: ${level} of ${limit} in ${period}.`;
    case "member_daily_spend":
      return stopped
        ? `The daily member limit stopped a reply that would have gone over it: ${level} of ${limit} spent or reserved on ${period}.`
        : `A member's spend reached ${alert.thresholdPct}% of the daily member limit: ${level} of ${limit} on ${period}.`;
    case "low_balance":
      return `The available balance fell to ${level}, below the low-balance threshold of ${limit}.`;
    case "low_runway": {
      const days = /^runway-(\d+)d-/.exec(alert.period)?.[1] ?? "?";
      return `At the last 7 days' spend rate the available balance of ${level} lasts less than ${days} days (${days} days would need ${limit}).`;
    }
    case "auto_top_up_failed": {
      const code = autoTopUpFailureCode(alert.period);
      const why =
        code === "authentication_required"
          ? "the card's bank asked for the cardholder's authentication, which an automatic charge cannot give"
          : code === "card_declined" || code === "insufficient_funds"
            ? `the card was declined (${code})`
            : `Stripe refused the charge (${code})`;
      return `An automatic top-up of ${limit} was not paid: ${why}. Automatic top-up is paused until a card is saved again or it is turned back on; the balance is ${level}.`;
    }
  }
}

/**
 * The period of an `auto_top_up_failed` alert: the charge's key and Stripe's error code, so the
 * alert fires once per failed charge and its message can say why.
 */
export const autoTopUpFailurePeriod = (chargeKey: string, code: string): string =>
  `${chargeKey}/${code}`;

function autoTopUpFailureCode(period: string): string {
  return period.slice(period.indexOf("/") + 1) || "card_declined";
}
