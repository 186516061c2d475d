/**
 * The alert outbox: alerts the ledger fired, waiting to be POSTed to the org's webhook by the
 * BillingAccount's alarm, with retries and backoff. Only the SQL lives here (no I/O): the object
 * claims a due batch, delivers it, and records each attempt's outcome. Rows are keyed like
 * `ledger_alerts`, whose alerts the listing joins with their delivery state.
 */
import type { AlertRow } from "./ledger-store.ts";
import { toAlert } from "./ledger-tables.ts";
import { type SqlExecutor, type SqlValue, sqlRows, sqlRun } from "./sql.ts";

/** Failed deliveries after which an alert is parked for good. */
export const ALERT_ATTEMPTS = 8;

/** How long a delivery attempt owns its outbox row before another alarm may retry it. */
export const DELIVERY_LEASE_MS = 30_000;

/** How many due alerts one alarm run claims. */
const BATCH = 20;

/** A fired alert with its delivery state, as the alerts list shows it. */
export interface AlertDelivery extends AlertRow {
  deliveredAt: number | null;
  attempts: number;
  /** Why delivery stopped for good (the URL removed or refused, too many failures); null if not. */
  parkedReason: string | null;
}

/** An outbox row claimed for delivery, with the attempts made before this one. */
export interface DueAlert {
  key: string;
  attempts: number;
}

/** The outbox over the tables of `LEDGER_SQLITE_SCHEMA` plus its own (`migrate`). */
export class AlertOutbox {
  readonly #exec: SqlExecutor["exec"];

  constructor({ exec }: Pick<SqlExecutor, "exec">) {
    this.#exec = exec;
  }

  #rows(query: string, ...bindings: SqlValue[]): Record<string, unknown>[] {
    return sqlRows(this.#exec, query, ...bindings);
  }

  #run(query: string, ...bindings: SqlValue[]): void {
    sqlRun(this.#exec, query, ...bindings);
  }

  /** Creates the table (idempotent); an outbox made before alerts could be parked gets the columns once. */
  migrate(): void {
    this.#run(`CREATE TABLE IF NOT EXISTS alert_outbox (
      key TEXT PRIMARY KEY,
      attempts INTEGER NOT NULL DEFAULT 0,
      next_attempt_at INTEGER NOT NULL,
      delivered_at INTEGER,
      parked_at INTEGER,
      parked_reason TEXT
    )`);
    const columns = this.#rows("SELECT name FROM pragma_table_info('alert_outbox')").map(
      (row) => row.name,
    );
    if (!columns.includes("parked_at")) {
      this.#run("ALTER TABLE alert_outbox ADD COLUMN parked_at INTEGER");
      this.#run("ALTER TABLE alert_outbox ADD COLUMN parked_reason TEXT");
    }
  }

  /** Queues alerts for delivery now; an alert already queued (delivered, parked or not) stays as it is. */
  queue(alerts: readonly Pick<AlertRow, "key">[], now: number): void {
    for (const alert of alerts) {
      this.#run(
        "INSERT INTO alert_outbox (key, next_attempt_at) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
        alert.key,
        now,
      );
    }
  }

  /**
   * When the earliest deliverable alert is due (parked, delivered and spent rows never count), or
   * null: what the alarm is set by, so an idle outbox never wakes it.
   */
  nextAttemptAt(): number | null {
    const [row] = this.#rows(
      `SELECT MIN(next_attempt_at) AS at FROM alert_outbox
       WHERE delivered_at IS NULL AND parked_at IS NULL AND attempts < ?`,
      ALERT_ATTEMPTS,
    );
    return (row?.at as number | null | undefined) ?? null;
  }

  /**
   * Parks the undelivered alerts (all of them, or the one `key`) that can no longer be delivered,
   * with the reason: they stay listed (with the reason) and are never tried again, so nothing
   * waits on them.
   */
  park(reason: string, now: number, key?: string): void {
    this.#run(
      `UPDATE alert_outbox SET parked_at = ?, parked_reason = ?
       WHERE delivered_at IS NULL AND parked_at IS NULL ${key === undefined ? "" : "AND key = ?"}`,
      now,
      reason,
      ...(key === undefined ? [] : [key]),
    );
  }

  /**
   * Claims up to 20 due alerts: each one's next attempt moves `leaseMs` ahead, so an alarm retried
   * or run twice while this batch is delivered skips these rows instead of delivering them twice.
   * Call it before the first await of a delivery.
   */
  claimDue(now: number, leaseMs = DELIVERY_LEASE_MS): DueAlert[] {
    const due = this.#rows(
      `SELECT key, attempts FROM alert_outbox
       WHERE delivered_at IS NULL AND parked_at IS NULL AND attempts < ? AND next_attempt_at <= ? LIMIT ${BATCH}`,
      ALERT_ATTEMPTS,
      now,
    ).map((row) => ({ key: row.key as string, attempts: row.attempts as number }));
    for (const row of due) {
      this.#run(
        "UPDATE alert_outbox SET next_attempt_at = ? WHERE key = ?",
        now + leaseMs,
        row.key,
      );
    }
    return due;
  }

  /**
   * Records one delivery attempt of a claimed alert: delivered at `deliveredAt`, or failed (null).
   * The next try waits `2^attempts` seconds from `now` (when the batch was claimed); the last
   * allowed failure parks the alert.
   */
  recordAttempt(due: DueAlert, deliveredAt: number | null, now: number): void {
    const attempts = due.attempts + 1;
    this.#run(
      "UPDATE alert_outbox SET attempts = ?, delivered_at = ?, next_attempt_at = ? WHERE key = ?",
      attempts,
      deliveredAt,
      now + 1000 * 2 ** attempts,
      due.key,
    );
    if (deliveredAt === null && attempts >= ALERT_ATTEMPTS) {
      this.park(`gave up after ${attempts} failed deliveries`, now, due.key);
    }
  }

  /**
   * Alerts that fired, newest first, with their delivery state (an alert never queued has none); a
   * page of `limit` after `before` (the last alert of the previous page). Keyset on (fired_at,
   * key): keys are unique.
   */
  list(limit: number, before?: { firedAt: number; key: string }): AlertDelivery[] {
    return this.#rows(
      `SELECT a.*, o.attempts AS outbox_attempts, o.delivered_at AS outbox_delivered_at,
         o.parked_reason AS outbox_parked_reason
       FROM ledger_alerts a LEFT JOIN alert_outbox o ON o.key = a.key
       WHERE ?1 IS NULL OR a.fired_at < ?1 OR (a.fired_at = ?1 AND a.key < ?2)
       ORDER BY a.fired_at DESC, a.key DESC LIMIT ?3`,
      before?.firedAt ?? null,
      before?.key ?? "",
      limit,
    ).map((row) => ({
      ...toAlert(row),
      attempts: (row.outbox_attempts as number | null) ?? 0,
      deliveredAt: (row.outbox_delivered_at as number | null) ?? null,
      parkedReason: (row.outbox_parked_reason as string | null) ?? null,
    }));
  }
}
