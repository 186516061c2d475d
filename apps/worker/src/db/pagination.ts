import { AppError, type Page } from "@parley/shared";

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

/** What a `nextCursor` of an id-keyed list looks like: an id (`<prefix>_<26 characters>`). */
const ID_CURSOR = /^[a-z]{2,4}_[0-9a-hjkmnp-tv-z]{26}$/;

/**
 * The cursor bound for `id < ?`: a value above every id when there is no cursor. A cursor that no
 * list could have handed out is a 400, as `keysetCursor` answers: it used to page from wherever it
 * sorted, which said nothing to the client that sent it.
 */
export function cursorBound(cursor: string | undefined): string {
  if (cursor === undefined) return "\u{10FFFF}";
  if (!ID_CURSOR.test(cursor)) {
    throw new AppError("invalid_request", "query.cursor: not a cursor from this list", {
      field: "query.cursor",
    });
  }
  return cursor;
}

export const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * The previous page's last row, from a `nextCursor` of the form `<time>.<key>` (alerts: fired at
 * and key; activity: created at and request id), or a 400.
 */
export function keysetCursor(cursor: string): { at: number; key: string } {
  const match = /^([1-9]\d{0,15})\.(.+)$/s.exec(cursor);
  const at = Number(match?.[1]);
  if (!match?.[2] || !Number.isSafeInteger(at)) {
    throw new AppError("invalid_request", "query.cursor: not a cursor from this list", {
      field: "query.cursor",
    });
  }
  return { at, key: match[2] };
}
