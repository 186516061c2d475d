import {
  type Attribution,
  maxCallCostMicros,
  type PricedStep,
  priceCutCall,
  type ReserveResult,
  type StepPrices,
  type TokenUsage,
} from "@parley/billing";
import { billingAccount } from "../billing/account.ts";
import { lookupGenerationCost } from "./model.ts";
import { PendingUsage, type StepRow } from "./pending-usage.ts";
import { type LeaseOwner, SessionLease } from "./session-lease.ts";

export type { UsagePayload } from "./pending-usage.ts";

/** Whether a call may be made: drawn on the session's lease or held on its own, or refused. */
export type StepAdmission = { ok: true } | Exclude<ReserveResult, { ok: true }>;

/**
 * The prices of each model's calls, for closing what a reset left open: each row is priced at its
 * own model's row of the catalogue (a turn's calls have one model; a restart finds any).
 */
export type PricesFor = (model: string | null) => StepPrices;

const pricesOf = (prices: StepPrices | PricesFor, model: string | null): StepPrices => {
  if (typeof prices === "function") return prices(model);
  return model === null || model === prices.model ? prices : { ...prices, model };
};

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

/**
 * Who pays for a turn's calls. A billable call is reserved on the session's lease or a hold (who
 * it is for travels with them). A free call (the onboarding preview: its own allowance admitted
 * the turn) takes no hold or draw, only its local row, and its usage is recorded at price 0 for
 * `attribution`.
 */
export type Payer =
  | ({ billable: true } & LeaseOwner)
  | { billable: false; orgId: string; attribution: Attribution };

/** Who a step is for and how big it may get: what sizes and attributes its hold. */
export type StepRequest = Payer & {
  holdId: string;
  promptEstimate: number;
  maxOutputTokens: number;
  prices: StepPrices;
};

/** A call settled to its reported price: what it added up to, and its usage landing on the account. */
export interface SettledCall {
  settled: Settled;
  /** Resolves once the account has the usage (or it waits locally for a retry, or a lease report). */
  landed: Promise<unknown>;
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
 * A chat agent's money, in one place for both agents: the local tables, each model call's hold,
 * usage that waits locally until the account has it, and what a reset or a cut stream left open.
 * The metering middleware (metering-middleware.ts) is its only caller on a turn's path: it
 * reserves each call here before the call and settles it here after.
 *
 * - `parley_pending_usage`: usage written locally first, deleted once the org's BillingAccount
 *   has it (pending-usage.ts).
 * - `parley_steps`: each model call's hold, written before the call, `reserved` → `called` (its
 *   generation id) → `settled` or `released`; what a reset leaves open is closed on start.
 *
 * Every call is settled exactly once: whichever path claims its row first (`settle`, `closeCall`,
 * `closeOpen`) settles it, under its hold id, which the ledger also settles once; a call never
 * made is released once the same way.
 */
export class TurnMetering {
  readonly #host: MeteringHost;
  /** Metering still running: erasure waits for it. */
  readonly inFlight = new Set<Promise<unknown>>();
  /** The session's credit lease: most calls are drawn on it, locally (session-lease.ts). */
  readonly lease: SessionLease;

