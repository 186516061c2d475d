/**
 * A {@link LedgerStore} over synchronous SQLite (sql.ts), on the tables of ledger-tables.ts. Inside
 * a transaction it keeps the counters it read and writes the changed ones once, as the transaction
 * ends: a lease report reads the same few counters many times.
 */

import type {
  AlertRow,
  EntryRow,
  HoldRow,
  HoldStatus,
  LedgerStore,
  LotDrawRow,
  LotRow,
  NewEntryRow,
  UsageRow,
} from "./ledger-store.ts";
import {
  LEDGER_SQLITE_SCHEMA,
  toAlert,
  toEntry,
  toHold,
  toLot,
  toUsage,
  USAGE_COLUMNS,
  usageValues,
} from "./ledger-tables.ts";
import { num, numOrNull, type Row, type SqlExecutor, type SqlValue, str } from "./sql.ts";

/** Lots in draw order: soonest expiry first (none last), then lower priority, then oldest. */
const LOT_ORDER = "ORDER BY expires_at IS NULL, expires_at, priority, entry_seq";

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
