import type { OnChatMessageOptions } from "@cloudflare/ai-chat";
import { AppError, type OnboardingReplyMetadata } from "@parley/shared";
import { convertToModelMessages, type UIMessage } from "ai";
import { type ResolvedTurn, TurnResolver } from "../assistants/resolve.ts";
import { type ProjectRow, projectAccess, projectAccessRead } from "../auth/access.ts";
import { keyedHash } from "../auth/keyed-hash.ts";
import { billingAccount } from "../billing/account.ts";
import { type BatchedRead, bothReads } from "../db/batched-read.ts";
import { agentSettings } from "../env.ts";
import { type Finding, scanStore, sqlSource } from "../erasure/scan.ts";
import { scrubText } from "../erasure/scrub.ts";
import type { AgentCaller } from "./caller.ts";
import { ParleyChatAgent } from "./chat-agent.ts";
import { contextWindow } from "./context.ts";
import type { FrameDecision } from "./frames.ts";
import { MeteringMiddleware } from "./metering-middleware.ts";
import { errorReply, noticeReply, stallNotice } from "./reply-endings.ts";
import { chooseTurn, previewTurnModel, turnContext } from "./turn-model.ts";
import { streamTurn } from "./turn-stream.ts";

export { CLOSE_ERASED, CLOSE_FORBIDDEN } from "./chat-agent.ts";

/**
 * What the server writes in an assistant message's metadata; the client never writes it
 * (`OnboardingReplyMetadata` in @parley/shared): `turnId` (its non-billable usage rows are
 * `<turnId>:<n>`, one per call), the `profile` version and `model` it ran with, `freeTurnsLeft`,
 * `finish` (`completed`, `stopped`, `failed`) and `code` (`preview_exhausted`, or why a reply
 * stopped or failed: `model_error`, `model_stalled`, ...). The preview is free: no reply carries
 * a cost.
 */
export type OnboardingMetadata = OnboardingReplyMetadata;

interface OnboardingTurn {
  caller: AgentCaller;
  project: ProjectRow;
  /** The preview's profile version and its (free-preview) model, resolved at admission. */
  chosen: ResolvedTurn;
}

/**
 * The free onboarding preview of one project (name = project id): a chat any member of the project's
 * org may use, free for the org but metered, bounded by a per-project allowance of user turns that
 * lives outside the transcript (clearing the chat does not reset it), a per-org daily cap and a
 * per-user rate limit.
 */
export class OnboardingAgent extends ParleyChatAgent<OnboardingTurn> {
  override maxPersistedMessages = 60;
  // Every submitted message gets its answer, in order: the preview is free, so nothing to protect.
  override messageConcurrency = "queue" as const;

  protected readonly toolApprovals = false;

  // Every member of the org shares this chat: only an owner or admin may clear it (frames.ts).
  protected readonly sharedChat = true;

  protected readonly agentName = "onboarding-agent";

  protected ownsCaller(caller: AgentCaller): boolean {
    return caller.projectId === this.name;
  }

  /** The caller's access; what the preview's turns resolve to is read again with it (a push). */
  protected accessCheck(caller: AgentCaller): BatchedRead<void> {
    return bothReads(
      projectAccessRead(this.env.DB, caller.userId, this.name),
      this.#resolver.refreshing(turnContext(caller, "preview")),
    );
  }

