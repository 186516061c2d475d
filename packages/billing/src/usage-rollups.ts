/**
 * Usage rolled up in the same transaction as each usage event (by triggers), so the groupings read
 * whole days from a few rows instead of every event:
 * - by day, model, member and project: sums per UTC day and (model, member, project);
 * - by session: sessions are many and would multiply the first, and an active session has a row
 *   for every day it ran, so a month of every-day sessions is tens of thousands of daily rows.
 *   Each session (with its member) keeps instead its running totals to the end of each day it was
 *   active, and the days it spans: a window's sums are two running totals apart, two index
 *   lookups per session whatever the window's length.
 * Absent ids are stored as '' (NULLs never collide in a key). Over the tables of
 * `LEDGER_SQLITE_SCHEMA`, on the same executor as the ledger: the org's BillingAccount and the
 * Node tests run the same SQL.
 */
import type { SqlExecutor } from "./sql.ts";

/** What usage can be grouped by (the same values as the API's `groupBy`). */
export type UsageGroupBy = "day" | "model" | "member" | "project" | "session";

const DAY_MS = 86_400_000;

/** The sums of a usage group, in the order `UsageColumns` carries them. */
export const USAGE_SUMS = [
  "requests",
  "billableRequests",
  "promptTokens",
  "completionTokens",
  "cachedPromptTokens",
  "reasoningTokens",
  "costMicros",
  "priceMicros",
] as const;

/** Usage groups as parallel columns (what crosses an RPC fast); `usageGroups` turns them back. */
export type UsageColumns = { keys: (string | null)[] } & Record<
  (typeof USAGE_SUMS)[number],
  number[]
>;

/** One group of a usage report: its key and its sums. */
export type UsageSums = { key: string | null } & Record<(typeof USAGE_SUMS)[number], number>;

export function usageGroups(columns: UsageColumns): UsageSums[] {
  return columns.keys.map((key, i) => {
    const group = { key } as UsageSums;
    for (const field of USAGE_SUMS) group[field] = columns[field][i] ?? 0;
    return group;
  });
}

/** The sums every rollup keeps, as columns. */
const SUM_COLUMNS = [
  "requests",
  "billable_requests",
  "prompt_tokens",
  "completion_tokens",
  "cached_prompt_tokens",
  "reasoning_tokens",
  "cost_micros",
  "price_micros",
] as const;

/** An event's contribution to each of `SUM_COLUMNS`, over `row` (NEW in a trigger). */
function eventSums(row: string): string[] {
  return ["1", `${row}.billable`, ...SUM_COLUMNS.slice(2).map((column) => `${row}.${column}`)];
}

/** Group keys over the rollup (absent ids stored as '') and over raw events; days as day numbers. */
const rollupKey: Record<Exclude<UsageGroupBy, "session">, string> = {
  day: "day",
  model: "model",
  member: "NULLIF(member_id, '')",
  project: "NULLIF(project_id, '')",
};
const eventKey: Record<UsageGroupBy, string> = {
  day: "created_at / 86400000",
  model: "model",
  member: "member_id",
  project: "project_id",
  session: "session_id",
};

/**
 * Creates the rollups, their triggers and the activity list's model index (idempotent); an account
 * whose events predate a rollup gets it built once from them.
 */
