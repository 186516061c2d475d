/**
 * A small client of the agents chat WebSocket protocol, for the embeddable assistant: the same
 * `ParleyChatState` as `useParleyChat` without the AI SDK, `@ai-sdk/react` and the agents client
 * (~90 KB gzip, mostly `ai`'s module-level schemas), which an embed cannot afford on first open.
 * The web app keeps the SDK path; both speak the same frames (node_modules/agents, chat/react.js
 * and ws-chat-transport):
 *
 * - out: `cf_agent_use_chat_request` (`init.body`: `{ messages: [the new message], trigger }`;
 *   Parley's server rebuilds the turn from its own transcript), `cf_agent_chat_request_cancel`,
 *   `cf_agent_stream_resume_request` (on every open), `cf_agent_stream_resume_ack`,
 *   `cf_agent_tool_approval`.
 * - in: `cf_agent_use_chat_response` (`body` is one UI message stream chunk as JSON, or the error
 *   text when `error`; `done` ends the request; `replay` marks chunks re-sent after an ack,
 *   `continuation` a turn continued after a tool approval), `cf_agent_stream_resuming` (a stream
 *   is live: ack to get it), `cf_agent_stream_resume_none`, `cf_agent_chat_messages`,
 *   `cf_agent_chat_clear`, `cf_agent_message_updated`, `cf_agent_chat_recovering` (the server
 *   is re-running an interrupted turn: busy until it streams or says it stopped), and Parley's
 *   own `parley_error`.
 *
 * Only types come from `ai`. Framework-free: `useLightChat` binds it to React (or Preact).
 */
import type { ChatStatus, UIMessage } from "ai";
import { closeNotice, type ParleyError, readParleyError } from "./protocol.ts";
import type { ReturnedDraft } from "./use-parley-chat.ts";

type Part = UIMessage["parts"][number];
/** A part as the reducer builds it: the SDK's shapes, written field by field. */
type LoosePart = Record<string, unknown> & { type: string };
/** One UI message stream chunk, as it crosses the wire (checked field by field). */
export type StreamChunk = Record<string, unknown> & { type: string };

/** What the reducer keeps for one request (a turn) between its chunks. */
export interface TurnState {
  /** The assistant message the chunks build (null before `start`). */
  messageId: string | null;
  /** Parts of that message that predate this turn (a continuation extends the reply). */
  base: number;
  continuation: boolean;
  /** Open text and reasoning parts by stream id, as indexes into the message's parts. */
  open: Map<string, number>;
  /** Streamed tool input text by tool call id. */
  inputText: Map<string, string>;
  /** The stream's `error` chunk, if any. */
  errorText: string | null;
}

export const newTurn = (continuation = false): TurnState => ({
  messageId: null,
  base: 0,
  continuation,
  open: new Map(),
  inputText: new Map(),
  errorText: null,
});

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/** Metadata merges as the SDK's does: objects key by key (nested objects too), else replaced. */
function mergeMetadata(current: unknown, next: unknown): unknown {
  if (!isRecord(current) || !isRecord(next)) return next;
  const merged: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(next)) merged[key] = mergeMetadata(current[key], value);
  return merged;
}

