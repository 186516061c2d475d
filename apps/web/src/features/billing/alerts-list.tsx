import { LoadMore } from "../../components/load-more.tsx";
import { Badge } from "../../components/ui/badge.tsx";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { EmptyState, ErrorNote, Loading } from "../../components/ui/states.tsx";
import type { BillingAlert } from "../../lib/api.ts";
import { billingApi } from "../../lib/billing-api.ts";
import { keys } from "../../lib/query.ts";
import { usePaged } from "../../lib/use-paged.ts";
import { ALERT_KIND_LABELS, alertDelivery, alertMessage, alertPeriod, when } from "./words.ts";

function AlertItem({ alert, webhookSet }: { alert: BillingAlert; webhookSet: boolean }) {
  const delivery = alertDelivery(alert, webhookSet);
  const period = alertPeriod(alert);
  return (
    <li className="grid gap-1.5 py-3 first:pt-0 last:pb-0">
      <div className="flex flex-wrap items-center gap-2">
        <Badge tone={alert.kind === "low_balance" ? "warning" : "info"}>
          {ALERT_KIND_LABELS[alert.kind] ?? alert.kind}
        </Badge>
        {period ? <span className="text-muted-foreground text-xs">{period}</span> : null}
        <Badge tone={delivery.tone}>Webhook: {delivery.label}</Badge>
      </div>
      <p className="text-sm">{alertMessage(alert)}</p>
      <p className="text-muted-foreground text-xs">
        Fired {when(alert.firedAt)}
        {alert.deliveredAt ? ` · delivered ${when(alert.deliveredAt)}` : ""}
        {delivery.state === "parked" ? ` · not sent: ${delivery.reason}` : ""}
      </p>
    </li>
  );
}

/** Alerts that fired, newest first, with their webhook delivery state (owners and admins). */
export function AlertsList({ orgId, webhookSet = true }: { orgId: string; webhookSet?: boolean }) {
  const { query, items, more, firstPageError } = usePaged(keys.billingAlerts(orgId), (cursor) =>
    billingApi.alerts(orgId, cursor),
  );
  return (
    <Card aria-labelledby="alerts-title">
      <CardHeader
        id="alerts-title"
        title="Alerts"
        description="Each limit alerts once per period at the highest threshold crossed."
      />
      <CardBody className="grid gap-3">
        {query.isPending ? (
          <Loading label="Loading alerts…" lines={2} />
        ) : firstPageError ? (
          <ErrorNote error={firstPageError} retry={() => void query.refetch()} />
        ) : items.length === 0 ? (
          <EmptyState title="No alerts have fired">
            Set a limit or a low-balance threshold to be told before spending stops.
          </EmptyState>
        ) : (
          <>
            <ul className="grid divide-y divide-border">
              {items.map((alert) => (
                <AlertItem key={alert.key} alert={alert} webhookSet={webhookSet} />
              ))}
            </ul>
            <LoadMore more={more} label="More alerts" />
          </>
        )}
      </CardBody>
    </Card>
  );
}
