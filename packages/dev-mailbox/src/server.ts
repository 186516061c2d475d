/**
 * The development mailbox's HTTP side: the sending API Parley's Worker posts to (the shape of
 * Cloudflare Email Service's `send_raw`: `{ from, recipients, mime_message }`), the pages people
 * read mail in, and a JSON API for tests.
 *
 * Test addresses whose local part says so misbehave, so retries and bounces can be tested end to
 * end: `fail-always` answers 503 every time, `fail-once` answers 503 to the first delivery of each
 * Message-ID, `bounce` is reported as a permanent bounce (and not kept).
 */
import { timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { listPage, messageHtml, messageHtmlHeaders, messagePage, notFoundPage } from "./pages.ts";
import { MailStore, type StoredMessage } from "./store.ts";

const MAX_BODY_BYTES = 10 * 1024 * 1024;
/** The longest a test may wait for mail in one request (`wait=` ms). */
const MAX_WAIT_MS = 30_000;

export interface DevMailboxOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1: the mailbox holds reset links, so it answers this machine only. */
  host?: string;
  /** When set, sending needs `Authorization: Bearer <token>` (as a real provider does). */
  token?: string;
  /** Called after each message is kept or refused (the CLI logs who and what kind, no content). */
  onMessage?: (event: { id: string | null; kind: string | null; outcome: string }) => void;
}

export interface DevMailbox {
  /** `http://host:port`: the pages at `/`, the sending API at `/api/send_raw`. */
  readonly url: string;
  readonly port: number;
  readonly store: MailStore;
  close(): Promise<void>;
}

class HttpError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).byteLength;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, "The message is too large");
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function send(res: ServerResponse, status: number, body: string, headers: Record<string, string>) {
  res.writeHead(status, { "cache-control": "no-store", ...headers });
  res.end(body);
}

const json = (res: ServerResponse, status: number, value: unknown) =>
  send(res, status, JSON.stringify(value), { "content-type": "application/json" });

const html = (res: ServerResponse, status: number, body: string) =>
  send(res, status, body, {
    "content-type": "text/html; charset=utf-8",
    // The pages run no script; their frames are the messages' HTML, served under its own CSP.
    "content-security-policy":
      "default-src 'none'; style-src 'unsafe-inline'; frame-src 'self'; form-action 'self'; base-uri 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
  });

/** Cloudflare's API envelope around a `send_raw` result or its errors. */
const envelope = (result: unknown, errors: { code: number; message: string }[] = []) => ({
  success: errors.length === 0,
  errors,
  messages: [],
  result,
});

const isSendRaw = (path: string) =>
  path === "/api/send_raw" ||
  /^\/client\/v4\/accounts\/[^/]+\/email\/sending\/send_raw$/.test(path);

