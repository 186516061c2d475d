import {
  type EndUserLimits,
  maxCallCostMicros,
  priceCutCall,
  type ReserveResult,
  type SettleInput,
  type SettleResult,
  type StepPrices,
  type TokenUsage,
} from "@parley/billing";
import { billingAccount } from "../billing/account.ts";
import { lookupGenerationCost } from "./model.ts";
import { SessionLease } from "./session-lease.ts";

/** Usage to record on an org's BillingAccount (the settle RPC's input, minus the time). */
export type UsagePayload = Omit<SettleInput, "now">;

/** Whether a call may be made: drawn on the session's lease or held on its own, or refused. */
export type StepAdmission = { ok: true } | Exclude<ReserveResult, { ok: true }>;

/** A step's admission, its id and the prompt estimate it was sized for. */
export interface Reservation {
  holdId: string;
  result: StepAdmission;
  promptEstimate: number;
}

/** What a set of settled steps add up to. */
export interface Settled {
  tokens: TokenUsage;
  priceMicros: number;
  steps: number;
}

/** Who a step is for and how big it may get: what sizes and attributes its hold. */
export interface StepRequest {
  holdId: string;
  orgId: string;
  memberId: string;
  projectId: string | null;
  sessionId: string;
  /** Set when the session is an end user's: their app's limits (the ledger's `EndUserLimits`). */
  endUserLimits?: EndUserLimits;
  promptEstimate: number;
  maxOutputTokens: number;
  prices: StepPrices;
}

/** What metering needs from the agent it runs in. */
export interface MeteringHost {
  readonly sql: SqlStorage;
  readonly env: Cloudflare.Env;
  /** The object was erased: nothing more is written or retried. */
  erased(): boolean;
  /** Runs `fn` as one storage transaction. */
  transact<T>(fn: () => T): T;
  /** Whether a client is connected (else a lease is returned rather than renewed). */
  connected(): boolean;
  /** Schedules the host's `retryPendingUsage` in `seconds` (once, however often asked). */
  retryLater(seconds: number): Promise<unknown>;
  /** Schedules the host's `returnIdleLease` at `at` (`key` once, however often asked). */
  wakeAt(at: Date, key: string): Promise<unknown>;
}

/**
 * A chat agent's money, in one place for both agents: the local tables, each model step's hold,
 * usage that waits locally until the account has it, and what a reset or a cut stream left open.
 *
 * - `parley_pending_usage`: usage written locally first (in the same transaction as the caller's
 *   own bookkeeping), deleted once the org's BillingAccount has it; what cannot land is retried by
 *   a schedule, what the account refuses is parked with its reason, never dropped.
 * - `parley_steps`: each model call's hold, written before the call, `reserved` → `called` (its
 *   generation id) → `settled` or `released`; what a reset leaves open is closed on start.
 *
 * Every call is settled exactly once: by its step's callback or by `closeOpen`, whichever claims
 * it first (`claim`), under its hold id, which the ledger settles once.
 */
export class TurnMetering {
  readonly #host: MeteringHost;
  /** Metering still running: erasure waits for it. */
  readonly inFlight = new Set<Promise<unknown>>();
  /** The session's credit lease: most calls are drawn on it, locally (session-lease.ts). */
  readonly lease: SessionLease;

  constructor(host: MeteringHost) {
    this.#host = host;
    // Its tables and the lease's are made by `ensureLocalSchema` (local-schema.ts), first.
    const { sql } = host;
    this.lease = new SessionLease({
      sql,
      env: host.env,
      erased: host.erased,
      transact: host.transact,
      retryLater: host.retryLater,
      wakeAt: host.wakeAt,
      park: (requestId, reason) => this.#park(requestId, reason),
      track: (work) => this.track(work),
    });
  }

