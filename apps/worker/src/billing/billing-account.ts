import { DurableObject } from "cloudflare:workers";
import {
  type ActivityRowsQuery,
  type AlertDelivery,
  type Allowance,
  type AutoTopUpSettings,
  type AutoTopUpState,
  activityRows,
  type Balance,
  type BillingSettings,
  CreditLedger,
  type EndUserLimits,
  type Forecast,
  type LeaseResult,
  type LimitRule,
  type PaymentReversals,
  type PrincipalLimit,
  type ReleaseResult,
  type ReserveResult,
  type SavedCard,
  type SettleResult,
  type StripeAutoTopUpFailedAction,
  type StripeCreditAction,
  type StripeReversalAction,
  sessionSpend,
  spendBySession,
  toEntry,
  type UsageColumns,
  type UsageRow,
  type UsageRowsQuery,
  usageReport,
  usageRows,
} from "@parley/billing";
import type { Grant } from "@parley/shared";
import { type Finding, scanStore, scrubStore, sqlSource } from "../erasure/scan.ts";
import type { Replacement } from "../erasure/scrub.ts";
import { pseudonymizeMember } from "./account-erasure.ts";
import { type AccountParts, accountParts, ledgerConfig } from "./account-parts.ts";
import type {
  LeaseRequest,
  ReserveRequest,
  SettleRequest,
  StripeApplyResult,
  UsageQuery,
} from "./account-requests.ts";
import type { ConfigureResult } from "./auto-top-up.ts";
import type { AccountGrants, OperatorGrantOutcome } from "./grants.ts";

export {
  type ActivityRowsQuery,
  type AlertDelivery,
  type BillingSettings,
  type UsageColumns,
  type UsageRowsQuery,
  usageGroups,
} from "@parley/billing";

type Summary = Balance & { settings: BillingSettings; forecast: Forecast; grants: Grant[] };

const DEFAULT_HOLD_TTL_MS = 10 * 60 * 1000;

/**
 * One organization's credits: the single writer of its append-only ledger (name = org id).
 *
 * Every ledger method is synchronous SQLite work with no `await` inside, so each RPC call runs
 * start to finish before the next one starts: a reservation's balance check and its write cannot be
 * interleaved by another session's reservation. Mutations run in one `transactionSync`.
 */
