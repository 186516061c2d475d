import type { LimitPeriod, LimitState } from "@parley/shared";

/** When a period's spend starts again from zero (UTC calendar periods). */
export const RESETS: Record<LimitPeriod, string> = {
  day: "at 00:00 UTC",
  week: "on Monday at 00:00 UTC",
  month: "on the 1st of the month (UTC)",
};

export const PER: Record<LimitPeriod, string> = {
  day: "per day",
  week: "per week",
  month: "per month",
};

const ADJECTIVE: Record<LimitPeriod, string> = {
  day: "daily",
  week: "weekly",
  month: "monthly",
};

/** What a limit is, for a sentence: "your weekly limit", "this project's daily limit". */
export function limitName(limit: Pick<LimitState, "limit" | "period">): string {
  const adjective = ADJECTIVE[limit.period];
  if (limit.limit === "org_monthly") return "your organization's monthly limit";
  if (limit.limit.startsWith("project_")) return `this project's ${adjective} limit`;
  if (limit.limit.startsWith("own_")) return `the ${adjective} limit you set yourself`;
  return `your ${adjective} limit`;
}

/** How much of the limit is spent, in whole percent (at most 100). */
export const usedPct = (limit: Pick<LimitState, "spentMicros" | "limitMicros">): number =>
  limit.limitMicros <= 0
    ? 100
    : Math.min(100, Math.floor((limit.spentMicros * 100) / limit.limitMicros));
