import { LoadMore } from "../../components/load-more.tsx";
import { api, errorMessage } from "../../lib/api.ts";
import { formatMicros } from "../../lib/money.ts";
import { usePages } from "../../lib/use-pages.ts";

/** The append-only ledger, newest first, a page at a time (owners and admins). */
export function LedgerTable({ orgId }: { orgId: string }) {
  const [ledger, , more] = usePages((cursor) => api.ledger(orgId, cursor), [orgId]);

  if (ledger.status === "loading") {
    return (
      <p role="status" className="muted">
        Loading ledger…
      </p>
    );
  }
  if (ledger.status === "error") {
    return (
      <p role="alert" className="error">
        {errorMessage(ledger.error)}
      </p>
    );
  }
  const items = ledger.data.items;

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
      <LoadMore more={more} />
    </div>
  );
}
