import type { OnChatMessageOptions } from "@cloudflare/ai-chat";
import { addTokens, noTokens, priceStep, type TokenUsage } from "@parley/billing";
import { AppError, isAppError, titleFrom } from "@parley/shared";
import {
  convertToModelMessages,
  createUIMessageStreamResponse,
  stepCountIs,
  streamText,
  type UIMessage,
} from "ai";
import type { ProjectRow } from "../auth/access.ts";
import { agentSettings } from "../env.ts";
import {
  type AssistantMetadata,
  assistantSystemPrompt,
  billingRefusal,
  newTurnId,
  type ReplyVersion,
  refusedReply,
  replyVersions,
  shownMetadata,
} from "./assistant-replies.ts";
import type { AgentCaller } from "./caller.ts";
import { CONTINUATION, ParleyChatAgent } from "./chat-agent.ts";
import { coalesceDeltas } from "./coalesce.ts";
import { contextWindow, estimateTokens } from "./context.ts";
import type { FrameDecision } from "./frames.ts";
import { modelClient } from "./model.ts";
import {
  errorReply,
  failureCode,
  metadataBeforeFinish,
  replyEnding,
  stallGuard,
} from "./reply-endings.ts";
import { revokeConnections } from "./revocation.ts";
import { SessionAccess } from "./session-access.ts";
import { assistantTools } from "./tools/project-tools.ts";
import type { Reservation, Settled } from "./turn-metering.ts";

export type { AssistantMetadata } from "./assistant-replies.ts";

interface AssistantTurn {
  caller: AgentCaller;
  project: ProjectRow;
  /**
   * The server's id for this turn: every hold and usage record of it is keyed `<turnId>:<step>`.
   * Never derived from the client's request id, which a client may reuse (after a clear, say).
   */
  turnId: string;
  /** The first call's hold, reserved at admission (it runs alongside the SDK storing the message). */
  firstHold?: Promise<Reservation>;
  /** A regeneration: the replaced reply's versions, kept in the new reply (read at admission). */
  versions?: ReplyVersion[];
}

/** A turn still marked busy after this long is taken as lost (the object was reset), not running. */
const BUSY_STALE_MS = 10 * 60 * 1000;

/** How often a busy session's last activity is written to D1. */
const ACTIVITY_WRITE_MS = 60_000;

/** Tool schemas and descriptions are sent with every call; this bounds what they add to a prompt. */
const TOOL_PROMPT_TOKENS = 400;

/**
 * One assistant session (name = session id), owned by the member who opened it, spending the org's
 * credits. Every model call is paid for in advance: a hold sized to the call's maximum cost is
 * reserved on the org's BillingAccount before the call (`<turn id>:<step>`, the turn id made by the
 * server at admission, never by the client), and settled to what
 * the provider charged as soon as the step ends, so a reset between steps loses nothing and a re-run
 * never charges twice. A step that cannot be reserved is not made.
 */
export class AssistantAgent extends ParleyChatAgent<AssistantTurn> {
  // Overlapping submits are refused by admitTurn (conflict) before they reach the SDK's queue.
  override messageConcurrency = "queue" as const;

  override async onStart(): Promise<void> {
    await super.onStart();
    // Steps a reset cut off: priced by the provider's generation record, or released if never called.
    await this.meter.closeOpen(agentSettings(this.env).prices).catch(() => undefined);
  }

  protected readonly toolApprovals = true;

  // One owner per session: they may clear it, regenerate and stop as they like.
  protected readonly sharedChat = false;

  protected readonly agentName = "assistant-agent";

  protected ownsCaller(caller: AgentCaller): boolean {
    return caller.sessionId === this.name;
  }

  protected async checkAccess(caller: AgentCaller): Promise<void> {
    await this.#access.read(caller);
  }

