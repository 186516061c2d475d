/**
 * How a reply ends, in the stored transcript and on the wire: the ending of a stopped or failed
 * reply (merged into it when the SDK stores it, and its cost once settled), the metadata a
 * completed reply carries, replies that are only an error or a notice, and the stall guard that
 * cuts a model that stopped sending.
 */
import { isAppError } from "@parley/shared";
import {
  APICallError,
  createUIMessageStream,
  createUIMessageStreamResponse,
  type UIMessage,
  type UIMessageChunk,
} from "ai";
import { isToolCallError } from "../tools/call-error.ts";
import { type ChunkSink, type ChunkStage, stagedStream } from "./coalesce.ts";

/**
 * What a stopped or failed reply's metadata gets: `now` when the SDK stores it, `later` (if any)
 * once known (the settled cost), merged into the stored reply then.
 */
export interface ReplyEndingMetadata {
  now: Record<string, unknown>;
  later?: Promise<Record<string, unknown>>;
}

/** The server's turn id in an assistant message's metadata, or null. */
function turnIdOf(message: UIMessage): string | null {
  const turnId = (message.metadata as { turnId?: unknown } | undefined)?.turnId;
  return message.role === "assistant" && typeof turnId === "string" ? turnId : null;
}

function withMetadata(message: UIMessage, extra: Record<string, unknown>): UIMessage {
  return { ...message, metadata: { ...(message.metadata as object | undefined), ...extra } };
}

/** How a reply ended, as its metadata says (server-written; absent on replies stored before 2026-12-01). */
export type { ReplyFinish } from "@parley/shared";

/**
 * Why a reply stopped or failed, from the turn's abort signal and the error the model stream
 * reported: the member's own stop (a cancel frame: the SDK aborts without a reason) is `stopped`,
 * whatever error the cut stream reported; the server cutting a reply because the member lost access
 * is `stopped` with `access_ended`; a stalled model is `failed` with `model_stalled`; an error on
 * the stream is `failed` with its code (`model_error` for anything that is not our own). Null when
 * the reply completed.
 */
export function replyEnding(
  signal: AbortSignal | undefined,
  failure: string | undefined,
): { finish: "stopped" | "failed"; code?: string } | null {
  if (signal?.aborted) {
    const reason: unknown = signal.reason;
    if (reason === "model stalled") return { finish: "failed", code: "model_stalled" };
    if (reason === "access ended") return { finish: "stopped", code: "access_ended" };
    // The member's stop. An error the stream reported as well is the abort's own doing (a cut
    // fetch surfaces as an error too): a model that had really failed first would have ended the
    // stream, leaving nothing to stop.
    return { finish: "stopped" };
  }
  if (failure !== undefined) return { finish: "failed", code: failure };
  return null;
}

/**
 * What the person is told when a model call failed, with the code its reply carries: our own
 * errors keep their code and message; a 429 the provider answered before streaming is
 * `rate_limited`, with the wait its `Retry-After` asks for (nothing was generated, so nothing is
 * charged); anything else is `model_error` with the agent's own `fallback` text.
 */
export function modelFailure(error: unknown, fallback: string): { code: string; message: string } {
  if (isAppError(error)) return { code: error.code, message: error.message };
  // A tool source's failure, written for the person (never arguments, tokens or results): the
  // tool's card shows it, and the model reads the same as the tool's error.
  if (isToolCallError(error)) return { code: error.code, message: error.message };
  if (APICallError.isInstance(error) && error.statusCode === 429) {
    const seconds = retryAfterSeconds(error.responseHeaders?.["retry-after"]);
    const when = seconds === null ? "shortly" : `in ${seconds} second${seconds === 1 ? "" : "s"}`;
    return {
      code: "rate_limited",
      message: `The model provider is limiting requests right now. Please try again ${when}; nothing was charged for this message.`,
    };
  }
  return { code: "model_error", message: fallback };
}

/** `Retry-After` as whole seconds (it may be seconds or an HTTP date), or null when unusable. */
function retryAfterSeconds(header: string | undefined, now = Date.now()): number | null {
  if (header === undefined) return null;
  const seconds = /^\d+$/.test(header.trim())
    ? Number(header.trim())
    : Math.ceil((Date.parse(header) - now) / 1000);
  return Number.isFinite(seconds) && seconds > 0 && seconds <= 86_400 ? seconds : null;
}

/** The code a failed reply carries: our own errors keep theirs, a rate limit is `rate_limited`. */
export const failureCode = (error: unknown): string => modelFailure(error, "").code;

/**
 * The failed reply's code, after telling the chat's sockets, as a typed `parley_error`, about a
 * failure the person can act on (a rate limit: when to try again). Anything else reaches them only
 * as the stream's error text.
 */
export function announceFailure(
  agent: { broadcast(msg: string): void },
  requestId: string,
  error: unknown,
): string {
  const failure = modelFailure(error, "");
  if (failure.code === "rate_limited") {
    agent.broadcast(JSON.stringify({ type: "parley_error", requestId, error: failure }));
  }
  return failure.code;
}

