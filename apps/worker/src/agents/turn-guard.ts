import { AppError, type ErrorCode } from "@parley/shared";
import type { UIMessage } from "ai";
import type { AgentCaller } from "./caller.ts";
import type { FrameDecision, FrameRefusal } from "./frames.ts";

/** How many recent chat requests a shared chat remembers the author of. */
const REQUEST_AUTHORS = 256;

export type Refusal = {
  code: ErrorCode | FrameRefusal["code"];
  message: string;
  /** The input it is about, as an HTTP error names it (`model`: the turn's model was refused). */
  field?: string;
  requestId?: string;
  /** What the client needs beyond the code to act on it (which limit stopped a turn). */
  details?: Record<string, string>;
};

/**
 * A turn refused at admission with more to say than its code: which spend limit stopped it and
 * when that limit resets, so the chat can name it and lead to exactly that setting.
 */
export class TurnRefusal extends AppError {
  readonly details: Record<string, string>;

  constructor(code: ErrorCode, message: string, details: Record<string, string>) {
    super(code, message);
    this.details = details;
  }
}

/** A refusal as a `parley_error` frame; for a chat request, also the SDK's error and done frames. */
export function refusalFrames(refusal: Refusal): string[] {
  const frames = [
    JSON.stringify({
      type: "parley_error",
      requestId: refusal.requestId ?? null,
      error: {
        code: refusal.code,
        message: refusal.message,
        ...(refusal.field === undefined ? {} : { field: refusal.field }),
        ...(refusal.details && Object.keys(refusal.details).length > 0
          ? { details: refusal.details }
          : {}),
      },
    }),
  ];
  if (refusal.requestId) {
    frames.push(
      JSON.stringify({
        type: "cf_agent_use_chat_response",
        id: refusal.requestId,
        body: refusal.message,
        done: false,
        error: true,
      }),
      JSON.stringify({
        type: "cf_agent_use_chat_response",
        id: refusal.requestId,
        body: "",
        done: true,
        outcome: "error",
      }),
    );
  }
  return frames;
}

/**
 * Who sent each recent chat request of a shared chat, by request id (the newest `REQUEST_AUTHORS`
 * of them). Every connection of a shared chat sees every request id in the broadcast frames, so a
 * member could otherwise stop someone else's reply, or send a request under its id (the SDK keys a
 * turn's abort signal by it).
 */
export class RequestAuthors {
  readonly #authors = new Map<string, string>();

  note(requestId: string, userId: string): void {
    this.#authors.delete(requestId);
    this.#authors.set(requestId, userId);
    for (const oldest of this.#authors.keys()) {
      if (this.#authors.size <= REQUEST_AUTHORS) break;
      this.#authors.delete(oldest);
    }
  }

  /** The request ids `userId` sent, of those remembered. */
  *requestsOf(userId: string): Iterable<string> {
    for (const [requestId, author] of this.#authors) if (author === userId) yield requestId;
  }

  /**
   * A refusal of a frame that acts on another member's turn: stopping their reply (an owner or
   * admin may, as they may clear the chat), or a chat request under their request id.
   */
  othersTurn(
    sender: AgentCaller | null,
    decision: Extract<FrameDecision, { kind: "forward" }>,
  ): Refusal | null {
    const requestId = decision.cancel?.requestId ?? (decision.trigger && decision.requestId);
    if (!requestId) return null;
    const author = this.#authors.get(requestId);
    if (author === undefined || author === sender?.userId) return null;
    if (decision.cancel) {
      if (sender?.role === "owner" || sender?.role === "admin") return null;
      return { code: "forbidden", message: "Only its author can stop this reply" };
    }
    return { code: "conflict", message: "This request id is already in use", requestId };
  }
}

/**
 * Tool calls whose answer was admitted and handed to the SDK, which applies it to the transcript a
 * moment later: a second answer in between (two clicks in the same tick) is refused here, the
 * transcript's `approval-requested` state refuses it afterwards (frames.ts).
 */
export class ToolAnswers {
  readonly #answering = new Set<string>();

  /**
   * Marks `toolCallId` as being answered, unless it already is (then false). Checked and marked
   * before any await: two answers in the same tick admit one.
   */
  claim(toolCallId: string, messages: readonly UIMessage[]): boolean {
    if (this.#answering.has(toolCallId)) return false;
    this.#forgetApplied(messages);
    this.#answering.add(toolCallId);
    return true;
  }

  /** The answer was not admitted after all. */
  release(toolCallId: string): void {
    this.#answering.delete(toolCallId);
  }

  /** Drops the answers the SDK has applied (the transcript no longer waits for them). */
  #forgetApplied(messages: readonly UIMessage[]): void {
    if (this.#answering.size === 0) return;
    const waiting = new Set<string>();
    for (const message of messages) {
      for (const part of message.parts) {
        if ("toolCallId" in part && "state" in part && part.state === "approval-requested") {
          waiting.add(part.toolCallId);
        }
      }
    }
    for (const id of this.#answering) if (!waiting.has(id)) this.#answering.delete(id);
  }
}

/** At most this many chat requests waiting for their turn to start are remembered. */
const WAITING_REQUESTS = 64;

/**
 * Stops that arrive before their turn starts. The SDK makes a request's abort signal only when its
 * turn starts (after the guard's admission, which may wait on D1 or the org's account, and after
 * the SDK stores the message), and a cancel for a request it has not seen yet does nothing: the
 * reply then ran, and was charged, after the person pressed Stop. The guard notes each chat request
 * it lets through and each cancel for one still waiting; the turn, once started, stops itself
 * (`started`) before any model call.
 */
export class EarlyStops {
  readonly #waiting = new Set<string>();
  readonly #stopped = new Set<string>();

  /** A chat request on its way to its turn. */
  expect(requestId: string): void {
    this.#waiting.add(requestId);
    for (const oldest of this.#waiting) {
      if (this.#waiting.size <= WAITING_REQUESTS) break;
      this.forget(oldest);
    }
  }

  /** A cancel: remembered when its request has not started yet (otherwise the SDK has it). */
  cancel(requestId: string): void {
    if (this.#waiting.has(requestId)) this.#stopped.add(requestId);
  }

  /** The request's turn starts: whether it was stopped on its way. */
  started(requestId: string): boolean {
    this.#waiting.delete(requestId);
    return this.#stopped.delete(requestId);
  }

  /** The request will not start (refused). */
  forget(requestId: string): void {
    this.#waiting.delete(requestId);
    this.#stopped.delete(requestId);
  }
}
