/**
 * Reads of raw usage events (`usage_events` of `LEDGER_SQLITE_SCHEMA`): the CSV export's pages, the
 * activity list's pages and the spend of sessions. Pages are keyed on (created_at, request_id), so
 * events at the same millisecond are neither repeated nor skipped across pages.
 */
import type { UsageRow } from "./ledger-store.ts";
import { toUsage } from "./ledger-tables.ts";
import type { SqlExecutor, SqlValue } from "./sql.ts";

/** The CSV export's query: oldest first over [from, to), a page of `limit` after `after`. */
export interface UsageRowsQuery {
  from: number;
  to: number;
  memberId?: string;
  /** Continue after this (createdAt, requestId). */
  after?: { createdAt: number; requestId: string };
  limit: number;
}

/** The activity list's query: newest first, a page of `limit` after `before` (the previous page's last row). */
export interface ActivityRowsQuery {
  from: number;
  to: number;
  memberId?: string;
  projectId?: string;
  sessionId?: string;
  model?: string;
  before?: { createdAt: number; requestId: string };
  limit: number;
}

/** Raw usage events in time order, a page at a time (the CSV export streams these). */
export function usageRows({ exec }: Pick<SqlExecutor, "exec">, query: UsageRowsQuery): UsageRow[] {
  // Keyset on (created_at, request_id): later rows, or rows at the cursor's time with a greater id.
  const after = query.after ?? { createdAt: query.from, requestId: "" };
  const member = query.memberId === undefined ? "" : "AND member_id = ?";
  const bindings: SqlValue[] = [
    query.from,
    after.createdAt,
    after.createdAt,
    after.requestId,
    query.to,
  ];
  if (query.memberId !== undefined) bindings.push(query.memberId);
  bindings.push(query.limit);
  return [
    ...exec(
      `SELECT * FROM usage_events
       WHERE created_at >= ? AND (created_at > ? OR (created_at = ? AND request_id > ?)) AND created_at < ? ${member}
       ORDER BY created_at, request_id LIMIT ?`,
      ...bindings,
    ),
  ].map(toUsage);
}

/**
 * Usage events newest first, filtered, a page at a time (the activity list). Keyset on
 * (created_at, request_id); each filter has an index led by its column and then created_at.
 */
export function activityRows(
  { exec }: Pick<SqlExecutor, "exec">,
  query: ActivityRowsQuery,
): UsageRow[] {
  const where = ["created_at >= ?", "created_at < ?"];
  const bindings: SqlValue[] = [query.from, query.to];
  if (query.before) {
    where.push("(created_at < ? OR (created_at = ? AND request_id < ?))");
    bindings.push(query.before.createdAt, query.before.createdAt, query.before.requestId);
  }
  for (const [column, value] of [
    ["member_id", query.memberId],
    ["project_id", query.projectId],
    ["session_id", query.sessionId],
    ["model", query.model],
  ] as const) {
    if (value === undefined) continue;
    where.push(`${column} = ?`);
    bindings.push(value);
  }
  bindings.push(query.limit);
  return [
    ...exec(
      `SELECT * FROM usage_events WHERE ${where.join(" AND ")}
       ORDER BY created_at DESC, request_id DESC LIMIT ?`,
      ...bindings,
    ),
  ].map(toUsage);
}

/** Spend per session for a page of sessions (price charged, summed); a session with no usage is absent. */
export function spendBySession(
  { exec }: Pick<SqlExecutor, "exec">,
  sessionIds: readonly string[],
): Record<string, number> {
  if (sessionIds.length === 0) return {};
  const rows = exec(
    `SELECT session_id, SUM(price_micros) AS price FROM usage_events
     WHERE session_id IN (SELECT value FROM json_each(?)) GROUP BY session_id`,
    JSON.stringify(sessionIds),
  );
  return Object.fromEntries(
    [...rows].map((row) => [row.session_id as string, row.price as number]),
  );
}

/** What one session has spent so far (billable price charged) and how many model calls it made. */
export function sessionSpend(
  { exec }: Pick<SqlExecutor, "exec">,
  sessionId: string,
): { priceMicros: number; requests: number } {
  const [row] = exec(
    "SELECT COALESCE(SUM(price_micros), 0) AS price, COUNT(*) AS requests FROM usage_events WHERE session_id = ?",
    sessionId,
  );
  // An aggregate without GROUP BY always returns its one row.
  if (row === undefined) throw new Error("the session's spend query returned no row");
  return { priceMicros: row.price as number, requests: row.requests as number };
}
