import { AIChatAgent } from "@cloudflare/ai-chat";
import type { SettleInput } from "@parley/billing";
import { AppError, type ErrorCode, isAppError } from "@parley/shared";
import type { Connection, ConnectionContext, WSMessage } from "agents";
import { createUIMessageStream, createUIMessageStreamResponse, type UIMessage } from "ai";
import { billingAccount } from "../billing/account.ts";
import { type AgentCaller, readCaller } from "./caller.ts";
import { decideFrame, type FrameDecision, type FramePolicy, type FrameRefusal } from "./frames.ts";
import { isTransientStorageError, withRetry } from "./retry.ts";

/** Close code for a socket whose object was erased (4000-4999 are the application's). */
export const CLOSE_ERASED = 4410;
/** Close code for a socket whose caller lost access. */
export const CLOSE_FORBIDDEN = 4403;

/** Where an admitted tool approval waits: the SDK continues the turn under an id of its own. */
export const CONTINUATION = "continuation";

/** A non-negative integer setting (0 allowed), or the fallback when unset or malformed. */
export const intVar = (value: string | undefined, fallback: number) => {
  const parsed = Number(value);
  return value !== undefined && value !== "" && Number.isSafeInteger(parsed) && parsed >= 0
    ? parsed
    : fallback;
};

export const numberVar = (value: string | undefined, fallback: number) => {
  const parsed = Number(value);
  return Number.isFinite(parsed) && parsed > 0 ? parsed : fallback;
};

/** Usage to record on an org's BillingAccount (the settle RPC's input, minus the time). */
export type UsagePayload = Omit<SettleInput, "now">;

export type Refusal = {
  code: ErrorCode | FrameRefusal["code"];
  message: string;
  requestId?: string;
};

/**
 * What Parley's chat agents share on top of the SDK's `AIChatAgent`: the caller the Worker verified
 * (kept in each connection's state), a guard in front of the SDK's message handler (frame policy,
 * then the subclass's admission of a turn), usage that waits locally when the BillingAccount cannot
 * be reached, retried persistence, and erasure.
 */
