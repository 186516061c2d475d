import type { Payment } from "@parley/shared";
import { ExternalLink } from "lucide-react";
import { LoadMore } from "../../components/load-more.tsx";
import { Badge } from "../../components/ui/badge.tsx";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { EmptyState, ErrorNote, Loading } from "../../components/ui/states.tsx";
import { billingApi } from "../../lib/billing-api.ts";
import { formatMicros } from "../../lib/money.ts";
import { keys } from "../../lib/query.ts";
import { usePaged } from "../../lib/use-paged.ts";
import { billingColumns, DataTable } from "./data-table.tsx";
import { when } from "./words.ts";

const STATUS: Record<
  Payment["status"],
  { label: string; tone: "success" | "info" | "neutral" | "warning" }
> = {
  paid: { label: "Paid", tone: "success" },
  partially_refunded: { label: "Partly refunded", tone: "info" },
  refunded: { label: "Refunded", tone: "neutral" },
  disputed: { label: "Disputed", tone: "warning" },
};

const column = billingColumns<Payment>();
const columns = [
  column.accessor("createdAt", {
    header: "Date",
    cell: (info) => <span className="whitespace-nowrap">{when(info.getValue())}</span>,
  }),
  column.accessor("amountMicros", {
    header: "Amount",
    cell: (info) => formatMicros(info.getValue(), { precise: true }),
    meta: { align: "right" },
  }),
  column.accessor("status", {
    header: "Status",
    cell: (info) => {
      const payment = info.row.original;
      const status = STATUS[payment.status];
      return (
        <span className="inline-flex flex-wrap items-center gap-2">
          <Badge tone={status.tone}>{status.label}</Badge>
          {payment.source === "auto_top_up" ? <Badge tone="neutral">Automatic</Badge> : null}
          {payment.status === "partially_refunded" ? (
            <span className="text-muted-foreground text-xs">
              {formatMicros(payment.refundedMicros, { precise: true })} back
            </span>
          ) : null}
        </span>
      );
    },
  }),
  column.accessor("receiptUrl", {
    header: "Receipt",
    cell: (info) => {
      const url = info.getValue();
      if (!url) return <span className="text-muted-foreground">Not yet available</span>;
      return (
        <a
          href={url}
          target="_blank"
          rel="noopener noreferrer"
          className="prose-link inline-flex items-center gap-1 whitespace-nowrap"
        >
          Receipt
          <span className="sr-only"> of the payment of {when(info.row.original.createdAt)}</span>
          <ExternalLink aria-hidden="true" className="size-3.5" />
        </a>
      );
    },
  }),
];

/**
 * Every paid top-up, newest first, with Stripe's receipt of it (owners and admins): what the
 * finance team files. The customer portal (Top up's neighbour) keeps cards and invoices.
 */
export function PaymentsTable({ orgId }: { orgId: string }) {
  const { query, items, more, firstPageError } = usePaged(keys.billingPayments(orgId), (cursor) =>
    billingApi.payments(orgId, cursor),
  );
  return (
    <Card aria-labelledby="payments-title">
      <CardHeader
        id="payments-title"
        title="Payments and receipts"
        description="Each top-up paid through Stripe, with its receipt."
      />
      <CardBody className="grid gap-3">
        {query.isPending ? (
          <Loading label="Loading payments…" />
        ) : firstPageError ? (
          <ErrorNote error={firstPageError} retry={() => void query.refetch()} />
        ) : items.length === 0 ? (
          <EmptyState title="No payments yet">Top-ups you pay for appear here.</EmptyState>
        ) : (
          <>
            <DataTable
              columns={columns}
              data={items}
              caption="Payments, newest first"
              rowKey={(payment) => payment.id}
            />
            <LoadMore more={more} label="More payments" />
          </>
        )}
      </CardBody>
    </Card>
  );
}
