/**
 * A Node client for the agents SDK chat protocol over a real WebSocket (`ws`): what
 * `useAgentChat` does in a browser, without React. One client is one connection to one agent
 * instance (`<origin>/agents/<agent>/<name>`).
 */
import { randomUUID } from "node:crypto";
import { EventEmitter } from "node:events";
import type { IncomingMessage } from "node:http";
import type { UIMessage } from "ai";
import WebSocket, { type ClientOptions, type RawData } from "ws";
import {
  cancelFrame,
  chatRequestFrame,
  clearFrame,
  FrameType,
  getMessagesUrl,
  type OtherFrame,
  parseServerFrame,
  resumeAckFrame,
  resumeRequestFrame,
  type ServerFrame,
  webSocketUrl,
} from "./protocol.ts";
import { Turn } from "./turn.ts";

/** A refused upgrade, a failed HTTP call or a socket error, with what the server said. */
export class ChatClientError extends Error {
  /** The HTTP status of a refused upgrade or a failed `get-messages`. */
  readonly status: number | undefined;
  /** The response body, parsed as JSON when it is JSON. */
  readonly body: unknown;
  /** `error.code` of a platform error body (`unauthorized`, `not_found`, `gone`, ...). */
  readonly code: string | undefined;

  constructor(message: string, options: { status?: number; body?: unknown; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "ChatClientError";
    this.status = options.status;
    this.body = options.body;
    const error = (options.body as { error?: { code?: unknown } } | undefined)?.error;
    this.code = typeof error?.code === "string" ? error.code : undefined;
  }
}

/** A `ws`-compatible constructor (the default is `ws` itself). */
export type WebSocketConstructor = new (url: string, options?: ClientOptions) => WebSocket;

export interface ReconnectPolicy {
  /** Attempts after a drop before pending turns are given up as `interrupted`. */
  attempts: number;
  /** Delay before the first attempt; doubled each time, capped at 5 s. */
  delayMs: number;
}

export interface ChatClientOptions {
  /**
   * The access token: sent as `Authorization: Bearer` on the upgrade and to `get-messages`, never
   * in a URL. A function is called on every (re)connect and HTTP call, so it can refresh.
   */
  token?: string | (() => string | Promise<string>);
  /**
   * A single-use connect ticket for each (re)connect (Parley's `POST /api/connect-tickets`), sent
   * as `?ticket=`, for servers or clients that do not take a header on the upgrade.
   */
  ticket?: () => string | Promise<string>;
  /** Extra headers on the upgrade request and on `get-messages`. */
  headers?: Record<string, string>;
  WebSocket?: WebSocketConstructor;
  /**
   * What a request carries as `messages`. `"full"` (default) is what `useAgentChat` sends: the
   * whole local transcript plus the new user message (the AI SDK's `Chat` sends `state.messages`).
   * `"last"` sends only the new user message, for servers that keep history themselves.
   */
  sendHistory?: "full" | "last";
  /** Load the transcript with `get-messages` on every (re)connect, as `useAgentChat` does on mount. Default true. */
  loadMessages?: boolean;
  /** Reconnect after a drop and resume in-flight turns. Default `{ attempts: 5, delayMs: 250 }`. */
  reconnect?: boolean | Partial<ReconnectPolicy>;
  /** How long `turn.abort()` waits for the server's terminal frame before ending the turn. */
  abortTimeoutMs?: number;
  /** Give up opening the socket after this long. Default 10 s. */
  connectTimeoutMs?: number;
}

export interface SendOptions {
  /** Extra fields of the request body (`{ messages, trigger, ...body }`). */
  body?: Record<string, unknown>;
  /** The user message id; a random UUID by default. */
  messageId?: string;
  /** Overrides the client's `sendHistory` for this request. */
  sendHistory?: "full" | "last";
}

export interface DisconnectInfo {
  code: number;
  reason: string;
  /** Whether the client will try to reconnect (and resume in-flight turns). */
  willReconnect: boolean;
}

export interface ChatClientEvents {
  /** Every text frame the server sends, parsed (`null` when it is not a JSON object with a type). */
  frame: [frame: ServerFrame | OtherFrame | null, raw: string];
  /** The local transcript changed. */
  messages: [messages: UIMessage[]];
  /** A socket opened; `generation` counts connections, from 1. */
  open: [generation: number];
  disconnect: [info: DisconnectInfo];
}

const DEFAULT_RECONNECT: ReconnectPolicy = { attempts: 5, delayMs: 250 };
const MAX_RECONNECT_DELAY_MS = 5_000;

async function readBody(response: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  return Buffer.from(data as ArrayBuffer).toString("utf8");
}

/**
 * One connection to one agent. Typical use:
 *
 * ```ts
 * const chat = await connectChat("http://127.0.0.1:8787/agents/onboarding-agent/prj_1", { token });
 * const turn = chat.send("Hello");
 * for await (const delta of turn.textStream) process.stdout.write(delta);
 * const { text, metadata, error } = await turn.done;
 * await chat.close();
 * ```
 */
export class ChatClient extends EventEmitter<ChatClientEvents> {
  /** The agent URL as given (http(s) or ws(s)). */
  readonly url: string;
  /** The agent's identity frame (`cf_agent_identity`), once received. */
  identity: { name: string; agent: string } | undefined;

