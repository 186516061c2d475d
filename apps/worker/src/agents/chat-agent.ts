import { AppError, isAppError } from "@parley/shared";
import type { Connection, ConnectionContext, WSMessage } from "agents";
import type { UIMessage } from "ai";
import type { BatchedRead } from "../db/batched-read.ts";
import { agentSettings } from "../env.ts";
import { type AgentCaller, readCaller } from "./caller.ts";
import {
  CLOSE_ERASED,
  CLOSE_FORBIDDEN,
  CLOSE_REAUTHENTICATE,
  type ConnectionFilter,
  ConnectionRegistry,
  callerForTurn,
  closeCodeFor,
} from "./connections.ts";
import { decideFrame, type FrameDecision, type FramePolicy } from "./frames.ts";
import { MeteredChatAgent } from "./metered-chat-agent.ts";
import { mergeLate, type ReplyEndingMetadata, ReplyEndings } from "./reply-endings.ts";
import { isTransientStorageError, withRetry } from "./retry.ts";
import {
  EarlyStops,
  type Refusal,
  RequestAuthors,
  refusalFrames,
  ToolAnswers,
  TurnRefusal,
} from "./turn-guard.ts";

export {
  CLOSE_ERASED,
  CLOSE_FORBIDDEN,
  CLOSE_REAUTHENTICATE,
  type ConnectionFilter,
  closeCodeFor,
} from "./connections.ts";

/** Where an admitted tool approval waits: the SDK continues the turn under an id of its own. */
export const CONTINUATION = "continuation";

/**
 * What Parley's chat agents share on top of the SDK's `AIChatAgent`: the caller the Worker verified
 * (kept in each connection's state), a guard in front of the SDK's message handler (frame policy,
 * then the subclass's admission of a turn), usage that waits locally when the BillingAccount cannot
 * be reached, retried persistence, and erasure. The chat's money (its metering, tool calls, lease
 * and what a reset left open) is the base class's, `MeteredChatAgent` (metered-chat-agent.ts).
 */
