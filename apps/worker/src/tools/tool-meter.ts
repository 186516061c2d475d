import type { EndUserLimits, ReserveResult } from "@parley/billing";
import { billingAccount } from "../billing/account.ts";
import { type CallRecord, recordCall } from "./sources-db.ts";

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
  /** Work still running (erasure waits for it). */
  readonly inFlight = new Set<Promise<unknown>>();

  constructor(host: { sql: SqlStorage; env: Env }) {
    this.#sql = host.sql;
    this.#env = host.env;
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
   * null) and notes how it ended, then (in the background, tracked) charges its price if it went
   * out or gives its hold back if not, writes its record, and forgets it. A reset half-way leaves
   * the row `closing`: the close on start finishes it, the ledger settling a request id once.
   * Resolves to what was charged, or null when someone else closed it.
   */
  close(callId: string, outcome: CallOutcome): Promise<number | null> {
    const row = this.#sql
      .exec(
        "SELECT status, record FROM parley_tool_calls WHERE call_id = ? AND status IN ('reserved', 'sent')",
        callId,
      )
      .toArray()[0];
    if (!row) return Promise.resolve(null);
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
    return this.#track(this.#finish(callId));
  }

  async #finish(callId: string): Promise<number | null> {
    const row = this.#sql
      .exec(
        "SELECT price_micros, record, payer FROM parley_tool_calls WHERE call_id = ? AND status = 'closing'",
        callId,
      )
      .toArray()[0];
    if (!row) return null;
    const { ended, ...record } = JSON.parse(row.record as string) as CallRecord & {
      ended: CallOutcome;
    };
    const payer = JSON.parse(row.payer as string) as ToolPayer;
    const price = row.price_micros as number;
    const charged = ended.wentOut ? price : 0;
    const account = billingAccount(this.#env, record.orgId);
    if (!ended.wentOut) {
      if (price > 0) await account.release(toolRequestId(record.id));
    } else {
      // Every call that went out is usage (a free one at price 0): billing's activity lists it.
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
    const { approvedBy, wentOut: _wentOut, ...ending } = ended;
    await recordCall(this.#env.DB, {
      ...record,
      ...ending,
      approvedBy: approvedBy ?? record.approvedBy,
      priceMicros: charged,
    });
    this.#sql.exec("DELETE FROM parley_tool_calls WHERE call_id = ?", callId);
    return charged;
  }

  /**
   * What a reset left open, closed once: a call that went out is charged and recorded as
   * stopped (`aborted`, `reset`); one that never went out gives its hold back. Run on start.
   */
  async closeOpen(): Promise<number> {
    const rows = this.#sql
      .exec("SELECT call_id, status FROM parley_tool_calls ORDER BY created_at")
      .toArray();
    let closed = 0;
    for (const row of rows) {
      const id = row.call_id as string;
      const done =
        row.status === "closing"
          ? await this.#track(this.#finish(id))
          : await this.close(id, {
              status: "aborted",
              errorCode: "reset",
              durationMs: 0,
              requestBytes: 0,
              responseBytes: 0,
            });
      if (done !== null) closed++;
    }
    return closed;
  }
}