export abstract class ParleyChatAgent<Turn> extends AIChatAgent<Cloudflare.Env> {
  /** Turns the guard admitted, by request id, for `onChatMessage` to pick up. */
  protected readonly admitted = new Map<string, Turn>();
  /** Metering still running: erasure waits for it. */
  protected readonly metering = new Set<Promise<unknown>>();
  protected erased = false;

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS parley_counters (key TEXT PRIMARY KEY, value INTEGER NOT NULL)",
    );
    // Usage that could not reach the BillingAccount yet; retried by a schedule until it lands.
    ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS parley_pending_usage (request_id TEXT PRIMARY KEY, org_id TEXT NOT NULL, payload TEXT NOT NULL)",
    );
    // The SDK wraps onMessage in its constructor; wrapping it again puts this guard in front of it.
    const sdkOnMessage = this.onMessage.bind(this);
    this.onMessage = (connection: Connection, message: WSMessage) =>
      this.#guard(connection, message, sdkOnMessage);
  }

  /** Whether this agent's tools ask the member for approval (tool-approval frames are accepted). */
  protected abstract readonly toolApprovals: boolean;

  /** Which frames this agent accepts (from a connection, while `ctx` holds its sockets). */
  protected framePolicy(): FramePolicy {
    // Every open socket of this object is a chat connection (the SDK accepts them all for
    // hibernation); counting them is cheaper than the SDK's connection iterator.
    const othersConnected = this.ctx.getWebSockets().length > 1;
    return {
      maxFrameBytes: 256 * 1024,
      maxUserMessageBytes: numberVar(this.env.MAX_USER_MESSAGE_BYTES, 16 * 1024),
      toolApprovals: this.toolApprovals,
      othersConnected,
    };
  }

  /** The caller's right to this object (its project or session id), checked at connect. */
  protected abstract ownsCaller(caller: AgentCaller): boolean;

  /**
   * Admits a turn the client asked for (a new message, a regeneration or a tool approval): checks
   * the caller's rights again and returns what the turn needs, or throws an `AppError`.
   */
  protected abstract admitTurn(
    caller: AgentCaller,
    decision: Extract<FrameDecision, { kind: "forward" }>,
  ): Promise<Turn>;

  protected counter(key: string): number {
    return (this.ctx.storage.sql
      .exec("SELECT value FROM parley_counters WHERE key = ?", key)
      .toArray()[0]?.value ?? 0) as number;
  }

  protected setCounter(key: string, value: number): void {
    this.ctx.storage.sql.exec(
      "INSERT INTO parley_counters (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      key,
      value,
    );
  }

  override async onConnect(connection: Connection, ctx: ConnectionContext): Promise<void> {
    const caller = readCaller(ctx.request);
    // The Worker authorized this socket for this object; anything else is refused outright.
    if (this.erased || !caller || !this.ownsCaller(caller)) {
      connection.close(
        this.erased ? CLOSE_ERASED : CLOSE_FORBIDDEN,
        this.erased ? "erased" : "forbidden",
      );
      return;
    }
    connection.setState({ caller });
  }

  protected callerOf(connection: Connection | undefined): AgentCaller | null {
    return (connection?.state as { caller?: AgentCaller } | null | undefined)?.caller ?? null;
  }

  /** A refusal as a `parley_error` frame; for a chat request, also the SDK's error and done frames. */
  protected refuse(connection: Connection, refusal: Refusal): void {
    connection.send(
      JSON.stringify({
        type: "parley_error",
        requestId: refusal.requestId ?? null,
        error: { code: refusal.code, message: refusal.message },
      }),
    );
    if (refusal.requestId) {
      connection.send(
        JSON.stringify({
          type: "cf_agent_use_chat_response",
          id: refusal.requestId,
          body: refusal.message,
          done: false,
          error: true,
        }),
      );
      connection.send(
        JSON.stringify({
          type: "cf_agent_use_chat_response",
          id: refusal.requestId,
          body: "",
          done: true,
          outcome: "error",
        }),
      );
    }
  }

  async #guard(
    connection: Connection,
    message: WSMessage,
    next: (c: Connection, m: WSMessage) => Promise<void> | void,
  ) {
    if (this.erased) {
      connection.close(CLOSE_ERASED, "erased");
      return;
    }
    const decision = decideFrame(message, this.messages, this.framePolicy());
    if (decision.kind === "refuse") {
      this.refuse(connection, decision);
      return;
    }
    if (decision.trigger || decision.approval) {
      const requestId = decision.requestId;
      try {
        const caller = this.callerOf(connection);
        if (!caller) throw new AppError("forbidden", "This connection has no caller");
        const turn = await this.admitTurn(caller, decision);
        this.admitted.set(requestId ?? CONTINUATION, turn);
      } catch (error) {
        const appError = isAppError(error)
          ? error
          : new AppError("internal", "Could not start the turn", { cause: error });
        this.refuse(connection, {
          code: appError.code,
          message: appError.message,
          ...(requestId ? { requestId } : {}),
        });
        if (
          appError.code === "not_found" ||
          appError.code === "gone" ||
          appError.code === "forbidden"
        ) {
          connection.close(CLOSE_FORBIDDEN, "forbidden");
        }
        return;
      }
    }
    await next(connection, decision.frame);
  }

  /** Usage that a reset kept from landing is sent first thing (a rare case: one RPC per row). */
  override async onStart(): Promise<void> {
    const waiting = this.ctx.storage.sql.exec("SELECT 1 FROM parley_pending_usage LIMIT 1");
    if (waiting.toArray().length > 0) await this.retryPendingUsage();
  }

  /**
   * Records usage on the org's BillingAccount, exactly once per request id (the ledger keys usage on
   * it). The usage is written to `parley_pending_usage` first, in the same local transaction as the
   * caller's own bookkeeping, and deleted once the account has it: a reset in between, or an account
   * that cannot be reached, leaves it there for a retry (on start, or by a schedule). The transcript
   * is never held back by metering. Returns the settle result when it landed.
   */
  protected recordUsage(orgId: string, payload: UsagePayload): Promise<unknown> {
    this.ctx.storage.sql.exec(
      "INSERT INTO parley_pending_usage (request_id, org_id, payload) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
      payload.requestId,
      orgId,
      JSON.stringify(payload),
    );
    const work = (async () => {
      try {
        const result = await billingAccount(this.env, orgId).settle(payload);
        if (!this.erased) this.#landed(payload.requestId);
        return result;
      } catch {
        if (!this.erased) await this.schedule(10, "retryPendingUsage");
        return null;
      }
    })();
    this.metering.add(work);
    void work.finally(() => this.metering.delete(work));
    return work;
  }

  #landed(requestId: string): void {
    this.ctx.storage.sql.exec("DELETE FROM parley_pending_usage WHERE request_id = ?", requestId);
  }

  /** Scheduled: sends usage that could not be recorded earlier. Replays are harmless (keyed by request). */
  async retryPendingUsage(): Promise<void> {
    const rows = this.ctx.storage.sql
      .exec("SELECT request_id, org_id, payload FROM parley_pending_usage")
      .toArray();
    let failed = false;
    for (const row of rows) {
      try {
        await billingAccount(this.env, row.org_id as string).settle(
          JSON.parse(row.payload as string),
        );
        this.#landed(row.request_id as string);
      } catch {
        failed = true;
      }
    }
    if (failed) await this.schedule(60, "retryPendingUsage");
  }

  /** Transient SQLite errors while saving the transcript are retried; anything else is thrown. */
  override async persistMessages(
    messages: UIMessage[],
    excludeBroadcastIds: string[] = [],
    options?: { _deleteStaleRows?: boolean },
  ): Promise<void> {
    if (this.erased) return;
    await withRetry(() => super.persistMessages(messages, excludeBroadcastIds, options), {
      attempts: 4,
      baseDelayMs: 25,
      isTransient: isTransientStorageError,
    });
  }

  /**
   * Erases this chat: closes sockets with an application code, aborts turns in flight and waits for
   * the SDK to settle them and for their metering, disables alarms and schedules, and deletes all
   * storage. Not reachable by clients (no route or callable leads here); calling it twice is harmless.
   */
  async destroyForErasure(): Promise<{ erased: true }> {
    this.erased = true;
    for (const connection of this.getConnections()) connection.close(CLOSE_ERASED, "erased");
    this.abortAllRequests("erased");
    await this.waitUntilStable({ timeout: 5_000 });
    await Promise.allSettled([...this.metering]);
    await this.lifecycle.disableAlarms();
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    this.messages = [];
    return { erased: true };
  }
}

