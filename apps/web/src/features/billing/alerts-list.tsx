import { api, type BillingAlert, errorMessage } from "../../lib/api.ts";
import { formatMicros } from "../../lib/money.ts";
import { useAsync } from "../../lib/use-async.ts";

const KIND_LABELS: Record<string, string> = {
  org_monthly_spend: "Monthly spend",
  member_daily_spend: "Member daily spend",
  low_balance: "Low balance",
};

function describe(alert: BillingAlert): string {
  const kind = KIND_LABELS[alert.kind] ?? alert.kind;
  const level = formatMicros(alert.levelMicros);
  const limit = formatMicros(alert.limitMicros);
  return alert.thresholdPct === null
    ? `${kind}: ${level} left, under ${limit}`
    : `${kind} reached ${alert.thresholdPct}%: ${level} of ${limit}`;
}

/** Threshold alerts that fired, with their webhook delivery state (owners and admins). */
export function AlertsList({ orgId }: { orgId: string }) {
  const [alerts] = useAsync(() => api.alerts(orgId), [orgId]);
  if (alerts.status === "loading") {
    return (
      <p role="status" className="muted">
        Loading alerts…
      </p>
    );
  }
  if (alerts.status === "error") {
    return (
      <p role="alert" className="error">
        {errorMessage(alerts.error)}
      </p>
    );
  }
  if (alerts.data.items.length === 0) return <p className="empty">No alerts have fired.</p>;
  return (
    <ul className="list">
      {alerts.data.items.map((alert) => (
        <li key={alert.key}>
          <span>{describe(alert)}</span>
          <span className="muted">
            {" "}
            · {alert.period} · fired {new Date(alert.firedAt).toLocaleString()} ·{" "}
            {alert.deliveredAt
              ? `webhook delivered ${new Date(alert.deliveredAt).toLocaleString()}`
              : alert.parkedReason
                ? `webhook not delivered: ${alert.parkedReason}`
                : alert.attempts > 0
                  ? `webhook not delivered (${alert.attempts} attempts)`
                  : "no webhook delivery"}
          </span>
        </li>
      ))}
    </ul>
  );
}
