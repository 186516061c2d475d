import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer, type RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { parleyVerifier, shopMcpHandler, shopOrders } from "@parley/example-host-app/mcp-server";
import {
  createLocalJWKSet,
  decodeJwt,
  type JSONWebKeySet,
  type JWTPayload,
  type JWTVerifyGetKey,
} from "jose";
import { z } from "zod";
import { startV2ToolServers } from "./tool-servers-v2.ts";

/**
 * The tool servers of the workerd tests (issue 30), on loopback ports, started by the global
 * setup: a "lab" MCP server built with the official SDK (stateful, so it can tell its client its
 * tool list changed), a plain HTTP action server, and the example shop's MCP server
 * (examples/host-app/mcp-server.mjs). Each verifies Parley's identity token with the example's
 * verifier (jose) against the Worker's JWKS, which a test puts at `PUT /__jwks` (the Worker under
 * test has no port to fetch it from). `GET /__log` lists what each server received: the verified
 * claims (or why the token was refused) and whether the source's credential came along, never
 * the arguments. `DELETE /__log` forgets it. The lab's `POST /__tools {src, add?, remove?}`
 * changes one source's tool list at runtime (its live sessions say `tools/list_changed`);
 * `POST /__drop {src}` ends the GET streams of that source's sessions (as a server restarting its
 * front end would). The lab also serves `/mcp-poll`: the same server without the GET stream
 * (405), as a server that cannot push would answer. A second lab (`flakyUrl`) stops and starts
 * at `POST /__flaky {up}` on the first; `downUrl` is a port nothing listens on. The action
 * server's `/api/status/<code>` answers that status.
 */

export const ISSUER = "parley";
let jwks: JSONWebKeySet = { keys: [] };
const keys: JWTVerifyGetKey = (...args) => createLocalJWKSet(jwks)(...args);

export interface Seen {
  server: "lab" | "http" | "shop" | "v2";
  path: string;
  method: string;
  rpc: string | null;
  claims: JWTPayload | null;
  refused: string | null;
  apiKey: string | null;
}
const log: Seen[] = [];

/** Adds one request to the shared log (`GET /__log` on any server reads it). */
export const record = (entry: Seen) => {
  log.push(entry);
};

export function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  type = "application/json",
) {
  res.writeHead(status, { "content-type": type });
  res.end(typeof body === "string" ? body : JSON.stringify(body));
}

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