export function createUsageRollups({ exec }: Pick<SqlExecutor, "exec">): void {
  const sumDefinitions = SUM_COLUMNS.map((column) => `${column} INTEGER NOT NULL`).join(", ");
  const sums = SUM_COLUMNS.join(", ");
  const isStale = (table: string) =>
    [
      ...exec(
        `SELECT EXISTS (SELECT 1 FROM usage_events) AND NOT EXISTS (SELECT 1 FROM ${table}) AS stale`,
      ),
    ][0]?.stale === 1;

  // By day, model, member and project.
  exec(`CREATE TABLE IF NOT EXISTS usage_by_dimension (
    day INTEGER NOT NULL, model TEXT NOT NULL, member_id TEXT NOT NULL, project_id TEXT NOT NULL,
    ${sumDefinitions}, PRIMARY KEY (day, model, member_id, project_id)) WITHOUT ROWID`);
  exec(`CREATE TRIGGER IF NOT EXISTS usage_by_dimension_insert AFTER INSERT ON usage_events BEGIN
    INSERT INTO usage_by_dimension (day, model, member_id, project_id, ${sums}) VALUES (
      NEW.created_at / 86400000, NEW.model, COALESCE(NEW.member_id, ''), COALESCE(NEW.project_id, ''),
      ${eventSums("NEW").join(", ")})
    ON CONFLICT (day, model, member_id, project_id) DO UPDATE SET
      ${SUM_COLUMNS.map((column) => `${column} = ${column} + excluded.${column}`).join(", ")};
  END`);
  if (isStale("usage_by_dimension")) {
    exec(`INSERT INTO usage_by_dimension (day, model, member_id, project_id, ${sums})
      SELECT created_at / 86400000, model, COALESCE(member_id, ''), COALESCE(project_id, ''),
        COUNT(*), SUM(billable), ${SUM_COLUMNS.slice(2)
          .map((column) => `SUM(${column})`)
          .join(", ")}
      FROM usage_events GROUP BY 1, 2, 3, 4`);
  }

  // By session: running totals per (session, member) to the end of each active day, and the span
  // of days each pair was active. The daily session rollup of earlier versions goes.
  exec("DROP TRIGGER IF EXISTS usage_by_session_insert");
  exec("DROP TABLE IF EXISTS usage_by_session");
  exec(`CREATE TABLE IF NOT EXISTS usage_session_totals (
    session_id TEXT NOT NULL, member_id TEXT NOT NULL, day INTEGER NOT NULL,
    ${sumDefinitions}, PRIMARY KEY (session_id, member_id, day)) WITHOUT ROWID`);
  exec(`CREATE TABLE IF NOT EXISTS usage_session_span (
    session_id TEXT NOT NULL, member_id TEXT NOT NULL, first_day INTEGER NOT NULL,
    last_day INTEGER NOT NULL, PRIMARY KEY (session_id, member_id)) WITHOUT ROWID`);
  const pair = "COALESCE(NEW.session_id, ''), COALESCE(NEW.member_id, '')";
  const ofPair = (table: string) =>
    `${table}.session_id = COALESCE(NEW.session_id, '') AND ${table}.member_id = COALESCE(NEW.member_id, '')`;
  const add = (target: string) =>
    SUM_COLUMNS.map((column, i) => `${column} = ${target}${column} + ${eventSums("NEW")[i]}`).join(
      ", ",
    );
  exec(`CREATE TRIGGER IF NOT EXISTS usage_session_totals_insert AFTER INSERT ON usage_events BEGIN
    INSERT INTO usage_session_span (session_id, member_id, first_day, last_day)
      VALUES (${pair}, NEW.created_at / 86400000, NEW.created_at / 86400000)
      ON CONFLICT (session_id, member_id) DO UPDATE SET
        first_day = MIN(first_day, excluded.first_day), last_day = MAX(last_day, excluded.last_day);
    -- Totals of later days include an event dated before them (rare: events come in time order).
    UPDATE usage_session_totals SET ${add("")}
      WHERE ${ofPair("usage_session_totals")} AND day > NEW.created_at / 86400000;
    -- The event's day: its total so far, or the last earlier day's total plus the event.
    INSERT INTO usage_session_totals (session_id, member_id, day, ${sums})
      SELECT ${pair}, NEW.created_at / 86400000,
        ${SUM_COLUMNS.map((column, i) => `COALESCE(earlier.${column}, 0) + ${eventSums("NEW")[i]}`).join(", ")}
      FROM (SELECT 1) LEFT JOIN usage_session_totals AS earlier ON ${ofPair("earlier")}
        AND earlier.day = (SELECT day FROM usage_session_totals AS t
          WHERE ${ofPair("t")} AND t.day < NEW.created_at / 86400000 ORDER BY day DESC LIMIT 1)
      WHERE true
      ON CONFLICT (session_id, member_id, day) DO UPDATE SET ${add("")};
  END`);
  if (isStale("usage_session_span")) {
    const daily = `SELECT COALESCE(session_id, '') AS session_id, COALESCE(member_id, '') AS member_id,
        created_at / 86400000 AS day, COUNT(*) AS requests, SUM(billable) AS billable_requests,
        ${SUM_COLUMNS.slice(2)
          .map((column) => `SUM(${column}) AS ${column}`)
          .join(", ")}
      FROM usage_events GROUP BY 1, 2, 3`;
    exec(`INSERT INTO usage_session_totals (session_id, member_id, day, ${sums})
      SELECT session_id, member_id, day,
        ${SUM_COLUMNS.map((column) => `SUM(${column}) OVER running`).join(", ")}
      FROM (${daily}) WINDOW running AS (PARTITION BY session_id, member_id ORDER BY day)`);
    exec(`INSERT INTO usage_session_span (session_id, member_id, first_day, last_day)
      SELECT session_id, member_id, MIN(day), MAX(day) FROM (${daily}) GROUP BY 1, 2`);
  }
  // The activity list filters by model, newest first (member, project and session have theirs).
  exec("CREATE INDEX IF NOT EXISTS usage_events_model ON usage_events (model, created_at)");
}

