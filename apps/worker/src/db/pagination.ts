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

/** The query of an `idPage` list: see there. */
export interface IdQuery {
  select: string;
  where: string;
  binds: readonly unknown[];
  id?: string;
}

/**
 * One page of a list keyed by time-sortable ids, newest first (`toPage` over `cursorBound`): the
 * query every such list repeated, written once. `select` is the query up to its filter
 * (`SELECT ... FROM t [JOIN ...]`), `where` the filter (one condition: it is parenthesized before
 * the key's is added, so a top-level OR stays inside it). `binds` are the values of the parameters
 * of both, in SQLite's order: `?`, or `?N` from 1 to `binds.length` where one value is used twice
 * (`(?2 IS NULL OR project_id = ?2)`) or the select has its own; the key and the limit are bound
 * as `?<n+1>` and `?<n+2>` after them, whichever style the query uses. `id` is the key column
 * (`t.id` when the query joins); the row's `id` must be that key: select it as `id` where the
 * row names it otherwise. Without `map` the page holds the rows themselves, for a list that shows
 * a whole page at once (one call to another service for all of its items).
 */
export function idPage<Row extends { id: string }>(
  db: D1Database,
  query: IdQuery,
  page: { cursor?: string | undefined; limit: number },
): Promise<Page<Row>>;
export function idPage<Row extends { id: string }, Item>(
  db: D1Database,
  query: IdQuery,
  page: { cursor?: string | undefined; limit: number },
  map: (row: Row) => Item,
): Promise<Page<Item>>;
export async function idPage<Row extends { id: string }, Item>(
  db: D1Database,
  query: IdQuery,
  page: { cursor?: string | undefined; limit: number },
  map?: (row: Row) => Item,
): Promise<Page<Row | Item>> {
  const id = query.id ?? "id";
  const key = query.binds.length + 1;
  const { results } = await db
    .prepare(
      `${query.select} WHERE (${query.where}) AND ${id} < ?${key} ORDER BY ${id} DESC LIMIT ?${key + 1}`,
    )
    .bind(...query.binds, cursorBound(page.cursor), page.limit + 1)
    .all<Row>();
  return toPage<Row, Row | Item>(results, page.limit, (row) => row.id, map ?? ((row) => row));
}

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