export abstract class ParleyChatAgent<Turn> extends MeteredChatAgent {
  /** Turns the guard admitted, by request id, for `onChatMessage` to pick up. */
  protected readonly admitted = new Map<string, Turn>();
  /** The open sockets in D1, for revocations to find (connections.ts). */
  readonly #registry: ConnectionRegistry;

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    const agent = this;
    this.#registry = new ConnectionRegistry({
      env,
      // Read when used: the subclass's name and the object's are not set yet while this runs.
      get agentName() {
        return agent.agentName;
      },
      get name() {
        return agent.name;
      },
      connections: () => this.getConnections(),
      callerOf: (connection) => this.callerOf(connection),
      accessCheck: (caller) => this.accessCheck(caller),
      abortTurnsOf: (userId) => this.#abortTurnsOf(userId),
      forgetAccess: () => this.forgetAccess(),
    });
    // The SDK wraps onMessage in its constructor; wrapping it again puts this guard in front of it.
    const sdkOnMessage = this.onMessage.bind(this);
    this.onMessage = (connection: Connection, message: WSMessage) =>
      this.#guard(connection, message, sdkOnMessage);
  }

  /** Whether this agent's tools ask the member for approval (tool-approval frames are accepted). */
  protected abstract readonly toolApprovals: boolean;

  /**
   * Whether the chat is shared by the org's members (the onboarding preview) rather than owned by
   * one (an assistant session): then only an owner or admin may clear it, and a member may
   * regenerate or stop only their own turns.
   */
  protected abstract readonly sharedChat: boolean;

  /** Tool calls being answered (turn-guard.ts). */
  readonly #answers = new ToolAnswers();

  /** Who sent each recent chat request, in a shared chat (turn-guard.ts). */
  readonly #requestAuthors = new RequestAuthors();

  /** Stops pressed before their turn started (turn-guard.ts). */
  readonly #earlyStops = new EarlyStops();

  /**
   * Called first thing in a turn (`onChatMessage`): a Stop that came while its message was being
   * admitted or stored aborts it now, before any model call, through the turn's own signal (the
   * SDK has made it by then), so it ends as any stopped reply does.
   */
  protected stopIfStoppedEarly(requestId: string): void {
    if (this.#earlyStops.started(requestId)) this.abortRequest(requestId, "stopped");
  }

  /** How the reply in flight ended, merged into it when the SDK stores it (reply-endings.ts). */
  readonly #endings = new ReplyEndings();

  /** Registers how the reply of turn `turnId` ended (see `ReplyEndings.expect`). */
  protected expectEnding(turnId: string, ending: () => ReplyEndingMetadata | null): void {
    this.#endings.expect(turnId, ending);
  }

  /**
   * Merges what became known after the reply was stored (its settled cost) into the stored reply,
   * if it is still there (a clear or an erasure in between removed it: then nothing is written).
   * Only that message changes; the SDK writes only changed rows and broadcasts the transcript.
   */
  async #applyLate(turnId: string, extra: Record<string, unknown>): Promise<void> {
    if (this.erased) return;
    const updated = mergeLate(this.messages, turnId, extra);
    if (updated) await this.persistMessages(updated);
  }

  /** Which frames this agent accepts (from a connection, while `ctx` holds its sockets). */
  protected framePolicy(): FramePolicy {
    // Every open socket of this object is a chat connection (the SDK accepts them all for
    // hibernation); counting them is cheaper than the SDK's connection iterator.
    const othersConnected = this.ctx.getWebSockets().length > 1;
    return {
      maxFrameBytes: 256 * 1024,
      maxUserMessageBytes: agentSettings(this.env).maxUserMessageBytes,
      toolApprovals: this.toolApprovals,
      sharedChat: this.sharedChat,
      othersConnected,
    };
  }

  /** The caller's right to this object (its project or session id), checked at connect. */
  protected abstract ownsCaller(caller: AgentCaller): boolean;

  /**
   * The D1 check that the caller may still use this object (membership, ownership, not deleted):
   * its `read` throws an `AppError` when not. Asked at connect (in one batch with the socket's
   * registry row and its token's liveness) and when a revocation names the caller's sockets.
   */
  protected abstract accessCheck(caller: AgentCaller): BatchedRead<unknown>;

  /** The agent's URL segment, as the connection registry names it. */
  protected abstract readonly agentName: "onboarding-agent" | "assistant-agent";

  /**
   * Admits a turn the client asked for (a new message, a regeneration or a tool approval): checks
   * the caller's rights again and returns what the turn needs, or throws an `AppError`.
   */
  protected abstract admitTurn(
    caller: AgentCaller,
    decision: Extract<FrameDecision, { kind: "forward" }>,
  ): Promise<Turn>;

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
    if (caller.expiresAt <= Date.now()) {
      connection.close(CLOSE_REAUTHENTICATE, "token expired");
      return;
    }
    connection.setState({ caller });
    // The socket lives no longer than the token that opened it.
    // One schedule per second of expiry (idempotent on its payload), however many sockets share it.
    const expirySecond = Math.ceil(caller.expiresAt / 1000);
    await this.schedule(
      new Date(expirySecond * 1000),
      "closeExpiredConnections",
      String(expirySecond),
      { idempotent: true },
    );
    this.ctx.waitUntil(this.#registry.register(connection, caller));
  }

  /** Aborts the turns in flight that `userId` asked for (in a session: all of them, it is theirs). */
  #abortTurnsOf(userId: string): void {
    if (!this.sharedChat) {
      this.abortAllRequests("access ended");
      return;
    }
    for (const requestId of this.#requestAuthors.requestsOf(userId)) {
      this.abortRequest(requestId, "access ended");
    }
  }

  override async onClose(
    connection: Connection,
    code: number,
    reason: string,
    wasClean: boolean,
  ): Promise<void> {
    await super.onClose(connection, code, reason, wasClean);
    if (this.erased) return;
    this.ctx.waitUntil(this.#registry.forget(connection.id));
  }

  /**
   * Re-checks the sockets a revocation names (the Worker calls this after removing a member,
   * changing a role, signing out or filing an erasure) and closes those no longer allowed, without
   * waiting for their client to speak. Returns how many were closed.
   */
  recheckConnections(filter: ConnectionFilter): Promise<{ closed: number }> {
    return this.#registry.recheckAll(filter);
  }

  /** Drops the access the agent kept (see `AssistantAgent`); a push calls it before re-checking. */
  protected forgetAccess(): void {}

  /** Scheduled at each socket's token expiry: closes the sockets whose token has expired. */
  async closeExpiredConnections(): Promise<void> {
    this.#registry.closeExpired();
  }

  protected callerOf(connection: Connection | undefined): AgentCaller | null {
    return (connection?.state as { caller?: AgentCaller } | null | undefined)?.caller ?? null;
  }

  /** A refusal as a `parley_error` frame; for a chat request, also the SDK's error and done frames. */
  protected refuse(connection: Connection, refusal: Refusal): void {
    for (const frame of refusalFrames(refusal)) connection.send(frame);
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
    // The role is the one the socket opened with: a role change closes the member's sockets
    // (revocation), so it is current enough to decide what a frame may do.
    const sender = this.callerOf(connection);
    const decision = decideFrame(message, this.messages, {
      ...this.framePolicy(),
      ...(sender ? { authorId: sender.userId, role: sender.role } : {}),
    });
    if (decision.kind === "refuse") {
      this.refuse(connection, decision);
      return;
    }
    const other = this.sharedChat ? this.#requestAuthors.othersTurn(sender, decision) : null;
    if (other) {
      this.refuse(connection, other);
      return;
    }
    if (decision.cancel) this.#earlyStops.cancel(decision.cancel.requestId);
    if (decision.trigger || decision.approval) {
      const requestId = decision.requestId;
      if (requestId) this.#earlyStops.expect(requestId);
      const toolCallId = decision.approval?.toolCallId;
      // Checked and marked before the first await: two answers in the same tick admit one.
      if (toolCallId !== undefined && !this.#answers.claim(toolCallId, this.messages)) {
        this.refuse(connection, {
          code: "conflict",
          message: "This tool call is already being answered",
        });
        return;
      }
      try {
        const caller = callerForTurn(this.callerOf(connection));
        const turn = await this.admitTurn(caller, decision);
        this.admitted.set(requestId ?? CONTINUATION, turn);
        // Who answered: a write tool of a tool source runs only on an approval noted here.
        if (decision.approval) {
          this.toolCalls.noteAnswer(decision.approval.toolCallId, decision.approval.approved, {
            kind: caller.kind,
            id: caller.userId,
          });
        }
        if (requestId && this.sharedChat) this.#requestAuthors.note(requestId, caller.userId);
      } catch (error) {
        if (toolCallId !== undefined) this.#answers.release(toolCallId);
        if (requestId) this.#earlyStops.forget(requestId);
        const appError = isAppError(error)
          ? error
          : new AppError("internal", "Could not start the turn", { cause: error });
        this.refuse(connection, {
          code: appError.code,
          message: appError.message,
          ...(appError.field === undefined ? {} : { field: appError.field }),
          ...(requestId ? { requestId } : {}),
          ...(appError instanceof TurnRefusal ? { details: appError.details } : {}),
        });
        if (
          appError.code === "not_found" ||
          appError.code === "gone" ||
          appError.code === "forbidden" ||
          appError.code === "unauthorized"
        ) {
          connection.close(closeCodeFor(appError.code), appError.code);
        }
        return;
      }
    }
    await next(connection, decision.frame);
  }

  /** Transient SQLite errors while saving the transcript are retried; anything else is thrown. */
  override async persistMessages(
    messages: UIMessage[],
    excludeBroadcastIds: string[] = [],
    options?: { _deleteStaleRows?: boolean },
  ): Promise<void> {
    if (this.erased) return;
    const stored = this.#endings.merge(messages, (turnId, later) => {
      const late = later.then((extra) => this.#applyLate(turnId, extra)).catch(() => {});
      this.ctx.waitUntil(this.meter.track(late));
    });
    await withRetry(() => super.persistMessages(stored, excludeBroadcastIds, options), {
      attempts: 4,
      baseDelayMs: 25,
      isTransient: isTransientStorageError,
    });
    // The turn's tool calls, each closed locally as it answered, are settled and recorded
    // together once its reply is stored: off every call's path (the schedule is the backstop).
    if (this.toolCalls.waiting) void this.toolCalls.settleClosed().catch(() => undefined);
  }

  /**
   * The stored transcript as JSON text (the same stream `get-messages` answers: the whole history,
   * not only what is hydrated in memory), for a data export (GDPR Art. 15 and 20). With `authorId`
   * (a shared onboarding chat exported for one person), only the user messages they wrote and the
   * replies to them, told apart as erasure tells them (server-written `authorId` metadata). Not
   * reachable by clients: no route or callable leads here.
   */
  async transcriptForExport(authorId: string | null = null): Promise<string> {
    const response = await this.onRequest(new Request("https://parley.internal/get-messages"));
    const text = await response.text();
    if (authorId === null) return text;
    const kept: UIMessage[] = [];
    let keeping = false;
    for (const message of JSON.parse(text) as UIMessage[]) {
      if (message.role === "user") {
        keeping = (message.metadata as { authorId?: unknown } | undefined)?.authorId === authorId;
      }
      if (keeping) kept.push(message);
    }
    return JSON.stringify(kept);
  }

  /**
   * Erases this chat: closes sockets with an application code, aborts turns in flight and waits for
   * the SDK to settle them and for their metering, disables alarms and schedules, and deletes all
   * storage. Not reachable by clients (no route or callable leads here); calling it twice is harmless.
   */
  async destroyForErasure(): Promise<{ erased: true }> {
    this.erased = true;
    // The registry stops naming this object: nothing may address it again.
    await this.#registry.forgetObject();
    for (const connection of this.getConnections()) connection.close(CLOSE_ERASED, "erased");
    this.abortAllRequests("erased");
    await this.waitUntilStable({ timeout: 5_000 });
    // Closed tool calls are settled now rather than by their schedule, which is about to go.
    await this.toolCalls.settleClosed().catch(() => undefined);
    await Promise.allSettled([...this.meter.inFlight, ...this.toolCalls.inFlight]);
    // What the session drew is reported and the rest of its lease returned before its storage goes.
    await this.meter.lease.returnLease().catch(() => undefined);
    this.meter.lease.stop();
    await this.lifecycle.disableAlarms();
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    this.messages = [];
    return { erased: true };
  }
}