/** The control routes every server answers. */
export async function control(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<boolean> {
  if (path === "/__jwks" && req.method === "PUT") {
    jwks = JSON.parse(await readBody(req)) as JSONWebKeySet;
    send(res, 200, {});
    return true;
  }
  if (path === "/__log") {
    if (req.method === "DELETE") log.length = 0;
    send(res, 200, log);
    return true;
  }
  return false;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * The lab and the action server serve every test's org at one URL, so they pin the org the token
 * itself names (a test server's shortcut: a tenant's server pins its own org from configuration,
 * as the shop below does from its URL).
 */
export function anyOrgVerifier(audience: string): Verify {
  return (authorization) => {
    const token = /^Bearer (.+)$/.exec(authorization ?? "")?.[1] ?? "";
    let org: unknown = null;
    try {
      org = decodeJwt(token).org;
    } catch {}
    return parleyVerifier({ keys, issuer: ISSUER, audience, org: String(org) })(authorization);
  };
}

// ---- the lab MCP server ----

/**
 * Per source (the `src` claim of the session's initialize): tools added to the lab's list and
 * tools taken out of it, by `POST /__tools` (the list_changed tests). Keyed by source so a test
 * changing its source's list changes no other test's.
 */
const changes = new Map<
  string,
  { added: Set<string>; removed: Set<string>; readOnly: Set<string> }
>();
const changesOf = (src: string) => {
  let change = changes.get(src);
  if (!change) {
    change = { added: new Set(), removed: new Set(), readOnly: new Set() };
    changes.set(src, change);
  }
  return change;
};

/** Adds a plain read tool `name` to one session's server (the SDK then says list_changed). */
function addTool(session: LabSession, name: string) {
  if (session.tools.has(name)) return;
  session.tools.set(
    name,
    session.server.registerTool(
      name,
      { description: `Added tool ${name}`, inputSchema: {}, annotations: { readOnlyHint: true } },
      async () => ({ content: [{ type: "text", text: `added ${name}` }] }),
    ),
  );
}

/** Takes `name` out of one session's server (the SDK then says list_changed). */
function removeTool(session: LabSession, name: string) {
  session.tools.get(name)?.remove();
  session.tools.delete(name);
}

/** Says `readOnlyHint: true` of one session's tool `name` from now on (a server relaxing it). */
function markReadOnly(session: LabSession, name: string) {
  session.tools.get(name)?.update({ annotations: { readOnlyHint: true } });
}

/**
 * `POST /__tools {src, add?, remove?, readOnly?}`: changes source `src`'s tool list (`readOnly`:
 * tools whose hint turns to `readOnlyHint: true`), in its live sessions
 * (each sends `notifications/tools/list_changed` on its open stream) and in the sessions it opens
 * later (as a deploy of the server would).
 */
async function changeTools(
  req: IncomingMessage,
  res: ServerResponse,
  sessions: Map<string, LabSession>,
) {
  const {
    src,
    add = [],
    remove = [],
    readOnly = [],
  } = JSON.parse(await readBody(req)) as {
    src: string;
    add?: string[];
    remove?: string[];
    readOnly?: string[];
  };
  const change = changesOf(src);
  for (const name of add) {
    change.removed.delete(name);
    change.added.add(name);
  }
  for (const name of remove) {
    change.added.delete(name);
    change.removed.add(name);
  }
  for (const name of readOnly) change.readOnly.add(name);
  let live = 0;
  for (const session of sessions.values()) {
    if (session.src !== src) continue;
    live++;
    for (const name of add) addTool(session, name);
    for (const name of remove) removeTool(session, name);
    for (const name of readOnly) markReadOnly(session, name);
  }
  send(res, 200, { live });
}

/** A lab session's server; its tools' handles go into `tools` (to take one out later). */
function labServer(tools: Map<string, RegisteredTool>): McpServer {
  const server = new McpServer({ name: "parley-lab", version: "1.0.0" });
  const read = { readOnlyHint: true };
  const claimsOf = (extra: { authInfo?: { extra?: Record<string, unknown> } }) =>
    (extra.authInfo?.extra?.claims ?? null) as JWTPayload | null;
  tools.set(
    "whoami",
    server.registerTool(
      "whoami",
      { description: "Who Parley says is calling", inputSchema: {}, annotations: read },
      async (_args, extra) => {
        const claims = claimsOf(extra);
        return {
          content: [{ type: "text", text: JSON.stringify(claims) }],
          structuredContent: { claims },
        };
      },
    ),
  );
  tools.set(
    "slow",
    server.registerTool(
      "slow",
      {
        description: "Answers after ms",
        inputSchema: { ms: z.number().int().min(0).max(60_000) },
        annotations: read,
      },
      async ({ ms }) => {
        await sleep(ms);
        return { content: [{ type: "text", text: `slept ${ms}` }] };
      },
    ),
  );
  tools.set(
    "big",
    server.registerTool(
      "big",
      {
        description: "A text of n bytes",
        inputSchema: { bytes: z.number().int().min(1).max(5_000_000) },
        annotations: read,
      },
      async ({ bytes }) => ({ content: [{ type: "text", text: "x".repeat(bytes) }] }),
    ),
  );
  tools.set(
    "fails",
    server.registerTool(
      "fails",
      { description: "Always reports an error", inputSchema: {}, annotations: read },
      async () => ({ isError: true, content: [{ type: "text", text: "the lab refuses" }] }),
    ),
  );
  tools.set(
    "note",
    server.registerTool(
      "note",
      {
        description: "Writes a note (a write: no readOnlyHint)",
        inputSchema: { text: z.string().max(200) },
      },
      async ({ text }) => ({ content: [{ type: "text", text: `noted ${text.length} chars` }] }),
    ),
  );
  return server;
}

interface LabSession {
  server: McpServer;
  transport: StreamableHTTPServerTransport;
  /** The source the session was opened for (its initialize's `src` claim). */
  src: string | null;
  /** Every tool of the session by name, to take one out. */
  tools: Map<string, RegisteredTool>;
  /** The session's open GET streams (the server-to-client stream). */
  streams: Set<ServerResponse>;
}

/** `POST /__drop {src}`: ends the GET streams of source `src`'s sessions. */
async function dropStreams(
  req: IncomingMessage,
  res: ServerResponse,
  sessions: Map<string, LabSession>,
) {
  const { src } = JSON.parse(await readBody(req)) as { src: string };
  let dropped = 0;
  for (const session of sessions.values()) {
    if (session.src !== src) continue;
    for (const stream of session.streams) {
      stream.end();
      dropped++;
    }
    session.streams.clear();
  }
  send(res, 200, { dropped });
}

export type Verify = (authorization: string | undefined) => Promise<JWTPayload>;

export async function verified(
  req: IncomingMessage,
  res: ServerResponse,
  verify: Verify,
  seen: Omit<Seen, "claims" | "refused" | "apiKey">,
): Promise<JWTPayload | null> {
  const apiKey = (req.headers["x-api-key"] as string | undefined) ?? null;
  try {
    const claims = await verify(req.headers.authorization);
    log.push({ ...seen, claims, refused: null, apiKey });
    return claims;
  } catch (error) {
    log.push({ ...seen, claims: null, refused: (error as Error).message, apiKey });
    send(res, 401, { error: "unauthorized" });
    return null;
  }
}

async function startLab(): Promise<{ url: string; server: Server }> {
  const sessions = new Map<string, LabSession>();
  let url = "";
  const server = createServer(async (req, res) => {
    try {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      if (await control(req, res, path)) return;
      if (path === "/redirect") {
        res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data" }).end();
        return;
      }
      if (path === "/garbage") return send(res, 200, "{this is not json", "application/json");
      if (path === "/huge") return send(res, 200, `"${"x".repeat(3_000_000)}"`);
      if (path === "/__tools" && req.method === "POST") return changeTools(req, res, sessions);
      if (path === "/__drop" && req.method === "POST") return dropStreams(req, res, sessions);
      if (path === "/__flaky" && req.method === "POST") return flakyControl(req, res);
      if (path !== "/mcp" && path !== "/mcp-poll") return send(res, 404, {});
      const raw = req.method === "POST" ? await readBody(req) : "";
      const body = raw === "" ? undefined : (JSON.parse(raw) as { method?: string });
      const verify = anyOrgVerifier(`${url}${path}`);
      const claims = await verified(req, res, verify, {
        server: "lab",
        path,
        method: req.method ?? "",
        rpc: Array.isArray(body) ? "batch" : (body?.method ?? null),
      });
      if (!claims) return;
      if (path === "/mcp-poll" && req.method === "GET") return send(res, 405, {});
      (req as IncomingMessage & { auth?: unknown }).auth = {
        token: "verified",
        clientId: "parley",
        scopes: [],
        extra: { claims },
      };
      const id = req.headers["mcp-session-id"] as string | undefined;
      let session = id ? sessions.get(id) : undefined;
      if (!session) {
        if (body?.method !== "initialize") return send(res, 404, { error: "no session" });
        const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sid) => {
            sessions.set(sid, created);
          },
        });
        const tools = new Map<string, RegisteredTool>();
        const mcp = labServer(tools);
        const src = typeof claims.src === "string" ? claims.src : null;
        const created: LabSession = { server: mcp, transport, src, tools, streams: new Set() };
        const change = src ? changes.get(src) : undefined;
        for (const name of change?.added ?? []) addTool(created, name);
        for (const name of change?.removed ?? []) removeTool(created, name);
        for (const name of change?.readOnly ?? []) markReadOnly(created, name);
        transport.onclose = () => {
          if (transport.sessionId) sessions.delete(transport.sessionId);
        };
        await mcp.connect(transport);
        session = created;
      }
      if (req.method === "GET") {
        const streams = session.streams;
        streams.add(res);
        res.on("close", () => streams.delete(res));
      }
      await session.transport.handleRequest(req, res, body);
    } catch (error) {
      if (!res.headersSent) send(res, 500, { error: (error as Error).message });
    }
  });
  url = await listen(server);
  return { url, server };
}