  /** The caller's access as the turn needs it, kept between turns (session-access.ts). */
  readonly #access = new SessionAccess({
    db: this.env.DB,
    sessionId: () => this.name,
    cacheMs: agentSettings(this.env).authzCacheMs,
  });

  protected override forgetAccess(): void {
    this.#access.forget();
  }

  #shown<T extends AssistantMetadata>(metadata: T): T {
    return shownMetadata(metadata, this.#access.showCost);
  }

  /**
   * Policy for overlapping submissions: a message sent while a reply is still being written is
   * refused (`conflict`) and not stored, so no turn runs, and nothing is charged, that the member did
   * not see coming; they can stop the reply or wait, then send again.
   */
  protected async admitTurn(
    caller: AgentCaller,
    decision: Extract<FrameDecision, { kind: "forward" }>,
  ): Promise<AssistantTurn> {
    if (!decision.trigger) return this.#admit(caller, decision);
    if (this.#busySince !== null && Date.now() - this.#busySince < BUSY_STALE_MS) {
      throw new AppError(
        "conflict",
        "A reply is still being written: wait for it or stop it, then send again.",
      );
    }
    // Marked before the first await, so the check and the mark are one step: a second message sent
    // in the same tick sees the mark. Cleared again if this turn is not admitted after all.
    this.#busySince = Date.now();
    try {
      const turn = await this.#admit(caller, decision);
      // A message the org cannot pay for is refused here, before the SDK stores it: the member
      // keeps their draft and one notice, and no refusal reply is added per attempt.
      const first = turn.firstHold ? await turn.firstHold : null;
      const refusal =
        first?.result.ok === false
          ? billingRefusal(first.result, Date.now(), caller.kind === "end_user")
          : null;
      if (refusal) throw refusal;
      return turn;
    } catch (error) {
      this.#busySince = null;
      throw error;
    }
  }

  /** Admission after the busy check: rights, the project, and the first call's hold. */
  async #admit(
    caller: AgentCaller,
    decision: Extract<FrameDecision, { kind: "forward" }>,
  ): Promise<AssistantTurn> {
    const requestId = decision.trigger ? decision.requestId : undefined;
    const turnId = newTurnId();
    const messages = decision.newUserMessage
      ? [...this.messages, decision.newUserMessage]
      : this.messages;
    // The first call's hold does not wait for the membership check when the project is known from
    // an earlier turn: the two run side by side, and the hold is released if the check fails.
    const estimateFor = this.#firstCallEstimator(messages);
    const known = this.#project;
    const knownEstimate = known ? estimateFor(known) : 0;
    let early = requestId && known ? this.#reserveFirst(caller, turnId, knownEstimate) : null;
    let project: ProjectRow;
    try {
      // Rights hold at every turn and approval: owner of the session, member of the org.
      project = await this.#access.for(caller);
    } catch (error) {
      if (early) await this.#abandon(early, turnId);
      throw error;
    }
    this.#project = project;
    const estimate = estimateFor(project);
    if (early && knownEstimate < estimate) {
      // The memory grew since the hold was sized: size it again on what the model will be shown,
      // under an id of its own (a hold id is never reused, even once released).
      await this.#abandon(early, turnId);
      early = this.#reserveFirst(caller, turnId, estimate, `${turnId}:0r`);
    }
    if (requestId && !early) early = this.#reserveFirst(caller, turnId, estimate);
    // The reply a regeneration replaces, as stored, before the SDK drops it.
    const versions =
      decision.trigger === "regenerate-message" ? replyVersions(this.messages.at(-1)) : [];
    return {
      caller,
      project,
      turnId,
      ...(early ? { firstHold: early } : {}),
      ...(versions.length > 0 ? { versions } : {}),
    };
  }

  /** When the turn in flight was admitted; null when idle. Cleared as each turn completes. */
  #busySince: number | null = null;
  /** The session's project as the last admitted turn saw it (names and memory size the first hold). */
  #project: ProjectRow | null = null;

  /**
   * The prompt a first call over `messages` shows the model, in tokens (system prompt, window, tools),
   * for a given project: the window is measured once, the project may still change.
   */
  #firstCallEstimator(messages: readonly UIMessage[]): (project: ProjectRow) => number {
    const window = contextWindow(messages, agentSettings(this.env).assistant.contextTokens);
    return (project) =>
      estimateTokens(assistantSystemPrompt(project, window.omitted, this.#access.endUser)) +
      window.tokens +
      TOOL_PROMPT_TOKENS;
  }

  /** Reserves one model call of this session's turn (turn-metering.ts sizes and notes the hold). */
  #reserveStep(caller: AgentCaller, holdId: string, promptEstimate: number): Promise<Reservation> {
    const { prices, assistant } = agentSettings(this.env);
    const endUserLimits =
      caller.kind === "end_user" ? this.#access.endUserLimits(caller) : undefined;
    return this.meter.reserve({
      holdId,
      orgId: caller.orgId,
      memberId: caller.userId,
      projectId: caller.projectId,
      sessionId: this.name,
      ...(endUserLimits ? { endUserLimits } : {}),
      promptEstimate,
      maxOutputTokens: assistant.maxOutputTokens,
      prices,
    });
  }

  #reserveFirst(
    caller: AgentCaller,
    turnId: string,
    promptEstimate: number,
    holdId = `${turnId}:0`,
  ): Promise<Reservation> {
    const hold = this.#reserveStep(caller, holdId, promptEstimate);
    // Awaited by the turn (or abandoned); a failure surfaces there, not as an unhandled rejection.
    hold.catch(() => undefined);
    return hold;
  }

  /** Gives back a first hold the turn will not use. */
  async #abandon(hold: Promise<Reservation>, turnId: string): Promise<void> {
    const reserved = await hold.catch(() => null);
    if (reserved?.result.ok) await this.meter.closeOpen(agentSettings(this.env).prices, turnId);
  }

  /**
   * After a turn: the session's last activity, and its title from the first exchange when it has
   * none (one D1 write, after the reply, off the turn's path; at most once a minute).
   */
  protected override async onChatResponse(): Promise<void> {
    this.#busySince = null;
    const first = this.messages.find((message) => message.role === "user");
    const text =
      first?.parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join(" ") ?? "";
    // The same rules as a title typed at creation: no control or bidi characters, whole code points.
    const title = titleFrom(text.replace(/\[\[[^\]]*\]\]/g, ""), 80);
    // Written once a minute at most: the sessions list orders by it, a turn a second need not.
    const now = Date.now();
    if (this.#activityWrittenAt !== null && now - this.#activityWrittenAt < ACTIVITY_WRITE_MS)
      return;
    this.#activityWrittenAt = now;
    await this.env.DB.prepare(
      "UPDATE sessions SET updated_at = ?, title = COALESCE(title, ?) WHERE id = ?",
    )
      .bind(now, title, this.name)
      .run()
      .catch(() => {
        this.#activityWrittenAt = null;
      });
  }

  /** When the session's last activity was last written to D1 (in memory: a reset writes again). */
  #activityWrittenAt: number | null = null;

  override async onChatMessage(
    _onFinish: unknown,
    options?: OnChatMessageOptions,
  ): Promise<Response | undefined> {
    const requestId = options?.requestId ?? crypto.randomUUID();
    const turn =
      this.admitted.get(requestId) ??
      (options?.continuation ? this.admitted.get(CONTINUATION) : undefined);
    this.admitted.delete(requestId);
    this.admitted.delete(CONTINUATION);
    // A turn nobody admitted (an SDK recovery re-run after a reset) makes no model call: it could
    // charge for a reply the member never saw. They can send again.
    if (!turn) return errorReply("This reply was interrupted. Please send your message again.");

    const { turnId } = turn;
    const env = this.env;
    const settings = agentSettings(env);
    const { prices } = settings;
    const modelId = prices.model;
    const { maxOutputTokens, maxSteps } = settings.assistant;
    const window = contextWindow(this.messages, settings.assistant.contextTokens);
    const modelMessages = await convertToModelMessages(window.messages);
    const system = assistantSystemPrompt(
      turn.project,
      window.omitted,
      turn.caller.kind === "end_user",
    );
    // A tool approval's continuation has no hold yet: reserve it now, under the turn's own id.
    const first = await (turn.firstHold ??
      this.#reserveStep(
        turn.caller,
        `${turnId}:0`,
        this.#firstCallEstimator(this.messages)(turn.project),
      ));
    if (!first.result.ok) return refusedReply(first.result);
    const holdId = (step: number) => (step === 0 ? first.holdId : `${turnId}:${step}`);
    let promptEstimate = first.promptEstimate;

    // What the reply shows: the same numbers the settlement uses, summed as each step is settled.
    const totals: Settled = { tokens: noTokens(), priceMicros: 0, steps: 0 };
    const count = (tokens: TokenUsage, priceMicros: number) => {
      totals.steps += 1;
      totals.priceMicros += priceMicros;
      totals.tokens = addTokens(totals.tokens, tokens);
    };
    let stopped: "insufficient_credits" | "spend_limit" | undefined;
    /** The code of the error the model stream reported, if it did. */
    let failure: string | undefined;
    /** Every closing of the turn's open steps started so far (each settles what it claims). */
    const closings: Promise<unknown>[] = [];
    let step = 0;
    let streamed = 0;
    const stall = stallGuard(
      this,
      () => this.abortRequest(requestId, "model stalled"),
      env,
      requestId,
    );
    const finish = () =>
      stall.done(() => {
        this.meter.noteStreamed(holdId(step), streamed);
        const closing = this.meter.track(
          this.meter.closeOpen(prices, turnId).then((settled) => {
            for (const one of settled) count(one.tokens, one.priceMicros);
          }),
        );
        closings.push(closing);
        return closing;
      });
    // A stopped or failed reply never reaches its `finish` chunk: when the SDK stores it, it gets
    // how it ended at once, and what was settled for it once every open step of the turn is closed.
    this.expectEnding(turnId, () => {
      const ending = replyEnding(options?.abortSignal, failure);
      if (!ending) return null;
      const later = (async (): Promise<AssistantMetadata> => {
        await finish().catch(() => undefined);
        await Promise.allSettled(closings);
        return this.#shown({
          ...ending,
          tokens: { ...totals.tokens },
          priceMicros: totals.priceMicros,
          steps: totals.steps,
        });
      })();
      return { now: this.#shown(ending), later: later as Promise<Record<string, unknown>> };
    });

    const result = streamText({
      model: modelClient(env, {
        noteCall: (generationId) => this.meter.noteCall(holdId(step), generationId),
      }).chat(modelId, { usage: { include: true } }),
      system,
      messages: modelMessages,
      // The project's tools are the org's members' (its memory, its balance): an end user gets none.
      tools:
        turn.caller.kind === "end_user"
          ? {}
          : assistantTools(env, turn.caller, {
              // This session knows at once; the project's other chats hear it by a push.
              memoryChanged: () => {
                this.#access.forget();
                return revokeConnections(env, {
                  projectId: turn.caller.projectId,
                  except: this.name,
                });
              },
            }),
      maxOutputTokens,
      stopWhen: [stepCountIs(maxSteps), () => stopped !== undefined],
      ...(options?.abortSignal ? { abortSignal: options.abortSignal } : {}),
      maxRetries: 0,
      // Counted in memory (no write per chunk on the hot path); written once when a turn is cut,
      // for the estimate. After a reset the generation lookup prices the step instead.
      onChunk: ({ chunk }) => {
        stall.touch();
        if (chunk.type === "text-delta" || chunk.type === "reasoning-delta")
          streamed += chunk.text.length;
      },
      // Awaited by the SDK before the next step: the next call is reserved before it is made.
      onStepFinish: async (result) => {
        const index = step;
        streamed = 0;
        const { tokens, costMicros, priceMicros } = priceStep(
          result.usage,
          result.providerMetadata,
          prices,
        );
        const generationId = this.meter.generationOf(holdId(index));
        // Closing the turn's open steps (an error or abort racing this callback) may have settled
        // this step already, from the provider's record: then it is not settled (nor counted in
        // the reply's cost) a second time.
        const claimed = this.meter.claim(holdId(index));
        if (claimed) count(tokens, priceMicros);
        const settled = claimed
          ? this.meter.record(turn.caller.orgId, {
              requestId: holdId(index),
              costMicros,
              priceMicros,
              tokens,
              model: modelId,
              generationIds: generationId ? [generationId] : [],
              billable: true,
            })
          : Promise.resolve(null);
        // The last step's settlement does not hold up the reply (its usage is already stored locally
        // and lands once, now or on retry); a next step waits for it, so the hold it frees counts.
        if (result.finishReason === "tool-calls" && index + 1 < maxSteps) {
          await settled;
          promptEstimate +=
            tokens.completionTokens + estimateTokens(JSON.stringify(result.toolResults ?? []));
          step = index + 1;
          const next = await this.#reserveStep(turn.caller, holdId(step), promptEstimate);
          if (!next.result.ok)
            stopped = next.result.reason === "spend_limit" ? "spend_limit" : "insufficient_credits";
        }
      },
      onFinish: finish,
      onAbort: finish,
      onError: ({ error }) => {
        failure ??= failureCode(error);
        return finish();
      },
    });

    // The reply's cost goes in a metadata chunk just before `finish`: by then every step has been
    // settled (the SDK awaits onStepFinish).
    const withCost = metadataBeforeFinish(
      (): AssistantMetadata =>
        this.#shown({
          finish: "completed",
          tokens: { ...totals.tokens },
          priceMicros: totals.priceMicros,
          steps: totals.steps,
          ...(stopped ? { code: stopped } : {}),
        }),
    );
    return createUIMessageStreamResponse({
      stream: result
        .toUIMessageStream({
          sendReasoning: true,
          messageMetadata: ({ part }): AssistantMetadata | undefined =>
            part.type === "start"
              ? {
                  turnId,
                  ...(turn.versions
                    ? {
                        versions: turn.versions.map((version) => ({
                          ...version,
                          metadata: this.#shown(version.metadata),
                        })),
                      }
                    : {}),
                }
              : undefined,
          // Our own errors (a tool refusing a write, say) are safe to show; anything else stays generic.
          onError: (error) =>
            isAppError(error)
              ? error.message
              : "The model failed to answer. You are charged only for what the provider actually produced.",
        })
        .pipeThrough(coalesceDeltas(settings.streamCoalesceMs))
        .pipeThrough(withCost),
    });
  }
}