  #options: ChatClientOptions;
  #reconnect: ReconnectPolicy | false;
  #socket: WebSocket | undefined;
  #generation = 0;
  #transcript: UIMessage[] = [];
  #transcriptVersion = 0;
  #turns = new Map<string, Turn>();
  #outbox: string[] = [];
  #closing = false;
  #reconnecting: Promise<void> | undefined;
  #opening: Promise<void> | undefined;
  #cancelRetry: (() => void) | undefined;
  /** Per socket: request ids already acknowledged, so a double notice replays once (#1733). */
  #acked = new Set<string>();
  #probeId: string | undefined;

  constructor(url: string, options: ChatClientOptions = {}) {
    super();
    this.url = url;
    this.#options = options;
    const reconnect = options.reconnect ?? true;
    this.#reconnect =
      reconnect === false
        ? false
        : { ...DEFAULT_RECONNECT, ...(reconnect === true ? {} : reconnect) };
  }

  /** Whether the socket is open. */
  get connected(): boolean {
    return this.#socket?.readyState === WebSocket.OPEN;
  }

  /**
   * Opens the socket (resolving once it is open and, unless `loadMessages: false`, the transcript
   * is loaded). A refused upgrade rejects with a `ChatClientError` carrying the HTTP status and the
   * JSON error body.
   */
  async connect(): Promise<void> {
    if (this.connected) return;
    this.#closing = false;
    await this.#open();
  }

