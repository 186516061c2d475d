/**
 * Usage summed per UTC day, kept by triggers in the same transaction as each usage event, so the
 * groupings read whole days from a few rows instead of every event: one rollup by (model, member,
 * project) for those groupings and the day, one by session (sessions are many and would multiply
 * the first; it is clustered by session, so grouping by session needs no sort). Absent ids are
 * stored as '' (NULLs never collide in a key). Over the tables of `LEDGER_SQLITE_SCHEMA`, on the
 * same executor as the ledger: the org's BillingAccount and the Node tests run the same SQL.
 */
import type { SqlExecutor, SqlValue } from "./sql-ledger-store.ts";

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

/** The rollup tables and the dimensions each sums over (besides the day). */
const ROLLUPS = {
  usage_by_dimension: ["model", "member_id", "project_id"],
  usage_by_session: ["session_id", "member_id"],
} as const;

/** Group keys over the rollup (absent ids stored as '') and over raw events; days as day numbers. */
const rollupKey: Record<UsageGroupBy, string> = {
  day: "day",
  model: "model",
  member: "NULLIF(member_id, '')",
  project: "NULLIF(project_id, '')",
  session: "NULLIF(session_id, '')",
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
  for (const [table, dims] of Object.entries(ROLLUPS)) {
    exec(`CREATE TABLE IF NOT EXISTS ${table} (
      day INTEGER NOT NULL,
      ${dims.map((d) => `${d} TEXT NOT NULL`).join(", ")},
      requests INTEGER NOT NULL,
      billable_requests INTEGER NOT NULL,
      prompt_tokens INTEGER NOT NULL,
      completion_tokens INTEGER NOT NULL,
      cached_prompt_tokens INTEGER NOT NULL,
      reasoning_tokens INTEGER NOT NULL,
      cost_micros INTEGER NOT NULL,
      price_micros INTEGER NOT NULL,
      PRIMARY KEY (${table === "usage_by_session" ? `${dims.join(", ")}, day` : `day, ${dims.join(", ")}`})
    ) WITHOUT ROWID`);
    const key = `day, ${dims.join(", ")}`;
    const columns = `${key}, requests, billable_requests, prompt_tokens, completion_tokens, cached_prompt_tokens,
      reasoning_tokens, cost_micros, price_micros`;
    exec(`CREATE TRIGGER IF NOT EXISTS ${table}_insert AFTER INSERT ON usage_events BEGIN
      INSERT INTO ${table} (${columns}) VALUES (
        NEW.created_at / 86400000, ${dims.map((d) => (d === "model" ? "NEW.model" : `COALESCE(NEW.${d}, '')`)).join(", ")},
        1, NEW.billable, NEW.prompt_tokens, NEW.completion_tokens, NEW.cached_prompt_tokens, NEW.reasoning_tokens,
        NEW.cost_micros, NEW.price_micros)
      ON CONFLICT (${key}) DO UPDATE SET
        requests = requests + 1, billable_requests = billable_requests + excluded.billable_requests,
        prompt_tokens = prompt_tokens + excluded.prompt_tokens,
        completion_tokens = completion_tokens + excluded.completion_tokens,
        cached_prompt_tokens = cached_prompt_tokens + excluded.cached_prompt_tokens,
        reasoning_tokens = reasoning_tokens + excluded.reasoning_tokens,
        cost_micros = cost_micros + excluded.cost_micros, price_micros = price_micros + excluded.price_micros;
    END`);
    // Objects whose events predate a rollup get it built once.
    const [flag] = [
      ...exec(
        `SELECT EXISTS (SELECT 1 FROM usage_events) AND NOT EXISTS (SELECT 1 FROM ${table}) AS stale`,
      ),
    ];
    if (flag?.stale === 1) {
      exec(`INSERT INTO ${table} (${columns})
        SELECT created_at / 86400000, ${dims.map((d) => (d === "model" ? "model" : `COALESCE(${d}, '')`)).join(", ")},
          COUNT(*), SUM(billable), SUM(prompt_tokens), SUM(completion_tokens), SUM(cached_prompt_tokens),
          SUM(reasoning_tokens), SUM(cost_micros), SUM(price_micros)
        FROM usage_events GROUP BY ${dims.map((_, i) => i + 2).join(", ")}, 1`);
    }
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
  // Whole UTC days inside the window come from the rollup; the partial days at its edges from the
  // events themselves. Both sides sum the same columns, so the totals are exact.
  const firstWholeDay = Math.ceil(query.from / DAY_MS);
  const endWholeDay = Math.max(firstWholeDay, Math.floor(query.to / DAY_MS));
  const member = query.memberId === undefined ? "" : "AND member_id = ?";
  const memberBinding: SqlValue[] = query.memberId === undefined ? [] : [query.memberId];
  const sums = `SUM(prompt_tokens) AS promptTokens, SUM(completion_tokens) AS completionTokens,
    SUM(cached_prompt_tokens) AS cachedPromptTokens, SUM(reasoning_tokens) AS reasoningTokens,
    SUM(cost_micros) AS costMicros, SUM(price_micros) AS priceMicros`;
  // Two grouped queries merged here: a UNION under one GROUP BY would sort every rollup row. The
  // edges go by time: left to itself, SQLite walks the whole session index to group by session.
  const whole = exec(
    `SELECT ${rollupKey[query.groupBy]} AS key, SUM(requests) AS requests, SUM(billable_requests) AS billableRequests, ${sums}
     FROM ${query.groupBy === "session" ? "usage_by_session" : "usage_by_dimension"}
     WHERE day >= ? AND day < ? ${member} GROUP BY 1`,
    firstWholeDay,
    endWholeDay,
    ...memberBinding,
  );
  const edges = exec(
    `SELECT ${eventKey[query.groupBy]} AS key, COUNT(*) AS requests, SUM(billable) AS billableRequests, ${sums}
     FROM usage_events INDEXED BY usage_events_created
     WHERE ((created_at >= ? AND created_at < ?) OR (created_at >= ? AND created_at < ?)) ${member} GROUP BY 1`,
    query.from,
    Math.min(query.to, firstWholeDay * DAY_MS),
    Math.max(query.from, endWholeDay * DAY_MS),
    query.to,
    ...memberBinding,
  );
  type Row = Omit<UsageSums, "key"> & { key: string | number | null };
  const merged = new Map<string | number | null, Row>();
  for (const row of [...whole, ...edges] as unknown as Row[]) {
    const seen = merged.get(row.key);
    if (!seen) {
      merged.set(row.key, { ...row });
      continue;
    }
    for (const field of USAGE_SUMS) seen[field] += row[field];
  }
  const rows = [...merged.values()].sort((a, b) =>
    a.key === b.key ? 0 : a.key === null ? -1 : b.key === null ? 1 : a.key < b.key ? -1 : 1,
  );
  return {
    // Days are day numbers in SQL and ISO dates in a report; every other key is an id or null.
    keys: rows.map((row) =>
      typeof row.key === "number" ? new Date(row.key * DAY_MS).toISOString().slice(0, 10) : row.key,
    ),
    ...(Object.fromEntries(
      USAGE_SUMS.map((field) => [field, rows.map((row) => row[field])]),
    ) as Record<(typeof USAGE_SUMS)[number], number[]>),
  };
}
