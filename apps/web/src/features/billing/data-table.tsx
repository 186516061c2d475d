import {
  type ColumnDef,
  createColumnHelper,
  type RowData,
  tableFeatures,
  useTable,
} from "@tanstack/react-table";
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
 * table, which scrolls sideways inside its box on a phone instead of widening the page.
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