/**
 * Calls `onStall` when a model call has sent nothing for `timeoutMs` (a hung provider would otherwise
 * hold the turn, and the chat, forever). Every chunk resets the clock.
 */
export class StallGuard {
  readonly #timeoutMs: number;
  readonly #onStall: () => void;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(timeoutMs: number, onStall: () => void) {
    this.#timeoutMs = timeoutMs;
    this.#onStall = onStall;
    this.touch();
  }

  touch(): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(this.#onStall, this.#timeoutMs);
  }

  done<T>(then: () => T): T {
    clearTimeout(this.#timer);
    return then();
  }
}

/** A reply that is only an error: the SDK ends the turn with an error frame and persists nothing new. */
export function errorReply(errorText: string): Response {
  const stream = createUIMessageStream({
    execute: ({ writer }) => {
      writer.write({ type: "error", errorText });
    },
  });
  return createUIMessageStreamResponse({ stream });
}

/** A persisted assistant message with server-written metadata and no model call. */
export function noticeReply(text: string, metadata: Record<string, unknown>): Response {
  const stream = createUIMessageStream({
    execute: ({ writer }) => {
      writer.write({ type: "start", messageMetadata: metadata });
      writer.write({ type: "text-start", id: "notice" });
      writer.write({ type: "text-delta", id: "notice", delta: text });
      writer.write({ type: "text-end", id: "notice" });
      writer.write({ type: "finish" });
    },
  });
  return createUIMessageStreamResponse({ stream });
}

/** The stall message and abort, shared by the agents. */
export function stallGuard(
  agent: { broadcast(msg: string): void },
  abort: () => void,
  env: Cloudflare.Env,
  requestId: string,
) {
  return new StallGuard(numberVar(env.MODEL_STALL_TIMEOUT_MS, 30_000), () => {
    agent.broadcast(
      JSON.stringify({
        type: "parley_error",
        requestId,
        error: {
          code: "internal",
          message: "The model stopped responding; the reply was cut off.",
        },
      }),
    );
    abort();
  });
}
