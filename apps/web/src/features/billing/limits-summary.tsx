import type { BillingSummary } from "@parley/shared";
import { useQuery } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { Button } from "../../components/ui/button.tsx";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { Skeleton } from "../../components/ui/states.tsx";
import { billingApi } from "../../lib/billing-api.ts";
import { cn } from "../../lib/cn.ts";
import { formatMicros } from "../../lib/money.ts";
import { keys } from "../../lib/query.ts";
import { limitsSentence, lowBalanceSentence, utcDay, utcMonthStart } from "./words.ts";

/** A bar of spend against a limit, with the same in words for everyone. */
export function SpendMeter({
  label,
  spentMicros,
  limitMicros,
  words,
}: {
  label: string;
  spentMicros: number;
  limitMicros: number;
  words: string;
}) {
  const pct = limitMicros > 0 ? Math.min(100, Math.round((spentMicros / limitMicros) * 100)) : 0;
  return (
    <div className="grid gap-1.5">
      <div
        role="progressbar"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={pct}
        aria-valuetext={words}
        className="h-2.5 w-full overflow-hidden rounded-full bg-muted"
      >
        <div
          className={cn(
            "h-full rounded-full transition-[width]",
            pct >= 100 ? "bg-destructive" : pct >= 80 ? "bg-warning" : "bg-primary",
          )}
          style={{ width: `${pct}%` }}
        />
      </div>
      <p className="text-sm tabular-nums">{words}</p>
    </div>
  );
}

/**
 * The limits in words, and how far this month (owners and admins: the organization's spend) or
 * today (a member: their own, the only usage they may read) has gone toward them. Owners and admins
 * get the way to change them; members read them.
 */
export function LimitsSummary({
  orgId,
  summary,
  canManage,
  onEdit,
}: {
  orgId: string;
  summary: BillingSummary;
  canManage: boolean;
  onEdit: () => void;
}) {
  const now = new Date();
  const range = { from: canManage ? utcMonthStart(now) : utcDay(now) };
  const spend = useQuery({
    queryKey: keys.billingUsage(orgId, "day", range),
    queryFn: () => billingApi.usage(orgId, "day", range),
  });
  const spent = spend.data?.totals.priceMicros;
  const limit = canManage ? summary.orgMonthlyLimitMicros : summary.memberDailyLimitMicros;

  let meter: ReactNode;
  if (spent === undefined) {
    meter = spend.isError ? null : <Skeleton className="h-8 w-full" />;
  } else if (limit === null) {
    meter = (
      <p className="text-sm tabular-nums">
        {canManage
          ? `${formatMicros(spent, { precise: true })} spent this month, with no monthly limit.`
          : `You spent ${formatMicros(spent, { precise: true })} today, with no daily limit.`}
      </p>
    );
  } else {
    const pct = Math.round((spent / limit) * 100);
    meter = (
      <SpendMeter
        label={
          canManage
            ? "Spend this month against the monthly limit"
            : "Your spend today against the daily limit"
        }
        spentMicros={spent}
        limitMicros={limit}
        words={
          canManage
            ? `${formatMicros(spent, { precise: true })} of ${formatMicros(limit, { precise: true })} spent this month (${pct}%)`
            : `You spent ${formatMicros(spent, { precise: true })} of your ${formatMicros(limit, { precise: true })} today (${pct}%)`
        }
      />
    );
  }

  return (
    <Card aria-labelledby="limits-summary-title">
      <CardHeader
        id="limits-summary-title"
        title="Spend limits"
        actions={
          canManage ? (
            <Button size="sm" onClick={onEdit}>
              Change limits
            </Button>
          ) : null
        }
      />
      <CardBody className="grid gap-4">
        <p className="text-sm">{limitsSentence(summary)}</p>
        {meter}
        <p className="text-muted-foreground text-sm">{lowBalanceSentence(summary)}</p>
        {canManage ? null : (
          <p className="text-muted-foreground text-xs">
            Owners and admins of this organization set these limits.
          </p>
        )}
      </CardBody>
    </Card>
  );
}