// ---- the plain HTTP action server ----

async function startHttpActions(): Promise<{ url: string; server: Server }> {
  let url = "";
  const server = createServer(async (req, res) => {
    try {
      const parsed = new URL(req.url ?? "/", "http://x");
      const path = parsed.pathname;
      if (await control(req, res, path)) return;
      const verify = anyOrgVerifier(`${url}/api`);
      const claims = await verified(req, res, verify, {
        server: "http",
        path,
        method: req.method ?? "",
        rpc: null,
      });
      if (!claims) return;
      const order = /^\/api\/orders\/([^/]+)$/.exec(path);
      if (order && req.method === "GET") {
        return send(res, order[1] === "404" ? 404 : 200, {
          orderId: decodeURIComponent(order[1] ?? ""),
          status: "shipped",
          shopper: claims.sub,
          include: parsed.searchParams.get("include"),
        });
      }
      if (path === "/api/refunds" && req.method === "POST") {
        const body = JSON.parse(await readBody(req)) as Record<string, unknown>;
        return send(res, 201, { refunded: true, orderId: body.orderId, shopper: claims.sub });
      }
      if (path === "/api/slow") {
        await sleep(Number(parsed.searchParams.get("ms") ?? 0));
        return send(res, 200, { slept: true });
      }
      if (path === "/api/big") {
        return send(res, 200, { text: "y".repeat(Number(parsed.searchParams.get("bytes") ?? 0)) });
      }
      if (path === "/api/malformed") return send(res, 200, "{oops", "application/json");
      // Any status, as Cloudflare's edge answers one (521: the origin refused the connection).
      const status = /^\/api\/status\/(\d{3})$/.exec(path);
      if (status) return send(res, Number(status[1]), `error code: ${status[1]}`, "text/plain");
      if (path === "/api/redirect") {
        res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data" }).end();
        return;
      }
      return send(res, 404, { error: "no such route" });
    } catch (error) {
      if (!res.headersSent) send(res, 500, { error: (error as Error).message });
    }
  });
  url = await listen(server);
  return { url, server };
}

