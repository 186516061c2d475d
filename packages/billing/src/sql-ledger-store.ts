/**
 * A {@link LedgerStore} over synchronous SQLite, written against the smallest executor both the
 * Durable Object (`ctx.storage.sql.exec`, `ctx.storage.transactionSync`) and a Node test harness can
 * provide. No platform import: the BillingAccount passes
 * `{ exec: (query, ...bindings) => ctx.storage.sql.exec(query, ...bindings), transact: (fn) => ctx.storage.transactionSync(fn) }`.
 */

import {
  type AlertKind,
  type AlertRow,
  type EntryKind,
  type EntryRow,
  GRANT_SOURCES,
  type GrantSource,
  type HoldRow,
  type HoldStatus,
  type LedgerStore,
  type LotDrawRow,
  type LotRow,
  type NewEntryRow,
  type UsageOutcome,
  type UsageRow,
} from "./ledger-store.ts";

export type SqlValue = string | number | null;

/** Runs SQL synchronously. `exec` returns the statement's rows (none for writes). */
export interface SqlExecutor {
  exec(query: string, ...bindings: SqlValue[]): Iterable<Record<string, unknown>>;
  /** Atomic; a nested call must work, e.g. by joining the outer transaction. */
  transact<T>(fn: () => T): T;
}

/**
 * Suggested SQLite schema for a {@link LedgerStore} inside the BillingAccount Durable Object, one
 * statement per table or index (`CREATE ... IF NOT EXISTS`, safe to run on every start).
 */
