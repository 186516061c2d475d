import type { EndUserLimits, ReserveResult } from "@parley/billing";
import { billingAccount } from "../billing/account.ts";
import { type CallRecord, recordCalls } from "./sources-db.ts";

/** Who pays for a tool call and whose limits it counts against (the session's caller). */
export interface ToolPayer {
  memberId: string;
  projectId: string | null;
  sessionId: string | null;
  endUserLimits?: EndUserLimits;
}

/** The person who answered a write tool call's approval. */
export interface Answerer {
  kind: "member" | "end_user";
  id: string;
}

/** How a call ended, for its record; `wentOut: false` when no request reached the network. */
export type CallOutcome = Pick<
  CallRecord,
  "status" | "errorCode" | "durationMs" | "requestBytes" | "responseBytes"
> & { approvedBy?: string | null; wentOut?: boolean };

/** At the latest, closed calls are settled this long after the first closes (a durable schedule). */
const SETTLE_WITHIN_SECONDS = 2;
/** A round that could not settle or record a call tries again this long after. */
const RETRY_SECONDS = 30;

const ZERO_TOKENS = {
  promptTokens: 0,
  completionTokens: 0,
  cachedPromptTokens: 0,
  reasoningTokens: 0,
};

/** The ledger's request id of a tool call, and what its usage is filed under. */
export const toolRequestId = (callId: string) => `tool:${callId}`;
export const toolUsageModel = (sourceId: string, toolName: string) =>
  `tool:${sourceId}:${toolName}`;

/**
 * A chat's tool calls' money and approvals, in the chat object's own SQLite (its tables are made
 * by agents/local-schema.ts), so a reset loses nothing:
 *
 * - `parley_tool_calls`: each call from before it goes out (`reserved`: its hold is taken; `sent`:
 *   the request may have reached the tenant's server) until it is settled and recorded. A priced
 *   call holds its price on the org's BillingAccount first (limits apply, as to a model call); a
 *   call that went out is charged its price once (the ledger keys it by `tool:<callId>`), whether
 *   it answered, failed, timed out or was stopped (the server may have acted); one that never went
 *   out gives its hold back. What a reset left open is closed on start (`closeOpen`).
 * - `parley_tool_answers`: who answered each write call's approval (the frame guard notes it as it
 *   forwards the answer), so a write runs only on an approval given in this chat, once.
 */
export class ToolCallMeter {
  readonly #sql: SqlStorage;
  readonly #env: Env;
  readonly #retryLater: ((seconds: number) => Promise<unknown>) | undefined;
  /** Work still running, and closed calls waiting for their settlement (erasure waits for them). */
  readonly inFlight = new Set<Promise<unknown>>();
  /** The settlement the calls closed since the last one wait for (resolved by `settleClosed`). */
  #waiting: { promise: Promise<void>; resolve: () => void } | null = null;
  /** The settlement running now: one at a time, each takes every closed call. */
  #settling: Promise<void> | null = null;
  /** The durable backstop is scheduled (`retryLater`); cleared when a settlement starts. */
  #armed = false;
  /**
   * `closeOpen` runs (the object's start): nothing is scheduled meanwhile. Scheduling from the
   * start held the round's own requests until the start ended, which waited for the round; what
   * fails there waits for the next start or the next call, as before.
   */
  #starting = false;

  constructor(host: {
    sql: SqlStorage;
    env: Env;
    /**
     * Schedules the host's `retryPendingUsage` (durable: it survives an eviction), which calls
     * `settleClosed`: closed calls are settled at the latest that long after, when no turn's end
     * or report took them first.
     */
    retryLater?: (seconds: number) => Promise<unknown>;
  }) {
    this.#sql = host.sql;
    this.#env = host.env;
    this.#retryLater = host.retryLater;
  }

