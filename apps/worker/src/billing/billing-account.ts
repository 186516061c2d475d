import { DurableObject } from "cloudflare:workers";
import {
  type AlertRow,
  alertMessage,
  alertPeriodLabel,
  applyStripeAction,
  type Balance,
  CreditLedger,
  createUsageRollups,
  type EntryRow,
  isLeaseId,
  LEDGER_SQLITE_SCHEMA,
  type LeaseInput,
  type LeaseResult,
  type LedgerConfig,
  type PostResult,
  type ReleaseResult,
  type ReserveResult,
  type SettleInput,
  type SettleResult,
  SqlLedgerStore,
  type StripeLedgerAction,
  toAlert,
  toEntry,
  toUsage,
  type UsageColumns,
  type UsageRow,
  usageReport,
} from "@parley/billing";
import type { UsageGroupBy } from "@parley/shared";
import { type Finding, scanStore, scrubStore, sqlSource } from "../erasure/scan.ts";
import type { Replacement } from "../erasure/scrub.ts";
import { signAlert } from "./alert-signature.ts";
import { checkWebhookUrl } from "./webhook-url.ts";

export { type UsageColumns, usageGroups } from "@parley/billing";

/**
 * One organization's credits: the single writer of its append-only ledger (name = org id).
 *
 * Every ledger method is synchronous SQLite work with no `await` inside, so each RPC call runs
 * start to finish before the next one starts: a reservation's balance check and its write cannot be
 * interleaved by another session's reservation. Mutations run in one `transactionSync`.
 */

export interface BillingSettings {
  orgMonthlyLimitMicros: number | null;
  memberDailyLimitMicros: number | null;
  lowBalanceMicros: number | null;
  /** Where threshold alerts are POSTed (signed); null = listed in the API only. */
  alertWebhookUrl: string | null;
}

export interface ReserveRequest {
  requestId: string;
  amountMicros: number;
  memberId: string;
  projectId: string | null;
  sessionId: string | null;
  /** How long the hold lives before the alarm voids it. */
  ttlMs?: number;
}

export type SettleRequest = Omit<SettleInput, "now">;

/** A session's report to its lease, with a renewal or a return (`CreditLedger.lease`). */
export type LeaseRequest = Omit<LeaseInput, "now">;

export interface UsageQuery {
  from: number;
  to: number;
  groupBy: UsageGroupBy;
  /** Restricts to one member's usage (what a plain member may see). */
  memberId?: string;
}

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

export type StripeApplyResult = { status: "duplicate" } | { status: "applied"; result: PostResult };

export interface AlertDelivery extends AlertRow {
  deliveredAt: number | null;
  attempts: number;
  /** Why delivery stopped for good (the URL removed or refused, too many failures); null if not. */
  parkedReason: string | null;
}

const DEFAULT_HOLD_TTL_MS = 10 * 60 * 1000;
const ALERT_ATTEMPTS = 8;
/** How long a delivery attempt owns its outbox row before another alarm may retry it. */
const DELIVERY_LEASE_MS = 30_000;

/**
 * The soonest an alarm re-arms after it ran: whatever is pending, the next run is in the future, so
 * no state of the outbox or the holds can make the alarm fire in a loop.
 */
const MIN_ALARM_GAP_MS = 1_000;

