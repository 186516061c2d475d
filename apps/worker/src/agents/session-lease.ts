import {
  afterReport,
  canDraw,
  type EndUserLimits,
  type LeaseResult,
  type LeaseUsage,
  leaseAsk,
  leaseId,
  nextExpectedCall,
  shouldRenew,
} from "@parley/billing";
import { isEndUserId } from "@parley/shared";
import { billingAccount } from "../billing/account.ts";
import { agentSettings } from "../env.ts";
import { type LeaseHost, type LeaseOwner, type LeaseRow, readLeaseRow } from "./lease-row.ts";

export type { LeaseHost, LeaseOwner } from "./lease-row.ts";

/**
 * A session's credit lease, its side (docs/2026-12-01-metering-leases.md): the grant the org's
 * BillingAccount made and what was drawn on it since, kept durably in the agent's SQLite
 * (`parley_lease`), so a model call is admitted by a local transaction, not a round trip.
 *
 * - A call draws its maximum (`draw`), in the same transaction as its step row; once priced,
 *   the draw becomes its price and the usage waits in `parley_pending_usage` under the lease id.
 * - Usage is reported in batches (`report`): a moment after a call settles (`flushMs`), with a
 *   renewal when the lease runs low or old (in the background), and with the return of the lease
 *   when the session idles (`idleMs`), is erased, or is told a limit changed (`dropLease`).
 * - A lease the account closed (returned, expired, refused) is never asked for again: the next
 *   one has the next number. Without a lease a call falls back to a hold of its own.
 */
export class SessionLease {
  readonly #host: LeaseHost;
  /** The report on its way, if any: reports go one at a time. */
  #reporting: Promise<void> | null = null;
  /** A report of waiting usage is scheduled (`flushMs` after the first call that waits). */
  #flushArmed = false;
  /** The idle check is scheduled (`idleCheck`, `idleMs` after the last call). */
  #idleArmed = false;
  /** When the last call drew (the draw also writes it, for a check after a reset or an eviction). */
  #lastTurnAt = 0;
  /** What a call of `#model` (the last draw's) has cost lately, an average: sizes the ask. */
  #expectedMicros: number | null = null;
  #model: string | null = null;
  /** The last call's maximum: sizes a renewal made off a call's path. */
  #maxSeen: number | null = null;
  /**
   * `parley_lease` as last read or written, so a steady draw reads no SQL (the profile showed the
   * row read twice per call, each statement also a span). Only this class writes the table and the
   * object runs one thing at a time; every write but the draw's and a settle's drops it, and a reset
   * (or an erasure, `stop`) starts without it.
   */
  #cached: LeaseRow | null | undefined;
  /**
   * The owner's limits as the last draw gave them (an end user's app's limits; undefined for a
   * member). Kept in memory only: after a reset, an end user's lease is not renewed until a call
   * draws again and says them, so no grant is ever sized without them.
   */
  #limits: { endUserLimits: EndUserLimits | undefined } | null = null;

  constructor(host: LeaseHost) {
    this.#host = host;
  }

  get #settings() {
    return agentSettings(this.#host.env).lease;
  }

  /** Whether leases are on (`LEASE_STEPS` > 0). */
  get enabled(): boolean {
    return this.#settings.policy.steps > 0;
  }

  #row(): LeaseRow | null {
    if (this.#cached !== undefined) return this.#cached;
    this.#cached = readLeaseRow(this.#host.sql);
    return this.#cached;
  }