  #track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work)).catch(() => undefined);
    return work;
  }

  // ---- approvals ----

  /** The frame guard admitted `by`'s answer to the approval of `toolCallId`. */
  noteAnswer(toolCallId: string, approved: boolean, by: Answerer): void {
    this.#sql.exec(
      `INSERT INTO parley_tool_answers (tool_call_id, approved, answered_by, answered_at)
       VALUES (?, ?, ?, ?) ON CONFLICT (tool_call_id) DO NOTHING`,
      toolCallId,
      approved ? 1 : 0,
      JSON.stringify(by),
      Date.now(),
    );
  }

  /**
   * Takes the approval of `toolCallId` for its one run: who approved it, or why it may not run
   * (no approval, a denial, or it ran already). Checked and marked in one statement.
   */
  takeApproval(
    toolCallId: string,
  ): { ok: true; by: Answerer } | { ok: false; reason: "not_approved" | "already_ran" } {
    const taken = this.#sql
      .exec(
        `UPDATE parley_tool_answers SET used_at = ? WHERE tool_call_id = ? AND approved = 1
         AND used_at IS NULL RETURNING answered_by`,
        Date.now(),
        toolCallId,
      )
      .toArray()[0];
    if (taken) return { ok: true, by: JSON.parse(taken.answered_by as string) as Answerer };
    const known = this.#sql
      .exec("SELECT approved, used_at FROM parley_tool_answers WHERE tool_call_id = ?", toolCallId)
      .toArray()[0];
    return {
      ok: false,
      reason:
        known && known.approved === 1 && known.used_at !== null ? "already_ran" : "not_approved",
    };
  }

  // ---- a call's money ----

  /**
   * Notes a call before anything else happens, and holds its price when it has one. Refused (no
   * credits, a limit), the call is forgotten and must not go out.
   */
  async open(input: {
    record: Omit<
      CallRecord,
      "status" | "errorCode" | "durationMs" | "requestBytes" | "responseBytes"
    >;
    payer: ToolPayer;
  }): Promise<{ ok: true } | Exclude<ReserveResult, { ok: true }>> {
    const { record, payer } = input;
    this.#sql.exec(
      `INSERT INTO parley_tool_calls (call_id, org_id, price_micros, status, record, payer, created_at)
       VALUES (?, ?, ?, 'reserved', ?, ?, ?)`,
      record.id,
      record.orgId,
      record.priceMicros,
      JSON.stringify(record),
      JSON.stringify(payer),
      record.createdAt,
    );
    if (record.priceMicros === 0) return { ok: true };
    // A failure here leaves the row: the close on start releases the hold if it was taken.
    const result: ReserveResult = await billingAccount(this.#env, record.orgId).reserve({
      requestId: toolRequestId(record.id),
      amountMicros: record.priceMicros,
      memberId: payer.memberId,
      projectId: payer.projectId,
      sessionId: payer.sessionId,
      ...(payer.endUserLimits ? { endUserLimits: payer.endUserLimits } : {}),
    });
    if (!result.ok) {
      this.#sql.exec("DELETE FROM parley_tool_calls WHERE call_id = ?", record.id);
      return result;
    }
    return { ok: true };
  }

  /** The call's request is about to go out: from here on, it is charged if it ends at all. */
  markSent(callId: string): void {
    this.#sql.exec(
      "UPDATE parley_tool_calls SET status = 'sent' WHERE call_id = ? AND status = 'reserved'",
      callId,
    );
  }

  /**
   * Ends a call once: claims its row (a second closer, the call's own end racing a stop, gets
   * null) and notes how it ended, in one local write. That is all that happens on the call's
   * path: its settlement (charged its price if it went out, its hold given back if not), its D1
   * record and its row's removal come with the next `settleClosed`, which takes every closed call
   * at once (the turn's end, a report the account asks for, the durable schedule armed here, the
   * object's start). A reset in between leaves the row `closing` for the start to settle, as it
   * ended; the ledger settles a request id once, so nothing is charged twice. The note is durable
   * before the answer leaves the object (the output gate holds the model's next request until
   * then): a reset that loses it had shown the answer to no one, and the start closes the call as
   * stopped by the reset, charged since it went out.
   *
   * Returns what the call is charged, decided here and settled as it is by the round (the reply's
   * metadata counts it: `ToolCharges`), or null when someone else closed it.
   */
  close(callId: string, outcome: CallOutcome): number | null {
    const charged = this.#claim(callId, outcome);
    if (charged === null) return null;
    void this.#nextSettlement();
    return charged;
  }

  /**
   * Claims an open call's row for its end, noting how it ended (`closing`): what it is charged
   * (its price if its request may have reached the server, else 0), or null if not open.
   */
  #claim(callId: string, outcome: CallOutcome): number | null {
    const row = this.#sql
      .exec(
        "SELECT status, price_micros, record FROM parley_tool_calls WHERE call_id = ? AND status IN ('reserved', 'sent')",
        callId,
      )
      .toArray()[0];
    if (!row) return null;
    const ended: CallOutcome = {
      ...outcome,
      wentOut: row.status === "sent" && outcome.wentOut !== false,
    };
    const record = { ...(JSON.parse(row.record as string) as CallRecord), ended };
    this.#sql.exec(
      "UPDATE parley_tool_calls SET status = 'closing', record = ? WHERE call_id = ?",
      JSON.stringify(record),
      callId,
    );
    return ended.wentOut ? (row.price_micros as number) : 0;
  }

  /** The settlement a call closed now waits for; arms the durable schedule once per round. */
  #nextSettlement(): Promise<void> {
    if (!this.#waiting) {
      let resolve: () => void = () => undefined;
      const promise = new Promise<void>((r) => {
        resolve = r;
      });
      this.#waiting = { promise, resolve };
      this.#track(promise);
    }
    if (!this.#armed && this.#retryLater) {
      this.#armed = true;
      void this.#retryLater(SETTLE_WITHIN_SECONDS).catch(() => {
        this.#armed = false;
      });
    }
    return this.#waiting.promise;
  }

  /** Whether closed calls wait for their settlement (the host settles them at a turn's end). */
  get waiting(): boolean {
    return this.#waiting !== null;
  }

  /**
   * Settles every closed call in one round (one at a time: a call closed while a round runs is
   * taken by the next): each call's settle or release on the org's BillingAccount, sent together,
   * then their D1 records in one batch, then their rows forgotten. A call whose settlement fails
   * stays `closing` for the next round (the schedule is armed again). Resolves when done.
   */
  settleClosed(): Promise<void> {
    const run = async () => {
      while (this.#settling) await this.#settling.catch(() => undefined);
      const waiting = this.#waiting;
      this.#waiting = null;
      this.#armed = false;
      const work = this.#settleRound();
      this.#settling = work;
      try {
        await work;
      } finally {
        this.#settling = null;
        waiting?.resolve();
      }
    };
    return this.#track(run());
  }

  async #settleRound(): Promise<void> {
    const rows = this.#sql
      .exec(
        "SELECT call_id, price_micros, record, payer FROM parley_tool_calls WHERE status = 'closing' ORDER BY created_at",
      )
      .toArray();
    if (rows.length === 0) return;
    const settled = await Promise.all(rows.map((row) => this.#settleOne(row)));
    const done = settled.filter((call) => call !== null);
    if (done.length < rows.length) this.#armAgain();
    if (done.length === 0) return;
    try {
      await recordCalls(
        this.#env.DB,
        done.map((call) => call.record),
      );
    } catch {
      // Settled, not recorded: the rows stay `closing`; the next round settles them again (a
      // replay the ledger ignores) and records them.
      this.#armAgain();
      return;
    }
    for (const call of done) {
      this.#sql.exec("DELETE FROM parley_tool_calls WHERE call_id = ?", call.callId);
    }
  }

  #armAgain(): void {
    if (this.#armed || this.#starting || !this.#retryLater) return;
    this.#armed = true;
    void this.#retryLater(RETRY_SECONDS).catch(() => {
      this.#armed = false;
    });
  }

  /** One closed call on the ledger: charged if it went out, its hold back if not. */
  async #settleOne(
    row: Record<string, SqlStorageValue>,
  ): Promise<{ callId: string; charged: number; record: CallRecord } | null> {
    const callId = row.call_id as string;
    const { ended, ...record } = JSON.parse(row.record as string) as CallRecord & {
      ended: CallOutcome;
    };
    const payer = JSON.parse(row.payer as string) as ToolPayer;
    const price = row.price_micros as number;
    const charged = ended.wentOut ? price : 0;
    const account = billingAccount(this.#env, record.orgId);
    try {
      if (!ended.wentOut) {
        if (price > 0) await account.release(toolRequestId(record.id));
      } else {
        // Every call that went out is usage (a free one at price 0): billing's activity lists it.
        // The ledger's answer is final (a replay of a settled id is ok); only a failed RPC
        // leaves the call for the next round.
        await account.settle({
          requestId: toolRequestId(record.id),
          costMicros: charged,
          priceMicros: charged,
          tokens: ZERO_TOKENS,
          model: toolUsageModel(record.sourceId, record.toolName),
          generationIds: [],
          billable: charged > 0,
          at: record.createdAt,
          attribution: {
            memberId: payer.memberId,
            projectId: payer.projectId,
            sessionId: payer.sessionId,
          },
        });
      }
    } catch {
      return null;
    }
    const { approvedBy, wentOut: _wentOut, ...ending } = ended;
    return {
      callId,
      charged,
      record: {
        ...record,
        ...ending,
        approvedBy: approvedBy ?? record.approvedBy,
        priceMicros: charged,
      },
    };
  }

  /**
   * What a reset left open, closed once: a call that went out is charged and recorded as
   * stopped (`aborted`, `reset`); one that never went out gives its hold back; one closed and
   * not yet settled is settled. Run on start. Resolves to how many calls it settled.
   */
  async closeOpen(): Promise<number> {
    const open = this.#sql
      .exec("SELECT call_id FROM parley_tool_calls WHERE status IN ('reserved', 'sent')")
      .toArray();
    for (const row of open) {
      this.#claim(row.call_id as string, {
        status: "aborted",
        errorCode: "reset",
        durationMs: 0,
        requestBytes: 0,
        responseBytes: 0,
      });
    }
    const closing = this.#sql
      .exec("SELECT call_id FROM parley_tool_calls WHERE status = 'closing'")
      .toArray()
      .map((row) => row.call_id as string);
    if (closing.length === 0) return 0;
    this.#starting = true;
    try {
      await this.settleClosed();
    } finally {
      this.#starting = false;
    }
    const left = new Set(
      this.#sql
        .exec("SELECT call_id FROM parley_tool_calls")
        .toArray()
        .map((row) => row.call_id as string),
    );
    return closing.filter((id) => !left.has(id)).length;
  }
}
