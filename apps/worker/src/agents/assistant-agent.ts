import type { OnChatMessageOptions } from "@cloudflare/ai-chat";
import { AppError } from "@parley/shared";
import { convertToModelMessages, type ToolSet } from "ai";
import { type ResolvedTurn, TurnResolver } from "../assistants/resolve.ts";
import type { ProjectRow } from "../auth/access.ts";
import { type BatchedRead, bothReads } from "../db/batched-read.ts";
import { agentSettings } from "../env.ts";
import { RETRIEVAL_PROMPT_TOKENS, TurnKnowledge } from "../knowledge/turn-knowledge.ts";
import {
  type AssistantMetadata,
  billingRefusal,
  continuedFigures,
  newTurnId,
  refusedReply,
  replyFigures,
  replyVersions,
  sessionTitle,
  shownMetadata,
} from "./assistant-replies.ts";
import {
  type AssistantTurn,
  assistantMetering,
  assistantTurnTools,
  firstCallEstimator,
  stopCode,
} from "./assistant-turn.ts";
import type { AgentCaller } from "./caller.ts";
import { CONTINUATION, ParleyChatAgent } from "./chat-agent.ts";
import { contextWindow, estimateTokens } from "./context.ts";
import type { FrameDecision } from "./frames.ts";
import type { MeteringMiddleware } from "./metering-middleware.ts";
import { errorReply, stallNotice } from "./reply-endings.ts";
import { SessionAccess } from "./session-access.ts";
import type { TurnTools } from "./tools/turn-tool-set.ts";
import {
  assistantTurnModel,
  chooseTurn,
  continuedModel,
  sameMoney,
  type TurnModel,
  turnContext,
} from "./turn-model.ts";
import { streamTurn } from "./turn-stream.ts";

export type { AssistantMetadata } from "./assistant-replies.ts";

/** A turn still marked busy after this long is taken as lost (the object was reset), not running. */
const BUSY_STALE_MS = 10 * 60 * 1000;