  /** What the preview's turns run with, kept between turns (assistants/resolve.ts). */
  readonly #resolver = new TurnResolver(this.env, {
    maxAgeMs: agentSettings(this.env).authzCacheMs,
    kept: this.kept,
  });

  /** A push (a profile's version, the preview's profile, the org's models): resolved again. */
  protected override forgetAccess(): void {
    this.#resolver.forget();
  }

  /** Authors already entered in `preview_authors` by this instance: one D1 write per author. */
  readonly #knownAuthors = new Set<string>();

  protected async admitTurn(
    caller: AgentCaller,
    decision: Extract<FrameDecision, { kind: "forward" }>,
  ): Promise<OnboardingTurn> {
    // The preview's own profile and model (no D1 read while kept); a model named in the chat
    // body is refused (the preview runs its own), before the message is stored.
    const choosing = chooseTurn(this.#resolver, turnContext(caller, "preview", decision.model));
    choosing.catch(() => undefined);
    // Membership is checked again at every turn: a removed member stops here, at once.
    const { project } = await projectAccess(this.env.DB, caller.userId, this.name);
    const chosen = await choosing;
    if (!this.#knownAuthors.has(caller.userId)) {
      // Before their message is stored, so an erasure of them always knows to look here.
      await this.env.DB.prepare(
        "INSERT INTO preview_authors (project_id, user_id, org_id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
      )
        .bind(this.name, caller.userId, caller.orgId)
        .run();
      this.#knownAuthors.add(caller.userId);
    }
    // Keyed by a hash: the limiter's counters never hold a user id.
    const { success } = await this.env.PREVIEW_RATE_LIMITER.limit({
      key: await keyedHash(this.env.ERASURE_HASH_KEY, "preview-rate", caller.userId),
    });
    if (!success)
      throw new AppError("rate_limited", "Too many messages; wait a moment and try again");
    return { caller, project, chosen };
  }

  get #allowance(): number {
    return agentSettings(this.env).preview.turns;
  }

  /** Free turns left in this project's preview. */
  freeTurnsLeft(): number {
    return Math.max(0, this.#allowance - this.counter("turns_used"));
  }

  override async onChatMessage(
    _onFinish: unknown,
    options?: OnChatMessageOptions,
  ): Promise<Response | undefined> {
    const requestId = options?.requestId ?? crypto.randomUUID();
    this.stopIfStoppedEarly(requestId);
    const turn = this.admitted.get(requestId);
    this.admitted.delete(requestId);
    // A turn the guard did not admit (an SDK recovery re-run after an eviction, say) gets no model
    // call: its caller cannot be re-checked here. The client sees a clear error and can resend.
    if (!turn) return errorReply("This reply was interrupted. Please send your message again.");

    // Admit: the preview's own allowance and the org's daily cap (the preview holds no credits).
    const admitted = await this.#admitPreview(turn);
    if (admitted instanceof Response) return admitted;
    // The profile and the model, resolved at admission (turn-model.ts, the seam).
    const model = previewTurnModel(turn.chosen, turn);
    // Stream, each call metered by the turn's middleware: recorded free for the org (price 0, the
    // provider's cost kept) under the server's id, never the client's request id, which a client
    // may send again after a clear.
    const turnId = `turn-${crypto.randomUUID()}`;
    const settings = agentSettings(this.env);
    const metering = new MeteringMiddleware({
      ledger: this.meter,
      turnId,
      payer: {
        billable: false,
        orgId: turn.caller.orgId,
        attribution: { memberId: turn.caller.userId, projectId: this.name, sessionId: null },
      },
      prices: model.prices,
      maxOutputTokens: model.maxOutputTokens,
      generationLookup: model.model.provider.type === "openrouter",
    });
    metering.watchStalls(
      settings.modelStallTimeoutMs,
      stallNotice(this, () => this.abortRequest(requestId, "model stalled"), requestId),
    );
    // The model sees a bounded window of the newest messages, like the assistant: the preview's
    // cost is bounded in tokens, not only in turns (the whole transcript stays stored and shown).
    const window = contextWindow(this.messages, settings.preview.contextTokens);
    const stream = streamTurn({
      env: this.env,
      metering,
      model,
      system: model.system(window.omitted),
      messages: await convertToModelMessages(window.messages),
      abortSignal: options?.abortSignal,
      coalesceMs: settings.streamCoalesceMs,
      start: {
        turnId,
        freeTurnsLeft: admitted.freeTurnsLeft,
        ...model.ranWith,
      } satisfies OnboardingMetadata,
      completed: (): OnboardingMetadata => ({ finish: "completed" }),
      fallbackErrorText:
        "The model failed to answer. Nothing was charged to your organization; please try again.",
      agent: this,
      requestId,
    });
    // A stopped or failed reply never reaches its end: it says how it ended when stored.
    this.expectEnding(turnId, () => {
      const ending = stream.ending();
      return ending ? { now: ending } : null;
    });
    return stream.response;
  }

  /**
   * A preview turn against the project's allowance and the org's daily cap: the free turns left
   * after it, or the notice that there are none (no model call).
   */
  async #admitPreview(turn: OnboardingTurn): Promise<Response | { freeTurnsLeft: number }> {
    const exhausted = (text: string) =>
      noticeReply(text, {
        finish: "completed",
        code: "preview_exhausted",
        freeTurnsLeft: 0,
      } satisfies OnboardingMetadata);
    const used = this.counter("turns_used");
    if (used >= this.#allowance) {
      return exhausted(
        "You have used all the free preview messages of this project. Open an assistant session to keep going.",
      );
    }
    const admitted = await billingAccount(this.env, turn.caller.orgId).admitPreviewTurn(
      agentSettings(this.env).preview.orgDailyCap,
    );
    if (!admitted.ok) {
      return exhausted(
        "Your organization has used today's free preview messages. Open an assistant session to keep going.",
      );
    }
    // Counted before the call: a failed or aborted turn still cost money and still counts.
    this.setCounter("turns_used", used + 1);
    return { freeTurnsLeft: this.#allowance - used - 1 };
  }

  /**
   * Erasure of a member from this shared chat: removes every message they wrote (each user message
   * carries its author in server-written metadata) and the replies to it, for everyone, and scrubs
   * their id and email (any letter case) from what is left: others' messages naming them, replies
   * echoing it. Their attribution in usage still waiting to land becomes their pseudonym. Turns in
   * flight finish first. Idempotent. Messages stored before authors were recorded (2026-12-01) carry
   * no author and cannot be told apart (docs/2026-12-01-data-retention.md).
   */
  async eraseSubject(
    userId: string,
    pseudonym: string,
    email: string | null,
  ): Promise<{ removed: number }> {
    await this.waitUntilStable({ timeout: 5_000 });
    const replacements = [
      { find: userId, replace: pseudonym },
      ...(email ? [{ find: email, replace: "[erased]" }] : []),
    ];
    const kept: UIMessage[] = [];
    let dropping = false;
    let changed = false;
    for (const message of this.messages) {
      if (message.role === "user") {
        dropping = (message.metadata as { authorId?: unknown } | undefined)?.authorId === userId;
      }
      if (dropping) continue;
      const text = JSON.stringify(message);
      const scrubbed = scrubText(text, replacements);
      changed ||= scrubbed !== text;
      kept.push(scrubbed === text ? message : (JSON.parse(scrubbed) as UIMessage));
    }
    const removed = this.messages.length - kept.length;
    if (removed > 0 || changed) await this.persistMessages(kept, [], { _deleteStaleRows: true });
    this.meter.rewritePending(userId, pseudonym);
    this.#knownAuthors.delete(userId);
    return { removed };
  }

  /** The erasure's verification scan of this chat's storage, every table (see erasure/scan.ts). */
  scanFor(needles: string[]): Promise<Finding[]> {
    return scanStore(sqlSource(this.ctx.storage.sql), { needles });
  }
}