export class BillingAccount extends DurableObject<Env> {
  readonly #sql: SqlStorage;
  readonly #store: SqlLedgerStore;
  #ledger: CreditLedger;
  /** The alarm time as last read or set: saves a storage read per reservation. */
  #alarmAt: number | null | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    for (const statement of LEDGER_SQLITE_SCHEMA) this.#sql.exec(statement);
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS billing_settings (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      org_id TEXT NOT NULL,
      org_monthly_limit_micros INTEGER,
      member_daily_limit_micros INTEGER,
      low_balance_micros INTEGER,
      alert_webhook_url TEXT
    )`);
    // Each verified Stripe event id, written in the same transaction as its ledger effect.
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS stripe_events (
      event_id TEXT PRIMARY KEY,
      type TEXT NOT NULL,
      processed_at INTEGER NOT NULL
    )`);
    // Usage summed per UTC day for the groupings (packages/billing/src/usage-rollups.ts).
    createUsageRollups({ exec: (query, ...bindings) => this.#sql.exec(query, ...bindings) });
    // Free onboarding-preview turns admitted per UTC day, for the per-org daily cap.
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS preview_turns (
      day TEXT PRIMARY KEY,
      turns INTEGER NOT NULL
    )`);
    // Alerts to deliver to the org's webhook: an outbox drained by the alarm, with retries.
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS alert_outbox (
      key TEXT PRIMARY KEY,
      attempts INTEGER NOT NULL DEFAULT 0,
      next_attempt_at INTEGER NOT NULL,
      delivered_at INTEGER,
      parked_at INTEGER,
      parked_reason TEXT
    )`);
    // Accounts made before alerts could be parked get the columns once.
    const outboxColumns = this.#sql
      .exec("SELECT name FROM pragma_table_info('alert_outbox')")
      .toArray()
      .map((row) => row.name);
    if (!outboxColumns.includes("parked_at")) {
      this.#sql.exec("ALTER TABLE alert_outbox ADD COLUMN parked_at INTEGER");
      this.#sql.exec("ALTER TABLE alert_outbox ADD COLUMN parked_reason TEXT");
    }
    let depth = 0;
    this.#store = new SqlLedgerStore({
      exec: (query, ...bindings) => this.#sql.exec(query, ...bindings),
      transact: (fn) => {
        // transactionSync does not nest: an inner call joins the outer transaction.
        if (depth > 0) return fn();
        depth++;
        try {
          return ctx.storage.transactionSync(fn);
        } finally {
          depth--;
        }
      },
    });
    this.#ledger = new CreditLedger(this.#store, this.#ledgerConfig());
  }

  #settingsRow(): Record<string, SqlStorageValue> | undefined {
    return this.#sql.exec("SELECT * FROM billing_settings WHERE id = 1").toArray()[0];
  }

  #ledgerConfig(): Partial<LedgerConfig> {
    const row = this.#settingsRow();
    return {
      orgMonthlyLimitMicros: (row?.org_monthly_limit_micros as number | null) ?? null,
      memberDailyLimitMicros: (row?.member_daily_limit_micros as number | null) ?? null,
      lowBalanceMicros: (row?.low_balance_micros as number | null) ?? null,
    };
  }

  /**
   * Opens the account for an org: records its id and posts the sign-up grant, once (the grant's
   * idempotency key is fixed). Safe to call again; returns the balance.
   */
  open(input: { orgId: string; grantMicros: number }): Balance {
    this.ctx.storage.transactionSync(() => {
      this.#sql.exec(
        "INSERT INTO billing_settings (id, org_id) VALUES (1, ?) ON CONFLICT (id) DO NOTHING",
        input.orgId,
      );
      if (input.grantMicros > 0) {
        this.#ledger.post({
          kind: "grant",
          amountMicros: input.grantMicros,
          idempotencyKey: "signup-grant",
          memo: "Sign-up grant",
          now: Date.now(),
        });
      }
    });
    return this.#ledger.balance();
  }

  balance(): Balance & { settings: BillingSettings } {
    return { ...this.#ledger.balance(), settings: this.settings() };
  }

  settings(): BillingSettings {
    const row = this.#settingsRow();
    return {
      orgMonthlyLimitMicros: (row?.org_monthly_limit_micros as number | null) ?? null,
      memberDailyLimitMicros: (row?.member_daily_limit_micros as number | null) ?? null,
      lowBalanceMicros: (row?.low_balance_micros as number | null) ?? null,
      alertWebhookUrl: (row?.alert_webhook_url as string | null) ?? null,
    };
  }

  updateSettings(orgId: string, patch: Partial<BillingSettings>): BillingSettings {
    const before = this.settings();
    const next = { ...before, ...patch };
    this.#sql.exec(
      `INSERT INTO billing_settings (id, org_id, org_monthly_limit_micros, member_daily_limit_micros, low_balance_micros, alert_webhook_url)
       VALUES (1, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET org_monthly_limit_micros = excluded.org_monthly_limit_micros,
         member_daily_limit_micros = excluded.member_daily_limit_micros,
         low_balance_micros = excluded.low_balance_micros, alert_webhook_url = excluded.alert_webhook_url`,
      orgId,
      next.orgMonthlyLimitMicros,
      next.memberDailyLimitMicros,
      next.lowBalanceMicros,
      next.alertWebhookUrl,
    );
    this.#ledger = new CreditLedger(this.#store, this.#ledgerConfig());
    const current = this.settings();
    if (
      current.orgMonthlyLimitMicros !== before.orgMonthlyLimitMicros ||
      current.memberDailyLimitMicros !== before.memberDailyLimitMicros
    ) {
      this.ctx.waitUntil(this.#revokeLeases());
    }
    return next;
  }

  /** The sessions holding an open lease (but `except`). */
  #leaseHolders(except: string | null): string[] {
    const sessions = new Set<string>();
    for (const hold of this.#store.listOpenHolds()) {
      if (isLeaseId(hold.requestId) && hold.sessionId !== null && hold.sessionId !== except) {
        sessions.add(hold.sessionId);
      }
    }
    return [...sessions];
  }

  /**
   * A limit changed, or a call was refused while leases are out: every session holding a lease is told to draw no more on it and to return
   * it, so the next call is admitted under the new limit (a new lease is sized by it, or a per-call
   * hold). Until a session hears it, only what it already drew can pass the new limit (the bound in
   * docs/2026-12-01-metering-leases.md). An erased session is never addressed (that would make it
   * again): its lease was returned by the erasure, or expires.
   */
  async #revokeLeases(except: string | null = null): Promise<void> {
    const sessions = this.#leaseHolders(except);
    if (sessions.length === 0) return;
    const { results } = await this.env.DB.prepare(
      `SELECT subject_id FROM tombstones WHERE subject_id IN (${sessions.map(() => "?").join(", ")})`,
    )
      .bind(...sessions)
      .all<{ subject_id: string }>();
    const erased = new Set(results.map((row) => row.subject_id));
    await Promise.allSettled(
      sessions
        .filter((id) => !erased.has(id))
        .map((id) =>
          this.env.ASSISTANT_AGENT.get(this.env.ASSISTANT_AGENT.idFromName(id)).dropLease(),
        ),
    );
  }

  /**
   * Admits one free preview turn against the org's daily cap (UTC day), counting it when admitted.
   * The preview is free for the org, so this is a count, not money.
   */
  admitPreviewTurn(cap: number): { ok: boolean; used: number } {
    const day = new Date().toISOString().slice(0, 10);
    const used =
      (this.#sql.exec("SELECT turns FROM preview_turns WHERE day = ?", day).toArray()[0]?.turns as
        | number
        | undefined) ?? 0;
    if (used >= cap) return { ok: false, used };
    this.#sql.exec(
      "INSERT INTO preview_turns (day, turns) VALUES (?, 1) ON CONFLICT (day) DO UPDATE SET turns = turns + 1",
      day,
    );
    return { ok: true, used: used + 1 };
  }

  /** Reserves credits for one model call before it is made. Replaying a request id is harmless. */
  async reserve(input: ReserveRequest): Promise<ReserveResult> {
    const reserve = () =>
      this.#ledger.reserve({
        requestId: input.requestId,
        amountMicros: input.amountMicros,
        memberId: input.memberId,
        projectId: input.projectId,
        sessionId: input.sessionId,
        now: Date.now(),
        ttlMs: input.ttlMs ?? DEFAULT_HOLD_TTL_MS,
      });
    let result = reserve();
    if (!result.ok && result.reason !== "conflict" && this.#leaseHolders(input.sessionId).length) {
      // Credits may sit unused in other sessions' leases: they are taken back, and the call tried
      // once more, so a call is refused only when the org cannot afford it.
      await this.#revokeLeases(input.sessionId);
      result = reserve();
    }
    const now = Date.now();
    const queued = "alerts" in result && this.#queueAlerts(result.alerts, now);
    // Only new work can need an earlier alarm: the new hold's expiry, or alerts just queued.
    if (result.ok && !result.replayed) await this.#alarmBy(result.hold.expiresAt);
    if (queued) await this.#alarmBy(now);
    return result;
  }

  /** Settles a request to what the provider charged, exactly once per request id. */
  async settle(input: SettleRequest): Promise<SettleResult> {
    const now = Date.now();
    const result = this.#ledger.settle({ ...input, now });
    // A settle only removes work, unless it fired alerts to deliver.
    if (result.ok && this.#queueAlerts(result.alerts, now)) await this.#alarmBy(now);
    return result;
  }

  /**
   * A session's lease: the calls it drew since its last report are settled (each once, by its
   * request id), then the lease is renewed or returned. The one call a session makes for many
   * model steps (docs/2026-12-01-metering-leases.md).
   */
  async lease(input: LeaseRequest): Promise<LeaseResult> {
    const now = Date.now();
    const result = this.#ledger.lease({ ...input, now });
    if (!result.ok) return result;
    const queued = this.#queueAlerts(result.alerts, now);
    if (result.lease) await this.#alarmBy(result.lease.expiresAt);
    if (queued) await this.#alarmBy(now);
    return result;
  }

  release(requestId: string): ReleaseResult {
    return this.#ledger.release(requestId, Date.now());
  }

  /**
   * Applies a verified Stripe event's ledger action. The event id is recorded in the same
   * transaction as the credit, so a redelivered event is a no-op, and the action's own idempotency
   * key makes two different events for one payment credit it once.
   */
  applyStripeEvent(
    event: { id: string; type: string },
    action: StripeLedgerAction,
  ): StripeApplyResult {
    const now = Date.now();
    return this.ctx.storage.transactionSync((): StripeApplyResult => {
      const seen = this.#sql
        .exec("SELECT 1 FROM stripe_events WHERE event_id = ?", event.id)
        .toArray();
      if (seen.length > 0) return { status: "duplicate" };
      const result = applyStripeAction(this.#ledger, action, now);
      this.#sql.exec(
        "INSERT INTO stripe_events (event_id, type, processed_at) VALUES (?, ?, ?)",
        event.id,
        event.type,
        now,
      );
      if (result.ok) this.#queueAlerts(result.alerts, now);
      return { status: "applied", result };
    });
  }

  /** Ledger entries, newest first; `before` is the seq of the last entry of the previous page. */
  entries(before: number | null, limit: number): EntryRow[] {
    return this.#sql
      .exec(
        "SELECT * FROM ledger_entries WHERE seq < ? ORDER BY seq DESC LIMIT ?",
        before ?? Number.MAX_SAFE_INTEGER,
        limit,
      )
      .toArray()
      .map(toEntry);
  }

  /** Usage grouped by day, model, member, project or session, over [from, to). */
  usage(query: UsageQuery): UsageColumns {
    return usageReport({ exec: (sql, ...bindings) => this.#sql.exec(sql, ...bindings) }, query);
  }

  /**
   * Erasure: replaces a member's id with its pseudonym wherever this account stores it: as a
   * column (usage, holds, alerts, rollups) and inside keys (alert keys, the alert outbox, the daily
   * spend counters `spend:member:<day>:<id>`). Entries and amounts are untouched (financial records
   * are kept), so every total stays the same. Idempotent.
   */
  pseudonymizeMember(memberId: string, pseudonym: string): { rows: number } {
    return this.ctx.storage.transactionSync(() => {
      let rows = 0;
      for (const table of [
        "usage_events",
        "ledger_holds",
        "ledger_alerts",
        "usage_by_dimension",
        "usage_by_session",
      ]) {
        rows += this.#sql.exec(
          `UPDATE ${table} SET member_id = ? WHERE member_id = ?`,
          pseudonym,
          memberId,
        ).rowsWritten;
      }
      for (const [table, column] of [
        ["ledger_alerts", "key"],
        ["alert_outbox", "key"],
        ["ledger_counters", "name"],
      ] as const) {
        rows += this.#sql.exec(
          `UPDATE ${table} SET ${column} = replace(${column}, ?1, ?2) WHERE instr(${column}, ?1) > 0`,
          memberId,
          pseudonym,
        ).rowsWritten;
      }
      return { rows };
    });
  }

  /**
   * The erasure job's verification scan of this account: every table and text column, so a table
   * added later is scanned too. Returns where the identifiers are still found.
   */
  scanFor(needles: string[]): Promise<Finding[]> {
    return scanStore(sqlSource(this.#sql), { needles });
  }

  /** The erasure's scrub of this account: replaces the person's identifiers in every table. */
  scrubFor(replacements: Replacement[]): Promise<number> {
    return scrubStore(sqlSource(this.#sql), replacements, {});
  }

  /** Spend per session for a page of sessions (price charged, summed), for the sessions list. */
  spendBySession(sessionIds: string[]): Record<string, number> {
    if (sessionIds.length === 0) return {};
    const rows = this.#sql
      .exec(
        `SELECT session_id, SUM(price_micros) AS price FROM usage_events
         WHERE session_id IN (${sessionIds.map(() => "?").join(", ")}) GROUP BY session_id`,
        ...sessionIds,
      )
      .toArray();
    return Object.fromEntries(rows.map((row) => [row.session_id as string, row.price as number]));
  }

  /** What one session has spent so far (billable price charged) and how many model calls it made. */
  sessionSpend(sessionId: string): { priceMicros: number; requests: number } {
    const row = this.#sql
      .exec(
        "SELECT COALESCE(SUM(price_micros), 0) AS price, COUNT(*) AS requests FROM usage_events WHERE session_id = ?",
        sessionId,
      )
      .one();
    return { priceMicros: row.price as number, requests: row.requests as number };
  }

  /** Raw usage events in time order, a page at a time (the CSV export streams these). */
  usageRows(query: UsageRowsQuery): UsageRow[] {
    // Keyset on (created_at, request_id): later rows, or rows at the cursor's time with a greater id.
    const after = query.after ?? { createdAt: query.from, requestId: "" };
    const member = query.memberId === undefined ? "" : "AND member_id = ?";
    const bindings: SqlStorageValue[] = [
      query.from,
      after.createdAt,
      after.createdAt,
      after.requestId,
      query.to,
    ];
    if (query.memberId !== undefined) bindings.push(query.memberId);
    bindings.push(query.limit);
    return this.#sql
      .exec(
        `SELECT * FROM usage_events
         WHERE created_at >= ? AND (created_at > ? OR (created_at = ? AND request_id > ?)) AND created_at < ? ${member}
         ORDER BY created_at, request_id LIMIT ?`,
        ...bindings,
      )
      .toArray()
      .map(toUsage);
  }

  /**
   * Usage events newest first, filtered, a page at a time (the activity list). Keyset on
   * (created_at, request_id); each filter has an index led by its column and then created_at.
   */
  activityRows(query: ActivityRowsQuery): UsageRow[] {
    const where = ["created_at >= ?", "created_at < ?"];
    const bindings: SqlStorageValue[] = [query.from, query.to];
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
    return this.#sql
      .exec(
        `SELECT * FROM usage_events WHERE ${where.join(" AND ")}
         ORDER BY created_at DESC, request_id DESC LIMIT ?`,
        ...bindings,
      )
      .toArray()
      .map(toUsage);
  }

  /**
   * Alerts that fired, newest first, with their delivery state; a page of `limit` after `before`
   * (the last alert of the previous page). Keyset on (fired_at, key): keys are unique.
   */
  alerts(limit = 100, before?: { firedAt: number; key: string }): AlertDelivery[] {
    return this.#sql
      .exec(
        `SELECT a.*, o.attempts AS outbox_attempts, o.delivered_at AS outbox_delivered_at,
           o.parked_reason AS outbox_parked_reason
         FROM ledger_alerts a LEFT JOIN alert_outbox o ON o.key = a.key
         WHERE ?1 IS NULL OR a.fired_at < ?1 OR (a.fired_at = ?1 AND a.key < ?2)
         ORDER BY a.fired_at DESC, a.key DESC LIMIT ?3`,
        before?.firedAt ?? null,
        before?.key ?? "",
        limit,
      )
      .toArray()
      .map((row) => ({
        ...toAlert(row),
        attempts: (row.outbox_attempts as number | null) ?? 0,
        deliveredAt: (row.outbox_delivered_at as number | null) ?? null,
        parkedReason: (row.outbox_parked_reason as string | null) ?? null,
      }));
  }

  /** The reconciliation check: cached balance equals the sum of entries, held equals open holds. */
  reconcile() {
    return this.#ledger.reconcile();
  }

  /** Queues alerts for delivery; true when anything was queued. */
  #queueAlerts(alerts: readonly AlertRow[], now: number): boolean {
    if (alerts.length === 0 || !this.settings().alertWebhookUrl) return false;
    for (const alert of alerts) {
      this.#sql.exec(
        "INSERT INTO alert_outbox (key, next_attempt_at) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
        alert.key,
        now,
      );
    }
    return true;
  }

  /**
   * One alarm serves both jobs: voiding expired holds and delivering queued alerts. It is only ever
   * set in the future, for work that can be done: a hold that will expire, or an alert that is due
   * and deliverable (parked and spent rows never count), so an idle account never spins.
   */
  async #scheduleAlarm(now: number): Promise<void> {
    const holds = this.#sql
      .exec("SELECT MIN(expires_at) AS at FROM ledger_holds WHERE status = 'open'")
      .one().at as number | null;
    const outbox = this.#sql
      .exec(
        `SELECT MIN(next_attempt_at) AS at FROM alert_outbox
         WHERE delivered_at IS NULL AND parked_at IS NULL AND attempts < ?`,
        ALERT_ATTEMPTS,
      )
      .one().at as number | null;
    const next = [holds, outbox].filter((t): t is number => t !== null);
    if (next.length === 0) return;
    await this.#alarmBy(Math.max(Math.min(...next), now + MIN_ALARM_GAP_MS));
  }

  /** Makes sure the alarm fires by `at` (one storage write only when it must move earlier). */
  async #alarmBy(at: number): Promise<void> {
    if (this.#alarmAt === undefined) this.#alarmAt = await this.ctx.storage.getAlarm();
    if (this.#alarmAt === null || this.#alarmAt > at) {
      this.#alarmAt = at;
      await this.ctx.storage.setAlarm(at);
    }
  }

  override async alarm(): Promise<void> {
    // The alarm that is running is gone; the next one is set below if anything is pending.
    this.#alarmAt = null;
    const now = Date.now();
    this.#ledger.expire(now);
    await this.#deliverAlerts(now);
    await this.#scheduleAlarm(Date.now());
  }

  /**
   * Parks the undelivered alerts that can no longer be delivered, with the reason: they stay listed
   * (with the reason) and are never tried again, so nothing waits on them.
   */
  #park(reason: string, now: number, key?: string): void {
    this.#sql.exec(
      `UPDATE alert_outbox SET parked_at = ?, parked_reason = ?
       WHERE delivered_at IS NULL AND parked_at IS NULL ${key === undefined ? "" : "AND key = ?"}`,
      now,
      reason,
      ...(key === undefined ? [] : [key]),
    );
  }

  async #deliverAlerts(now: number): Promise<void> {
    const url = this.settings().alertWebhookUrl;
    if (!url) {
      this.#park("the alert webhook URL was removed", now);
      return;
    }
    // Checked again before each delivery: a URL saved before a rule changed is not trusted either.
    const allowed = checkWebhookUrl(url, this.env.ALERT_WEBHOOK_ALLOW_PRIVATE ?? "");
    if (!allowed.ok) {
      this.#park(`the alert webhook URL is refused: it ${allowed.reason}`, now);
      return;
    }
    const orgId = this.#settingsRow()?.org_id as string;
    const due = this.#sql
      .exec(
        `SELECT key, attempts FROM alert_outbox
         WHERE delivered_at IS NULL AND parked_at IS NULL AND attempts < ? AND next_attempt_at <= ? LIMIT 20`,
        ALERT_ATTEMPTS,
        now,
      )
      .toArray();
    // Claim the batch before the first await: an alarm retried or run twice meanwhile skips these
    // rows instead of delivering them a second time.
    for (const row of due) {
      this.#sql.exec(
        "UPDATE alert_outbox SET next_attempt_at = ? WHERE key = ?",
        now + DELIVERY_LEASE_MS,
        row.key,
      );
    }
    for (const row of due) {
      const alert = this.#store.getAlert(row.key as string);
      if (!alert) {
        this.#park("the alert no longer exists", now, row.key as string);
        continue;
      }
      const attempts = (row.attempts as number) + 1;
      // Additive since 2026-12-01: the sentence and the readable period; `period` stays the key.
      const body = JSON.stringify({
        type: "billing.alert",
        orgId,
        alert: { ...alert, message: alertMessage(alert), periodLabel: alertPeriodLabel(alert) },
      });
      let delivered = false;
      try {
        const response = await fetch(url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "parley-signature": await signAlert(this.env.ALERT_WEBHOOK_SECRET, body, now),
          },
          body,
          // A redirect could lead anywhere, a private address included: delivery stops at the URL.
          redirect: "manual",
        });
        delivered = response.ok;
      } catch {
        delivered = false;
      }
      this.#sql.exec(
        "UPDATE alert_outbox SET attempts = ?, delivered_at = ?, next_attempt_at = ? WHERE key = ?",
        attempts,
        delivered ? Date.now() : null,
        now + 1000 * 2 ** attempts,
        alert.key,
      );
      if (!delivered && attempts >= ALERT_ATTEMPTS) {
        this.#park(`gave up after ${attempts} failed deliveries`, now, alert.key);
      }
    }
  }
}