  /** Keeps `work` in `inFlight` while it runs (erasure waits for it); returns it. */
  track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work)).catch(() => undefined);
    return work;
  }

  // ---- usage that waits locally until the account has it ----

  /**
   * Records usage on the org's BillingAccount, exactly once per request id (the ledger keys usage on
   * it). Written to `parley_pending_usage` first and deleted once the account has it: a reset in
   * between, or an account that cannot be reached, leaves it there for a retry (on start, or by a
   * schedule). The transcript is never held back by metering. Returns the settle result when it
   * landed, null when it is left for the retry.
   */
  record(orgId: string, priced: UsagePayload): Promise<SettleResult | null> {
    // Dated now, when the call was priced: it may reach the account later (a lease's report, a
    // retry), and a read in between must find it inside its window.
    const payload: UsagePayload = { ...priced, at: priced.at ?? Date.now() };
    const step = this.#host.sql
      .exec("SELECT lease_id, draw_micros FROM parley_steps WHERE hold_id = ?", payload.requestId)
      .toArray()[0];
    if (typeof step?.lease_id === "string") {
      // Drawn on the lease: the usage waits locally and goes with the next report.
      const drawMicros = step.draw_micros as number;
      this.#host.sql.exec(
        "INSERT INTO parley_pending_usage (request_id, org_id, payload, lease_id) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
        payload.requestId,
        orgId,
        JSON.stringify({ ...payload, drawMicros }),
        step.lease_id,
      );
      this.lease.settle(step.lease_id, drawMicros, payload.billable ? payload.priceMicros : 0);
      return Promise.resolve(null);
    }
    this.#host.sql.exec(
      "INSERT INTO parley_pending_usage (request_id, org_id, payload) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
      payload.requestId,
      orgId,
      JSON.stringify(payload),
    );
    return this.track(
      (async () => {
        try {
          const result = await billingAccount(this.#host.env, orgId).settle(payload);
          if (!this.#host.erased()) this.#settled(payload.requestId, result);
          return result;
        } catch {
          if (!this.#host.erased()) await this.#host.retryLater(10);
          return null;
        }
      })(),
    );
  }

  /** Whether usage is waiting to be sent (not counting what the account refused; any lease). */
  hasPending(): boolean {
    return (
      this.#host.sql
        .exec("SELECT 1 FROM parley_pending_usage WHERE parked_reason IS NULL LIMIT 1")
        .toArray().length > 0
    );
  }

  /**
   * Sends usage that could not be recorded earlier, and what waits under a lease (returning the
   * lease when no client is connected: an idle session holds no credits). Replays are harmless
   * (keyed by request).
   */
  async retryPending(): Promise<void> {
    if (this.#host.connected()) await this.lease.flush();
    else await this.lease.returnLease();
    const rows = this.#host.sql
      .exec(
        "SELECT request_id, org_id, payload FROM parley_pending_usage WHERE parked_reason IS NULL AND lease_id IS NULL",
      )
      .toArray();
    let failed = false;
    for (const row of rows) {
      try {
        const result = await billingAccount(this.#host.env, row.org_id as string).settle(
          JSON.parse(row.payload as string),
        );
        this.#settled(row.request_id as string, result);
      } catch {
        failed = true;
      }
    }
    if (failed) await this.#host.retryLater(60);
  }

  /** Replaces `find` with `replace` in usage still waiting (an erased member's pseudonym). */
  rewritePending(find: string, replace: string): void {
    this.lease.rewriteMember(find, replace);
    this.#host.sql.exec(
      "UPDATE parley_pending_usage SET payload = replace(payload, ?1, ?2) WHERE instr(payload, ?1) > 0",
      find,
      replace,
    );
  }

  /**
   * What the account answered for a settle: landed (or a replay of it) deletes the local copy; a
   * refusal can never land by retrying, so the row is parked with the reason, kept for a human and
   * logged (ids and reason only), never silently dropped and never retried in a loop.
   */
  #settled(requestId: string, result: SettleResult): void {
    if (result.ok) {
      this.#host.sql.exec("DELETE FROM parley_pending_usage WHERE request_id = ?", requestId);
      return;
    }
    this.#park(requestId, result.reason);
  }

  #park(requestId: string, reason: string): void {
    this.#host.sql.exec(
      "UPDATE parley_pending_usage SET parked_reason = ? WHERE request_id = ?",
      reason,
      requestId,
    );
    console.error(
      JSON.stringify({
        level: "error",
        source: "metering",
        outcome: "usage_parked",
        reason,
        requestId,
      }),
    );
  }

  // ---- each model step's hold ----

  /**
   * Reserves a model call's maximum cost on the org's BillingAccount and notes the hold locally
   * before the call is made (what a reset leaves open is closed on start).
   */
  async reserve(step: StepRequest): Promise<Reservation> {
    const amountMicros = maxCallCostMicros({
      ...step.prices,
      promptTokens: step.promptEstimate,
      maxOutputTokens: step.maxOutputTokens,
    });
    const drawn = await this.lease.draw(step, amountMicros, (leaseId) =>
      this.#host.sql.exec(
        `INSERT INTO parley_steps (hold_id, org_id, prompt_estimate, status, created_at, lease_id, draw_micros)
         VALUES (?, ?, ?, 'reserved', ?, ?, ?)`,
        step.holdId,
        step.orgId,
        step.promptEstimate,
        Date.now(),
        leaseId,
        amountMicros,
      ),
    );
    if (drawn !== null) {
      return { holdId: step.holdId, result: { ok: true }, promptEstimate: step.promptEstimate };
    }
    const result = await billingAccount(this.#host.env, step.orgId).reserve({
      requestId: step.holdId,
      amountMicros,
      memberId: step.memberId,
      projectId: step.projectId,
      sessionId: step.sessionId,
      ...(step.endUserLimits ? { endUserLimits: step.endUserLimits } : {}),
    });
    if (result.ok) {
      this.#host.sql.exec(
        `INSERT INTO parley_steps (hold_id, org_id, prompt_estimate, status, created_at) VALUES (?, ?, ?, 'reserved', ?)
         ON CONFLICT (hold_id) DO NOTHING`,
        step.holdId,
        step.orgId,
        step.promptEstimate,
        Date.now(),
      );
    }
    return { holdId: step.holdId, result, promptEstimate: step.promptEstimate };
  }

  /** The step's call went out: its generation id, for a lookup if the stream is cut. */
  noteCall(holdId: string, generationId: string | null): void {
    this.#host.sql.exec(
      "UPDATE parley_steps SET generation_id = ?, status = 'called' WHERE hold_id = ?",
      generationId,
      holdId,
    );
  }

  /** How much text the step streamed (written once, when a turn ends: the estimate of a cut call). */
  noteStreamed(holdId: string, chars: number): void {
    this.#host.sql.exec(
      "UPDATE parley_steps SET streamed_chars = ? WHERE hold_id = ? AND status = 'called'",
      chars,
      holdId,
    );
  }

  /**
   * Marks a step settled if nobody has: true for the one caller that may settle it. A step is
   * settled by its own callback or by closing the turn's open steps, whichever comes first.
   */
  claim(holdId: string): boolean {
    return (
      this.#host.sql.exec(
        "UPDATE parley_steps SET status = 'settled' WHERE hold_id = ? AND status IN ('reserved', 'called')",
        holdId,
      ).rowsWritten === 1
    );
  }

  generationOf(holdId: string): string | null {
    return (this.#host.sql
      .exec("SELECT generation_id FROM parley_steps WHERE hold_id = ?", holdId)
      .toArray()[0]?.generation_id ?? null) as string | null;
  }

  /**
   * Closes the holds a turn (or, at start, any turn) left open: a step whose call went out is settled
   * to what the provider charged (generation lookup, else the streamed-token estimate); a step never
   * called is released. Each hold resolves once, on the BillingAccount as here.
   */
  async closeOpen(prices: StepPrices, turnId?: string): Promise<Settled[]> {
    const { sql, env } = this.#host;
    const rows = sql
      .exec(
        `SELECT * FROM parley_steps WHERE status IN ('reserved', 'called') ${turnId ? "AND substr(hold_id, 1, length(?1) + 1) = ?1 || ':'" : ""}`,
        ...(turnId ? [turnId] : []),
      )
      .toArray();
    const settled: Settled[] = [];
    for (const row of rows) {
      const holdId = row.hold_id as string;
      const orgId = row.org_id as string;
      if (row.status === "reserved") {
        if (typeof row.lease_id === "string")
          this.lease.undraw(row.lease_id, row.draw_micros as number);
        else await billingAccount(env, orgId).release(holdId);
        sql.exec("UPDATE parley_steps SET status = 'released' WHERE hold_id = ?", holdId);
        continue;
      }
      const generationId = row.generation_id as string | null;
      const lookedUpDollars = generationId
        ? await lookupGenerationCost(env, generationId).catch(() => null)
        : null;
      const { tokens, costMicros, priceMicros } = priceCutCall(
        {
          promptEstimate: row.prompt_estimate as number,
          streamedChars: row.streamed_chars as number,
          lookedUpDollars,
        },
        prices,
      );
      // The step's own callback may have settled it while the lookup ran: settle once only.
      if (!this.claim(holdId)) continue;
      settled.push({ tokens, priceMicros, steps: 1 });
      await this.record(orgId, {
        requestId: holdId,
        costMicros,
        priceMicros,
        tokens,
        model: prices.model,
        generationIds: generationId ? [generationId] : [],
        billable: true,
      });
    }
    return settled;
  }
}