/** A usage report's window and grouping; `memberId` restricts it to one member's usage. */
export interface UsageReportQuery {
  groupBy: UsageGroupBy;
  from: number;
  to: number;
  memberId?: string;
}

/** Usage grouped by day, model, member, project or session, over [from, to). */
export function usageReport(
  { exec }: Pick<SqlExecutor, "exec">,
  query: UsageReportQuery,
): UsageColumns {
  // Whole UTC days inside the window come from the rollups; the partial days at its edges from the
  // events themselves. Both sides sum the same columns, each grouped by itself first (so the union
  // is a few rows per group, never every rollup row), and their sums add up to exact totals.
  const firstWholeDay = Math.ceil(query.from / DAY_MS);
  const endWholeDay = Math.max(firstWholeDay, Math.floor(query.to / DAY_MS));
  const member = (table: string) =>
    query.memberId === undefined ? "" : `AND ${table}member_id = ?7`;
  // The token and money sums, the same on both sides (the two counts differ: rows vs events).
  const tokensAndMoney = SUM_COLUMNS.slice(2)
    .map((column) => `SUM(${column}) AS ${column}`)
    .join(", ");
  const whole =
    query.groupBy === "session"
      ? // Per (session, member) active in the window: the running total at its last active day
        // before the window's end, less the one before its start (the latest first: one seek).
        `SELECT NULLIF(span.session_id, '') AS key,
           ${SUM_COLUMNS.map((column) => `upto.${column} - COALESCE(before.${column}, 0) AS ${column}`).join(", ")}
         FROM usage_session_span AS span
         JOIN usage_session_totals AS upto ON upto.session_id = span.session_id
           AND upto.member_id = span.member_id AND upto.day = CASE WHEN span.last_day < ?2
             THEN span.last_day ELSE (SELECT day FROM usage_session_totals AS t
               WHERE t.session_id = span.session_id AND t.member_id = span.member_id AND t.day < ?2
               ORDER BY day DESC LIMIT 1) END
         LEFT JOIN usage_session_totals AS before ON span.first_day < ?1
           AND before.session_id = span.session_id AND before.member_id = span.member_id
           AND before.day = (SELECT day FROM usage_session_totals AS t
             WHERE t.session_id = span.session_id AND t.member_id = span.member_id AND t.day < ?1
             ORDER BY day DESC LIMIT 1)
         WHERE span.last_day >= ?1 AND span.first_day < ?2 ${member("span.")}`
      : `SELECT ${rollupKey[query.groupBy]} AS key, SUM(requests) AS requests,
           SUM(billable_requests) AS billable_requests, ${tokensAndMoney}
         FROM usage_by_dimension WHERE day >= ?1 AND day < ?2 ${member("")} GROUP BY 1`;
  // The edges go by time: left to itself, SQLite walks the whole session index to group by session.
  const edges = `SELECT ${eventKey[query.groupBy]} AS key,
      COUNT(*) AS requests, SUM(billable) AS billable_requests, ${tokensAndMoney}
    FROM usage_events INDEXED BY usage_events_created
    WHERE ((created_at >= ?3 AND created_at < ?4) OR (created_at >= ?5 AND created_at < ?6)) ${member("")}
    GROUP BY 1`;
  const report: UsageColumns = {
    keys: [],
    ...(Object.fromEntries(USAGE_SUMS.map((field) => [field, [] as number[]])) as Record<
      (typeof USAGE_SUMS)[number],
      number[]
    >),
  };
  for (const row of exec(
    `SELECT key, ${SUM_COLUMNS.map((column, i) => `SUM(${column}) AS ${USAGE_SUMS[i]}`).join(", ")}
     FROM (${whole} UNION ALL ${edges}) GROUP BY key HAVING SUM(requests) > 0 ORDER BY key`,
    firstWholeDay,
    endWholeDay,
    query.from,
    Math.min(query.to, firstWholeDay * DAY_MS),
    Math.max(query.from, endWholeDay * DAY_MS),
    query.to,
    ...(query.memberId === undefined ? [] : [query.memberId]),
  )) {
    // Days are day numbers in SQL and ISO dates in a report; every other key is an id or null.
    const key = row.key as string | number | null;
    report.keys.push(
      typeof key === "number" ? new Date(key * DAY_MS).toISOString().slice(0, 10) : key,
    );
    for (const field of USAGE_SUMS) report[field].push(row[field] as number);
  }
  return report;
}