export const LEDGER_SQLITE_SCHEMA: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS ledger_entries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL CHECK (kind IN ('grant', 'topup', 'usage', 'adjustment')),
    amount_micros INTEGER NOT NULL,
    balance_after_micros INTEGER NOT NULL,
    idempotency_key TEXT NOT NULL UNIQUE,
    reference TEXT,
    memo TEXT,
    created_at INTEGER NOT NULL
  )`,
  "CREATE INDEX IF NOT EXISTS ledger_entries_reference ON ledger_entries (reference)",
  `CREATE TABLE IF NOT EXISTS ledger_holds (
    request_id TEXT PRIMARY KEY,
    amount_micros INTEGER NOT NULL CHECK (amount_micros > 0),
    member_id TEXT NOT NULL,
    project_id TEXT,
    session_id TEXT,
    status TEXT NOT NULL CHECK (status IN ('open', 'settled', 'released', 'expired')),
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    resolved_at INTEGER
  )`,
  "CREATE INDEX IF NOT EXISTS ledger_holds_open ON ledger_holds (expires_at) WHERE status = 'open'",
  `CREATE TABLE IF NOT EXISTS usage_events (
    request_id TEXT PRIMARY KEY,
    member_id TEXT,
    project_id TEXT,
    session_id TEXT,
    model TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cached_prompt_tokens INTEGER NOT NULL,
    reasoning_tokens INTEGER NOT NULL,
    cost_micros INTEGER NOT NULL,
    price_micros INTEGER NOT NULL,
    billable INTEGER NOT NULL CHECK (billable IN (0, 1)),
    generation_ids TEXT NOT NULL,
    outcome TEXT NOT NULL CHECK (outcome IN ('settled', 'settled_late', 'metered')),
    hold_micros INTEGER,
    created_at INTEGER NOT NULL
  )`,
  "CREATE INDEX IF NOT EXISTS usage_events_created ON usage_events (created_at)",
  "CREATE INDEX IF NOT EXISTS usage_events_member ON usage_events (member_id, created_at)",
  "CREATE INDEX IF NOT EXISTS usage_events_project ON usage_events (project_id, created_at)",
  "CREATE INDEX IF NOT EXISTS usage_events_session ON usage_events (session_id, created_at)",
  `CREATE TABLE IF NOT EXISTS ledger_counters (
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS ledger_alerts (
    key TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    member_id TEXT,
    period TEXT NOT NULL,
    threshold_pct INTEGER,
    limit_micros INTEGER NOT NULL,
    level_micros INTEGER NOT NULL,
    fired_at INTEGER NOT NULL
  )`,
  // Lots (grants): added after the tables above, so existing accounts gain it on their next start;
  // the ledger turns an existing balance into one opening lot the first time it touches lots.
  `CREATE TABLE IF NOT EXISTS ledger_lots (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    priority INTEGER NOT NULL,
    granted_micros INTEGER NOT NULL CHECK (granted_micros > 0),
    remaining_micros INTEGER NOT NULL CHECK (remaining_micros >= 0 AND remaining_micros <= granted_micros),
    expires_at INTEGER,
    created_at INTEGER NOT NULL,
    entry_seq INTEGER NOT NULL,
    funding_ref TEXT,
    expired_at INTEGER,
    expiry_seq INTEGER
  )`,
  "CREATE INDEX IF NOT EXISTS ledger_lots_live ON ledger_lots (expires_at) WHERE expired_at IS NULL",
  "CREATE INDEX IF NOT EXISTS ledger_lots_entry ON ledger_lots (entry_seq)",
  // Each lot's share of each debit entry (usage, refunds, expiries): the usage CSV's grants.
  `CREATE TABLE IF NOT EXISTS ledger_lot_draws (
    entry_seq INTEGER NOT NULL,
    lot_id TEXT NOT NULL,
    micros INTEGER NOT NULL CHECK (micros > 0),
    PRIMARY KEY (entry_seq, lot_id)
  )`,
  "CREATE INDEX IF NOT EXISTS ledger_lots_funding ON ledger_lots (funding_ref) WHERE funding_ref IS NOT NULL",
];

/** Runs a statement for its effect: the cursor is drained, since workerd runs it as it is consumed. */
export function sqlRun(exec: SqlExecutor["exec"], query: string, ...bindings: SqlValue[]): void {
  for (const _ of exec(query, ...bindings)) {
    // nothing to read
  }
}

/** A query's rows, read at once. */
export function sqlRows(
  exec: SqlExecutor["exec"],
  query: string,
  ...bindings: SqlValue[]
): Record<string, unknown>[] {
  return [...exec(query, ...bindings)];
}

/** Lots in draw order: soonest expiry first (none last), then lower priority, then oldest. */
const LOT_ORDER = "ORDER BY expires_at IS NULL, expires_at, priority, entry_seq";

const ENTRY_KINDS: readonly EntryKind[] = ["grant", "topup", "usage", "adjustment"];
const HOLD_STATUSES: readonly HoldStatus[] = ["open", "settled", "released", "expired"];
const OUTCOMES: readonly UsageOutcome[] = ["settled", "settled_late", "metered"];
const ALERT_KINDS: readonly AlertKind[] = [
  "org_monthly_spend",
  "member_daily_spend",
  "low_balance",
  "low_runway",
  "auto_top_up_failed",
];

/** A row as SQLite returns it; the `to*` mappers below check and convert each column. */
type Row = Record<string, unknown>;

function num(row: Row, column: string): number {
  const value = row[column];
  if (typeof value !== "number") throw new TypeError(`column ${column} is not a number`);
  return value;
}

function numOrNull(row: Row, column: string): number | null {
  return row[column] === null ? null : num(row, column);
}

function str(row: Row, column: string): string {
  const value = row[column];
  if (typeof value !== "string") throw new TypeError(`column ${column} is not text`);
  return value;
}

function strOrNull(row: Row, column: string): string | null {
  return row[column] === null ? null : str(row, column);
}

function oneOf<T extends string>(row: Row, column: string, allowed: readonly T[]): T {
  const value = str(row, column);
  const found = allowed.find((candidate) => candidate === value);
  if (found === undefined) throw new TypeError(`column ${column} has unknown value ${value}`);
  return found;
}

export function toEntry(row: Row): EntryRow {
  return {
    seq: num(row, "seq"),
    kind: oneOf(row, "kind", ENTRY_KINDS),
    amountMicros: num(row, "amount_micros"),
    balanceAfterMicros: num(row, "balance_after_micros"),
    idempotencyKey: str(row, "idempotency_key"),
    reference: strOrNull(row, "reference"),
    memo: strOrNull(row, "memo"),
    createdAt: num(row, "created_at"),
  };
}

export function toHold(row: Row): HoldRow {
  return {
    requestId: str(row, "request_id"),
    amountMicros: num(row, "amount_micros"),
    memberId: str(row, "member_id"),
    projectId: strOrNull(row, "project_id"),
    sessionId: strOrNull(row, "session_id"),
    status: oneOf(row, "status", HOLD_STATUSES),
    createdAt: num(row, "created_at"),
    expiresAt: num(row, "expires_at"),
    resolvedAt: numOrNull(row, "resolved_at"),
  };
}

export function toUsage(row: Row): UsageRow {
  const billable = num(row, "billable");
  return {
    requestId: str(row, "request_id"),
    memberId: strOrNull(row, "member_id"),
    projectId: strOrNull(row, "project_id"),
    sessionId: strOrNull(row, "session_id"),
    model: str(row, "model"),
    promptTokens: num(row, "prompt_tokens"),
    completionTokens: num(row, "completion_tokens"),
    cachedPromptTokens: num(row, "cached_prompt_tokens"),
    reasoningTokens: num(row, "reasoning_tokens"),
    costMicros: num(row, "cost_micros"),
    priceMicros: num(row, "price_micros"),
    billable: billable === 1 ? 1 : 0,
    generationIds: str(row, "generation_ids"),
    outcome: oneOf(row, "outcome", OUTCOMES),
    holdMicros: numOrNull(row, "hold_micros"),
    createdAt: num(row, "created_at"),
  };
}

export function toAlert(row: Row): AlertRow {
  return {
    key: str(row, "key"),
    kind: oneOf(row, "kind", ALERT_KINDS),
    memberId: strOrNull(row, "member_id"),
    period: str(row, "period"),
    thresholdPct: numOrNull(row, "threshold_pct"),
    limitMicros: num(row, "limit_micros"),
    levelMicros: num(row, "level_micros"),
    firedAt: num(row, "fired_at"),
  };
}

export function toLot(row: Row): LotRow {
  return {
    id: str(row, "id"),
    source: oneOf<GrantSource>(row, "source", GRANT_SOURCES),
    priority: num(row, "priority"),
    grantedMicros: num(row, "granted_micros"),
    remainingMicros: num(row, "remaining_micros"),
    expiresAt: numOrNull(row, "expires_at"),
    createdAt: num(row, "created_at"),
    entrySeq: num(row, "entry_seq"),
    fundingRef: strOrNull(row, "funding_ref"),
    expiredAt: numOrNull(row, "expired_at"),
    expirySeq: numOrNull(row, "expiry_seq"),
  };
}

/** The columns of `usage_events`, in the order `usageValues` gives a row's values. */
const USAGE_COLUMNS = [
  "request_id",
  "member_id",
  "project_id",
  "session_id",
  "model",
  "prompt_tokens",
  "completion_tokens",
  "cached_prompt_tokens",
  "reasoning_tokens",
  "cost_micros",
  "price_micros",
  "billable",
  "generation_ids",
  "outcome",
  "hold_micros",
  "created_at",
] as const;

function usageValues(usage: UsageRow): SqlValue[] {
  return [
    usage.requestId,
    usage.memberId,
    usage.projectId,
    usage.sessionId,
    usage.model,
    usage.promptTokens,
    usage.completionTokens,
    usage.cachedPromptTokens,
    usage.reasoningTokens,
    usage.costMicros,
    usage.priceMicros,
    usage.billable,
    usage.generationIds,
    usage.outcome,
    usage.holdMicros,
    usage.createdAt,
  ];
}

/** {@link LedgerStore} over the tables of {@link LEDGER_SQLITE_SCHEMA}. */
export class SqlLedgerStore implements LedgerStore {
  readonly #sql: SqlExecutor;

  constructor(sql: SqlExecutor) {
    this.#sql = sql;
  }

  /** Creates the tables and indexes if missing; idempotent, run it when the object starts. */
  migrate(): void {
    this.#sql.transact(() => {
      for (const statement of LEDGER_SQLITE_SCHEMA) this.#run(statement);
    });
  }

  /**
   * Counters read or written inside the outermost open transaction (null outside one). A report
   * reads the same few counters many times and moves them once per call it settles; they are read
   * once, kept here, and written once, as the transaction ends.
   */
  #counters: Map<string, { value: number; dirty: boolean }> | null = null;

  transact<T>(fn: () => T): T {
    if (this.#counters !== null) {
      // A nested transaction that fails takes its counter changes with it, like its rows.
      const before = new Map(this.#counters);
      try {
        return this.#sql.transact(fn);
      } catch (error) {
        this.#counters = before;
        throw error;
      }
    }
    this.#counters = new Map();
    try {
      return this.#sql.transact(() => {
        const result = fn();
        this.#flushCounters();
        return result;
      });
    } finally {
      this.#counters = null;
    }
  }

  #flushCounters(): void {
    const dirty = [...(this.#counters ?? [])].filter(([, counter]) => counter.dirty);
    if (dirty.length === 0) return;
    // (An upsert's SELECT needs a WHERE, or SQLite reads ON CONFLICT as a join's ON.)
    this.#run(
      `INSERT INTO ledger_counters (name, value) SELECT value ->> 0, value ->> 1 FROM json_each(?)
       WHERE true ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
      JSON.stringify(dirty.map(([name, counter]) => [name, counter.value])),
    );
  }

  #rows(query: string, ...bindings: SqlValue[]): Row[] {
    return [...this.#sql.exec(query, ...bindings)];
  }

  #first(query: string, ...bindings: SqlValue[]): Row | null {
    return this.#rows(query, ...bindings)[0] ?? null;
  }

  #run(query: string, ...bindings: SqlValue[]): void {
    // Drain the cursor: workerd runs a statement as its cursor is consumed.
    for (const _ of this.#sql.exec(query, ...bindings)) {
      // nothing to read
    }
  }

  insertEntry(entry: NewEntryRow): EntryRow {
    const row = this.#first(
      `INSERT INTO ledger_entries
         (kind, amount_micros, balance_after_micros, idempotency_key, reference, memo, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
      entry.kind,
      entry.amountMicros,
      entry.balanceAfterMicros,
      entry.idempotencyKey,
      entry.reference,
      entry.memo,
      entry.createdAt,
    );
    if (row === null) throw new Error("INSERT ... RETURNING returned no row");
    return { ...entry, seq: num(row, "seq") };
  }

  insertEntries(entries: readonly NewEntryRow[]): EntryRow[] {
    if (entries.length === 0) return [];
    // One statement for the lot, whatever its size: the rows travel as one JSON parameter (a
    // Durable Object binds at most 100 parameters), inserted in order so `seq` follows them.
    const seqs = new Map(
      this.#rows(
        `INSERT INTO ledger_entries
           (kind, amount_micros, balance_after_micros, idempotency_key, reference, memo, created_at)
         SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6
         FROM json_each(?) ORDER BY key RETURNING seq, idempotency_key`,
        JSON.stringify(
          entries.map((e) => [
            e.kind,
            e.amountMicros,
            e.balanceAfterMicros,
            e.idempotencyKey,
            e.reference,
            e.memo,
            e.createdAt,
          ]),
        ),
      ).map((row) => [str(row, "idempotency_key"), num(row, "seq")]),
    );
    return entries.map((entry) => {
      const seq = seqs.get(entry.idempotencyKey);
      if (seq === undefined) throw new Error("INSERT ... RETURNING left out a row");
      return { ...entry, seq };
    });
  }

  getEntryByKey(idempotencyKey: string): EntryRow | null {
    const row = this.#first(
      "SELECT * FROM ledger_entries WHERE idempotency_key = ?",
      idempotencyKey,
    );
    return row === null ? null : toEntry(row);
  }

  listEntries(afterSeq: number, limit: number): EntryRow[] {
    return this.#rows(
      "SELECT * FROM ledger_entries WHERE seq > ? ORDER BY seq LIMIT ?",
      afterSeq,
      limit,
    ).map(toEntry);
  }

  sumEntries(): number {
    const row = this.#first("SELECT COALESCE(SUM(amount_micros), 0) AS total FROM ledger_entries");
    return row === null ? 0 : num(row, "total");
  }

  sumEntriesByReference(reference: string): number {
    const row = this.#first(
      "SELECT COALESCE(SUM(amount_micros), 0) AS total FROM ledger_entries WHERE reference = ?",
      reference,
    );
    return row === null ? 0 : num(row, "total");
  }

  insertHold(hold: HoldRow): void {
    this.#run(
      `INSERT INTO ledger_holds
         (request_id, amount_micros, member_id, project_id, session_id, status, created_at,
          expires_at, resolved_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      hold.requestId,
      hold.amountMicros,
      hold.memberId,
      hold.projectId,
      hold.sessionId,
      hold.status,
      hold.createdAt,
      hold.expiresAt,
      hold.resolvedAt,
    );
  }

  getHold(requestId: string): HoldRow | null {
    const row = this.#first("SELECT * FROM ledger_holds WHERE request_id = ?", requestId);
    return row === null ? null : toHold(row);
  }

  getHolds(requestIds: readonly string[]): HoldRow[] {
    if (requestIds.length === 0) return [];
    return this.#rows(
      "SELECT * FROM ledger_holds WHERE request_id IN (SELECT value FROM json_each(?))",
      JSON.stringify(requestIds),
    ).map(toHold);
  }

  resolveHold(requestId: string, status: Exclude<HoldStatus, "open">, resolvedAt: number): void {
    this.#run(
      "UPDATE ledger_holds SET status = ?, resolved_at = ? WHERE request_id = ? AND status = 'open'",
      status,
      resolvedAt,
      requestId,
    );
  }

  resizeHold(requestId: string, amountMicros: number, expiresAt: number): void {
    this.#run(
      "UPDATE ledger_holds SET amount_micros = ?, expires_at = ? WHERE request_id = ? AND status = 'open'",
      amountMicros,
      expiresAt,
      requestId,
    );
  }

  countOpenLeases(): number {
    const row = this.#first(
      "SELECT COUNT(*) AS n FROM ledger_holds WHERE status = 'open' AND substr(request_id, 1, 6) = 'lease:'",
    );
    return row === null ? 0 : num(row, "n");
  }

  sumOpenHolds(memberId: string): number {
    const row = this.#first(
      "SELECT COALESCE(SUM(amount_micros), 0) AS total FROM ledger_holds WHERE status = 'open' AND member_id = ?",
      memberId,
    );
    return row === null ? 0 : num(row, "total");
  }

  sumOpenProjectHolds(projectId: string): number {
    const row = this.#first(
      "SELECT COALESCE(SUM(amount_micros), 0) AS total FROM ledger_holds WHERE status = 'open' AND project_id = ?",
      projectId,
    );
    return row === null ? 0 : num(row, "total");
  }

  listOpenHolds(): HoldRow[] {
    return this.#rows(
      "SELECT * FROM ledger_holds WHERE status = 'open' ORDER BY expires_at, request_id",
    ).map(toHold);
  }

  insertUsage(usage: UsageRow): void {
    this.#run(
      `INSERT INTO usage_events (${USAGE_COLUMNS.join(", ")}) VALUES (${USAGE_COLUMNS.map(() => "?").join(", ")})`,
      ...usageValues(usage),
    );
  }

  insertUsages(usages: readonly UsageRow[]): void {
    if (usages.length === 0) return;
    this.#run(
      `INSERT INTO usage_events (${USAGE_COLUMNS.join(", ")})
       SELECT ${USAGE_COLUMNS.map((_, i) => `value ->> ${i}`).join(", ")} FROM json_each(?) ORDER BY key`,
      JSON.stringify(usages.map(usageValues)),
    );
  }

  getUsages(requestIds: readonly string[]): UsageRow[] {
    if (requestIds.length === 0) return [];
    return this.#rows(
      "SELECT * FROM usage_events WHERE request_id IN (SELECT value FROM json_each(?))",
      JSON.stringify(requestIds),
    ).map(toUsage);
  }

  getUsage(requestId: string): UsageRow | null {
    const row = this.#first("SELECT * FROM usage_events WHERE request_id = ?", requestId);
    return row === null ? null : toUsage(row);
  }

  loadCounters(names: readonly string[]): void {
    const counters = this.#counters;
    if (counters === null) return; // outside a transaction nothing is kept
    const missing = names.filter((name) => !counters.has(name));
    if (missing.length === 0) return;
    const found = new Map(
      this.#rows(
        "SELECT name, value FROM ledger_counters WHERE name IN (SELECT value FROM json_each(?))",
        JSON.stringify(missing),
      ).map((row) => [str(row, "name"), num(row, "value")]),
    );
    for (const name of missing) counters.set(name, { value: found.get(name) ?? 0, dirty: false });
  }

  getCounter(name: string): number {
    const kept = this.#counters?.get(name);
    if (kept !== undefined) return kept.value;
    const row = this.#first("SELECT value FROM ledger_counters WHERE name = ?", name);
    const value = row === null ? 0 : num(row, "value");
    this.#counters?.set(name, { value, dirty: false });
    return value;
  }

  setCounter(name: string, value: number): void {
    if (this.#counters !== null) {
      this.#counters.set(name, { value, dirty: true });
      return;
    }
    this.#run(
      `INSERT INTO ledger_counters (name, value) VALUES (?, ?)
       ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
      name,
      value,
    );
  }

  getAlert(key: string): AlertRow | null {
    const row = this.#first("SELECT * FROM ledger_alerts WHERE key = ?", key);
    return row === null ? null : toAlert(row);
  }

  insertAlert(alert: AlertRow): void {
    this.#run(
      `INSERT INTO ledger_alerts
         (key, kind, member_id, period, threshold_pct, limit_micros, level_micros, fired_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      alert.key,
      alert.kind,
      alert.memberId,
      alert.period,
      alert.thresholdPct,
      alert.limitMicros,
      alert.levelMicros,
      alert.firedAt,
    );
  }

  insertLot(lot: LotRow): void {
    this.#run(
      `INSERT INTO ledger_lots
         (id, source, priority, granted_micros, remaining_micros, expires_at, created_at, entry_seq,
          funding_ref, expired_at, expiry_seq)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      lot.id,
      lot.source,
      lot.priority,
      lot.grantedMicros,
      lot.remainingMicros,
      lot.expiresAt,
      lot.createdAt,
      lot.entrySeq,
      lot.fundingRef,
      lot.expiredAt,
      lot.expirySeq,
    );
  }

  getLot(id: string): LotRow | null {
    const row = this.#first("SELECT * FROM ledger_lots WHERE id = ?", id);
    return row === null ? null : toLot(row);
  }

  getLotByFundingRef(fundingRef: string): LotRow | null {
    const row = this.#first(
      "SELECT * FROM ledger_lots WHERE funding_ref = ? AND expired_at IS NULL ORDER BY entry_seq DESC LIMIT 1",
      fundingRef,
    );
    return row === null ? null : toLot(row);
  }

  listLiveLots(): LotRow[] {
    return this.#rows(
      `SELECT * FROM ledger_lots WHERE expired_at IS NULL AND remaining_micros > 0 ${LOT_ORDER}`,
    ).map(toLot);
  }

  listDueLots(now: number): LotRow[] {
    return this.#rows(
      `SELECT * FROM ledger_lots WHERE expired_at IS NULL AND expires_at <= ? ${LOT_ORDER}`,
      now,
    ).map(toLot);
  }

  nextLotExpiry(): number | null {
    const row = this.#first(
      "SELECT MIN(expires_at) AS at FROM ledger_lots WHERE expired_at IS NULL",
    );
    return row === null ? null : numOrNull(row, "at");
  }

  insertLotDraws(draws: readonly LotDrawRow[]): void {
    if (draws.length === 0) return;
    this.#run(
      `INSERT INTO ledger_lot_draws (entry_seq, lot_id, micros)
       SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each(?)`,
      JSON.stringify(draws.map((draw) => [draw.entrySeq, draw.lotId, draw.micros])),
    );
  }

  updateLot(id: string, change: Pick<LotRow, "remainingMicros" | "expiredAt" | "expirySeq">): void {
    this.#run(
      "UPDATE ledger_lots SET remaining_micros = ?, expired_at = ?, expiry_seq = ? WHERE id = ?",
      change.remainingMicros,
      change.expiredAt,
      change.expirySeq,
      id,
    );
  }
}