/** How often a busy session's last activity is written to D1. */
const ACTIVITY_WRITE_MS = 60_000;
/** When it was last written (`parley_counters`, survives hibernation). */
const ACTIVITY_COUNTER = "activity_written_at";

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

  protected readonly toolApprovals = true;

  // One owner per session: they may clear it, regenerate and stop as they like.
  protected readonly sharedChat = false;

  protected readonly agentName = "assistant-agent";

  protected ownsCaller(caller: AgentCaller): boolean {
    return caller.sessionId === this.name;
  }

  /**
   * The caller's access, and what their turns resolve to (the profile version, the model), read
   * again now: at connect and at every push, off any turn's path, so the next turn reads no D1.
   */
  protected accessCheck(caller: AgentCaller): BatchedRead<void> {
    return bothReads(
      this.#access.reading(caller),
      this.#resolver.refreshing(turnContext(caller, "assistant")),
    );
  }

  /** The caller's access as the turn needs it, kept between turns (session-access.ts). */
  readonly #access = new SessionAccess({
    db: this.env.DB,
    sessionId: () => this.name,
    cacheMs: agentSettings(this.env).authzCacheMs,
    kept: this.kept,
  });

  /** What this session's turns run with, kept between turns (assistants/resolve.ts). */
  readonly #resolver = new TurnResolver(this.env, {
    maxAgeMs: agentSettings(this.env).authzCacheMs,
    kept: this.kept,
  });

  /**
   * Every change of rights or of what a turn resolves to (a profile's version, an assignment, the
   * org's models, this session's model) pushes the agent through here.
   */
  protected override forgetAccess(): void {
    this.#access.forget();
    this.#resolver.forget();
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
      const first = await turn.metering.firstAdmission;
      const refusal =
        first?.ok === false ? billingRefusal(first, Date.now(), caller.kind === "end_user") : null;
      if (refusal) throw refusal;
      return turn;
    } catch (error) {
      this.#busySince = null;
      throw error;
    }
  }

  /**
   * Admission after the busy check: rights, the profile and the model, the project, and the first
   * call's hold. A model the turn may not use is refused here, before the message is stored.
   */
  async #admit(
    caller: AgentCaller,
    decision: Extract<FrameDecision, { kind: "forward" }>,
  ): Promise<AssistantTurn> {
    const requestId = decision.trigger ? decision.requestId : undefined;
    let turnId = newTurnId();
    const messages = decision.newUserMessage
      ? [...this.messages, decision.newUserMessage]
      : this.messages;
    // The profile version and the model (no D1 read while kept), beside the rights check.
    const choosing = this.#choose(caller, decision);
    const accessing = this.#access.for(caller);
    // The tool sources' tools the profile switched on (one D1 read, only when it names some).
    const tooling = choosing.then((chosen) => this.#tools(caller, chosen.profile.tools));
    // All are awaited below, the rights first (a refused caller hears that, not about a model).
    choosing.catch(() => undefined);
    accessing.catch(() => undefined);
    tooling.catch(() => undefined);
    // The first call's hold does not wait for the membership check when the project is known from
    // an earlier turn: the two run side by side, and the hold is given back if the check fails.
    const estimateFor = firstCallEstimator(
      messages,
      agentSettings(this.env).assistant.contextTokens,
    );
    const known = this.#project;
    let early: {
      model: TurnModel;
      metering: MeteringMiddleware;
      estimate: number;
      tools: TurnTools;
    } | null = null;
    if (requestId && known) {
      const chosen = await choosing.catch(() => null);
      const tools = chosen ? await tooling.catch(() => null) : null;
      if (chosen && tools) {
        const model = assistantTurnModel(chosen, { project: known, caller });
        early = {
          model,
          metering: this.#metering(caller, turnId, model, tools),
          estimate: estimateFor(model, tools),
          tools,
        };
        early.metering.admit(early.estimate);
      }
    }
    let project: ProjectRow;
    let chosen: ResolvedTurn;
    let tools: TurnTools;
    try {
      // Rights hold at every turn and approval: owner of the session, member of the org.
      project = await accessing;
      chosen = await choosing;
      tools = await tooling;
    } catch (error) {
      await early?.metering.abandon();
      throw error;
    }
    this.#project = project;
    // The same project as the last turn's (kept access): the early hold's model and estimate hold.
    const kept = project === known ? early : null;
    const model = kept?.model ?? assistantTurnModel(chosen, { project, caller });
    const estimate = kept?.estimate ?? estimateFor(model, tools);
    let metering: MeteringMiddleware;
    if (early && sameMoney(early.model, model) && early.tools.promptTokens === tools.promptTokens) {
      metering = early.metering;
      // The memory grew since the hold was sized: sized again on what the model will be shown.
      if (early.estimate < estimate) await metering.readmit(estimate);
    } else {
      if (early) {
        await early.metering.abandon();
        // Another model or price: a fresh turn id, as a hold id is never reused.
        turnId = newTurnId();
      }
      metering = this.#metering(caller, turnId, model, tools);
      // A tool approval's continuation reserves its first call when it runs (`onChatMessage`).
      if (requestId) metering.admit(estimate);
    }
    // The reply a regeneration replaces, as stored, before the SDK drops it.
    const versions =
      decision.trigger === "regenerate-message" ? replyVersions(this.messages.at(-1)) : [];
    // A tool approval's continuation goes on writing the reply that asked: its figures so far.
    const continues =
      decision.approval && !decision.trigger ? continuedFigures(this.messages.at(-1)) : null;
    return {
      caller,
      project,
      turnId,
      model,
      metering,
      tools,
      ...(versions.length > 0 ? { versions } : {}),
      ...(continues ? { continues } : {}),
      knowledge: new TurnKnowledge(this.env, {
        orgId: caller.orgId,
        projectId: project.id,
        userId: caller.userId,
      }),
    };
  }

  /**
   * What the turn runs with: the model the chat body names (a member's, for this turn), the one
   * the continued reply ran with (a tool approval), else the session's pick or the profile's.
   */
  #choose(
    caller: AgentCaller,
    decision: Extract<FrameDecision, { kind: "forward" }>,
  ): Promise<ResolvedTurn> {
    const requested =
      decision.model ??
      (decision.approval && caller.kind === "member" ? continuedModel(this.messages) : undefined);
    return chooseTurn(this.#resolver, turnContext(caller, "assistant", requested));
  }

  /** A turn's metering: the middleware its calls go through, paid by the caller's org. */
  #metering(
    caller: AgentCaller,
    turnId: string,
    model: TurnModel,
    tools: TurnTools,
  ): MeteringMiddleware {
    return assistantMetering({
      ledger: this.meter,
      sessionId: this.name,
      caller,
      turnId,
      model,
      tools,
      endUserLimits: caller.kind === "end_user" ? this.#access.endUserLimits(caller) : undefined,
    });
  }

  /** When the turn in flight was admitted; null when idle. Cleared as each turn completes. */
  #busySince: number | null = null;
  /** The session's project as the last admitted turn saw it (names and memory size the first hold). */
  #project: ProjectRow | null = null;

  /**
   * After a turn: the session's last activity, and its title from the first exchange when it has
   * none (one D1 write, after the reply, off the turn's path; at most once a minute).
   */
  protected override async onChatResponse(): Promise<void> {
    this.#busySince = null;
    const title = sessionTitle(this.messages);
    // Written once a minute at most: the sessions list orders by it, a turn a second need not.
    // When it was last written is kept in the object's SQLite: a session woken from hibernation
    // (at a person's pace, nearly every turn) does not write again within the minute.
    const now = Date.now();
    this.#activityWrittenAt ??= this.counter(ACTIVITY_COUNTER);
    const last = this.#activityWrittenAt;
    if (last > 0 && now >= last && now - last < ACTIVITY_WRITE_MS) return;
    this.#wroteActivity(now);
    await this.env.DB.prepare(
      "UPDATE sessions SET updated_at = ?, title = COALESCE(title, ?) WHERE id = ?",
    )
      .bind(now, title, this.name)
      .run()
      .catch(() => this.#wroteActivity(0));
  }

  /** When the session's last activity was last written to D1 (0: never); loaded when first used. */
  #activityWrittenAt: number | undefined;

  #wroteActivity(at: number): void {
    this.#activityWrittenAt = at;
    this.setCounter(ACTIVITY_COUNTER, at);
  }

  override async onChatMessage(
    _onFinish: unknown,
    options?: OnChatMessageOptions,
  ): Promise<Response | undefined> {
    const requestId = options?.requestId ?? crypto.randomUUID();
    this.stopIfStoppedEarly(requestId);
    const turn =
      this.admitted.get(requestId) ??
      (options?.continuation ? this.admitted.get(CONTINUATION) : undefined);
    this.admitted.delete(requestId);
    this.admitted.delete(CONTINUATION);
    // A turn nobody admitted (an SDK recovery re-run after a reset) makes no model call: it could
    // charge for a reply the member never saw. They can send again.
    if (!turn) return errorReply("This reply was interrupted. Please send your message again.");

    const { turnId, model, metering, knowledge } = turn;
    const settings = agentSettings(this.env);
    const window = contextWindow(this.messages, settings.assistant.contextTokens);
    const retrieval = model.knowledgeRetrieval ? RETRIEVAL_PROMPT_TOKENS : 0;
    // Admit: the first call's hold, made at admission (a tool approval's continuation makes it
    // now). Refused, the reply says why and no model is called (nor the documents searched).
    const first = await metering.admit(
      estimateTokens(model.system(window.omitted)) +
        window.tokens +
        turn.tools.promptTokens +
        retrieval,
    );
    if (!first.ok) return refusedReply(first, model.ranWith, turn.continues ?? null);
    // Retrieval before the first call, when the profile asks: the passages follow the prompt.
    const system = model.knowledgeRetrieval
      ? await knowledge.withRetrieval(model.system(window.omitted), window.messages)
      : model.system(window.omitted);
    // The tools built at admission (project and source tools), and the documents' search.
    const tools: ToolSet = { ...turn.tools.set, ...knowledge.tools(model.tools) };

    // The profile and the model were chosen at admission (`turn.model`); the stream follows.
    metering.watchStalls(
      settings.modelStallTimeoutMs,
      stallNotice(this, () => this.abortRequest(requestId, "model stalled"), requestId),
    );
    const stream = streamTurn({
      env: this.env,
      metering,
      model,
      system,
      // With the tools, earlier searches reach the model as it read them (the framed passages).
      messages: await convertToModelMessages(window.messages, { tools }),
      tools,
      maxSteps: settings.assistant.maxSteps,
      abortSignal: options?.abortSignal,
      coalesceMs: settings.streamCoalesceMs,
      // The profile version and the model it runs with, named from its first chunk, and the
      // earlier versions of a regenerated reply.
      start: {
        turnId,
        ...model.ranWith,
        ...(turn.versions
          ? {
              versions: turn.versions.map((version) => ({
                ...version,
                metadata: this.#shown(version.metadata),
              })),
            }
          : {}),
      } satisfies AssistantMetadata,
      // Every model call is settled and every tool call closed by the time the reply ends: its
      // cost is exactly what was settled, and what its tool calls are charged.
      completed: (): AssistantMetadata =>
        this.#shown({
          finish: "completed",
          ...replyFigures(metering.totals, turn.tools.charges.micros, turn.continues ?? null),
          ...(metering.refusal ? { code: stopCode(metering.refusal.reason) } : {}),
          ...knowledge.metadata(),
        }),
      fallbackErrorText:
        "The model failed to answer. You are charged only for what the provider actually produced.",
      agent: this,
      requestId,
    });
    // A stopped or failed reply never reaches its end: when the SDK stores it, it gets how it
    // ended at once, and what was settled for it once every call of the turn is closed.
    this.expectEnding(turnId, () => {
      const stopped = stream.ending();
      if (!stopped) return null;
      // The passages it was given before it stopped are its sources too.
      const ending = { ...stopped, ...knowledge.metadata() };
      const later = Promise.all([metering.settled(), turn.tools.charges.settled()]).then(
        ([settled, toolMicros]) =>
          this.#shown({
            ...ending,
            ...replyFigures(settled, toolMicros, turn.continues ?? null),
          }),
      );
      return { now: this.#shown(ending), later };
    });
    return stream.response;
  }

  /** The tools the turn's profile switched on (assistant-turn.ts `assistantTurnTools`). */
  #tools(caller: AgentCaller, names: readonly string[]): Promise<TurnTools> {
    return assistantTurnTools(this.env, {
      caller,
      sessionId: this.name,
      names,
      meter: this.toolCalls,
      endUserLimits: () => this.#access.endUserLimits(caller),
      forgetAccess: () => this.#access.forget(),
    });
  }
}
