/**
 * The chat agents' own SQLite tables (beside the SDK's), and their upgrades. An object runs them
 * once per version: on every other start, one read says they are current. Before, each start ran
 * every `CREATE TABLE IF NOT EXISTS`, read each table's columns and, on a new object, altered four
 * tables to add columns the `CREATE` could have had: in the concurrency benchmark, where 200 new
 * sessions start, that was about 1.5 ms of a new session's CPU (`pnpm bench profile 60 fresh`).
 *
 * Bump `LOCAL_SCHEMA_VERSION` with every change to `createTables`; tables of an older object are
 * brought up to date by the same function (`CREATE ... IF NOT EXISTS` with the current columns,
 * then the columns added since each table first shipped).
 */
export const LOCAL_SCHEMA_VERSION = 5;

export function ensureLocalSchema(sql: SqlStorage): void {
  sql.exec(
    "CREATE TABLE IF NOT EXISTS parley_counters (key TEXT PRIMARY KEY, value INTEGER NOT NULL)",
  );
  const version = sql
    .exec("SELECT value FROM parley_counters WHERE key = 'local_schema'")
    .toArray()[0]?.value;
  if (version === LOCAL_SCHEMA_VERSION) return;
  createTables(sql);
  sql.exec(
    "INSERT INTO parley_counters (key, value) VALUES ('local_schema', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    LOCAL_SCHEMA_VERSION,
  );
}

function createTables(sql: SqlStorage): void {
  // Usage priced locally and not yet on the org's account (turn-metering.ts).
  sql.exec(`CREATE TABLE IF NOT EXISTS parley_pending_usage (
    request_id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL,
    payload TEXT NOT NULL,
    parked_reason TEXT,
    lease_id TEXT
  )`);
  // Each model call of a turn, from its hold or draw to its settlement (turn-metering.ts).
  sql.exec(`CREATE TABLE IF NOT EXISTS parley_steps (
    hold_id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL,
    generation_id TEXT,
    streamed_chars INTEGER NOT NULL DEFAULT 0,
    prompt_estimate INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('reserved', 'called', 'settled', 'released')),
    created_at INTEGER NOT NULL,
    lease_id TEXT,
    draw_micros INTEGER,
    model TEXT,
    billable INTEGER NOT NULL DEFAULT 1,
    attribution TEXT
  )`);
  // The session's credit lease, one row (session-lease.ts).
  sql.exec(`CREATE TABLE IF NOT EXISTS parley_lease (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    org_id TEXT NOT NULL,
    member_id TEXT NOT NULL,
    project_id TEXT,
    session_id TEXT NOT NULL,
    lease_id TEXT,
    next_n INTEGER NOT NULL,
    granted_micros INTEGER NOT NULL,
    drawn_micros INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    last_draw_at INTEGER
  )`);
  // Each call of a tool source, from before it goes out to its settlement (tools/tool-meter.ts,
  // 2026-12-06): what a reset leaves open is closed on start, charged once if it went out.
  sql.exec(`CREATE TABLE IF NOT EXISTS parley_tool_calls (
    call_id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL,
    price_micros INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('reserved', 'sent', 'closing')),
    record TEXT NOT NULL,
    payer TEXT NOT NULL,
    created_at INTEGER NOT NULL
  )`);
  // The person's answer to each write tool call that asked for approval, and whether it ran.
  sql.exec(`CREATE TABLE IF NOT EXISTS parley_tool_answers (
    tool_call_id TEXT PRIMARY KEY,
    approved INTEGER NOT NULL,
    answered_by TEXT NOT NULL,
    answered_at INTEGER NOT NULL,
    used_at INTEGER
  )`);
  // What the agent keeps of D1 between turns, with when it was read (kept-rows.ts, 2026-12-06).
  sql.exec(`CREATE TABLE IF NOT EXISTS parley_kept (
    key TEXT PRIMARY KEY,
    at INTEGER NOT NULL,
    value TEXT NOT NULL
  )`);
  // Columns added after a table first shipped: present in a new table, added to an old one.
  addColumns(sql, "parley_pending_usage", ["parked_reason TEXT", "lease_id TEXT"]);
  // The call's model, whether it is billed, and (free calls) who it is for: a reset's close prices
  // and records it as the call would have been (2026-12-06, the metering middleware).
  addColumns(sql, "parley_steps", [
    "lease_id TEXT",
    "draw_micros INTEGER",
    "model TEXT",
    "billable INTEGER NOT NULL DEFAULT 1",
    "attribution TEXT",
  ]);
  addColumns(sql, "parley_lease", ["last_draw_at INTEGER"]);
}

/** Adds the columns a table made before them lacks (`name TYPE` each). */
function addColumns(sql: SqlStorage, table: string, columns: readonly string[]): void {
  const have = new Set(
    sql
      .exec(`SELECT name FROM pragma_table_info('${table}')`)
      .toArray()
      .map((row) => row.name),
  );
  for (const column of columns) {
    if (!have.has(column.split(" ")[0])) sql.exec(`ALTER TABLE ${table} ADD COLUMN ${column}`);
  }
}