  /**
   * Draws a call's maximum on the lease if it can, asking the account first (one round trip)
   * when there is no lease or too little left; `onDraw` writes the step's row in the same local
   * transaction. Returns the lease id drawn on, or null: then the call needs a hold of its own.
   * A call of another `model` than the last re-sizes the lease (the old model's average says
   * nothing of the new one's: the next ask is sized from this call's maximum); no draw exceeds
   * what is left of the grant, whatever the model (`canDraw`).
   */
  async draw(
    owner: LeaseOwner,
    maxMicros: number,
    onDraw: (leaseId: string) => void,
    model?: string,
  ): Promise<string | null> {
    if (!this.enabled || this.#host.erased()) return null;
    if (model !== undefined && model !== this.#model) {
      if (this.#model !== null) this.#expectedMicros = null;
      this.#model = model;
    }
    this.#touch();
    this.#maxSeen = maxMicros;
    this.#limits = { endUserLimits: owner.endUserLimits };
    const row = this.#row();
    if (row !== null && (row.orgId !== owner.orgId || row.memberId !== owner.memberId)) {
      return null; // not this session's owner: their calls are held one by one
    }
    const { policy } = this.#settings;
    if (!canDraw(row?.lease ?? null, maxMicros, Date.now(), policy)) {
      await this.#report("renew", owner, maxMicros);
    }
    const drawnAt = Date.now();
    const drawn = this.#host.transact(() => {
      const lease = this.#row()?.lease ?? null;
      if (!canDraw(lease, maxMicros, drawnAt, policy)) return null;
      this.#host.sql.exec(
        "UPDATE parley_lease SET drawn_micros = drawn_micros + ?, last_draw_at = ? WHERE id = 1",
        maxMicros,
        drawnAt,
      );
      onDraw(lease.id);
      return { ...lease, drawnMicros: lease.drawnMicros + maxMicros };
    });
    if (drawn === null) return null;
    // Committed with the step's row (the transaction threw otherwise): the kept row follows it.
    const kept = this.#cached;
    if (kept?.lease?.id === drawn.id) this.#cached = { ...kept, lease: drawn, lastDrawAt: drawnAt };
    else this.#cached = undefined;
    if (shouldRenew(drawn, maxMicros, this.#expected(maxMicros), Date.now(), policy)) {
      void this.#host.track(this.#report("renew", undefined, maxMicros)).catch(() => undefined);
    }
    return drawn.id;
  }

