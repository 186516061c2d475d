import { DurableObject } from "cloudflare:workers";
import {
  AccountStore,
  type ActivityRowsQuery,
  type AlertDelivery,
  AlertOutbox,
  type AlertRow,
  activityRows,
  alertMessage,
  alertPeriodLabel,
  applyStripeAction,
  type Balance,
  type BillingSettings,
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
  type SqlExecutor,
  SqlLedgerStore,
  type StripeLedgerAction,
  sessionSpend,
  spendBySession,
  toEntry,
  type UsageColumns,
  type UsageReportQuery,
  type UsageRow,
  type UsageRowsQuery,
  usageReport,
  usageRows,
} from "@parley/billing";
import { agentSettings } from "../env.ts";
import { type Finding, scanStore, scrubStore, sqlSource } from "../erasure/scan.ts";
import type { Replacement } from "../erasure/scrub.ts";
import { signAlert } from "./alert-signature.ts";
import { checkWebhookUrl } from "./webhook-url.ts";

export {
  type ActivityRowsQuery,
  type AlertDelivery,
  type BillingSettings,
  type UsageColumns,
  type UsageRowsQuery,
  usageGroups,
} from "@parley/billing";

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

/** A usage report's query; `memberId` restricts it to one member (what a plain member may see). */
export type UsageQuery = UsageReportQuery;

export type StripeApplyResult = { status: "duplicate" } | { status: "applied"; result: PostResult };

/** How long a read waits for lease holders to report. */
const COLLECT_WAIT_MS = 2_000;

const DEFAULT_HOLD_TTL_MS = 10 * 60 * 1000;

/**
 * The soonest an alarm re-arms after it ran: whatever is pending, the next run is in the future, so
 * no state of the outbox or the holds can make the alarm fire in a loop.
 */
const MIN_ALARM_GAP_MS = 1_000;

/**
 * One organization's credits: the single writer of its append-only ledger (name = org id).
 *
 * Every ledger method is synchronous SQLite work with no `await` inside, so each RPC call runs
 * start to finish before the next one starts: a reservation's balance check and its write cannot be
 * interleaved by another session's reservation. Mutations run in one `transactionSync`.
 */
export class BillingAccount extends DurableObject<Env> {
  readonly #sql: SqlStorage;
  /** The object's SQLite as the package's queries take it. */
  readonly #exec: Pick<SqlExecutor, "exec">;
  /** Settings, Stripe events applied, preview turns. */
  readonly #account: AccountStore;
  readonly #store: SqlLedgerStore;
  readonly #outbox: AlertOutbox;
  #ledger: CreditLedger;
  /** The alarm time as last read or set: saves a storage read per reservation. */
  #alarmAt: number | null | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    this.#exec = { exec: (query, ...bindings) => this.#sql.exec(query, ...bindings) };
    for (const statement of LEDGER_SQLITE_SCHEMA) this.#sql.exec(statement);
    this.#account = new AccountStore(this.#exec);
    this.#account.migrate();
    // Usage summed per UTC day for the groupings (packages/billing/src/usage-rollups.ts).
    createUsageRollups(this.#exec);
    // Alerts to deliver to the org's webhook: an outbox drained by the alarm, with retries.
    this.#outbox = new AlertOutbox(this.#exec);
    this.#outbox.migrate();
    // The sessions that leased lately, for a read to ask what they have not reported yet.
    this.#sql.exec(
      "CREATE TABLE IF NOT EXISTS lease_sessions (session_id TEXT PRIMARY KEY, seen_at INTEGER NOT NULL)",
    );
    let depth = 0;
    this.#store = new SqlLedgerStore({
      ...this.#exec,
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