function randomId(): string {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Applies one chunk of request `turn` to the transcript and returns the new transcript (the same
 * array when nothing changed). Pure apart from `turn`, which it updates. A `start` of a message
 * already there (a replay after a reconnect, or a reply the transcript already had) rebuilds it
 * from the turn's first part, so replayed chunks never double.
 */
export function applyChunk(
  messages: UIMessage[],
  turn: TurnState,
  chunk: StreamChunk,
  makeId: () => string = randomId,
): UIMessage[] {
  if (chunk.type === "start") return startMessage(messages, turn, chunk, makeId);
  // A chunk before any `start` (not sent by the SDK's server, but cheap to tolerate).
  let list = messages;
  if (turn.messageId === null || !list.some((m) => m.id === turn.messageId))
    list = startMessage(list, turn, { type: "start" }, makeId);
  const index = list.findIndex((m) => m.id === turn.messageId);
  const message = list[index] as UIMessage;
  const parts = [...message.parts] as LoosePart[];
  let metadata = message.metadata;
  const put = (i: number, part: LoosePart) => {
    parts[i] = part;
  };
  const toolIndex = (toolCallId: unknown) =>
    parts.findIndex((part) => part.toolCallId === toolCallId);
  const toolBase = (c: StreamChunk): LoosePart => {
    const name = str(c.toolName) ?? "tool";
    return {
      ...(c.dynamic === true ? { type: "dynamic-tool", toolName: name } : { type: `tool-${name}` }),
      toolCallId: c.toolCallId,
      ...(c.providerExecuted === undefined ? {} : { providerExecuted: c.providerExecuted }),
      ...(c.title === undefined ? {} : { title: c.title }),
      // A tool source's call names its source here (the approval card shows which server acts).
      ...(c.toolMetadata === undefined ? {} : { toolMetadata: c.toolMetadata }),
    };
  };
  const updateTool = (c: StreamChunk, change: Record<string, unknown>) => {
    const i = toolIndex(c.toolCallId);
    if (i < 0) return false;
    put(i, { ...(parts[i] as LoosePart), ...change });
    return true;
  };

  switch (chunk.type) {
    case "text-start":
    case "reasoning-start": {
      const type = chunk.type === "text-start" ? "text" : "reasoning";
      turn.open.set(`${type}:${str(chunk.id) ?? ""}`, parts.length);
      parts.push({
        type,
        text: "",
        state: "streaming",
        ...(chunk.providerMetadata === undefined
          ? {}
          : { providerMetadata: chunk.providerMetadata }),
      });
      break;
    }
    case "text-delta":
    case "reasoning-delta": {
      const type = chunk.type === "text-delta" ? "text" : "reasoning";
      const key = `${type}:${str(chunk.id) ?? ""}`;
      let i = turn.open.get(key);
      if (i === undefined || !parts[i]) {
        i = parts.length;
        turn.open.set(key, i);
        parts.push({ type, text: "", state: "streaming" });
      }
      const part = parts[i] as LoosePart;
      put(i, { ...part, text: `${str(part.text) ?? ""}${str(chunk.delta) ?? ""}` });
      break;
    }
    case "text-end":
    case "reasoning-end": {
      const type = chunk.type === "text-end" ? "text" : "reasoning";
      const key = `${type}:${str(chunk.id) ?? ""}`;
      const i = turn.open.get(key);
      turn.open.delete(key);
      if (i !== undefined && parts[i]) put(i, { ...(parts[i] as LoosePart), state: "done" });
      break;
    }
    case "start-step":
      parts.push({ type: "step-start" });
      break;
    case "finish-step":
      // The SDK closes what a step left open: a new step's text starts a new part.
      turn.open.clear();
      break;
    case "tool-input-start": {
      turn.inputText.set(String(chunk.toolCallId), "");
      const i = toolIndex(chunk.toolCallId);
      const part = { ...toolBase(chunk), state: "input-streaming", input: undefined };
      if (i < 0) parts.push(part);
      else put(i, part);
      break;
    }
    case "tool-input-delta": {
      const id = String(chunk.toolCallId);
      const text = `${turn.inputText.get(id) ?? ""}${str(chunk.inputTextDelta) ?? ""}`;
      turn.inputText.set(id, text);
      let input: unknown;
      try {
        input = JSON.parse(text);
      } catch {
        return list; // partial JSON: the input shows once it parses
      }
      updateTool(chunk, { input });
      break;
    }
    case "tool-input-available": {
      turn.inputText.delete(String(chunk.toolCallId));
      const change = { state: "input-available", input: chunk.input };
      if (!updateTool(chunk, { ...toolBase(chunk), ...change }))
        parts.push({ ...toolBase(chunk), ...change });
      break;
    }
    case "tool-input-error": {
      const change = {
        state: "output-error",
        input: chunk.input,
        errorText: str(chunk.errorText) ?? "",
      };
      if (!updateTool(chunk, { ...toolBase(chunk), ...change }))
        parts.push({ ...toolBase(chunk), ...change });
      break;
    }
    case "tool-approval-request":
      updateTool(chunk, { state: "approval-requested", approval: { id: chunk.approvalId } });
      break;
    case "tool-approval-response": {
      const i = parts.findIndex(
        (part) => isRecord(part.approval) && part.approval.id === chunk.approvalId,
      );
      if (i >= 0)
        put(i, {
          ...(parts[i] as LoosePart),
          state: "approval-responded",
          approval: {
            id: chunk.approvalId,
            approved: chunk.approved === true,
            ...(chunk.reason === undefined ? {} : { reason: chunk.reason }),
          },
        });
      break;
    }
    case "tool-output-available":
      updateTool(chunk, {
        state: "output-available",
        output: chunk.output,
        ...(chunk.preliminary === true ? { preliminary: true } : {}),
      });
      break;
    case "tool-output-error":
      updateTool(chunk, { state: "output-error", errorText: str(chunk.errorText) ?? "" });
      break;
    case "tool-output-denied":
      updateTool(chunk, { state: "output-denied" });
      break;
    case "source-url":
      parts.push({
        type: "source-url",
        sourceId: chunk.sourceId,
        url: chunk.url,
        ...(chunk.title === undefined ? {} : { title: chunk.title }),
      });
      break;
    case "source-document":
      parts.push({
        type: "source-document",
        sourceId: chunk.sourceId,
        mediaType: chunk.mediaType,
        title: chunk.title,
        ...(chunk.filename === undefined ? {} : { filename: chunk.filename }),
      });
      break;
    case "file":
      parts.push({ type: "file", url: chunk.url, mediaType: chunk.mediaType });
      break;
    case "message-metadata":
    case "finish":
      if (chunk.messageMetadata !== undefined)
        metadata = mergeMetadata(metadata, chunk.messageMetadata);
      if (chunk.type === "finish") turn.open.clear();
      break;
    case "error":
      turn.errorText = str(chunk.errorText) ?? "Something went wrong";
      return list;
    default:
      if (chunk.type.startsWith("data-")) {
        if (chunk.transient === true) return list;
        const part: LoosePart = {
          type: chunk.type,
          ...(chunk.id === undefined ? {} : { id: chunk.id }),
          data: chunk.data,
        };
        const i =
          chunk.id === undefined
            ? -1
            : parts.findIndex((p) => p.type === chunk.type && p.id === chunk.id);
        if (i < 0) parts.push(part);
        else put(i, part);
        break;
      }
      return list; // abort, custom, steering and unknown chunks change no part
  }
  const next = [...list];
  next[index] = {
    ...message,
    parts: parts as Part[],
    ...(metadata === undefined ? {} : { metadata }),
  };
  return next;
}

function startMessage(
  messages: UIMessage[],
  turn: TurnState,
  chunk: StreamChunk,
  makeId: () => string,
): UIMessage[] {
  const wanted = str(chunk.messageId) ?? turn.messageId;
  turn.open.clear();
  turn.inputText.clear();
  let index = wanted === null ? -1 : messages.findIndex((m) => m.id === wanted);
  if (index < 0 && turn.continuation) {
    // A continuation extends the last reply.
    const last = messages.at(-1);
    if (last?.role === "assistant") index = messages.length - 1;
  }
  const next = [...messages];
  if (index < 0) {
    const id = wanted ?? makeId();
    turn.messageId = id;
    turn.base = 0;
    const message: UIMessage = { id, role: "assistant", parts: [] };
    if (chunk.messageMetadata !== undefined) message.metadata = chunk.messageMetadata;
    next.push(message);
    return next;
  }
  const message = messages[index] as UIMessage;
  if (turn.messageId !== message.id) {
    // First start of this turn: a continuation keeps the reply's parts, a fresh turn rebuilds it.
    turn.messageId = message.id;
    turn.base = turn.continuation ? message.parts.length : 0;
  }
  next[index] = {
    ...message,
    parts: message.parts.slice(0, turn.base),
    ...(chunk.messageMetadata === undefined
      ? {}
      : { metadata: mergeMetadata(message.metadata, chunk.messageMetadata) }),
  };
  return next;
}

/** The same messages (ids in order, and the last one whole: only it can grow). */
export function sameTranscript(a: readonly UIMessage[], b: readonly UIMessage[]): boolean {
  if (a.length !== b.length) return false;
  if (a.some((message, index) => message.id !== b[index]?.id)) return false;
  return JSON.stringify(a.at(-1)) === JSON.stringify(b.at(-1));
}

/** The parts of a WebSocket the client uses (the browser's, or a fake in tests). */
export interface SocketLike {
  readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(
    type: "open" | "close" | "message" | "error",
    listener: (event: never) => void,
  ): void;
}

export interface LightChatOptions {
  agent: "onboarding-agent" | "assistant-agent";
  name: string;
  /** Parley's host (and port). */
  host: string;
  /** A fresh single-use connect ticket, asked for before every (re)connect. */
  connectTicket: () => Promise<string>;
  /** The transcript from the server. */
  loadMessages: () => Promise<UIMessage[]>;
  /** Opens the socket (default: the browser's WebSocket). */
  openSocket?: (url: string) => SocketLike;
  /** Delay before reconnect attempt `n` (from 1). */
  reconnectDelay?: (attempt: number) => number;
  makeId?: () => string;
}

/** What the hook renders: the chat state plus the transcript's loading. */
export interface LightChatSnapshot {
  /** `loading` until the transcript is in; `failed` if it (or the first ticket) could not load. */
  phase: "loading" | "ready" | "failed";
  loadError: unknown;
  messages: UIMessage[];
  status: ChatStatus;
  error: Error | undefined;
  refusal: ParleyError | null;
  lost: boolean;
  busy: boolean;
  stoppedIds: ReadonlySet<string>;
  returnedDraft: ReturnedDraft | null;
}

/** ws for localhost and private addresses (local development), wss everywhere else. */
export function socketScheme(host: string): "ws" | "wss" {
  const hostname = host.replace(/:\d+$/, "").replace(/^\[|\]$/g, "");
  const local =
    hostname === "localhost" ||
    hostname.endsWith(".localhost") ||
    hostname === "::1" ||
    /^127\./.test(hostname) ||
    /^10\./.test(hostname) ||
    /^192\.168\./.test(hostname) ||
    /^172\.(1[6-9]|2\d|3[01])\./.test(hostname);
  return local ? "ws" : "wss";
}

const OPEN = 1;

/**
 * One chat over one socket (reconnected with a fresh ticket whenever it drops, unless the server
 * closed it for good). Subscribe for changes; `getSnapshot` is stable between changes.
 */
export class LightChat {
  readonly #options: LightChatOptions;
  readonly #makeId: () => string;
  #listeners = new Set<() => void>();
  #snapshot: LightChatSnapshot | null = null;

  #phase: LightChatSnapshot["phase"] = "loading";
  #loadError: unknown;
  #messages: UIMessage[] = [];
  #status: ChatStatus = "ready";
  #error: Error | undefined;
  #refusal: ParleyError | null = null;
  #lost = false;
  #stoppedIds: ReadonlySet<string> = new Set();
  #returnedDraft: ReturnedDraft | null = null;
  /**
   * What each request of this tab asked for (its user message; for a regeneration, the reply it
   * replaces), until it ends: a refusal takes it back out of the transcript.
   */
  #asked = new Map<string, { message: UIMessage; replaced?: UIMessage }>();
  /** Requests the server refused before storing anything: they end without a "failed" mark. */
  #refused = new Set<string>();

  #socket: SocketLike | null = null;
  /** Frames typed while the socket was down: sent when it opens. */
  #outbox: string[] = [];
  /** Requests acknowledged (or sent) on the current socket: their chunks come without an ack. */
  #acked = new Set<string>();
  /** Requests whose frame waits in the outbox: the next socket sends them, so it needs no ack. */
  #queued = new Set<string>();
  #turns = new Map<string, TurnState>();
  /** The request whose reply is on its way (ours, resumed, or a continuation). */
  #active: string | null = null;
  /** Requests the person stopped: later chunks of theirs are dropped. */
  #stopped = new Set<string>();
  /** A tool approval was sent: the server continues the turn under a request id of its own. */
  #awaitingContinuation = false;
  /** A stop pressed before its reply had a message: the user message it answers. */
  #stopPendingAfter: string | null = null;
  /** The server is recovering an interrupted turn (`cf_agent_chat_recovering`): a reply is coming. */
  #recovering = false;
  #sends = 0;
  #attempt = 0;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #disposed = true;
  #connecting = false;

  constructor(options: LightChatOptions) {
    this.#options = options;
    this.#makeId = options.makeId ?? randomId;
  }

  subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  getSnapshot = (): LightChatSnapshot => {
    this.#snapshot ??= {
      phase: this.#phase,
      loadError: this.#loadError,
      messages: this.#messages,
      status: this.#status,
      error: this.#error,
      refusal: this.#refusal,
      lost: this.#lost,
      busy: this.#busy(),
      stoppedIds: this.#stoppedIds,
      returnedDraft: this.#returnedDraft,
    };
    return this.#snapshot;
  };

  #busy(): boolean {
    return this.#status === "submitted" || this.#status === "streaming" || this.#recovering;
  }

  #changed(): void {
    this.#snapshot = null;
    for (const listener of this.#listeners) listener();
  }

  /** Loads the transcript (once), then connects. Again after `dispose` (React's strict mode). */
  start(): void {
    if (!this.#disposed) return;
    this.#disposed = false;
    if (this.#phase === "ready") {
      void this.#connect();
      return;
    }
    this.#phase = "loading";
    // The ticket is asked for while the transcript loads; the socket opens after it, so a
    // replayed stream lands on the loaded transcript rather than being replaced by it.
    const ticket = this.#options.connectTicket();
    ticket.catch(() => undefined);
    this.#options.loadMessages().then(
      (messages) => {
        if (this.#disposed) return;
        this.#messages = messages;
        this.#phase = "ready";
        this.#changed();
        void this.#connect(ticket, true);
      },
      (error: unknown) => {
        this.#phase = "failed";
        this.#loadError = error;
        this.#changed();
      },
    );
  }

  dispose(): void {
    this.#disposed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    const socket = this.#socket;
    this.#socket = null;
    socket?.close(1000, "closed");
  }

  async #connect(ticket?: Promise<string>, first = false): Promise<void> {
    if (this.#disposed || this.#lost || this.#socket || this.#connecting) return;
    this.#connecting = true;
    let value: string;
    try {
      value = await (ticket ?? this.#options.connectTicket());
    } catch (error) {
      this.#connecting = false;
      if (first) {
        // As the SDK path: a chat that cannot get its first ticket fails to open.
        this.#phase = "failed";
        this.#loadError = error;
        this.#changed();
      } else this.#reconnectLater();
      return;
    }
    this.#connecting = false;
    if (this.#disposed || this.#lost) return;
    const { agent, name, host } = this.#options;
    const url = `${socketScheme(host)}://${host}/agents/${agent}/${encodeURIComponent(name)}?ticket=${encodeURIComponent(value)}`;
    const open =
      this.#options.openSocket ??
      ((address: string) => new WebSocket(address) as unknown as SocketLike);
    const socket = open(url);
    this.#socket = socket;
    this.#acked = new Set(this.#queued);
    socket.addEventListener("open", () => {
      if (this.#socket !== socket) return;
      this.#attempt = 0;
      // Is a reply streaming (ours from before a reload or a drop, or another tab's)?
      socket.send(
        JSON.stringify({ type: "cf_agent_stream_resume_request", probeId: this.#makeId() }),
      );
      for (const frame of this.#outbox.splice(0)) socket.send(frame);
      this.#queued.clear();
    });
    socket.addEventListener("message", (event: MessageEvent) => {
      if (this.#socket === socket) this.receive(event.data);
    });
    socket.addEventListener("close", (event: CloseEvent) => {
      if (this.#socket !== socket) return;
      this.#socket = null;
      const notice = closeNotice(event.code);
      if (notice) {
        this.#refusal = notice;
        this.#lost = true;
        this.#active = null;
        if (this.#busy()) this.#status = "ready";
        this.#changed();
        return;
      }
      // A reply in flight stays "busy": the next socket's resume handshake says what became of it.
      this.#reconnectLater();
    });
  }

  #reconnectLater(): void {
    if (this.#disposed || this.#lost || this.#timer) return;
    this.#attempt += 1;
    const delay =
      this.#options.reconnectDelay?.(this.#attempt) ??
      Math.min(10_000, 250 * 2 ** Math.min(this.#attempt, 6)) * (0.5 + Math.random() / 2);
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.#connect();
    }, delay);
  }

  /** Sends a frame now, or when the next socket opens; false if it waits. */
  #send(frame: Record<string, unknown>): boolean {
    const data = JSON.stringify(frame);
    if (this.#socket && this.#socket.readyState === OPEN) {
      this.#socket.send(data);
      return true;
    }
    this.#outbox.push(data);
    return false;
  }

  /** One frame from the server (exposed for tests; the socket calls it). */
  receive(data: unknown): void {
    if (typeof data !== "string") return;
    let frame: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(data);
      if (!isRecord(parsed)) return;
      frame = parsed;
    } catch {
      return;
    }
    switch (frame.type) {
      case "parley_error": {
        this.#refusal = readParleyError(data);
        if (this.#refusal?.requestId) this.#takeBack(this.#refusal.requestId);
        else if (this.#awaitingContinuation) {
          // The approval was refused (answered already, no credit): no continuation is coming.
          this.#awaitingContinuation = false;
          if (this.#active === null && this.#status === "submitted") this.#status = "ready";
        }
        this.#changed();
        return;
      }
      case "cf_agent_use_chat_response":
        this.#response(frame);
        return;
      case "cf_agent_stream_resuming": {
        const id = str(frame.id);
        if (id === undefined || this.#stopped.has(id) || this.#acked.has(id)) return;
        this.#acked.add(id);
        this.#send({ type: "cf_agent_stream_resume_ack", id });
        if (!this.#turns.has(id)) this.#turns.set(id, newTurn(this.#awaitingContinuation));
        this.#awaitingContinuation = false;
        this.#follow(id);
        this.#changed();
        return;
      }
      case "cf_agent_stream_resume_none": {
        if (this.#awaitingContinuation) return; // the continuation is announced on its own
        const interrupted = this.#active !== null && !this.#acked.has(this.#active);
        if (this.#busy() && !interrupted) return;
        // A reply that finished while the socket was down lost its chunks: the transcript has it.
        if (interrupted) {
          this.#active = null;
          this.#status = "ready";
          this.#changed();
        }
        this.#reload();
        return;
      }
      case "cf_agent_chat_messages": {
        if (this.#busy() || !Array.isArray(frame.messages)) return;
        const messages = frame.messages as UIMessage[];
        if (sameTranscript(this.#messages, messages)) return;
        this.#messages = messages;
        this.#changed();
        return;
      }
      case "cf_agent_chat_recovering":
        this.#recovering = frame.recovering === true;
        this.#changed();
        return;
      case "cf_agent_chat_clear":
        this.#messages = [];
        this.#turns.clear();
        this.#active = null;
        this.#status = "ready";
        this.#changed();
        return;
      case "cf_agent_message_updated": {
        const updated = frame.message as UIMessage | undefined;
        if (!updated || typeof updated.id !== "string") return;
        const index = this.#messages.findIndex((m) => m.id === updated.id);
        if (index < 0) return;
        const next = [...this.#messages];
        next[index] = updated;
        this.#messages = next;
        this.#changed();
        return;
      }
      default:
    }
  }

  #response(frame: Record<string, unknown>): void {
    const id = str(frame.id);
    if (id === undefined) return;
    if (this.#stopped.has(id)) {
      if (frame.done === true) this.#stopped.delete(id);
      return;
    }
    let turn = this.#turns.get(id);
    if (!turn) {
      // Not ours and never announced: another tab's turn (or a continuation) shown as it streams.
      turn = newTurn(frame.continuation === true || this.#awaitingContinuation);
      this.#turns.set(id, turn);
      // Streaming live on this socket: it needs no ack.
      this.#acked.add(id);
      this.#awaitingContinuation = false;
      this.#follow(id);
    }
    if (frame.error === true) {
      this.#finish(id, str(frame.body) || "Stream error");
      return;
    }
    const body = str(frame.body);
    if (body?.trim()) {
      let chunk: unknown;
      try {
        chunk = JSON.parse(body);
      } catch {
        chunk = null;
      }
      if (isRecord(chunk) && typeof chunk.type === "string") {
        const before = this.#messages;
        this.#messages = applyChunk(before, turn, chunk as StreamChunk, this.#makeId);
        if (this.#active === id && this.#status === "submitted") this.#status = "streaming";
        this.#markPendingStop();
        if (before !== this.#messages || frame.done !== true) this.#changed();
      }
    }
    if (frame.done === true) this.#finish(id, turn.errorText);
  }

  /**
   * The server refused request `id` before storing anything of it: its message leaves the
   * transcript and goes back to the composer, or a refused regeneration's reply comes back.
   */
  #takeBack(id: string): void {
    const asked = this.#asked.get(id);
    if (!asked) return;
    this.#asked.delete(id);
    this.#refused.add(id);
    if (asked.replaced) {
      if (this.#messages.at(-1)?.id === asked.message.id) {
        this.#messages = [...this.#messages, asked.replaced];
      }
      return;
    }
    this.#messages = this.#messages.filter((message) => message.id !== asked.message.id);
    const text = asked.message.parts
      .map((part) => (part.type === "text" ? part.text : ""))
      .join("");
    this.#returnedDraft = { text, seq: (this.#returnedDraft?.seq ?? 0) + 1 };
  }

  /**
   * Whether request `id` is the reply in flight on this socket: announced (or sent) here and not
   * ended. One interrupted by a dropped socket is not, until the next socket's resume names it.
   */
  #inFlight(id: string | null): id is string {
    return id !== null && this.#turns.has(id) && this.#acked.has(id);
  }

  /**
   * Another request's stream shows up (a resumed or replayed one, another tab's): it becomes the
   * reply in flight, unless one already is. The probe a socket sends when it opens is answered
   * after a message sent right away, and may name the last turn that failed: its replayed error
   * took the place of the reply just asked for, which then streamed with Send showing and ended
   * marked failed.
   */
  #follow(id: string): void {
    if (this.#active !== id && this.#inFlight(this.#active)) return;
    this.#active = id;
    this.#status = "streaming";
  }

  #finish(id: string, errorText: string | null): void {
    this.#asked.delete(id);
    // A refusal says what happened; the request's own error frame is not a failed reply.
    if (this.#refused.delete(id)) errorText = null;
    this.#turns.delete(id);
    this.#recovering = false;
    if (this.#active === id) {
      // A stream that showed up meanwhile (`#follow`) is the reply in flight now.
      const next = [...this.#turns.keys()].find((other) => this.#inFlight(other));
      this.#active = next ?? null;
      this.#status = next === undefined ? (errorText === null ? "ready" : "error") : "streaming";
      this.#error = next === undefined && errorText !== null ? new Error(errorText) : undefined;
    }
    this.#changed();
  }

  #markPendingStop(): void {
    const after = this.#stopPendingAfter;
    if (after === null) return;
    const index = this.#messages.findIndex((m) => m.id === after);
    const reply = index < 0 ? undefined : this.#messages[index + 1];
    if (reply?.role !== "assistant") return;
    this.#stopPendingAfter = null;
    this.#stoppedIds = new Set(this.#stoppedIds).add(reply.id);
  }

  #reload(): void {
    const before = this.#sends;
    this.#options.loadMessages().then(
      (messages) => {
        if (this.#sends !== before || this.#busy()) return;
        if (sameTranscript(this.#messages, messages)) return;
        this.#messages = messages;
        this.#changed();
      },
      () => undefined,
    );
  }

  #request(
    message: UIMessage,
    trigger: "submit-message" | "regenerate-message",
    replaced?: UIMessage,
  ): void {
    const id = this.#makeId();
    this.#asked.set(id, replaced ? { message, replaced } : { message });
    this.#sends += 1;
    this.#turns.set(id, newTurn());
    this.#acked.add(id);
    this.#active = id;
    this.#status = "submitted";
    this.#error = undefined;
    this.#refusal = null;
    this.#stopPendingAfter = null;
    const sent = this.#send({
      type: "cf_agent_use_chat_request",
      id,
      init: { method: "POST", body: JSON.stringify({ messages: [message], trigger }) },
    });
    if (!sent) this.#queued.add(id);
  }

  send = (text: string): void => {
    const trimmed = text.trim();
    if (trimmed === "" || this.#busy() || this.#lost || this.#phase !== "ready") return;
    const message: UIMessage = {
      id: this.#makeId(),
      role: "user",
      parts: [{ type: "text", text: trimmed }],
    };
    this.#messages = [...this.#messages, message];
    this.#request(message, "submit-message");
    this.#changed();
  };

  stop = (): void => {
    const last = this.#messages.at(-1);
    if (last?.role === "assistant") this.#stoppedIds = new Set(this.#stoppedIds).add(last.id);
    else if (last) this.#stopPendingAfter = last.id;
    this.#awaitingContinuation = false;
    this.#recovering = false;
    const id = this.#active;
    if (id !== null) {
      this.#send({ type: "cf_agent_chat_request_cancel", id });
      this.#asked.delete(id);
      this.#stopped.add(id);
      this.#turns.delete(id);
      this.#active = null;
    }
    if (this.#busy()) this.#status = "ready";
    this.#changed();
  };

  regenerate = (): void => {
    if (this.#busy() || this.#lost || this.#phase !== "ready") return;
    // The server rebuilds the turn from its transcript: only the last reply can be replaced.
    let messages = this.#messages;
    const last = messages.at(-1);
    let replaced: UIMessage | undefined;
    if (last?.role === "assistant") {
      const ids = new Set(this.#stoppedIds);
      ids.delete(last.id);
      this.#stoppedIds = ids;
      messages = messages.slice(0, -1);
      replaced = last;
    }
    const user = messages.at(-1);
    if (user?.role !== "user") return;
    this.#messages = messages;
    this.#request(user, "regenerate-message", replaced);
    this.#changed();
  };

  respondToApproval = ({ id, approved }: { id: string; approved: boolean }): void => {
    let toolCallId: string | undefined;
    this.#messages = this.#messages.map((message) => {
      const index = message.parts.findIndex(
        (part) =>
          isRecord((part as LoosePart).approval) &&
          (part as { approval: { id?: unknown } }).approval.id === id,
      );
      if (index < 0) return message;
      const part = message.parts[index] as LoosePart;
      toolCallId = str(part.toolCallId);
      const parts = [...message.parts] as LoosePart[];
      parts[index] = { ...part, state: "approval-responded", approval: { id, approved } };
      return { ...message, parts: parts as Part[] };
    });
    if (toolCallId === undefined) return;
    this.#send({ type: "cf_agent_tool_approval", toolCallId, approved, autoContinue: true });
    this.#awaitingContinuation = true;
    this.#status = "submitted";
    this.#error = undefined;
    this.#changed();
  };

  clearRefusal = (): void => {
    this.#refusal = null;
    this.#changed();
  };
}