// ---- the example shop's MCP server ----

async function startShop(): Promise<{ url: string; server: Server }> {
  let url = "";
  const orders = shopOrders({
    "shop-user-alice": [
      { id: "1001", status: "shipped", total: "$42.00", carrier: "DHL", refund: null },
    ],
    "shop-user-bob": [
      { id: "2001", status: "delivered", total: "$10.00", carrier: "UPS", refund: null },
    ],
  });
  // One shop per org, as each tenant runs its own: `/<org id>/mcp` is org `<org id>`'s shop, whose
  // verifier pins that org (the example's `parleyVerifier`); the orders are shared by id.
  const handlers = new Map<string, (req: IncomingMessage, res: ServerResponse) => Promise<void>>();
  const server = createServer(async (req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (await control(req, res, path)) return;
    const org = /^\/(org_[A-Za-z0-9_-]+)\/mcp$/.exec(path)?.[1];
    if (!org) return send(res, 404, {});
    const verify = parleyVerifier({ keys, issuer: ISSUER, audience: `${url}${path}`, org });
    let handler = handlers.get(org);
    if (!handler) {
      handler = shopMcpHandler({ verify, orders });
      handlers.set(org, handler);
    }
    // The example's own handler verifies again; the log records what this server accepted.
    const apiKey = (req.headers["x-api-key"] as string | undefined) ?? null;
    await verify(req.headers.authorization).then(
      (claims) =>
        log.push({
          server: "shop",
          path,
          method: req.method ?? "",
          rpc: null,
          claims,
          refused: null,
          apiKey,
        }),
      (error: Error) =>
        log.push({
          server: "shop",
          path,
          method: req.method ?? "",
          rpc: null,
          claims: null,
          refused: error.message,
          apiKey,
        }),
    );
    await handler(req, res);
  });
  url = await listen(server);
  return { url, server };
}

/**
 * A second lab that can be switched off and on again at its port (`POST /__flaky {up}` on the
 * main lab): a tool server that stops while Parley holds a connection to it, then refuses.
 */
let flaky: ((up: boolean) => Promise<void>) | null = null;

/** A loopback port nothing listens on: every connection is refused. */
async function closedPort(): Promise<string> {
  const server = createServer();
  const url = await listen(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return url;
}

async function flakyControl(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { up } = JSON.parse(await readBody(req)) as { up: boolean };
  await flaky?.(up);
  send(res, 200, { up });
}

export async function startToolServers() {
  const [lab, http, shop, v2, second, down] = await Promise.all([
    startLab(),
    startHttpActions(),
    startShop(),
    startV2ToolServers(),
    startLab(),
    closedPort(),
  ]);
  const port = Number(new URL(second.url).port);
  flaky = async (up) => {
    if (up === second.server.listening) return;
    if (up) {
      await new Promise<void>((resolve) => second.server.listen(port, "127.0.0.1", resolve));
    } else {
      second.server.closeAllConnections();
      await new Promise<void>((resolve) => second.server.close(() => resolve()));
    }
  };
  const close = (server: Server) =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return {
    labUrl: lab.url,
    httpUrl: http.url,
    shopUrl: shop.url,
    v2Url: v2.url,
    flakyUrl: second.url,
    downUrl: down,
    close: () =>
      Promise.all([
        close(lab.server),
        close(http.server),
        close(shop.server),
        close(v2.server),
        second.server.listening ? close(second.server) : undefined,
      ]),
  };
}
