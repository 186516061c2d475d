/**
 * One chat request and its streamed reply. A `Turn` is fed the `cf_agent_use_chat_response`
 * frames of its request id by the `ChatClient`, live or replayed after a reconnect, and applies
 * each chunk exactly once (by the frame's `seq`).
 */
import { performance } from "node:perf_hooks";
import { readUIMessageStream, type UIMessage, type UIMessageChunk } from "ai";
import { type ChatResponseFrame, chunkOf, type TurnOutcome } from "./protocol.ts";

/** A tool call the reply made, as far as its chunks told. */
export interface ToolCall {
  toolCallId: string;
  toolName: string;
  input?: unknown;
  output?: unknown;
  errorText?: string;
}

/** What `turn.done` resolves to. It never rejects: a failed turn says so in `outcome`/`error`. */
export interface TurnResult {
  requestId: string;
  /** The assistant message id the server chose (from the `start` chunk). */
  messageId: string | undefined;
  /** Every text delta, joined. */
  text: string;
  /** Every reasoning delta, joined. */
  reasoning: string;
  toolCalls: ToolCall[];
  /** Each `messageMetadata` carried by a `start`, `message-metadata` or `finish` chunk, in order. */
  metadata: Record<string, unknown>[];
  /** The same, merged as the message's `metadata` ends up (later keys win). */
  messageMetadata: Record<string, unknown> | undefined;
  outcome: TurnOutcome;
  /** The error frame's text (or the reason the client gave up); absent when none. */
  error?: string;
  /** From `send()` to the first text or reasoning delta; `null` when none arrived. */
  firstTokenMs: number | null;
  /** From `send()` to the terminal frame. */
  totalMs: number;
  /** The assistant message as built from the chunks (or, after a reconnect, as persisted). */
  message: UIMessage | undefined;
  /** How many times the connection dropped while this turn was in flight. */
  interruptions: number;
}

export interface TurnHooks {
  /** Sends the cancel frame for this request. */
  cancel(requestId: string): void;
  /** A new snapshot of the assistant message, for the client's transcript. */
  message(message: UIMessage): void;
  /** The persisted assistant message, looked up after an interrupted turn ends. */
  reconcile(turn: Turn): Promise<UIMessage | undefined>;
  /** The turn settled; the client forgets it. */
  settled(turn: Turn): void;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function partsText(message: UIMessage, type: "text" | "reasoning"): string {
  let text = "";
  for (const part of message.parts) if (part.type === type) text += part.text;
  return text;
}

export class Turn {
  readonly requestId: string;
  readonly userMessage: UIMessage;
  /** Every UI-message-stream chunk applied, in order; a replayed chunk is not repeated. */
  readonly chunks: UIMessageChunk[] = [];
  /** Resolves when the turn is over, however it ended. */
  readonly done: Promise<TurnResult>;
  /** The socket generation the request frame went out on; 0 while it waits in the outbox. */
  sentOn = 0;

  #hooks: TurnHooks;
  #abortTimeoutMs: number;
  #startedAt = performance.now();
  #firstTokenAt: number | undefined;
  #endedAt: number | undefined;
  #lastSeq = -1;
  #deltas: string[] = [];
  #reasoning = "";
  #tools = new Map<string, ToolCall>();
  #metadata: Record<string, unknown>[] = [];
  #messageId: string | undefined;
  #message: UIMessage | undefined;
  #outcome: TurnOutcome | undefined;
  #error: string | undefined;
  #interruptions = 0;
  #closed = false;
  #wake: (() => void) | undefined;
  #abortTimer: NodeJS.Timeout | undefined;
  #controller!: ReadableStreamDefaultController<UIMessageChunk>;
  #building: Promise<void>;
  #resolve!: (result: TurnResult) => void;