  /** Usage priced and waiting to land on the account (pending-usage.ts). */
  readonly #pending: PendingUsage;

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
      park: (requestId, reason) => this.#pending.park(requestId, reason),
      track: (work) => this.track(work),
    });
    this.#pending = new PendingUsage(host, this.lease, (work) => this.track(work));
  }

  /** Keeps `work` in `inFlight` while it runs (erasure waits for it); returns it. */
  track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work)).catch(() => undefined);
    return work;
  }

  /** Whether usage is waiting to be sent (not counting what the account refused; any lease). */
  hasPending(): boolean {
    return this.#pending.hasPending();
  }

  /** Sends usage that could not be recorded earlier (see `PendingUsage.retry`). */
  retryPending(): Promise<void> {
    return this.#pending.retry();
  }

  /** Replaces `find` with `replace` in usage and calls still open (an erased member's pseudonym). */
  rewritePending(find: string, replace: string): void {
    this.#pending.rewrite(find, replace);
    this.#host.sql.exec(
      "UPDATE parley_steps SET attribution = replace(attribution, ?1, ?2) WHERE instr(attribution, ?1) > 0",
      find,
      replace,
    );
  }

  // ---- each model call's hold ----

  /**
   * Reserves a model call's maximum cost (a draw on the session's lease, else a hold on the org's
   * BillingAccount) and notes the call locally before it is made (what a reset leaves open is
   * closed on start). A free call (`billable: false`) only gets its row.
   */
  async reserve(step: StepRequest): Promise<Reservation> {
    const reserved: Reservation = {
      holdId: step.holdId,
      result: { ok: true },
      promptEstimate: step.promptEstimate,
    };
    // A draw's row is written in the draw's transaction: a reused hold id throws and undoes the
    // draw. A hold's row follows the account's answer (a replay of it finds the row there).
    const insert = (leaseId: string | null, drawMicros: number | null) =>
      this.#host.sql.exec(
        `INSERT INTO parley_steps (hold_id, org_id, prompt_estimate, status, created_at, lease_id, draw_micros, model, billable, attribution)
         VALUES (?, ?, ?, 'reserved', ?, ?, ?, ?, ?, ?) ${leaseId === null ? "ON CONFLICT (hold_id) DO NOTHING" : ""}`,
        step.holdId,
        step.orgId,
        step.promptEstimate,
        Date.now(),
        leaseId,
        drawMicros,
        step.prices.model,
        step.billable ? 1 : 0,
        step.billable ? null : JSON.stringify(step.attribution),
      );
    if (!step.billable) {
      insert(null, null);
      return reserved;
    }
    const amountMicros = maxCallCostMicros({
      ...step.prices,
      promptTokens: step.promptEstimate,
      maxOutputTokens: step.maxOutputTokens,
    });
    const drawn = await this.lease.draw(
      step,
      amountMicros,
      (leaseId) => insert(leaseId, amountMicros),
      step.prices.model,
    );
    if (drawn !== null) return reserved;
    const result = await billingAccount(this.#host.env, step.orgId).reserve({
      requestId: step.holdId,
      amountMicros,
      memberId: step.memberId,
      projectId: step.projectId,
      sessionId: step.sessionId,
      ...(step.endUserLimits ? { endUserLimits: step.endUserLimits } : {}),
    });
    if (result.ok) insert(null, null);
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

  /**
   * Marks a step settled if nobody has, in one statement: its row for the one caller that may
   * settle it, null for everyone else.
   */
  #claim(holdId: string): StepRow | null {
    return (
      this.#host.sql
        .exec(
          "UPDATE parley_steps SET status = 'settled' WHERE hold_id = ? AND status IN ('reserved', 'called') RETURNING org_id, lease_id, draw_micros, model, billable, attribution",
          holdId,
        )
        .toArray()[0] ?? null
    );
  }

  /**
   * Settles a call that finished to the price its usage gave (`priceStep`), unless it was
   * settled already (then null): claims its row and records its usage, a free call's at price 0.
   */
  settle(
    holdId: string,
    priced: PricedStep,
    generationId: string | null,
    model: string,
  ): SettledCall | null {
    const step = this.#claim(holdId);
    if (!step) return null;
    return this.#settle(step, holdId, priced, generationId ? [generationId] : [], model);
  }

  #settle(
    step: StepRow,
    holdId: string,
    priced: PricedStep,
    generationIds: string[],
    model: string,
  ): SettledCall {
    const billable = step.billable !== 0;
    const priceMicros = billable ? priced.priceMicros : 0;
    const attribution =
      typeof step.attribution === "string" ? JSON.parse(step.attribution) : undefined;
    const landed = this.#pending.record(step, {
      requestId: holdId,
      costMicros: priced.costMicros,
      priceMicros,
      tokens: priced.tokens,
      // Rows from before the model was kept on them (local schema 2) were all the default model's.
      model: (step.model as string | null) ?? model,
      generationIds,
      billable,
      ...(attribution ? { attribution } : {}),
    });
    return { settled: { tokens: priced.tokens, priceMicros, steps: 1 }, landed };
  }

  /**
   * Closes one call that was cut off (stopped, failed, stalled, its stream cancelled) or never
   * made, after `streamedChars` of text: see `closeOpen`. Null when it was settled already or
   * released.
   */
  async closeCall(
    holdId: string,
    streamedChars: number,
    prices: StepPrices | PricesFor,
  ): Promise<Settled | null> {
    // Written once, as the call ends (no write per chunk on the hot path): the cut call's estimate.
    this.#host.sql.exec(
      "UPDATE parley_steps SET streamed_chars = ? WHERE hold_id = ? AND status = 'called'",
      streamedChars,
      holdId,
    );
    const row = this.#host.sql
      .exec(
        "SELECT * FROM parley_steps WHERE hold_id = ? AND status IN ('reserved', 'called')",
        holdId,
      )
      .toArray()[0];
    return row ? this.#close(row, prices) : null;
  }

  /**
   * Closes the holds a turn (or, at start, any turn) left open: a step whose call went out is settled
   * to what the provider charged (generation lookup, else the streamed-token estimate); a step never
   * called is released. Each hold resolves once, on the BillingAccount as here.
   */
  async closeOpen(prices: StepPrices | PricesFor, turnId?: string): Promise<Settled[]> {
    const rows = this.#host.sql
      .exec(
        `SELECT * FROM parley_steps WHERE status IN ('reserved', 'called') ${turnId ? "AND substr(hold_id, 1, length(?1) + 1) = ?1 || ':'" : ""}`,
        ...(turnId ? [turnId] : []),
      )
      .toArray();
    const settled: Settled[] = [];
    for (const row of rows) {
      const one = await this.#close(row, prices);
      if (one) settled.push(one);
    }
    return settled;
  }

  /** Whether a call is still open (reserved or called): what a reset left for `closeOpen`. */
  hasOpen(): boolean {
    return (
      this.#host.sql
        .exec("SELECT 1 FROM parley_steps WHERE status IN ('reserved', 'called') LIMIT 1")
        .toArray().length > 0
    );
  }

  async #close(row: StepRow, prices: StepPrices | PricesFor): Promise<Settled | null> {
    const { sql, env } = this.#host;
    const holdId = row.hold_id as string;
    if (row.status === "reserved") {
      // Released by whoever marks it first: two closers (an abort and the turn's end) racing on
      // a call that never went out give its draw or hold back once.
      if (
        sql.exec(
          "UPDATE parley_steps SET status = 'released' WHERE hold_id = ? AND status = 'reserved'",
          holdId,
        ).rowsWritten !== 1
      ) {
        return null;
      }
      if (typeof row.lease_id === "string")
        this.lease.undraw(row.lease_id, row.draw_micros as number);
      else if (row.billable !== 0) {
        try {
          await billingAccount(env, row.org_id as string).release(holdId);
        } catch (error) {
          // Not released after all: the next close (on start, at the latest) tries again.
          sql.exec("UPDATE parley_steps SET status = 'reserved' WHERE hold_id = ?", holdId);
          throw error;
        }
      }
      return null;
    }
    const generationId = row.generation_id as string | null;
    const lookedUpDollars = generationId
      ? await lookupGenerationCost(env, generationId).catch(() => null)
      : null;
    // Rows from before the model was kept on them (local schema 2) were all the default model's.
    const rowPrices = pricesOf(prices, row.model as string | null);
    const priced = priceCutCall(
      {
        promptEstimate: row.prompt_estimate as number,
        streamedChars: row.streamed_chars as number,
        lookedUpDollars,
      },
      rowPrices,
    );
    // The call's own settlement may have claimed it while the lookup ran: settle once only.
    const step = this.#claim(holdId);
    if (!step) return null;
    const { settled, landed } = this.#settle(
      step,
      holdId,
      priced,
      generationId ? [generationId] : [],
      rowPrices.model,
    );
    await landed;
    return settled;
  }
}
