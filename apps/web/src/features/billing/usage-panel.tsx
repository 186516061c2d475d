import type { UsageGroupBy } from "@parley/shared";
import { useQuery } from "@tanstack/react-query";
import { lazy, Suspense, useState } from "react";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { FigureCards, useWideTable } from "../../components/ui/figure-cards.tsx";
import { Field, Select } from "../../components/ui/input.tsx";
import { EmptyState, ErrorNote, Loading, Skeleton } from "../../components/ui/states.tsx";
import { num, Table, TBody, Td, TFoot, THead, Th, Tr } from "../../components/ui/table.tsx";
import { billingApi } from "../../lib/billing-api.ts";
import { formatMicros } from "../../lib/money.ts";
import { keys } from "../../lib/query.ts";
import { CsvDownload } from "./csv-download.tsx";
import { DateRangeFields } from "./date-range.tsx";
import { chartRows, GROUPS, groupName, tableRows } from "./usage-data.ts";
import { count, dayRange } from "./words.ts";

// The chart library is the heaviest part of billing: it loads after the balance is on screen.
const UsageChart = lazy(() => import("./usage-chart.tsx"));

/**
 * Spend over time and by model, member, project or session, named (never a raw id when the worker
 * has a name), as a chart and the table it pictures: the last 30 days, or the days picked (the CSV
 * follows the same range). A member's report is their own usage.
 */
export function UsagePanel({ orgId, canManage }: { orgId: string; canManage: boolean }) {
  const [groupBy, setGroupBy] = useState<UsageGroupBy>("day");
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const range = dayRange(from, to);
  const usage = useQuery({
    queryKey: keys.billingUsage(orgId, groupBy, range),
    queryFn: () => billingApi.usage(orgId, groupBy, range),
  });
  const label = GROUPS.find((group) => group.value === groupBy)?.label ?? groupBy;
  const period =
    from || to ? `${from || "the start"} to ${to || "today"} (UTC)` : "the last 30 days";
  const report = usage.data;
  const wide = useWideTable();

  return (
    <Card aria-labelledby="usage-title">
      <CardHeader
        id="usage-title"
        title={`Spend, ${period}`}
        description={canManage ? "What the organization spent." : "What you spent."}
        actions={<CsvDownload orgId={orgId} range={range} />}
      />
      <CardBody className="grid gap-4">
        <div className="grid grid-cols-1 gap-3 sm:grid-cols-3">
          <Field label="Group by">
            <Select
              value={groupBy}
              onChange={(event) => setGroupBy(event.target.value as UsageGroupBy)}
            >
              {GROUPS.map((group) => (
                <option key={group.value} value={group.value}>
                  {group.label}
                </option>
              ))}
            </Select>
          </Field>
          <DateRangeFields from={from} to={to} onFrom={setFrom} onTo={setTo} />
        </div>
        {usage.isPending ? (
          <Loading label="Loading usage…" />
        ) : usage.isError ? (
          <ErrorNote error={usage.error} retry={() => void usage.refetch()} />
        ) : !report || report.items.length === 0 ? (
          <EmptyState title="No usage in this period">
            Replies of the assistant are counted here as they finish.
          </EmptyState>
        ) : (
          <>
            <Suspense fallback={<Skeleton className="h-64 w-full" />}>
              <UsageChart
                rows={chartRows(report.items, groupBy, { window: report })}
                groupBy={groupBy}
              />
            </Suspense>
            {wide ? (
              <Table>
                <caption className="sr-only">Spend by {label.toLowerCase()}</caption>
                <THead>
                  <tr>
                    <Th scope="col">{label}</Th>
                    <Th scope="col" className={num}>
                      Requests
                    </Th>
                    <Th scope="col" className={num}>
                      Tokens
                    </Th>
                    <Th scope="col" className={num}>
                      Spend
                    </Th>
                  </tr>
                </THead>
                <TBody>
                  {tableRows(report.items, groupBy).map((item, index) => (
                    <Tr key={`${item.key ?? "none"}:${String(index)}`}>
                      <Td className="min-w-40 break-words">{groupName(item, groupBy)}</Td>
                      <Td className={num}>{count(item.requests)}</Td>
                      <Td className={num}>{count(item.promptTokens + item.completionTokens)}</Td>
                      <Td className={num}>{formatMicros(item.priceMicros, { precise: true })}</Td>
                    </Tr>
                  ))}
                </TBody>
                <TFoot>
                  <tr>
                    <Th scope="row">Total</Th>
                    <Td className={num}>{count(report.totals.requests)}</Td>
                    <Td className={num}>
                      {count(report.totals.promptTokens + report.totals.completionTokens)}
                    </Td>
                    <Td className={num}>
                      {formatMicros(report.totals.priceMicros, { precise: true })}
                    </Td>
                  </tr>
                </TFoot>
              </Table>
            ) : (
              <FigureCards
                label={`Spend by ${label.toLowerCase()}`}
                cards={[
                  ...tableRows(report.items, groupBy).map((item, index) => ({
                    key: `${item.key ?? "none"}:${String(index)}`,
                    title: <span className="font-medium">{groupName(item, groupBy)}</span>,
                    figures: figuresOf(item),
                  })),
                  {
                    key: "total",
                    title: <span className="font-medium">Total</span>,
                    figures: figuresOf(report.totals),
                  },
                ]}
              />
            )}
          </>
        )}
      </CardBody>
    </Card>
  );
}

/** A row's figures for its card on a phone: the spend first, then what it was made of. */
function figuresOf(item: {
  requests: number;
  promptTokens: number;
  completionTokens: number;
  priceMicros: number;
}) {
  return [
    { label: "Spend", value: formatMicros(item.priceMicros, { precise: true }) },
    { label: "Requests", value: count(item.requests) },
    { label: "Tokens", value: count(item.promptTokens + item.completionTokens) },
  ];
}
