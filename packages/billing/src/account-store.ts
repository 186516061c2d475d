/**
 * The BillingAccount's own tables beside the ledger's: the org's settings (one row), the Stripe
 * events already applied, and the free preview turns admitted per day. Only the SQL lives here:
 * the object decides when to read and write, and wraps what must be atomic in its transaction.
 */
import { type SqlExecutor, type SqlValue, sqlRun } from "./sql.ts";

/** An org's spend controls and alert delivery, as set by its owners and admins. */
export interface BillingSettings {
  orgMonthlyLimitMicros: number | null;
  memberDailyLimitMicros: number | null;
  lowBalanceMicros: number | null;
  /** An alert when the balance lasts fewer days than this at the last 7 days' rate; null = none. */
  runwayAlertDays: number | null;
  /** Where threshold alerts are POSTed (signed); null = listed in the API only. */
  alertWebhookUrl: string | null;
  /**
   * The share of a spend limit at which the chat warns before the hard stop (1 to 99); null =
   * no warning. 80 until an admin sets it.
   */
  limitWarningPct: number | null;
}

/** The warning share of an org that never set one. */
export const DEFAULT_LIMIT_WARNING_PCT = 80;

const SCHEMA: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS billing_settings (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    org_id TEXT NOT NULL,
    org_monthly_limit_micros INTEGER,
    member_daily_limit_micros INTEGER,
    low_balance_micros INTEGER,
    alert_webhook_url TEXT,
    runway_alert_days INTEGER,
    limit_warning_pct INTEGER
  )`,
  // Each verified Stripe event id, written in the same transaction as its ledger effect.
  `CREATE TABLE IF NOT EXISTS stripe_events (
    event_id TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    processed_at INTEGER NOT NULL
  )`,
  // Free onboarding-preview turns admitted per UTC day, for the per-org daily cap.
  `CREATE TABLE IF NOT EXISTS preview_turns (
    day TEXT PRIMARY KEY,
    turns INTEGER NOT NULL
  )`,
];

/** The stored warning share: NULL (never set) is the default, 0 is none. */
function warningPct(stored: number | null | undefined): number | null {
  if (stored === null || stored === undefined) return DEFAULT_LIMIT_WARNING_PCT;
  return stored === 0 ? null : stored;
}

export class AccountStore {
  readonly #exec: SqlExecutor["exec"];

  constructor({ exec }: Pick<SqlExecutor, "exec">) {
    this.#exec = exec;
  }

  #first(query: string, ...bindings: SqlValue[]): Record<string, unknown> | undefined {
    return [...this.#exec(query, ...bindings)][0];
  }

  #run(query: string, ...bindings: SqlValue[]): void {
    sqlRun(this.#exec, query, ...bindings);
  }

  /** Creates the tables if missing; idempotent, run it when the object starts. */
  migrate(): void {
    for (const statement of SCHEMA) this.#run(statement);
    // Settings made before the runway alert (2026-12-02) get its column once.
    const columns = [...this.#exec("SELECT name FROM pragma_table_info('billing_settings')")].map(
      (row) => row.name,
    );
    if (!columns.includes("runway_alert_days")) {
      this.#run("ALTER TABLE billing_settings ADD COLUMN runway_alert_days INTEGER");
    }
    // And before the warning share (2026-12-02): NULL there reads as the default, 0 as none.
    if (!columns.includes("limit_warning_pct")) {
      this.#run("ALTER TABLE billing_settings ADD COLUMN limit_warning_pct INTEGER");
    }
  }

  /** Records the org this account belongs to, once; settings start empty. */
  open(orgId: string): void {
    this.#run(
      "INSERT INTO billing_settings (id, org_id) VALUES (1, ?) ON CONFLICT (id) DO NOTHING",
      orgId,
    );
  }

  /** The org id recorded by `open` or the first settings write; undefined before either. */
  orgId(): string | undefined {
    return this.#first("SELECT org_id FROM billing_settings WHERE id = 1")?.org_id as
      | string
      | undefined;
  }

  /** The settings; every one null (none) before any is set. */
  settings(): BillingSettings {
    const row = this.#first("SELECT * FROM billing_settings WHERE id = 1");
    return {
      orgMonthlyLimitMicros: (row?.org_monthly_limit_micros as number | null) ?? null,
      memberDailyLimitMicros: (row?.member_daily_limit_micros as number | null) ?? null,
      lowBalanceMicros: (row?.low_balance_micros as number | null) ?? null,
      runwayAlertDays: (row?.runway_alert_days as number | null) ?? null,
      alertWebhookUrl: (row?.alert_webhook_url as string | null) ?? null,
      limitWarningPct: warningPct(row?.limit_warning_pct as number | null | undefined),
    };
  }

  /** Replaces every setting (the org id, once recorded, stays the first one). */
  writeSettings(orgId: string, settings: BillingSettings): void {
    this.#run(
      `INSERT INTO billing_settings (id, org_id, org_monthly_limit_micros, member_daily_limit_micros, low_balance_micros, alert_webhook_url, runway_alert_days, limit_warning_pct)
       VALUES (1, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET org_monthly_limit_micros = excluded.org_monthly_limit_micros,
         member_daily_limit_micros = excluded.member_daily_limit_micros,
         low_balance_micros = excluded.low_balance_micros, alert_webhook_url = excluded.alert_webhook_url,
         runway_alert_days = excluded.runway_alert_days, limit_warning_pct = excluded.limit_warning_pct`,
      orgId,
      settings.orgMonthlyLimitMicros,
      settings.memberDailyLimitMicros,
      settings.lowBalanceMicros,
      settings.alertWebhookUrl,
      settings.runwayAlertDays,
      settings.limitWarningPct ?? 0,
    );
  }

  /** Whether this Stripe event was already applied. */
  stripeEventSeen(eventId: string): boolean {
    return this.#first("SELECT 1 FROM stripe_events WHERE event_id = ?", eventId) !== undefined;
  }

  /** Records a Stripe event as applied; call it in the transaction that applies it. */
  recordStripeEvent(event: { id: string; type: string }, now: number): void {
    this.#run(
      "INSERT INTO stripe_events (event_id, type, processed_at) VALUES (?, ?, ?)",
      event.id,
      event.type,
      now,
    );
  }

  /**
   * Admits one free preview turn against the daily `cap` on `day`, counting it when admitted. The
   * preview is free for the org, so this is a count, not money.
   */
  admitPreviewTurn(day: string, cap: number): { ok: boolean; used: number } {
    const used =
      (this.#first("SELECT turns FROM preview_turns WHERE day = ?", day)?.turns as
        | number
        | undefined) ?? 0;
    if (used >= cap) return { ok: false, used };
    this.#run(
      "INSERT INTO preview_turns (day, turns) VALUES (?, 1) ON CONFLICT (day) DO UPDATE SET turns = turns + 1",
      day,
    );
    return { ok: true, used: used + 1 };
  }
}