  constructor(
    requestId: string,
    userMessage: UIMessage,
    hooks: TurnHooks,
    options: { abortTimeoutMs?: number } = {},
  ) {
    this.requestId = requestId;
    this.userMessage = userMessage;
    this.#hooks = hooks;
    this.#abortTimeoutMs = options.abortTimeoutMs ?? 5_000;
    this.done = new Promise((resolve) => {
      this.#resolve = resolve;
    });
    const stream = new ReadableStream<UIMessageChunk>({
      start: (controller) => {
        this.#controller = controller;
      },
    });
    // The SDK's own reducer builds the message, so parts come out exactly as useChat shows them.
    this.#building = (async () => {
      try {
        for await (const message of readUIMessageStream({ stream, onError: () => {} })) {
          this.#message = message;
          hooks.message(message);
        }
      } catch {
        // A chunk the reducer rejects leaves the raw chunks, text and outcome intact.
      }
    })();
  }

  /** The text deltas as they arrive; ends when the turn does. Each iteration starts over. */
  get textStream(): AsyncIterable<string> {
    return { [Symbol.asyncIterator]: () => this.#iterate() };
  }

  /** The text so far. */
  get text(): string {
    return this.#deltas.join("");
  }

  /** True until the terminal frame (or the client's giving up) has been handled. */
  get pending(): boolean {
    return this.#outcome === undefined;
  }

  get messageId(): string | undefined {
    return this.#messageId;
  }

  get interrupted(): boolean {
    return this.#interruptions > 0;
  }

  /**
   * Asks the server to stop this request (`cf_agent_chat_request_cancel`). The turn ends when the
   * server's terminal frame (`outcome: "aborted"`) arrives, or after `abortTimeoutMs` without one.
   */
  abort(): void {
    if (!this.pending || this.#abortTimer) return;
    this.#hooks.cancel(this.requestId);
    this.#abortTimer = setTimeout(() => this.end("aborted"), this.#abortTimeoutMs);
    this.#abortTimer.unref();
  }

  /** @internal The connection dropped while this turn was in flight. */
  interrupt(): void {
    if (this.pending) this.#interruptions++;
  }

  /** @internal Applies one response frame of this request. */
  handle(frame: ChatResponseFrame): void {
    if (!this.pending) return;
    if (frame.seq !== undefined) {
      // A replay re-sends the stream from its first chunk: skip what was applied live.
      if (frame.seq <= this.#lastSeq) return;
      this.#lastSeq = frame.seq;
    }
    if (frame.error) {
      // As the SDK's transport does: an error frame ends the request's stream.
      this.#error = frame.body || "Stream error";
      this.end("error");
      return;
    }
    const chunk = chunkOf(frame);
    if (chunk) this.#apply(chunk);
    if (frame.done) this.end(frame.outcome ?? (this.#error === undefined ? "completed" : "error"));
  }

  /** @internal Ends the turn (reconciling with the persisted message if it was interrupted). */
  end(outcome: TurnOutcome, error?: string): void {
    if (!this.pending) return;
    this.#outcome = outcome;
    if (error !== undefined) this.#error ??= error;
    this.#endedAt = performance.now();
    clearTimeout(this.#abortTimer);
    void this.#settle();
  }

  #apply(chunk: UIMessageChunk): void {
    this.chunks.push(chunk);
    this.#controller.enqueue(chunk);
    switch (chunk.type) {
      case "start":
        if (chunk.messageId !== undefined) this.#messageId = chunk.messageId;
        this.#recordMetadata(chunk.messageMetadata);
        break;
      case "message-metadata":
      case "finish":
        this.#recordMetadata(chunk.messageMetadata);
        break;
      case "text-delta":
        this.#firstTokenAt ??= performance.now();
        this.#push(chunk.delta);
        break;
      case "reasoning-delta":
        this.#firstTokenAt ??= performance.now();
        this.#reasoning += chunk.delta;
        break;
      case "tool-input-start":
        this.#tools.set(chunk.toolCallId, {
          toolCallId: chunk.toolCallId,
          toolName: chunk.toolName,
        });
        break;
      case "tool-input-available":
        this.#tools.set(chunk.toolCallId, {
          ...this.#tools.get(chunk.toolCallId),
          toolCallId: chunk.toolCallId,
          toolName: chunk.toolName,
          input: chunk.input,
        });
        break;
      case "tool-output-available": {
        const call = this.#tools.get(chunk.toolCallId);
        if (call) call.output = chunk.output;
        break;
      }
      case "tool-output-error": {
        const call = this.#tools.get(chunk.toolCallId);
        if (call) call.errorText = chunk.errorText;
        break;
      }
      case "error":
        this.#error = chunk.errorText;
        break;
    }
  }

  #recordMetadata(metadata: unknown): void {
    if (isRecord(metadata)) this.#metadata.push(metadata);
  }

  #push(delta: string): void {
    this.#deltas.push(delta);
    this.#wake?.();
  }

  async #settle(): Promise<void> {
    this.#controller.close();
    await this.#building;
    if (this.#interruptions > 0) await this.#reconcile();
    this.#closed = true;
    this.#wake?.();
    this.#hooks.settled(this);
    const merged = this.#metadata.length > 0 ? Object.assign({}, ...this.#metadata) : undefined;
    this.#resolve({
      requestId: this.requestId,
      messageId: this.#messageId,
      text: this.text,
      reasoning: this.#reasoning,
      toolCalls: [...this.#tools.values()],
      metadata: this.#metadata,
      messageMetadata: merged,
      outcome: this.#outcome ?? "interrupted",
      ...(this.#error !== undefined && { error: this.#error }),
      firstTokenMs: this.#firstTokenAt === undefined ? null : this.#firstTokenAt - this.#startedAt,
      totalMs: (this.#endedAt ?? performance.now()) - this.#startedAt,
      message: this.#message,
      interruptions: this.#interruptions,
    });
  }

  /**
   * After a drop, chunks streamed while the socket was down may be gone from the server's buffer
   * (it deletes them once the message is persisted). The persisted message is the truth: take the
   * text it has beyond what was streamed, as one more delta.
   */
  async #reconcile(): Promise<void> {
    let persisted: UIMessage | undefined;
    try {
      persisted = await this.#hooks.reconcile(this);
    } catch {
      return;
    }
    if (persisted === undefined) {
      if (this.#messageId === undefined && this.#outcome === "completed") {
        this.#outcome = "interrupted";
        this.#error ??= "The connection dropped before the server answered the request.";
      }
      return;
    }
    this.#messageId ??= persisted.id;
    const text = partsText(persisted, "text");
    const streamed = this.text;
    if (text.length > streamed.length && text.startsWith(streamed)) {
      this.#push(text.slice(streamed.length));
    }
    const reasoning = partsText(persisted, "reasoning");
    if (reasoning.length > this.#reasoning.length) this.#reasoning = reasoning;
    if (isRecord(persisted.metadata) && this.#metadata.length === 0) {
      this.#metadata.push(persisted.metadata);
    }
    this.#message = persisted;
    this.#hooks.message(persisted);
  }

  async *#iterate(): AsyncGenerator<string, void, undefined> {
    let index = 0;
    for (;;) {
      const delta = this.#deltas[index];
      if (delta !== undefined) {
        index++;
        yield delta;
        continue;
      }
      if (this.#closed) return;
      await new Promise<void>((resolve) => {
        const previous = this.#wake;
        this.#wake = () => {
          this.#wake = undefined;
          previous?.();
          resolve();
        };
      });
    }
  }
}
