import type { LedgerEntry } from "@parley/shared";
import { useState } from "react";
import { FormError } from "../../components/field-error.tsx";
import { api, errorMessage } from "../../lib/api.ts";
import { formatMicros } from "../../lib/money.ts";
import { useAsync } from "../../lib/use-async.ts";

/** The append-only ledger, newest first, a page at a time (owners and admins). */
export function LedgerTable({ orgId }: { orgId: string }) {
  const [first] = useAsync(() => api.ledger(orgId), [orgId]);
  const [more, setMore] = useState<{ items: LedgerEntry[]; nextCursor: string | null } | null>(
    null,
  );
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  if (first.status === "loading") {
    return (
      <p role="status" className="muted">
        Loading ledger…
      </p>
    );
  }
  if (first.status === "error") {
    return (
      <p role="alert" className="error">
        {errorMessage(first.error)}
      </p>
    );
  }
  const items = [...first.data.items, ...(more?.items ?? [])];
  const nextCursor = more ? more.nextCursor : first.data.nextCursor;

  async function loadMore() {
    if (!nextCursor) return;
    setBusy(true);
    setError(null);
    try {
      const page = await api.ledger(orgId, nextCursor);
      setMore({ items: [...(more?.items ?? []), ...page.items], nextCursor: page.nextCursor });
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  }

  if (items.length === 0) return <p className="empty">No ledger entries yet.</p>;
  return (
    <div className="stack">
      <div className="table-wrap">
        <table>
          <caption className="visually-hidden">Ledger entries, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Kind</th>
              <th scope="col">Memo</th>
              <th scope="col" className="num">
                Amount
              </th>
              <th scope="col" className="num">
                Balance after
              </th>
            </tr>
          </thead>
          <tbody>
            {items.map((entry) => (
              <tr key={entry.id}>
                <td>{new Date(entry.createdAt).toLocaleString()}</td>
                <td>{entry.kind}</td>
                <td>{entry.memo ?? entry.reference ?? ""}</td>
                <td className="num">{formatMicros(entry.amountMicros)}</td>
                <td className="num">{formatMicros(entry.balanceAfterMicros)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <FormError error={error} />
      {nextCursor ? (
        <button type="button" onClick={() => void loadMore()} disabled={busy}>
          {busy ? "Loading…" : "Load more"}
        </button>
      ) : null}
    </div>
  );
}