  /**
   * Sends a user message and returns its turn at once; the frame waits in an outbox while the
   * socket is not open. The message joins the local transcript immediately, as in `useChat`.
   */
  send(text: string, options: SendOptions = {}): Turn {
    const userMessage: UIMessage = {
      id: options.messageId ?? randomUUID(),
      role: "user",
      parts: [{ type: "text", text }],
    };
    const history = options.sendHistory ?? this.#options.sendHistory ?? "full";
    const messages = history === "full" ? [...this.#transcript, userMessage] : [userMessage];
    this.#setTranscript([...this.#transcript, userMessage]);
    const requestId = randomUUID();
    const turn = new Turn(
      requestId,
      userMessage,
      {
        cancel: (id) => this.#send(cancelFrame(id)),
        message: (message) => this.#upsertAssistant(turn, message),
        reconcile: (t) => this.#persistedReply(t),
        settled: (t) => this.#turns.delete(t.requestId),
      },
      { abortTimeoutMs: this.#options.abortTimeoutMs },
    );
    this.#turns.set(requestId, turn);
    const frame = chatRequestFrame(requestId, messages, options.body);
    if (this.#sendNow(frame)) turn.sentOn = this.#generation;
    else this.#outbox.push(frame);
    return turn;
  }

  /** The local transcript: the last server broadcast, plus this client's own turns as they stream. */
  messages(): UIMessage[] {
    return [...this.#transcript];
  }

  /** Turns still in flight. */
  pendingTurns(): Turn[] {
    return [...this.#turns.values()];
  }

  /** `GET <agent-url>/get-messages`: the persisted transcript (the token in the header). */
  async getMessages(): Promise<UIMessage[]> {
    const token = await this.#token();
    const headers: Record<string, string> = { ...this.#options.headers };
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    const response = await fetch(getMessagesUrl(this.url), { headers });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = text.trim() === "" ? [] : JSON.parse(text);
    } catch {
      // a non-JSON body stays text, for the error
    }
    if (!response.ok) {
      throw new ChatClientError(`get-messages answered ${response.status}`, {
        status: response.status,
        body,
      });
    }
    if (!Array.isArray(body)) {
      throw new ChatClientError("get-messages did not answer a JSON array", { body });
    }
    return body as UIMessage[];
  }

  /** Clears the conversation (`cf_agent_chat_clear`); the server does not echo it to the sender. */
  clear(): void {
    this.#send(clearFrame());
    this.#setTranscript([]);
  }

  /** Sends a text frame as is (for malformed-frame tests); queued while the socket is not open. */
  sendRaw(data: string): void {
    this.#send(data);
  }

  /** Subscribes to every server frame; returns the unsubscribe function. */
  onFrame(listener: (frame: ServerFrame | OtherFrame | null, raw: string) => void): () => void {
    this.on("frame", listener);
    return () => this.off("frame", listener);
  }

  /**
   * Reopens the socket (closing the current one first) and resumes in-flight turns the way the
   * SDK's client does: it answers the server's `cf_agent_stream_resuming` notice with
   * `cf_agent_stream_resume_ack`, probes with `cf_agent_stream_resume_request`, and applies the
   * replayed chunks it had not seen (by `seq`) before the live ones.
   */
  async reconnect(): Promise<void> {
    this.#closing = false;
    const socket = this.#socket;
    if (socket) {
      this.#detach(socket);
      this.#socket = undefined;
      socket.terminate();
      for (const turn of this.#turns.values()) turn.interrupt();
    }
    await this.#open();
  }

  /**
   * Ends the socket abruptly, as a network failure would (no close frame). In-flight turns stay
   * pending: the client reconnects and resumes them if `reconnect` allows, or `reconnect()` does.
   */
  drop(): void {
    this.#socket?.terminate();
  }

  /** Closes the socket. Turns still in flight end as `interrupted` (the server keeps running them). */
  async close(): Promise<void> {
    this.#closing = true;
    this.#cancelRetry?.();
    for (const turn of this.#turns.values()) turn.end("interrupted", "The client closed.");
    this.#outbox = [];
    const socket = this.#socket;
    if (!socket || socket.readyState === WebSocket.CLOSED) return;
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    if (socket.readyState === WebSocket.CONNECTING) socket.terminate();
    else socket.close(1000, "client closed");
    const timer = setTimeout(() => socket.terminate(), 2_000);
    await closed;
    clearTimeout(timer);
  }

  async #token(): Promise<string | undefined> {
    const { token } = this.#options;
    return typeof token === "function" ? await token() : token;
  }

  /** Opens a socket; concurrent callers (an explicit reconnect, the retry loop) share one attempt. */
  #open(): Promise<void> {
    this.#opening ??= this.#openSocket().finally(() => {
      this.#opening = undefined;
    });
    return this.#opening;
  }

  async #openSocket(): Promise<void> {
    if (this.connected) return;
    const ticket = this.#options.ticket ? await this.#options.ticket() : undefined;
    const token = ticket === undefined ? await this.#token() : undefined;
    if (this.#closing) throw new ChatClientError("the client was closed");
    const Socket = this.#options.WebSocket ?? WebSocket;
    const socket = new Socket(webSocketUrl(this.url, ticket), {
      headers: {
        ...this.#options.headers,
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      },
      handshakeTimeout: this.#options.connectTimeoutMs ?? 10_000,
    });
    this.#socket = socket;
    let opened = false;
    socket.on("message", (data, isBinary) => {
      if (!isBinary) this.#receive(rawText(data));
    });
    socket.on("close", (code, reason) => {
      if (!opened || this.#socket !== socket) return;
      this.#socket = undefined;
      this.#dropped(code, reason.toString("utf8"));
    });
    await new Promise<void>((resolve, reject) => {
      let refused = false;
      socket.on("unexpected-response", (_request, response) => {
        refused = true;
        const refuse = (body: unknown, cause?: unknown) => {
          reject(
            new ChatClientError(`the upgrade was refused with ${response.statusCode}`, {
              status: response.statusCode,
              body,
              cause,
            }),
          );
          socket.terminate();
        };
        readBody(response).then(refuse, (error: unknown) => refuse(undefined, error));
      });
      socket.on("error", (error) => {
        if (!refused && !opened) {
          reject(new ChatClientError(`could not connect: ${error.message}`, { cause: error }));
        }
      });
      socket.once("open", () => {
        // Synchronously, before any frame of the new socket is read.
        opened = true;
        this.#generation++;
        this.#acked = new Set();
        resolve();
      });
    }).catch((error: unknown) => {
      this.#detach(socket);
      if (this.#socket === socket) this.#socket = undefined;
      throw error;
    });
    this.emit("open", this.#generation);
    this.#flush();
    this.#probeResume();
    if (this.#options.loadMessages ?? true) await this.#loadTranscript();
  }

  #detach(socket: WebSocket): void {
    socket.removeAllListeners("message");
    socket.removeAllListeners("close");
    socket.removeAllListeners("open");
    socket.removeAllListeners("unexpected-response");
    // keep a listener: `ws` throws an unhandled 'error' otherwise
    socket.removeAllListeners("error");
    socket.on("error", () => {});
  }

  #dropped(code: number, reason: string): void {
    for (const turn of this.#turns.values()) turn.interrupt();
    const policy = this.#closing ? false : this.#reconnect;
    this.emit("disconnect", { code, reason, willReconnect: policy !== false });
    if (policy === false) return;
    this.#reconnecting ??= this.#reconnectLoop(policy).finally(() => {
      this.#reconnecting = undefined;
    });
  }

  async #reconnectLoop(policy: ReconnectPolicy): Promise<void> {
    let delay = policy.delayMs;
    let lastError: unknown;
    for (let attempt = 0; attempt < policy.attempts; attempt++) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        this.#cancelRetry = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#cancelRetry = undefined;
      if (this.#closing || this.connected) return;
      try {
        await this.#open();
        return;
      } catch (error) {
        lastError = error;
        // A refusal (401, 404, 410) will not get better by retrying.
        if (error instanceof ChatClientError && error.status !== undefined) break;
        delay = Math.min(delay * 2, MAX_RECONNECT_DELAY_MS);
      }
    }
    const why = lastError instanceof Error ? lastError.message : "the connection was lost";
    for (const turn of this.#turns.values()) turn.end("interrupted", `Reconnect failed: ${why}`);
  }

  #sendNow(frame: string): boolean {
    const socket = this.#socket;
    if (socket?.readyState !== WebSocket.OPEN) return false;
    socket.send(frame);
    return true;
  }

  #send(frame: string): void {
    if (!this.#sendNow(frame)) this.#outbox.push(frame);
  }

  #flush(): void {
    const frames = this.#outbox;
    this.#outbox = [];
    for (const frame of frames) this.#sendNow(frame);
    for (const turn of this.#turns.values()) if (turn.sentOn === 0) turn.sentOn = this.#generation;
  }

  /** After a reconnect, asks whether a turn sent on an earlier socket is still streaming. */
  #probeResume(): void {
    const earlier = [...this.#turns.values()].some((t) => t.sentOn < this.#generation);
    if (!earlier) return;
    this.#probeId = randomUUID();
    this.#sendNow(resumeRequestFrame(this.#probeId));
  }

  #ack(requestId: string): void {
    if (this.#acked.has(requestId)) return;
    this.#acked.add(requestId);
    this.#sendNow(resumeAckFrame(requestId));
  }

  #receive(raw: string): void {
    const parsed = parseServerFrame(raw);
    const frame = "known" in parsed ? parsed.known : "other" in parsed ? parsed.other : null;
    if (!("known" in parsed)) {
      this.emit("frame", frame, raw);
      return;
    }
    const known = parsed.known;
    switch (known.type) {
      case FrameType.useChatResponse:
        this.#turns.get(known.id)?.handle(known);
        break;
      case FrameType.chatMessages:
        this.#setServerTranscript(known.messages);
        break;
      case FrameType.chatClear:
        this.#setTranscript([]);
        break;
      case FrameType.messageUpdated: {
        const index = this.#transcript.findIndex((m) => m.id === known.message.id);
        if (index >= 0) this.#setTranscript(this.#transcript.with(index, known.message));
        break;
      }
      case FrameType.identity:
        this.identity = { name: known.name, agent: known.agent };
        break;
      case FrameType.streamResuming:
        // Always acknowledge, even another client's stream: until it does, the server leaves this
        // connection out of every chat broadcast. Replayed frames of unknown requests are ignored.
        this.#ack(known.id);
        break;
      case FrameType.streamResumeNone:
        if (known.probeId !== undefined && known.probeId === this.#probeId) {
          // Nothing is streaming: a turn sent on an earlier socket ended while it was down. The
          // ack makes the server send its terminal frame (and any chunks it still holds).
          for (const turn of this.#turns.values()) {
            if (turn.sentOn < this.#generation) this.#ack(turn.requestId);
          }
        }
        break;
      case FrameType.streamPending:
        break;
    }
    this.emit("frame", frame, raw);
  }

  async #loadTranscript(): Promise<void> {
    const version = this.#transcriptVersion;
    let messages: UIMessage[];
    try {
      messages = await this.getMessages();
    } catch {
      return; // the socket works; a failing get-messages leaves the transcript as it was
    }
    // A broadcast that arrived meanwhile is newer than this read.
    if (this.#transcriptVersion === version) this.#setServerTranscript(messages);
  }

  /** A server transcript, with this client's in-flight turns (not yet in it) kept at the end. */
  #setServerTranscript(messages: readonly UIMessage[]): void {
    const next = [...messages];
    const ids = new Set(next.map((m) => m.id));
    for (const turn of this.#turns.values()) {
      if (!ids.has(turn.userMessage.id)) next.push(turn.userMessage);
      const id = turn.messageId;
      const local = id === undefined ? undefined : this.#transcript.find((m) => m.id === id);
      if (local && !ids.has(local.id)) next.push(local);
    }
    this.#setTranscript(next);
  }

  #setTranscript(messages: UIMessage[]): void {
    this.#transcript = messages;
    this.#transcriptVersion++;
    // a copy per streamed chunk only when someone listens: transcripts can be long
    if (this.listenerCount("messages") > 0) this.emit("messages", this.messages());
  }

  #upsertAssistant(turn: Turn, message: UIMessage): void {
    const index = this.#transcript.findIndex((m) => m.id === message.id);
    if (index >= 0) {
      this.#setTranscript(this.#transcript.with(index, message));
      return;
    }
    const after = this.#transcript.findIndex((m) => m.id === turn.userMessage.id);
    const next = [...this.#transcript];
    next.splice(after >= 0 ? after + 1 : next.length, 0, message);
    this.#setTranscript(next);
  }

  /** The persisted assistant reply of a turn: by its message id, or the one after its user message. */
  async #persistedReply(turn: Turn): Promise<UIMessage | undefined> {
    const messages = await this.getMessages();
    if (turn.messageId !== undefined) {
      const byId = messages.find((m) => m.id === turn.messageId);
      if (byId) return byId;
    }
    const index = messages.findIndex((m) => m.id === turn.userMessage.id);
    const next = index >= 0 ? messages[index + 1] : undefined;
    return next?.role === "assistant" ? next : undefined;
  }
}

/** Creates a client and connects it. */
export async function connectChat(
  url: string,
  options: ChatClientOptions = {},
): Promise<ChatClient> {
  const client = new ChatClient(url, options);
  await client.connect();
  return client;
}
