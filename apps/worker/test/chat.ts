import { env, SELF } from "cloudflare:test";
import { BASE } from "./helpers.ts";

/**
 * A minimal client of the agents chat protocol over a real WebSocket inside workerd (the Node client
 * in packages/chat-client cannot run here). Frames are kept in order; turns are awaited by id.
 */
export interface Frame {
  type: string;
  id?: string;
  body?: string;
  done?: boolean;
  error?: boolean | { code: string; message: string };
  outcome?: string;
  requestId?: string | null;
  messages?: unknown[];
  [key: string]: unknown;
}

export interface TurnResult {
  text: string;
  reasoning: string;
  metadata: Record<string, unknown>;
  /** The server's id of the turn (its usage rows are `<turnId>:<step>`), from the reply's metadata. */
  turnId: string | null;
  error: string | null;
  outcome: string | undefined;
  chunks: Record<string, unknown>[];
  parleyError: { code: string; message: string; details?: Record<string, string> } | null;
}

export class ChatSocket {
  readonly frames: Frame[] = [];
  readonly ws: WebSocket;
  closed: { code: number; reason: string } | null = null;
  #waiters: (() => void)[] = [];
  readonly #acked = new Set<string>();

  constructor(ws: WebSocket) {
    this.ws = ws;
    ws.addEventListener("message", (event) => {
      const frame = JSON.parse(String(event.data)) as Frame;
      this.frames.push(frame);
      // As the SDK's client does: a connection gets a stream's chunks only after acknowledging it.
      if (frame.type === "cf_agent_stream_resuming" && frame.id && !this.#acked.has(frame.id)) {
        this.#acked.add(frame.id);
        ws.send(JSON.stringify({ type: "cf_agent_stream_resume_ack", id: frame.id }));
      }
      for (const wake of this.#waiters.splice(0)) wake();
    });
    ws.addEventListener("close", (event) => {
      this.closed = { code: event.code, reason: event.reason };
      for (const wake of this.#waiters.splice(0)) wake();
    });
  }

  sendRaw(data: string): void {
    this.ws.send(data);
  }

  send(frame: Record<string, unknown>): void {
    this.ws.send(JSON.stringify(frame));
  }

  async waitFor(
    predicate: (frame: Frame, index: number) => boolean,
    timeoutMs = 10_000,
    from = 0,
  ): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.frames.findIndex((f, i) => i >= from && predicate(f, i));
      if (index >= 0) return this.frames[index] as Frame;
      if (this.closed) throw new Error(`socket closed (${this.closed.code}) while waiting`);
      if (Date.now() > deadline)
        throw new Error(`timed out; frames: ${JSON.stringify(this.frames.slice(-5))}`);
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }

  /** The server's turn id of request `id`, once its first chunk arrived (null before). */
  turnIdOf(id: string): string | null {
    for (const frame of this.frames) {
      if (frame.type !== "cf_agent_use_chat_response" || frame.id !== id || !frame.body) continue;
      try {
        const chunk = JSON.parse(frame.body) as { messageMetadata?: { turnId?: unknown } };
        if (typeof chunk.messageMetadata?.turnId === "string") return chunk.messageMetadata.turnId;
      } catch {
        // an error body is text
      }
    }
    return null;
  }

  /** Waits until the reply to request `id` has streamed its first text (a frame at `from` or later). */
  waitForText(id: string, from = 0): Promise<Frame> {
    return this.waitFor(
      (f) => f.id === id && typeof f.body === "string" && f.body.includes("text-delta"),
      10_000,
      from,
    );
  }

  /** Sends a chat request (by default: one new user message) and waits for its end. */
  async turn(
    text: string,
    options: {
      id?: string;
      messageId?: string;
      body?: Record<string, unknown>;
      messages?: unknown[];
      trigger?: string;
    } = {},
  ): Promise<TurnResult> {
    const id = options.id ?? crypto.randomUUID();
    const start = this.frames.length;
    this.request(id, text, options);
    return this.result(id, start);
  }

  request(
    id: string,
    text: string,
    options: {
      messageId?: string;
      body?: Record<string, unknown>;
      messages?: unknown[];
      trigger?: string;
    } = {},
  ): void {
    const message = {
      id: options.messageId ?? crypto.randomUUID(),
      role: "user",
      parts: [{ type: "text", text }],
    };
    this.send({
      type: "cf_agent_use_chat_request",
      id,
      init: {
        method: "POST",
        body: JSON.stringify({
          messages: options.messages ?? [message],
          trigger: options.trigger ?? "submit-message",
          ...options.body,
        }),
      },
    });
  }

  async result(id: string, from = 0, timeoutMs = 15_000): Promise<TurnResult> {
    await this.waitFor(
      (f) => f.type === "cf_agent_use_chat_response" && f.id === id && f.done === true,
      timeoutMs,
      from,
    );
    const mine = this.frames.slice(from).filter((f) => f.id === id || f.requestId === id);
    const chunks = mine
      .filter((f) => f.type === "cf_agent_use_chat_response" && !f.error && f.body)
      .map((f) => JSON.parse(f.body as string) as Record<string, unknown>);
    const text = chunks
      .filter((c) => c.type === "text-delta")
      .map((c) => c.delta)
      .join("");
    const reasoning = chunks
      .filter((c) => c.type === "reasoning-delta")
      .map((c) => c.delta)
      .join("");
    const metadata = Object.assign(
      {},
      ...chunks.filter((c) => c.messageMetadata).map((c) => c.messageMetadata),
    );
    const errorFrame = mine.find(
      (f) => f.type === "cf_agent_use_chat_response" && f.error === true,
    );
    const parley = mine.find((f) => f.type === "parley_error");
    const done = mine.find((f) => f.done === true);
    return {
      text,
      reasoning,
      metadata,
      turnId: typeof metadata.turnId === "string" ? metadata.turnId : null,
      error: errorFrame ? String(errorFrame.body) : null,
      outcome: done?.outcome as string | undefined,
      chunks,
      parleyError: (parley?.error as TurnResult["parleyError"] | undefined) ?? null,
    };
  }

  close(): void {
    try {
      this.ws.close(1000, "bye");
    } catch {
      // already closed
    }
  }
}

export type Upgrade =
  | { socket: ChatSocket; status: 101; body?: undefined }
  | { socket: null; status: number; body: unknown };

/** Asks the API for a connect ticket to the agent object at `path`, as the web app does. */
export async function connectTicket(
  path: string,
  token: string,
): Promise<{ ok: true; ticket: string } | { ok: false; status: number; body: unknown }> {
  const [, , agent, name] = path.split("/");
  const response = await SELF.fetch(`${BASE}/api/connect-tickets`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ agent, name }),
  });
  const body = (await response.json().catch(() => null)) as { ticket?: string } | null;
  if (response.status !== 201 || typeof body?.ticket !== "string") {
    return { ok: false, status: response.status, body };
  }
  return { ok: true, ticket: body.ticket };
}