  #ledgerConfig(): Partial<LedgerConfig> {
    const { orgMonthlyLimitMicros, memberDailyLimitMicros, lowBalanceMicros } = this.settings();
    return { orgMonthlyLimitMicros, memberDailyLimitMicros, lowBalanceMicros };
  }

  /**
   * Opens the account for an org: records its id and posts the sign-up grant, once (the grant's
   * idempotency key is fixed). Safe to call again; returns the balance.
   */
  open(input: { orgId: string; grantMicros: number }): Balance {
    this.ctx.storage.transactionSync(() => {
      this.#account.open(input.orgId);
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

  async balance(): Promise<Balance & { settings: BillingSettings }> {
    await this.#collect();
    return { ...this.#ledger.balance(), settings: this.settings() };
  }

  settings(): BillingSettings {
    return this.#account.settings();
  }

  updateSettings(orgId: string, patch: Partial<BillingSettings>): BillingSettings {
    const before = this.settings();
    const next = { ...before, ...patch };
    this.#account.writeSettings(orgId, next);
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
    const sessions = await this.#liveLeaseHolders(except);
    await Promise.allSettled(sessions.map((session) => session.dropLease()));
  }

  /**
   * The sessions holding an open lease (but `except`), or with `recent`, every session that leased
   * within a lease's lifetime (its last calls may still wait to be reported), as stubs; erased
   * ones are never addressed.
   */
  async #liveLeaseHolders(except: string | null = null, recent = false) {
    const sessions = recent
      ? this.#sql
          .exec(
            "SELECT session_id FROM lease_sessions WHERE seen_at > ?",
            Date.now() - agentSettings(this.env).lease.policy.ttlMs,
          )
          .toArray()
          .map((row) => row.session_id as string)
      : this.#leaseHolders(except);
    if (sessions.length === 0) return [];
    const { results } = await this.env.DB.prepare(
      `SELECT subject_id FROM tombstones WHERE subject_id IN (${sessions.map(() => "?").join(", ")})`,
    )
      .bind(...sessions)
      .all<{ subject_id: string }>();
    const erased = new Set(results.map((row) => row.subject_id));
    const agents = this.env.ASSISTANT_AGENT;
    return sessions.filter((id) => !erased.has(id)).map((id) => agents.get(agents.idFromName(id)));
  }

  /**
   * Before a read of the org's usage or balance: every session that leased within a lease's
   * lifetime reports what it drew and has not reported yet (sessions report with their renewals,
   * not at each call), so the read sees every call settled before it arrived. A read joins the
   * round that starts next (reads that come together share one); one in flight that started
   * before the read is not enough. A session that does not answer within 2 s is not waited for:
   * its calls come with its next renewal or return.
   */
  async #collect(): Promise<void> {
    if (this.#nextRound === null) {
      const previous = this.#round ?? Promise.resolve();
      const round: Promise<void> = previous.then(() => {
        this.#round = round;
        this.#nextRound = null;
        return this.#askLeaseHolders();
      });
      this.#nextRound = round;
      void round.finally(() => {
        if (this.#round === round) this.#round = null;
      });
    }
    await this.#nextRound;
  }

  async #askLeaseHolders(): Promise<void> {
    try {
      const sessions = await this.#liveLeaseHolders(null, true);
      if (sessions.length === 0) return;
      const timeout = new Promise((resolve) => setTimeout(resolve, COLLECT_WAIT_MS));
      await Promise.race([Promise.allSettled(sessions.map((s) => s.reportUsage())), timeout]);
    } catch {
      // D1 unreachable: the read shows what was reported so far.
    }
  }

  /** The round of reports in flight, and the one that the reads arriving now wait for. */
  #round: Promise<void> | null = null;
  #nextRound: Promise<void> | null = null;

  /**
   * Admits one free preview turn against the org's daily cap (UTC day), counting it when admitted.
   * The preview is free for the org, so this is a count, not money.
   */
  admitPreviewTurn(cap: number): { ok: boolean; used: number } {
    return this.#account.admitPreviewTurn(new Date().toISOString().slice(0, 10), cap);
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
    // Who may hold calls back: a read asks them for what they have not reported (`#collect`). A
    // session whose lease closed with no call in flight holds nothing back: it is not asked.
    if (result.ok && (result.lease !== null || input.keepMicros > 0)) {
      this.#sql.exec(
        "INSERT INTO lease_sessions (session_id, seen_at) VALUES (?, ?) ON CONFLICT (session_id) DO UPDATE SET seen_at = excluded.seen_at",
        input.sessionId,
        now,
      );
    } else if (result.ok) {
      this.#sql.exec("DELETE FROM lease_sessions WHERE session_id = ?", input.sessionId);
    }
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
      if (this.#account.stripeEventSeen(event.id)) return { status: "duplicate" };
      const result = applyStripeAction(this.#ledger, action, now);
      this.#account.recordStripeEvent(event, now);
      if (result.ok) this.#queueAlerts(result.alerts, now);
      return { status: "applied", result };
    });
  }

  /** Ledger entries, newest first; `before` is the seq of the last entry of the previous page. */
  async entries(before: number | null, limit: number): Promise<EntryRow[]> {
    await this.#collect();
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
  async usage(query: UsageQuery): Promise<UsageColumns> {
    await this.#collect();
    return usageReport(this.#exec, query);
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
  async spendBySession(sessionIds: string[]): Promise<Record<string, number>> {
    await this.#collect();
    return spendBySession(this.#exec, sessionIds);
  }

  /** What one session has spent so far (billable price charged) and how many model calls it made. */
  async sessionSpend(sessionId: string): Promise<{ priceMicros: number; requests: number }> {
    await this.#collect();
    return sessionSpend(this.#exec, sessionId);
  }

  /** Raw usage events in time order, a page at a time (the CSV export streams these). */
  async usageRows(query: UsageRowsQuery): Promise<UsageRow[]> {
    // The first page asks the lease holders; later pages continue from the same moment.
    if (query.after === undefined) await this.#collect();
    return usageRows(this.#exec, query);
  }

  /** Usage events newest first, filtered, a page at a time (the activity list). */
  async activityRows(query: ActivityRowsQuery): Promise<UsageRow[]> {
    if (query.before === undefined) await this.#collect();
    return activityRows(this.#exec, query);
  }

  /**
   * Alerts that fired, newest first, with their delivery state; a page of `limit` after `before`
   * (the last alert of the previous page).
   */
  alerts(limit = 100, before?: { firedAt: number; key: string }): AlertDelivery[] {
    return this.#outbox.list(limit, before);
  }

  /** The reconciliation check: cached balance equals the sum of entries, held equals open holds. */
  reconcile() {
    return this.#ledger.reconcile();
  }

  /** Queues alerts for delivery; true when anything was queued. */
  #queueAlerts(alerts: readonly AlertRow[], now: number): boolean {
    if (alerts.length === 0 || !this.settings().alertWebhookUrl) return false;
    this.#outbox.queue(alerts, now);
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
    const outbox = this.#outbox.nextAttemptAt();
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

  async #deliverAlerts(now: number): Promise<void> {
    const url = this.settings().alertWebhookUrl;
    if (!url) {
      this.#outbox.park("the alert webhook URL was removed", now);
      return;
    }
    // Checked again before each delivery: a URL saved before a rule changed is not trusted either.
    const allowed = checkWebhookUrl(url, this.env.ALERT_WEBHOOK_ALLOW_PRIVATE ?? "");
    if (!allowed.ok) {
      this.#outbox.park(`the alert webhook URL is refused: it ${allowed.reason}`, now);
      return;
    }
    const orgId = this.#account.orgId();
    // Claim the batch before the first await: an alarm retried or run twice meanwhile skips these
    // rows instead of delivering them a second time.
    const due = this.#outbox.claimDue(now);
    for (const row of due) {
      const alert = this.#store.getAlert(row.key);
      if (!alert) {
        this.#outbox.park("the alert no longer exists", now, row.key);
        continue;
      }
      // Additive since 2026-12-01: the sentence and the readable period; `period` stays the key.
      const body = JSON.stringify({
        type: "billing.alert",
        orgId,
        alert: { ...alert, message: alertMessage(alert), periodLabel: alertPeriodLabel(alert) },
      });
      let deliveredAt: number | null = null;
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
        if (response.ok) deliveredAt = Date.now();
      } catch {
        // A network failure is a failed attempt, retried with backoff.
      }
      this.#outbox.recordAttempt(row, deliveredAt, now);
    }
  }
}
