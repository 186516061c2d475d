import { type FormEvent, useState } from "react";
import { FormError } from "../components/field-error.tsx";
import { AlertsList } from "../features/billing/alerts-list.tsx";
import { LedgerTable } from "../features/billing/ledger-table.tsx";
import { LimitsForm } from "../features/billing/limits-form.tsx";
import { UsagePanel } from "../features/billing/usage-panel.tsx";
import { api, errorMessage } from "../lib/api.ts";
import { formatMicros, parseDollarsToMicros } from "../lib/money.ts";
import { useLocation } from "../lib/router.tsx";
import { useSession } from "../lib/session.tsx";
import { useAsync } from "../lib/use-async.ts";

/**
 * Balance, top-up through Stripe Checkout, spend charts and the CSV for everyone; limits, the
 * ledger and alerts for owners and admins.
 */
export default function BillingPage() {
  const { org } = useSession();
  const { search } = useLocation();
  const orgId = org?.id ?? "";
  const [billing, , setBilling] = useAsync(() => api.billing(orgId), [orgId]);
  const [error, setError] = useState<unknown>(null);
  const [inputError, setInputError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const canTopUp = org?.role === "owner" || org?.role === "admin";
  const checkout = search.get("checkout");

  async function onTopUp(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const micros = parseDollarsToMicros(String(new FormData(event.currentTarget).get("amount")));
    if (micros === null || micros <= 0) {
      setInputError("Enter an amount in dollars, like 20 or 20.50");
      return;
    }
    setInputError(null);
    setBusy(true);
    setError(null);
    try {
      const { url } = await api.checkout(orgId, micros);
      window.location.assign(url);
    } catch (caught) {
      setError(caught);
      setBusy(false);
    }
  }

  return (
    <section aria-labelledby="billing-title" className="stack">
      <h1 id="billing-title">Billing{org ? ` for ${org.name}` : ""}</h1>
      {checkout === "success" ? (
        <p role="status" className="ok">
          Payment received. Credits appear as soon as Stripe confirms it.
        </p>
      ) : checkout === "cancelled" ? (
        <p role="status" className="muted">
          Checkout was cancelled; nothing was charged.
        </p>
      ) : null}
      {billing.status === "loading" ? (
        <p role="status" className="muted">
          Loading balance…
        </p>
      ) : billing.status === "error" ? (
        <p role="alert" className="error">
          {errorMessage(billing.error)}
        </p>
      ) : (
        <dl className="stats">
          <div>
            <dt>Available</dt>
            <dd>{formatMicros(billing.data.availableMicros)}</dd>
          </div>
          <div>
            <dt>Held by running replies</dt>
            <dd>{formatMicros(billing.data.heldMicros)}</dd>
          </div>
        </dl>
      )}
      {canTopUp ? (
        <form onSubmit={onTopUp} className="card stack" aria-labelledby="topup-title">
          <h2 id="topup-title">Top up credits</h2>
          <label>
            <span>Amount in US dollars</span>
            <input name="amount" inputMode="decimal" defaultValue="20" required />
          </label>
          {inputError ? (
            <p role="alert" className="error">
              {inputError}
            </p>
          ) : (
            <FormError error={error} />
          )}
          <button type="submit" className="primary" disabled={busy}>
            {busy ? "Opening Checkout…" : "Top up"}
          </button>
        </form>
      ) : (
        <p className="muted">Ask an owner or admin of this organization to top up credits.</p>
      )}
      {orgId ? <UsagePanel orgId={orgId} /> : null}
      {canTopUp && orgId ? (
        <>
          {billing.status === "ready" ? (
            <LimitsForm
              key={orgId}
              orgId={orgId}
              settings={billing.data}
              onSaved={(settings) => setBilling({ ...billing.data, ...settings })}
            />
          ) : null}
          <section aria-labelledby="alerts-title" className="card stack">
            <h2 id="alerts-title">Alerts</h2>
            <AlertsList orgId={orgId} />
          </section>
          <section aria-labelledby="ledger-title" className="card stack">
            <h2 id="ledger-title">Ledger</h2>
            <LedgerTable orgId={orgId} />
          </section>
        </>
      ) : null}
    </section>
  );
}