  /**
   * A call drawn on `lease` was priced: its price replaces its draw, and its usage waits locally
   * (written by `writePending`, in the same step) for the next report, a moment later.
   */
  settle(lease: string, drawMicros: number, priceMicros: number): void {
    this.#host.sql.exec(
      "UPDATE parley_lease SET drawn_micros = max(0, drawn_micros + ?) WHERE id = 1 AND lease_id = ?",
      priceMicros - drawMicros,
      lease,
    );
    const kept = this.#cached;
    if (kept?.lease?.id === lease) {
      const drawnMicros = Math.max(0, kept.lease.drawnMicros + priceMicros - drawMicros);
      this.#cached = { ...kept, lease: { ...kept.lease, drawnMicros } };
    }
    this.#expectedMicros = nextExpectedCall(this.#expectedMicros, priceMicros);
    this.#flushSoon();
  }

  /** A call drawn on `lease` never went out: its draw goes back. */
  undraw(lease: string, drawMicros: number): void {
    this.#cached = undefined;
    this.#host.sql.exec(
      "UPDATE parley_lease SET drawn_micros = max(0, drawn_micros - ?) WHERE id = 1 AND lease_id = ?",
      drawMicros,
      lease,
    );
  }

  #expected(maxMicros: number): number {
    return this.#expectedMicros ?? maxMicros;
  }

  /** Reports usage waiting under any lease and returns the lease (idle, erased, a limit changed). */
  async returnLease(): Promise<void> {
    await this.#report("return");
  }

  /** Reports usage waiting under any lease, renewing the current lease (none is opened). */
  async flush(): Promise<void> {
    await this.#report("renew");
  }

  /** Whether usage drawn on a lease waits to be reported. */
  hasPending(): boolean {
    return (
      this.#host.sql
        .exec(
          "SELECT 1 FROM parley_pending_usage WHERE lease_id IS NOT NULL AND parked_reason IS NULL LIMIT 1",
        )
        .toArray().length > 0
    );
  }

  /** Replaces a member id with its pseudonym in the lease (erasure), as in the account. */
  rewriteMember(find: string, replace: string): void {
    this.#cached = undefined;
    this.#host.sql.exec("UPDATE parley_lease SET member_id = ? WHERE member_id = ?", replace, find);
  }

  /**
   * A call settled: its usage goes with the next report, which comes with a renewal (every few
   * calls), with the lease's return (idle, erased, a limit changed), when someone reads the org's
   * usage (the account asks every lease holder first: `BillingAccount.#collect`), and at the
   * latest `flushMs` after the first call that waits.
   */
  #flushSoon(): void {
    if (this.#flushArmed || this.#host.erased()) return;
    this.#flushArmed = true;
    // A durable schedule, not a timer (see `#touch`); it also survives an eviction.
    void this.#host.retryLater(Math.ceil(this.#settings.flushMs / 1000)).catch(() => {
      this.#flushArmed = false;
    });
  }

  /**
   * A turn ran: the lease is returned once none has run for `idleMs`, by a durable schedule armed
   * once per idle period, not by a timer set again on every call. A pending timer keeps the event
   * that is running open until the next one arrives, so each turn's event ended inside the next
   * turn, and the runtime's end-of-event work (locally: the trace store writing the whole turn's
   * spans, on the same thread) ran between that turn's draw and its model request. The profile
   * showed the request leaving 5-10 ms late; the bare agent's events end between turns.
   */
  #touch(): void {
    this.#lastTurnAt = Date.now();
    if (!this.#idleArmed) this.#armIdle(this.#lastTurnAt + this.#settings.idleMs);
  }

  #armIdle(due: number): void {
    this.#idleArmed = true;
    // Schedules keep whole seconds: rounded up, a check never wakes before `due`. Keyed by its
    // time, so two checks left by a reset that find the same last call merge into one.
    const at = Math.ceil(due / 1000) * 1000;
    void this.#host.wakeAt(new Date(at), String(at)).catch(() => {
      this.#idleArmed = false;
    });
  }

  /**
   * Scheduled `idleMs` after a call (`returnIdleLease`): returns the lease when no call has drawn
   * on it since, else checks again `idleMs` after the last one.
   */
  async idleCheck(): Promise<void> {
    if (this.#host.erased()) return;
    const last = Math.max(this.#lastTurnAt, this.#row()?.lastDrawAt ?? 0);
    const due = last + this.#settings.idleMs;
    if (due > Date.now()) {
      this.#armIdle(due);
      return;
    }
    this.#idleArmed = false;
    await this.returnLease();
  }

  /**
   * One report at a time: the usage waiting under every lease, each lease in one call. `renew`
   * also asks for a grant for the current lease (with `owner`, a first lease is opened under the
   * next number); `return` gives back all but what calls in flight drew, and the session asks
   * under a new id next time.
   */
  async #report(mode: "renew" | "return", owner?: LeaseOwner, maxMicros?: number): Promise<void> {
    while (this.#reporting !== null) await this.#reporting.catch(() => undefined);
    // This report takes every usage waiting: a call settled after it schedules the next one.
    this.#flushArmed = false;
    const work = this.#reportOnce(mode, owner, maxMicros);
    this.#reporting = work;
    try {
      await work;
    } finally {
      this.#reporting = null;
    }
  }

  async #reportOnce(
    mode: "renew" | "return",
    owner: LeaseOwner | undefined,
    maxMicros: number | undefined,
  ): Promise<void> {
    const { sql } = this.#host;
    if (owner !== undefined) {
      this.#cached = undefined;
      sql.exec(
        `INSERT INTO parley_lease (id, org_id, member_id, project_id, session_id, lease_id, next_n, granted_micros, drawn_micros, expires_at)
         VALUES (1, ?, ?, ?, ?, NULL, 0, 0, 0, 0) ON CONFLICT (id) DO NOTHING`,
        owner.orgId,
        owner.memberId,
        owner.projectId,
        owner.sessionId,
      );
    }
    const row = this.#row();
    if (row === null) return;
    const byLease = new Map<string, LeaseUsage[]>();
    for (const usage of sql
      .exec(
        "SELECT lease_id, payload FROM parley_pending_usage WHERE lease_id IS NOT NULL AND parked_reason IS NULL",
      )
      .toArray()) {
      const list = byLease.get(usage.lease_id as string) ?? [];
      list.push(JSON.parse(usage.payload as string) as LeaseUsage);
      byLease.set(usage.lease_id as string, list);
    }
    let current = row.lease;
    const ids = new Set(byLease.keys());
    if (mode === "return" && current !== null) {
      // No call draws on a lease being returned: the next one asks under a new id.
      ids.add(current.id);
      this.#forget(current.id);
      current = null;
    }
    if (current === null && mode === "renew" && owner !== undefined) {
      this.#cached = undefined;
      current = {
        id: leaseId(row.sessionId, row.nextN),
        grantedMicros: 0,
        drawnMicros: 0,
        expiresAt: 0,
      };
      sql.exec(
        "UPDATE parley_lease SET lease_id = ?, granted_micros = 0, drawn_micros = 0, expires_at = 0 WHERE id = 1",
        current.id,
      );
    }
    if (current !== null) ids.add(current.id);
    const max = maxMicros ?? this.#maxSeen ?? 1;
    const ask = leaseAsk(this.#settings.policy, max, this.#expected(max));
    for (const id of ids) {
      const usages = byLease.get(id) ?? [];
      // An end user's grant is sized under their app's limits: never without them (see #limits).
      const limitsKnown = this.#limits !== null || !isEndUserId(row.memberId);
      const renewing = mode === "renew" && id === current?.id && limitsKnown;
      const endUserLimits = this.#limits?.endUserLimits;
      let result: LeaseResult;
      try {
        result = await billingAccount(this.#host.env, row.orgId).lease({
          leaseId: id,
          memberId: row.memberId,
          ...(endUserLimits ? { endUserLimits } : {}),
          projectId: row.projectId,
          sessionId: row.sessionId,
          usages,
          keepMicros: this.#inFlight(id),
          wantMicros: renewing ? ask.wantMicros : 0,
          minMicros: ask.minMicros,
          ttlMs: this.#settings.policy.ttlMs,
        });
      } catch {
        // Unreachable: the usage stays pending for the schedule, the lease as it was.
        if (!this.#host.erased()) await this.#host.retryLater(10).catch(() => undefined);
        continue;
      }
      if (this.#host.erased()) return;
      this.#applied(id, usages, result);
    }
  }

  /** The draws of calls in flight on `lease` (steps reserved or called, not yet priced). */
  #inFlight(lease: string): number {
    return this.#host.sql
      .exec(
        "SELECT COALESCE(SUM(draw_micros), 0) AS drawn FROM parley_steps WHERE lease_id = ? AND status IN ('reserved', 'called')",
        lease,
      )
      .one().drawn as number;
  }

  /** What the account answered, in one local transaction: reported usage leaves, the grant updates. */
  #applied(lease: string, usages: LeaseUsage[], result: LeaseResult): void {
    const { sql } = this.#host;
    if (!result.ok) {
      for (const usage of usages) this.#host.park(usage.requestId, result.reason);
      this.#forget(lease);
      return;
    }
    let reported = 0;
    for (const settled of result.settled) {
      if (settled.ok) {
        sql.exec("DELETE FROM parley_pending_usage WHERE request_id = ?", settled.requestId);
        const usage = usages.find((one) => one.requestId === settled.requestId);
        if (usage?.billable) reported += usage.priceMicros;
      } else {
        this.#host.park(settled.requestId, settled.reason);
      }
    }
    const row = this.#row();
    if (row?.lease?.id !== lease) return;
    const next = afterReport(row.lease, reported, result.lease);
    if (next === null) {
      this.#forget(lease);
      return;
    }
    this.#cached = undefined;
    sql.exec(
      "UPDATE parley_lease SET granted_micros = ?, drawn_micros = ?, expires_at = ? WHERE id = 1 AND lease_id = ?",
      next.grantedMicros,
      next.drawnMicros,
      next.expiresAt,
      lease,
    );
  }

  /** The account has no open lease under this id: the next call asks under the next number. */
  #forget(lease: string): void {
    this.#cached = undefined;
    this.#host.sql.exec(
      "UPDATE parley_lease SET lease_id = NULL, next_n = next_n + 1, granted_micros = 0, drawn_micros = 0 WHERE id = 1 AND lease_id = ?",
      lease,
    );
  }

  /** Forgets what is kept in memory (erasure: the schedules go with the object's alarms). */
  stop(): void {
    this.#cached = undefined;
    this.#limits = null;
    this.#flushArmed = false;
    this.#idleArmed = false;
  }
}
