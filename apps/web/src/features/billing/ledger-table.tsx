import type { LedgerEntry } from "@parley/shared";
import { LoadMore } from "../../components/load-more.tsx";
import { Badge } from "../../components/ui/badge.tsx";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { EmptyState, ErrorNote, Loading } from "../../components/ui/states.tsx";
import { billingApi } from "../../lib/billing-api.ts";
import { formatMicros } from "../../lib/money.ts";
import { keys } from "../../lib/query.ts";
import { usePaged } from "../../lib/use-paged.ts";
import { billingColumns, DataTable } from "./data-table.tsx";
import { grantEventLabel } from "./grants-list.tsx";
import { when } from "./words.ts";

const KINDS: Record<
  LedgerEntry["kind"],
  { label: string; tone: "success" | "info" | "neutral" | "warning" }
> = {
  topup: { label: "Top-up", tone: "success" },
  grant: { label: "Grant", tone: "info" },
  usage: { label: "Usage", tone: "neutral" },
  adjustment: { label: "Adjustment", tone: "warning" },
};

/** What a ledger row was for, in words; the memo (named: a model's or tool's name) when it has one. */
function description(entry: LedgerEntry): string {
  const grant = grantEventLabel(entry);
  if (grant && entry.grantEvent === "expired") return grant;
  if (entry.memo) return entry.memoLabel ?? entry.memo;
  if (grant) return grant;
  switch (entry.kind) {
    case "topup":
      return "Credits bought through Stripe";
    case "grant":
      return "Free credits";
    case "usage":
      return "Assistant replies";
    default:
      return "Balance adjustment";
  }
}

/** `+$5.00` / `-$0.0042`: every micro-dollar, so small charges are not rounded away. */
export const signedMicros = (micros: number): string =>
  `${micros > 0 ? "+" : ""}${formatMicros(micros, { precise: true })}`;

const column = billingColumns<LedgerEntry>();
const columns = [
  column.accessor("createdAt", {
    header: "Date",
    cell: (info) => <span className="whitespace-nowrap">{when(info.getValue())}</span>,
  }),
  column.accessor("kind", {
    header: "Kind",
    cell: (info) => {
      const kind = KINDS[info.getValue()] ?? { label: info.getValue(), tone: "neutral" as const };
      return <Badge tone={kind.tone}>{kind.label}</Badge>;
    },
  }),
  column.display({
    id: "description",
    header: "Description",
    cell: (info) => <span className="break-words">{description(info.row.original)}</span>,
    meta: { className: "min-w-48" },
  }),
  column.accessor("amountMicros", {
    header: "Amount",
    cell: (info) => (
      <span className={info.getValue() > 0 ? "text-success" : undefined}>
        {signedMicros(info.getValue())}
      </span>
    ),
    meta: { align: "right" },
  }),
  column.accessor("balanceAfterMicros", {
    header: "Balance after",
    cell: (info) => formatMicros(info.getValue(), { precise: true }),
    meta: { align: "right" },
  }),
];

/** The append-only ledger, newest first, a page at a time (owners and admins). */
export function LedgerTable({ orgId }: { orgId: string }) {
  const { query, items, more, firstPageError } = usePaged(keys.billingLedger(orgId), (cursor) =>
    billingApi.ledger(orgId, cursor),
  );
  return (
    <Card aria-labelledby="ledger-title">
      <CardHeader
        id="ledger-title"
        title="Ledger"
        description="Every change to the balance, newest first. Amounts are exact to the millionth of a dollar."
      />
      <CardBody className="grid gap-3">
        {query.isPending ? (
          <Loading label="Loading ledger…" />
        ) : firstPageError ? (
          <ErrorNote error={firstPageError} retry={() => void query.refetch()} />
        ) : items.length === 0 ? (
          <EmptyState title="No ledger entries yet" />
        ) : (
          <>
            <DataTable
              columns={columns}
              data={items}
              caption="Ledger entries, newest first"
              rowKey={(entry) => entry.id}
            />
            <LoadMore more={more} label="More entries" />
          </>
        )}
      </CardBody>
    </Card>
  );
}
