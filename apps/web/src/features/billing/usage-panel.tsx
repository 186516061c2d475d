import type { UsageGroupBy } from "@parley/shared";
import { lazy, Suspense, useState } from "react";
import { api, errorMessage, type UsageRange } from "../../lib/api.ts";
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

/** The day after a `YYYY-MM-DD` date, as the API's exclusive end. */
const dayAfter = (date: string) =>
  new Date(Date.parse(`${date}T00:00:00Z`) + 24 * 60 * 60 * 1000).toISOString().slice(0, 10);

/** The query for the dates the reader picked (UTC days, both inclusive); none is the last 30 days. */
export function usageRange(from: string, to: string): UsageRange {
  return { ...(from ? { from } : {}), ...(to ? { to: dayAfter(to) } : {}) };
}

/**
 * Spend grouped by day, model, member, project or session, with a table: the last 30 days, or the
 * days the reader picks (the CSV follows the same range).
 */
export function UsagePanel({ orgId }: { orgId: string }) {
  const [groupBy, setGroupBy] = useState<UsageGroupBy>("day");
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const range = usageRange(from, to);
  const [usage] = useAsync(() => api.usage(orgId, groupBy, range), [orgId, groupBy, from, to]);
  const label = GROUPS.find((group) => group.value === groupBy)?.label ?? groupBy;
  const period = from || to ? `${from || "the start"} to ${to || "today"} (UTC)` : "last 30 days";
  return (
    <section aria-labelledby="usage-title" className="card stack">
      <h2 id="usage-title">Spend, {period}</h2>
      <div className="toolbar">
        <label className="inline">
          <span>From</span>
          <input
            type="date"
            value={from}
            max={to || undefined}
            onChange={(e) => setFrom(e.target.value)}
          />
        </label>
        <label className="inline">
          <span>To</span>
          <input
            type="date"
            value={to}
            min={from || undefined}
            onChange={(e) => setTo(e.target.value)}
          />
        </label>
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
        <CsvDownload orgId={orgId} range={range} />
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
