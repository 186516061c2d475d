import type { UsageGroupBy } from "@parley/shared";
import { lazy, Suspense, useState } from "react";
import { api, errorMessage } from "../../lib/api.ts";
import { formatMicros } from "../../lib/money.ts";
import { useAsync } from "../../lib/use-async.ts";
import { CsvDownload } from "./csv-download.tsx";

// The chart library is the heaviest part of billing: it loads after the balance is on screen.
const UsageChart = lazy(() => import("./usage-chart.tsx"));

const GROUPS: { value: UsageGroupBy; label: string }[] = [
  { value: "day", label: "Day" },
  { value: "model", label: "Model" },
  { value: "member", label: "Member" },
  { value: "project", label: "Project" },
  { value: "session", label: "Session" },
];

/** Spend of the last 30 days grouped by day, model, member, project or session, with a table. */
export function UsagePanel({ orgId }: { orgId: string }) {
  const [groupBy, setGroupBy] = useState<UsageGroupBy>("day");
  const [usage] = useAsync(() => api.usage(orgId, groupBy), [orgId, groupBy]);
  const label = GROUPS.find((group) => group.value === groupBy)?.label ?? groupBy;
  return (
    <section aria-labelledby="usage-title" className="card stack">
      <h2 id="usage-title">Spend, last 30 days</h2>
      <div className="toolbar">
        <label className="inline">
          <span>Group by</span>
          <select
            value={groupBy}
            onChange={(event) => setGroupBy(event.target.value as UsageGroupBy)}
          >
            {GROUPS.map((group) => (
              <option key={group.value} value={group.value}>
                {group.label}
              </option>
            ))}
          </select>
        </label>
        <CsvDownload orgId={orgId} range={{}} />
      </div>
      {usage.status === "loading" ? (
        <p role="status" className="muted chart-placeholder">
          Loading usage…
        </p>
      ) : usage.status === "error" ? (
        <p role="alert" className="error">
          {errorMessage(usage.error)}
        </p>
      ) : usage.data.items.length === 0 ? (
        <p className="empty chart-placeholder">No usage in this period.</p>
      ) : (
        <>
          <Suspense
            fallback={
              <p role="status" className="muted chart-placeholder">
                Loading chart…
              </p>
            }
          >
            <UsageChart items={usage.data.items} />
          </Suspense>
          <div className="table-wrap">
            <table>
              <caption className="visually-hidden">Spend by {label.toLowerCase()}</caption>
              <thead>
                <tr>
                  <th scope="col">{label}</th>
                  <th scope="col" className="num">
                    Requests
                  </th>
                  <th scope="col" className="num">
                    Tokens
                  </th>
                  <th scope="col" className="num">
                    Spend
                  </th>
                </tr>
              </thead>
              <tbody>
                {usage.data.items.map((item) => (
                  <tr key={item.key ?? "(none)"}>
                    <td>{item.key ?? "(none)"}</td>
                    <td className="num">{item.requests.toLocaleString("en-US")}</td>
                    <td className="num">
                      {(item.promptTokens + item.completionTokens).toLocaleString("en-US")}
                    </td>
                    <td className="num">{formatMicros(item.priceMicros)}</td>
                  </tr>
                ))}
              </tbody>
              <tfoot>
                <tr>
                  <th scope="row">Total</th>
                  <td className="num">{usage.data.totals.requests.toLocaleString("en-US")}</td>
                  <td className="num">
                    {(
                      usage.data.totals.promptTokens + usage.data.totals.completionTokens
                    ).toLocaleString("en-US")}
                  </td>
                  <td className="num">{formatMicros(usage.data.totals.priceMicros)}</td>
                </tr>
              </tfoot>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
