import type { Page } from "@parley/shared";

/**
 * Keyset pagination on time-sortable ids, newest first. Queries fetch `limit + 1` rows with
 * `id < cursor`; the extra row only tells whether another page exists.
 */
export function toPage<Row, Item>(
  rows: Row[],
  limit: number,
  idOf: (row: Row) => string,
  map: (row: Row) => Item,
): Page<Item> {
  const pageRows = rows.slice(0, limit);
  const last = pageRows.at(-1);
  return {
    items: pageRows.map(map),
    nextCursor: rows.length > limit && last ? idOf(last) : null,
  };
}

/** The cursor bound for `id < ?`: a value above every id when there is no cursor. */
export function cursorBound(cursor: string | undefined): string {
  return cursor ?? "\u{10FFFF}";
}

export const iso = (ms: number): string => new Date(ms).toISOString();
