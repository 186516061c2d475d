/**
 * A GFM table in the embed's markdown renderer, with the app's table tools (streamdown's): copy it
 * (tab-separated, so it pastes into a spreadsheet as cells) and download it as CSV.
 */
import { Download } from "lucide-react";
import type { ReactNode } from "react";
import { CopyButton } from "./reply-footer.tsx";

type Align = "left" | "center" | "right" | null;

/** A cell's words without its markdown marks (`**`, backticks, a link's target). */
export const plainCell = (cell: string): string =>
  cell
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/(\*\*|__|~~|`)/g, "")
    .trim();

const csvField = (value: string) =>
  /[",\n\r]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;

/** The table as CSV (RFC 4180: fields with a comma, quote or line break are quoted). */
export const tableCsv = (head: string[], rows: string[][]): string =>
  [head, ...rows]
    .map((row) => head.map((_, n) => csvField(plainCell(row[n] ?? ""))).join(","))
    .join("\r\n");

/** The table as tab-separated lines, what a spreadsheet takes from the clipboard. */
export const tableTsv = (head: string[], rows: string[][]): string =>
  [head, ...rows]
    .map((row) => head.map((_, n) => plainCell(row[n] ?? "").replace(/[\t\n]/g, " ")).join("\t"))
    .join("\n");

const tool =
  "inline-flex items-center gap-1 rounded-md px-1.5 py-1 text-muted-foreground text-xs outline-none hover:bg-accent hover:text-foreground focus-visible:ring-2 focus-visible:ring-ring";

function download(head: string[], rows: string[][]) {
  const url = URL.createObjectURL(new Blob([tableCsv(head, rows)], { type: "text/csv" }));
  const link = document.createElement("a");
  link.href = url;
  link.download = "table.csv";
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 1_000);
}

export function TableBlock({
  head,
  rows,
  align,
  renderCell,
}: {
  head: string[];
  rows: string[][];
  align: Align[];
  renderCell: (text: string, key: string) => ReactNode;
}) {
  return (
    <div className="my-2 rounded-md border border-border">
      <div className="flex justify-end gap-1 border-border border-b px-1.5 py-1">
        <CopyButton text={tableTsv(head, rows)} className={tool} />
        <button type="button" onClick={() => download(head, rows)} className={tool}>
          <Download aria-hidden="true" className="size-3.5" />
          CSV
        </button>
      </div>
      <div className="overflow-x-auto">
        <table className="w-full border-collapse text-sm">
          <thead className="bg-muted">
            <tr>
              {head.map((cell, n) => (
                <th
                  // biome-ignore lint/suspicious/noArrayIndexKey: a column's place is its identity
                  key={n}
                  style={{ textAlign: align[n] ?? "left" }}
                  className="border-border border-b px-3 py-1.5 font-semibold"
                >
                  {renderCell(cell, `h${n}-`)}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((row, r) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: a row's place is its identity (it only grows while streaming)
              <tr key={r} className="border-border border-b last:border-b-0">
                {head.map((_, n) => (
                  <td
                    // biome-ignore lint/suspicious/noArrayIndexKey: a column's place is its identity
                    key={n}
                    style={{ textAlign: align[n] ?? "left" }}
                    className="px-3 py-1.5"
                  >
                    {renderCell(row[n] ?? "", `r${r}-${n}-`)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
