import {
  type ColumnDef,
  createColumnHelper,
  type RowData,
  tableFeatures,
  useTable,
} from "@tanstack/react-table";
import { useWideTable } from "../../components/ui/figure-cards.tsx";
import { num, Table, TBody, Td, THead, Th, Tr } from "../../components/ui/table.tsx";
import { cn } from "../../lib/cn.ts";

/**
 * The billing tables' features: none beyond the core row model. Paging is the server's (keyset
 * cursors and "More …"), so the table only lays out what has loaded; `align` right-aligns amounts.
 */
export const billingTableFeatures = tableFeatures({
  columnMeta: {} as { align?: "right"; className?: string },
});
export type BillingTableFeatures = typeof billingTableFeatures;

export const billingColumns = <T extends RowData>() =>
  createColumnHelper<BillingTableFeatures, T>();

/**
 * A TanStack Table (v9: `useTable({ features, columns, data })`) drawn with the design system's
 * table; on a phone each row becomes a card that lists its columns as label and value (as
 * Stripe's dashboard does), so an amount is never off the side of the screen.
 */
export function DataTable<T extends RowData>({
  columns,
  data,
  caption,
  rowKey,
}: {
  // biome-ignore lint/suspicious/noExplicitAny: column values differ per column, as TanStack types them.
  columns: ColumnDef<BillingTableFeatures, T, any>[];
  data: readonly T[];
  caption: string;
  rowKey: (row: T) => string;
}) {
  const table = useTable({
    features: billingTableFeatures,
    columns,
    data,
    getRowId: (row) => rowKey(row),
  });
  // Narrower, a row is a card of labelled values: every figure on screen, no sideways scroll.
  const wide = useWideTable();
  if (!wide) {
    return (
      <ul aria-label={caption} className="grid gap-2">
        {table.getRowModel().rows.map((row) => (
          <li key={row.id} className="rounded-md border border-border p-3 text-sm">
            <dl className="grid grid-cols-[auto_minmax(0,1fr)] gap-x-4 gap-y-1.5">
              {row.getAllCells().map((cell) => {
                const header = table
                  .getFlatHeaders()
                  .find((candidate) => candidate.column.id === cell.column.id);
                return (
                  <div key={cell.id} className="contents">
                    <dt className="text-muted-foreground text-xs uppercase tracking-wide leading-5">
                      {header ? <table.FlexRender header={header} /> : cell.column.id}
                    </dt>
                    <dd
                      className={cn(
                        // A long token (a usage key, an id) wraps anywhere rather than widen the
                        // page; a cell's own `whitespace-nowrap` is for the table, not the card.
                        "min-w-0 [overflow-wrap:anywhere] [&_.whitespace-nowrap]:whitespace-normal",
                        cell.column.columnDef.meta?.align === "right" && "tabular-nums",
                      )}
                    >
                      <table.FlexRender cell={cell} />
                    </dd>
                  </div>
                );
              })}
            </dl>
          </li>
        ))}
      </ul>
    );
  }
  return (
    <Table>
      <caption className="sr-only">{caption}</caption>
      <THead>
        {table.getHeaderGroups().map((group) => (
          <tr key={group.id}>
            {group.headers.map((header) => (
              <Th
                key={header.id}
                scope="col"
                className={cn(header.column.columnDef.meta?.align === "right" && num)}
              >
                {header.isPlaceholder ? null : <table.FlexRender header={header} />}
              </Th>
            ))}
          </tr>
        ))}
      </THead>
      <TBody>
        {table.getRowModel().rows.map((row) => (
          <Tr key={row.id}>
            {row.getAllCells().map((cell) => {
              const meta = cell.column.columnDef.meta;
              return (
                <Td key={cell.id} className={cn(meta?.align === "right" && num, meta?.className)}>
                  <table.FlexRender cell={cell} />
                </Td>
              );
            })}
          </Tr>
        ))}
      </TBody>
    </Table>
  );
}