export class BillingAccount extends DurableObject<Env> {
  /** Its stores, alarm, webhook, grants, automatic top-up and lease holders (account-parts.ts). */
  readonly #parts: AccountParts;
  #ledger: CreditLedger;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#parts = accountParts(ctx, env, () => this.#ledger);
    this.#ledger = new CreditLedger(this.#parts.store, ledgerConfig(this.#parts));
  }

  /**
   * Opens the account for an org: records its id and posts the sign-up grant, once (the grant's
   * idempotency key is fixed; a later call's other expiry is a refused replay). `grantDays` gives
   * the grant an expiry. Safe to call again; returns the balance.
   */
  async open(input: { orgId: string; grantMicros: number; grantDays?: number | null }) {
    const now = Date.now();
    const expiresAt = input.grantDays ? now + input.grantDays * 86_400_000 : null;
    const posted = this.ctx.storage.transactionSync(() => {
      this.#parts.account.open(input.orgId);
      if (input.grantMicros <= 0) return false;
      const result = this.#ledger.post({
        kind: "grant",
        amountMicros: input.grantMicros,
        idempotencyKey: "signup-grant",
        memo: "Sign-up grant",
        now,
        grant: { source: "signup", expiresAt },
      });
      return result.ok && !result.replayed;
    });
    if (posted && expiresAt !== null) await this.#parts.alarm.fireBy(expiresAt);
    return this.#ledger.balance();
  }

  async balance(): Promise<Balance & { settings: BillingSettings }> {
    await this.#collect();
    return { ...this.#ledger.balance(), settings: this.settings() };
  }

  /** The balance, the settings, how long it lasts and its grants (the billing page's summary). */
  async summary(): Promise<Summary> {
    const balance = await this.balance();
    const now = Date.now();
    return {
      ...balance,
      forecast: this.#ledger.forecast(now),
      grants: this.#parts.grants.list(now),
    };
  }

  /** A platform operator's promotion grant (routes/operator.ts); its expiry sets the alarm. */
  async promote(input: Parameters<AccountGrants["promote"]>[0]): Promise<OperatorGrantOutcome> {
    const now = Date.now();
    const result = this.ctx.storage.transactionSync(() => this.#parts.grants.promote(input, now));
    if (result.ok && result.lot.expiresAt !== null)
      await this.#parts.alarm.fireBy(result.lot.expiresAt);
    return result;
  }

  /** Sets the monthly allowance (the operator's): this period's grant posts now, once. */
  async setAllowance(allowance: Allowance): Promise<{ nextRenewalAt: number | null }> {
    const now = Date.now();
    const result = this.ctx.storage.transactionSync(() =>
      this.#parts.grants.setAllowance(allowance, now),
    );
    if (result.nextRenewalAt !== null) await this.#parts.alarm.fireBy(result.nextRenewalAt);
    return result;
  }

  settings(): BillingSettings {
    return this.#parts.account.settings();
  }

  async updateSettings(orgId: string, patch: Partial<BillingSettings>): Promise<BillingSettings> {
    const before = this.settings();
    const next = { ...before, ...patch };
    this.#parts.account.writeSettings(orgId, next);
    this.#ledger = new CreditLedger(this.#parts.store, ledgerConfig(this.#parts));
    const current = this.settings();
    if (
      current.orgMonthlyLimitMicros !== before.orgMonthlyLimitMicros ||
      current.memberDailyLimitMicros !== before.memberDailyLimitMicros
    ) {
      this.ctx.waitUntil(this.#parts.leaseHolders.revoke());
    }
    // A threshold the balance is already under (a low-balance alert set above it, a limit already
    // passed) fires now, not at the next model call: the person who set it expects to hear.
    const now = Date.now();
    if (this.#parts.webhook.queue(this.#ledger.checkAlerts(now), now)) {
      await this.#parts.alarm.fireBy(now);
    }
    return next;
  }

  /**
   * A limit held outside this account changed (an app's per-end-user limits): every lease is
   * returned, so the next grants are sized under the new limits.
   */
  async limitsChanged(): Promise<void> {
    await this.#parts.leaseHolders.revoke();
  }

  /** Every limit on one member or project. */
  limitRules(): LimitRule[] {
    return this.#parts.rules.list();
  }

  /**
   * Sets (an amount) or removes (null) one limit on a member or project. Leases are returned as
   * when a setting changes, so the next grants are sized under it.
   */
  setLimitRule(
    rule: Omit<LimitRule, "amountMicros" | "updatedAt"> & { amountMicros: number | null },
  ): LimitRule[] {
    this.#parts.rules.put(rule, Date.now());
    this.ctx.waitUntil(this.#parts.leaseHolders.revoke());
    return this.#parts.rules.rulesFor(rule.subject, rule.subjectId).slice();
  }

  /** Removes every limit of these (erased) projects; idempotent. */
  dropProjectLimits(projectIds: string[]): void {
    this.#parts.rules.dropSubjects("project", projectIds);
  }

  /** The limits on a principal's calls in a project, spent so far and when each resets. */
  async limitStatus(input: {
    memberId: string;
    projectId: string | null;
    endUserLimits?: EndUserLimits;
  }): Promise<(PrincipalLimit & { resetsAt: number })[]> {
    await this.#collect();
    return this.#ledger.limitStatus({ ...input, now: Date.now() });
  }

  /** Before a read of usage or balance: the lease holders report first (`LeaseHolders.collect`). */
  #collect(): Promise<void> {
    return this.#parts.leaseHolders.collect();
  }

  /**
   * Admits one free preview turn against the org's daily cap (UTC day), counting it when admitted.
   * The preview is free for the org, so this is a count, not money.
   */
  admitPreviewTurn(cap: number): { ok: boolean; used: number } {
    return this.#parts.account.admitPreviewTurn(new Date().toISOString().slice(0, 10), cap);
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
        ...(input.endUserLimits ? { endUserLimits: input.endUserLimits } : {}),
      });
    let result = reserve();
    if (
      !result.ok &&
      result.reason !== "conflict" &&
      this.#parts.leaseHolders.holding(input.sessionId).length
    ) {
      // Credits may sit unused in other sessions' leases: they are taken back, and the call tried
      // once more, so a call is refused only when the org cannot afford it.
      await this.#parts.leaseHolders.revoke(input.sessionId);
      result = reserve();
    }
    const now = Date.now();
    const queued = "alerts" in result && this.#parts.webhook.queue(result.alerts, now);
    // Only new work can need an earlier alarm: the new hold's expiry, or alerts just queued.
    if (result.ok && !result.replayed) await this.#parts.alarm.fireBy(result.hold.expiresAt);
    if (queued || (result.ok && this.#parts.autoTopUp.check(now)))
      await this.#parts.alarm.fireBy(now);
    return result;
  }

  /** Settles a request to what the provider charged, exactly once per request id. */
  async settle(input: SettleRequest): Promise<SettleResult> {
    const now = Date.now();
    const result = this.#ledger.settle({ ...input, now });
    // A settle only removes work, unless it fired alerts to deliver or a top-up to ask for.
    if (
      result.ok &&
      (this.#parts.webhook.queue(result.alerts, now) || this.#parts.autoTopUp.check(now))
    ) {
      await this.#parts.alarm.fireBy(now);
    }
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
      this.#parts.leaseHolders.seen(input.sessionId, now);
    } else if (result.ok) {
      this.#parts.leaseHolders.forget(input.sessionId);
    }
    if (!result.ok) return result;
    const queued = this.#parts.webhook.queue(result.alerts, now);
    if (result.lease) await this.#parts.alarm.fireBy(result.lease.expiresAt);
    if (queued || this.#parts.autoTopUp.check(now)) await this.#parts.alarm.fireBy(now);
    return result;
  }

  release(requestId: string): ReleaseResult {
    return this.#ledger.release(requestId, Date.now());
  }

  /**
   * Applies a verified Stripe event's credit (account-stripe.ts). The event id is recorded in the
   * same transaction as the credit, so a redelivered event is a no-op, and the action's own
   * idempotency key makes two different events for one payment credit it once. An automatic
   * top-up is credited only if this account's charge recorded its PaymentIntent.
   */
  applyStripeEvent(
    event: { id: string; type: string },
    action: StripeCreditAction,
  ): Promise<StripeApplyResult> {
    return this.#parts.stripe.credit(event, action, Date.now());
  }

  /**
   * A refund or dispute of one of this org's payments, `paidMicros` being what the payment
   * credited: the payment's reversals together take at most that (packages/billing reversals.ts).
   */
  applyStripeReversal(
    event: { id: string; type: string },
    action: StripeReversalAction & { paymentIntentId: string },
    paidMicros: number,
  ): Promise<{ status: "applied" | "duplicate"; reversals: PaymentReversals }> {
    return this.#parts.stripe.reversal(event, action, paidMicros, Date.now());
  }

  /** Automatic top-up (auto-top-up.ts): settings, the saved card, a pause, the latest charges. */
  autoTopUp(): AutoTopUpState {
    return this.#parts.autoTopUp.state(Date.now());
  }

  configureAutoTopUp(settings: AutoTopUpSettings): Promise<ConfigureResult> {
    return this.#parts.autoTopUp.configureNow(settings, Date.now());
  }

  /** A card saved through Checkout in setup mode (the verified webhook): it replaces the last. */
  saveCard(card: SavedCard): Promise<void> {
    return this.#parts.autoTopUp.saveCardNow(card, Date.now());
  }

  removeCard(): AutoTopUpState {
    return this.#parts.autoTopUp.removeCardNow(Date.now());
  }

  /**
   * The webhook said an automatic top-up failed: if it is a charge of ours, it pauses and the
   * alert goes out.
   */
  autoTopUpFailed(
    action: StripeAutoTopUpFailedAction,
  ): Promise<"applied" | "pending" | "unrecognized"> {
    return this.#parts.autoTopUp.failedNow(action, Date.now());
  }

  /** Ledger entries, newest first, each with its grant; `before`: the previous page's last seq. */
  async entries(
    before: number | null,
    limit: number,
  ): Promise<ReturnType<AccountGrants["annotate"]>> {
    await this.#collect();
    const rows = this.#parts.sql
      .exec(
        "SELECT * FROM ledger_entries WHERE seq < ? ORDER BY seq DESC LIMIT ?",
        before ?? Number.MAX_SAFE_INTEGER,
        limit,
      )
      .toArray()
      .map(toEntry);
    return this.#parts.grants.annotate(rows);
  }

  /** Usage grouped by day, model, member, project or session, over [from, to). */
  async usage(query: UsageQuery): Promise<UsageColumns> {
    await this.#collect();
    return usageReport(this.#parts.exec, query);
  }

  /**
   * Erasure: replaces a member's id with its pseudonym wherever this account stores it
   * (account-erasure.ts). Entries and amounts are untouched, so every total stays the same.
   */
  pseudonymizeMember(memberId: string, pseudonym: string): { rows: number } {
    return this.ctx.storage.transactionSync(() =>
      pseudonymizeMember(this.#parts.sql, memberId, pseudonym),
    );
  }

  /**
   * The erasure job's verification scan of this account: every table and text column, so a table
   * added later is scanned too. Returns where the identifiers are still found.
   */
  scanFor(needles: string[]): Promise<Finding[]> {
    return scanStore(sqlSource(this.#parts.sql), { needles });
  }

  /** The erasure's scrub of this account: replaces the person's identifiers in every table. */
  async scrubFor(replacements: Replacement[]): Promise<number> {
    const scrubbed = await scrubStore(sqlSource(this.#parts.sql), replacements, {});
    // A limit on an erased member or project now names its pseudonym: read them again.
    this.#parts.rules.reload();
    return scrubbed;
  }

  /** Spend per session for a page of sessions (price charged, summed), for the sessions list. */
  async spendBySession(sessionIds: string[]): Promise<Record<string, number>> {
    await this.#collect();
    return spendBySession(this.#parts.exec, sessionIds);
  }

  /** What one session has spent so far (billable price charged) and how many model calls it made. */
  async sessionSpend(sessionId: string): Promise<{ priceMicros: number; requests: number }> {
    await this.#collect();
    return sessionSpend(this.#parts.exec, sessionId);
  }

  /** Raw usage events in time order, a page at a time (the CSV export streams these). */
  async usageRows(query: UsageRowsQuery): Promise<ReturnType<AccountGrants["usage"]>> {
    // The first page asks the lease holders; later pages continue from the same moment.
    if (query.after === undefined) await this.#collect();
    return this.#parts.grants.usage(usageRows(this.#parts.exec, query));
  }

  /** Usage events newest first, filtered, a page at a time (the activity list). */
  async activityRows(query: ActivityRowsQuery): Promise<UsageRow[]> {
    if (query.before === undefined) await this.#collect();
    return activityRows(this.#parts.exec, query);
  }

  /**
   * Alerts that fired, newest first, with their delivery state; a page of `limit` after `before`
   * (the last alert of the previous page).
   */
  alerts(limit = 100, before?: { firedAt: number; key: string }): AlertDelivery[] {
    return this.#parts.outbox.list(limit, before);
  }

  /** The reconciliation check: cached balance equals the sum of entries, held equals open holds. */
  reconcile() {
    return this.#ledger.reconcile();
  }

  override async alarm(): Promise<void> {
    // The alarm that is running is gone; the next one is set below if anything is pending.
    this.#parts.alarm.fired();
    const now = Date.now();
    this.#ledger.expire(now);
    // Grants that are due expire, and the allowance renews, each exactly once (grants.ts).
    const granted = this.ctx.storage.transactionSync(() => this.#parts.grants.run(now));
    this.#parts.webhook.queue(granted, now);
    // Automatic top-ups due: asked of Stripe here, never in a turn; a failure alerts.
    this.#parts.webhook.queue(await this.#parts.autoTopUp.run(now), Date.now());
    await this.#parts.webhook.deliver(now);
    await this.#parts.alarm.rearm(Date.now());
  }
}