/**
 * A reply's last touches, on its way out. `metadata()` goes as a `message-metadata` chunk just
 * before the stream's `finish` chunk: the SDK keeps a finish chunk's own metadata in the stored
 * reply but replaces it on the wire (with the finish reason), so a separate chunk is what reaches
 * both the live client and the transcript. And a step that made no model call (the metering
 * middleware refused it: its `start-step` is followed at once by its `finish-step`) is left out,
 * so the stored reply does not end in an empty step.
 */
export function endOfReply(
  metadata: () => object,
): TransformStream<UIMessageChunk, UIMessageChunk> {
  return stagedStream((emit) => endOfReplyStage(metadata, emit));
}

/** `endOfReply` as a stage sending to `emit` (coalesce.ts `stagedStream`). */
export function endOfReplyStage(metadata: () => object, emit: ChunkSink): ChunkStage {
  let step: UIMessageChunk | null = null;
  return {
    push(chunk) {
      if (step) {
        const held = step;
        step = null;
        if (chunk.type === "finish-step") return;
        emit(held);
      }
      if (chunk.type === "start-step") {
        // Held until the next chunk says whether the step made a call.
        step = chunk;
        return;
      }
      if (chunk.type === "finish") {
        emit({ type: "message-metadata", messageMetadata: metadata() });
      }
      emit(chunk);
    },
    end() {
      if (step) emit(step);
      step = null;
    },
    cancel() {
      step = null;
    },
  };
}

/**
 * The ending of the reply in flight, by its turn id (the `turnId` of its metadata), asked when the
 * SDK stores that reply: null for a reply that completed (its stream carried its metadata), else
 * what to merge now (how it ended, and its `code`) and, when it is known later, what to merge then
 * (the assistant's settled cost). A stopped or failed stream never reaches its `finish` chunk and
 * the SDK stores such a reply at once, before the cut call is settled, so this is how the ending
 * and the cost reach the stored transcript. Storing is never held back for the cost: a member who
 * stops a reply and writes again must not wait for a generation lookup, and a clear in between
 * must not be undone by a late write.
 */
export class ReplyEndings {
  readonly #endings = new Map<string, () => ReplyEndingMetadata | null>();

  /**
   * Registers how the reply of turn `turnId` ended. Turns run one at a time and a turn's reply is
   * stored before the next one starts, so older endings no reply claimed (a reply stopped before it
   * had any content is not stored) are dropped here.
   */
  expect(turnId: string, ending: () => ReplyEndingMetadata | null): void {
    this.#endings.clear();
    this.#endings.set(turnId, ending);
  }

  /**
   * `messages` with the endings of their replies merged into the server-written metadata; `onLate`
   * gets what is known only later (the settled cost), to merge into the stored reply then.
   */
  merge(
    messages: UIMessage[],
    onLate: (turnId: string, later: Promise<Record<string, unknown>>) => void,
  ): UIMessage[] {
    if (this.#endings.size === 0) return messages;
    return messages.map((message) => {
      const turnId = turnIdOf(message);
      const ending = turnId === null ? undefined : this.#endings.get(turnId);
      if (turnId === null || !ending) return message;
      this.#endings.delete(turnId);
      const found = ending();
      if (!found) return message;
      if (found.later) onLate(turnId, found.later);
      return withMetadata(message, found.now);
    });
  }
}

/** The transcript with `extra` merged into turn `turnId`'s reply, or null when it is not there. */
export function mergeLate(
  messages: readonly UIMessage[],
  turnId: string,
  extra: Record<string, unknown>,
): UIMessage[] | null {
  const index = messages.findIndex((message) => turnIdOf(message) === turnId);
  const stored = messages[index];
  if (!stored) return null;
  const updated = [...messages];
  updated[index] = withMetadata(stored, extra);
  return updated;
}

/**
 * Calls `onStall` when a model call has sent nothing for `timeoutMs` (a hung provider would otherwise
 * hold the turn, and the chat, forever). Every chunk resets the clock.
 *
 * A chunk only moves the deadline: the one timer, when it fires early, sleeps again for what is
 * left. Rearming a runtime timer per chunk cost two timer calls per token on the turn's thread
 * (`pnpm bench profile`, docs/2026-11-29-performance.md).
 */
export class StallGuard {
  readonly #timeoutMs: number;
  readonly #onStall: () => void;
  readonly #now: () => number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #lastChunkAt: number;

  constructor(timeoutMs: number, onStall: () => void, now: () => number = Date.now) {
    this.#timeoutMs = timeoutMs;
    this.#onStall = onStall;
    this.#now = now;
    this.#lastChunkAt = now();
    this.#arm(timeoutMs);
  }

  touch(): void {
    this.#lastChunkAt = this.#now();
  }

  done<T>(then: () => T): T {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    return then();
  }

  #arm(ms: number): void {
    this.#timer = setTimeout(() => {
      const left = this.#lastChunkAt + this.#timeoutMs - this.#now();
      if (left > 0) this.#arm(left);
      else {
        this.#timer = undefined;
        this.#onStall();
      }
    }, ms);
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

/** What a stalled call does, for both agents: tells the chat, then aborts the turn. */
export function stallNotice(
  agent: { broadcast(msg: string): void },
  abort: () => void,
  requestId: string,
): () => void {
  return () => {
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
  };
}