export async function startDevMailbox(options: DevMailboxOptions = {}): Promise<DevMailbox> {
  const store = new MailStore();
  // Message-IDs (or whole messages) already refused once, for `fail-once` recipients.
  const refusedOnce = new Set<string>();
  const token = options.token ? Buffer.from(`Bearer ${options.token}`) : null;
  const note = options.onMessage ?? (() => {});

  async function sendRaw(req: IncomingMessage, res: ServerResponse) {
    if (token) {
      const given = Buffer.from(req.headers.authorization ?? "");
      if (given.byteLength !== token.byteLength || !timingSafeEqual(given, token)) {
        json(res, 401, envelope(null, [{ code: 10000, message: "Authentication error" }]));
        return;
      }
    }
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req));
    } catch (error) {
      if (error instanceof HttpError) throw error;
      throw new HttpError(400, "The body must be JSON");
    }
    const { from, recipients, mime_message: raw } = (body ?? {}) as Record<string, unknown>;
    if (
      typeof from !== "string" ||
      typeof raw !== "string" ||
      !Array.isArray(recipients) ||
      recipients.length === 0 ||
      !recipients.every((r) => typeof r === "string" && r.includes("@"))
    ) {
      throw new HttpError(400, "Give from, recipients (addresses) and mime_message");
    }
    const to = recipients as string[];
    const messageId = /^Message-ID:\s*(\S+)/im.exec(raw)?.[1] ?? raw;
    if (to.some((r) => r.includes("fail-always"))) {
      note({ id: null, kind: null, outcome: "refused (fail-always)" });
      json(res, 503, envelope(null, [{ code: 10001, message: "Temporarily unavailable" }]));
      return;
    }
    if (to.some((r) => r.includes("fail-once")) && !refusedOnce.has(messageId)) {
      refusedOnce.add(messageId);
      note({ id: null, kind: null, outcome: "refused once (fail-once)" });
      json(res, 503, envelope(null, [{ code: 10001, message: "Temporarily unavailable" }]));
      return;
    }
    const bounced = to.filter((r) => r.includes("bounce"));
    const delivered = to.filter((r) => !r.includes("bounce"));
    let stored: StoredMessage | null = null;
    if (delivered.length > 0) {
      try {
        stored = await store.add(raw, { from, to: delivered });
      } catch {
        throw new HttpError(400, "mime_message is not a MIME message");
      }
    }
    note({
      id: stored?.id ?? null,
      kind: stored?.kind ?? null,
      outcome: bounced.length > 0 ? "bounced" : "kept",
    });
    json(res, 200, envelope({ delivered, permanent_bounces: bounced, queued: [] }));
  }

  async function route(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? "/", "http://mailbox");
    const path = url.pathname;
    const method = req.method ?? "GET";
    if (method === "POST" && isSendRaw(path)) return sendRaw(req, res);
    if (method === "GET" && path === "/") return html(res, 200, listPage(store.list()));
    if (method === "POST" && path === "/clear") {
      store.clear();
      res.writeHead(303, { location: "/" });
      res.end();
      return;
    }
    if (path === "/api/messages") {
      if (method === "DELETE") {
        store.clear();
        return json(res, 200, { items: [] });
      }
      if (method !== "GET") throw new HttpError(405, "Method not allowed");
      const filter = {
        ...(url.searchParams.get("to") ? { to: url.searchParams.get("to") as string } : {}),
        ...(url.searchParams.get("kind") ? { kind: url.searchParams.get("kind") as string } : {}),
        ...(url.searchParams.get("after")
          ? { after: url.searchParams.get("after") as string }
          : {}),
      };
      const wait = Math.min(Number(url.searchParams.get("wait") ?? 0) || 0, MAX_WAIT_MS);
      const aborted = new AbortController();
      res.once("close", () => aborted.abort());
      const items = wait > 0 ? await store.wait(filter, wait, aborted.signal) : store.list(filter);
      return json(res, 200, { items });
    }
    const match = /^\/(api\/)?messages\/(\d+)(\/html|\/raw)?$/.exec(path);
    const message = match && method === "GET" ? store.get(match[2] ?? "") : undefined;
    if (!match || !message) {
      if (path.startsWith("/api/")) return json(res, 404, { error: "Not found" });
      return html(res, 404, notFoundPage());
    }
    if (match[1]) return json(res, 200, message);
    if (match[3] === "/html") {
      return send(res, 200, messageHtml(message), { ...messageHtmlHeaders });
    }
    if (match[3] === "/raw") {
      return send(res, 200, message.raw, {
        "content-type": "text/plain; charset=utf-8",
        "content-disposition": `attachment; filename="message-${message.id}.eml"`,
        "x-content-type-options": "nosniff",
      });
    }
    return html(res, 200, messagePage(message));
  }

  const server = createServer((req, res) => {
    route(req, res).catch((error: unknown) => {
      const status = error instanceof HttpError ? error.status : 500;
      const message = error instanceof Error ? error.message : "Internal error";
      if (res.headersSent) {
        res.end();
        return;
      }
      const code = status === 400 ? 10002 : 10003;
      json(res, status, envelope(null, [{ code, message }]));
    });
  });
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    port,
    store,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