/** A WebSocket upgrade of `path` exactly as given: the query and headers are the caller's. */
export async function upgrade(
  path: string,
  options: { query?: Record<string, string>; headers?: Record<string, string> } = {},
): Promise<Upgrade> {
  const url = new URL(`${BASE}${path}`);
  for (const [key, value] of Object.entries(options.query ?? {})) url.searchParams.set(key, value);
  const response = await SELF.fetch(url, {
    headers: { upgrade: "websocket", ...options.headers },
  });
  const ws = response.webSocket;
  if (!ws) {
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // keep text
    }
    return { socket: null, status: response.status, body };
  }
  ws.accept();
  return { socket: new ChatSocket(ws), status: 101 };
}

/**
 * Opens `path` the way the web app does: a connect ticket asked for with the bearer token, then
 * the upgrade with `?ticket=`. A refused ticket is returned as the refusal (the same status the
 * upgrade itself would give). Without a token, the upgrade carries only `headers`.
 */
export async function connect(
  path: string,
  token?: string,
  headers: Record<string, string> = {},
): Promise<Upgrade> {
  if (token === undefined) return upgrade(path, { headers });
  const ticket = await connectTicket(path, token);
  if (!ticket.ok) return { socket: null, status: ticket.status, body: ticket.body };
  return upgrade(path, { query: { ticket: ticket.ticket }, headers });
}

export async function mustConnect(
  path: string,
  token: string,
  headers: Record<string, string> = {},
): Promise<ChatSocket> {
  const upgrade = await connect(path, token, headers);
  if (!upgrade.socket)
    throw new Error(`upgrade refused: ${upgrade.status} ${JSON.stringify(upgrade.body)}`);
  // The server speaks first (identity); wait for it so the socket is fully set up.
  await upgrade.socket.waitFor((f) => f.type === "cf_agent_identity");
  return upgrade.socket;
}

/**
 * Waits until the agent at `path` has entered its sockets in the connection registry and re-checked
 * them (it does so right after the upgrade, off the connect path), so a test that changes rights
 * behind the API's back afterwards tests the per-turn check, not that re-check.
 */
export async function settled(path: string, sockets = 1): Promise<void> {
  const [, , agent, name] = path.split("/");
  for (let i = 0; i < 100; i++) {
    const row = await env.DB.prepare(
      "SELECT COUNT(*) AS n FROM agent_connections WHERE agent = ? AND name = ?",
    )
      .bind(agent, name)
      .first<{ n: number }>();
    if ((row?.n ?? 0) >= sockets) break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  // The re-check is two D1 reads after the insert.
  await new Promise((resolve) => setTimeout(resolve, 150));
}
