import { useQuery } from "@tanstack/react-query";
import { api } from "../../lib/api.ts";
import { formatMicros } from "../../lib/money.ts";
import { keys } from "../../lib/query.ts";
import { canManage, useSession } from "../../lib/session.tsx";

/** The share of a limit at which the chat warns, before the limit stops a reply. */
export const WARN_AT_PCT = 80;

/** Midnight UTC of today, as the member daily limit counts it. */
const todayUtc = (now = Date.now()) => `${new Date(now).toISOString().slice(0, 10)}T00:00:00Z`;

/**
 * A soft warning in the chat once the signed-in member has spent {@link WARN_AT_PCT}% of the
 * org's daily member limit today (UTC): how much, when it resets and who can raise it, before the
 * limit stops a reply. Read again as each turn ends (the session page invalidates billing).
 */
export function LimitWarning() {
  const { org, me } = useSession();
  const orgId = org?.id ?? "";
  const billing = useQuery({
    queryKey: keys.billing(orgId),
    queryFn: () => api.billing(orgId),
    enabled: orgId !== "",
  });
  const limit = billing.data?.memberDailyLimitMicros ?? null;
  const from = todayUtc();
  const range = { from, ...(me ? { memberId: me.id } : {}) };
  const usage = useQuery({
    queryKey: [...keys.billingUsage(orgId, "day", range), me?.id ?? ""],
    queryFn: () => api.usage(orgId, "day", range),
    enabled: orgId !== "" && limit !== null && me != null,
  });
  const spent = usage.data?.totals.priceMicros ?? 0;
  if (limit === null || limit <= 0 || spent * 100 < limit * WARN_AT_PCT) return null;
  const pct = Math.min(100, Math.floor((spent * 100) / limit));
  return (
    <p
      role="status"
      className="rounded-md border border-warning/40 bg-warning/10 px-3 py-2 text-sm"
      data-testid="limit-warning"
    >
      You have used {pct}% of your daily limit ({formatMicros(spent, { precise: true })} of{" "}
      {formatMicros(limit, { precise: true })}). It resets at 00:00 UTC;{" "}
      {canManage(org) ? "you can raise it in Billing." : "an owner or admin can raise it."}
    </p>
  );
}
