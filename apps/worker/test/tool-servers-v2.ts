import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { NodeStreamableHTTPServerTransport, toNodeHandler } from "@modelcontextprotocol/node";
import {
  type AuthInfo,
  bearerAuthChallengeResponse,
  createMcpHandler,
  type McpHttpHandler,
  McpServer,
  OAuthError,
  OAuthErrorCode,
  type RegisteredTool,
  verifyBearerToken,
} from "@modelcontextprotocol/server";
import type { JWTPayload } from "jose";
import { z } from "zod";
import {
  anyOrgVerifier,
  control,
  listen,
  readBody,
  record,
  type Seen,
  send,
} from "./tool-servers.ts";

/**
 * MCP servers built with the official TypeScript SDK's v2 packages (`@modelcontextprotocol/server`
 * 2.4.0, with `@modelcontextprotocol/node` to serve them from `node:http`), in every HTTP way its
 * docs present, so the workerd tests check Parley against servers no one here wrote the protocol
 * of (docs/2026-12-06-tool-list-listener.md, "MCP server SDKs and modes"). One port, a path per
 * mode:
 *
 * - `/session/mcp`: streamable HTTP with sessions (`NodeStreamableHTTPServerTransport` with a
 *   `sessionIdGenerator`), a server per session; its GET stream carries `list_changed`.
 * - `/stateless/mcp`: streamable HTTP without sessions (`sessionIdGenerator: undefined`), a
 *   server and a transport per request; it cannot push.
 * - `/handler/mcp`: `createMcpHandler` (the web-standard handler, served by `toNodeHandler`):
 *   protocol 2026-07-28 per request for a client that negotiates it (changes on
 *   `subscriptions/listen`), stateless 2025 serving for one that does not.
 * - `/modern/mcp`: `createMcpHandler(..., { legacy: "reject" })`: 2026-07-28 only.
 *
 * Every request is authorized by the SDK's own bearer check (`verifyBearerToken`, and
 * `bearerAuthChallengeResponse` for its 401 or 403) over the example's verifier; the verified
 * claims reach the tools as the SDK's `authInfo`. `/<mode>/wrong-aud` verifies against another
 * audience (every token fails: the SDK's 401), `/<mode>/scoped` requires a scope Parley's tokens
 * never carry (the SDK's 403). `POST /__tools {src, add?, remove?}` changes one source's tool list
 * in every mode (live sessions say `list_changed`, the handlers publish `toolsChanged`). What each
 * request was goes to the tool servers' shared log (`server: "v2"`, the path names the mode).
 */

export const V2_MODES = ["session", "stateless", "handler", "modern"] as const;
export type V2Mode = (typeof V2_MODES)[number];

const changes = new Map<string, { added: Set<string>; removed: Set<string> }>();
const changesOf = (src: string) => {
  let change = changes.get(src);
  if (!change) {
    change = { added: new Set(), removed: new Set() };
    changes.set(src, change);
  }
  return change;
};

const claimsOf = (ctx: { http?: { authInfo?: AuthInfo } }) =>
  (ctx.http?.authInfo?.extra?.claims ?? null) as JWTPayload | null;

/** A tool added at runtime: a plain read. */
function addTool(server: McpServer, tools: Map<string, RegisteredTool>, name: string) {
  if (tools.has(name)) return;
  tools.set(
    name,
    server.registerTool(
      name,
      { description: `Added tool ${name}`, annotations: { readOnlyHint: true } },
      async () => ({ content: [{ type: "text", text: `added ${name}` }] }),
    ),
  );
}

/** A server with `whoami` (read), `note` (write), `fails` (read, a tool error), as `src` has it now. */
function v2Server(src: string | null, tools = new Map<string, RegisteredTool>()): McpServer {
  const server = new McpServer({ name: "parley-v2-lab", version: "2.4.0" });
  const read = { readOnlyHint: true };
  tools.set(
    "whoami",
    server.registerTool(
      "whoami",
      { description: "Who Parley says is calling", annotations: read },
      async (ctx) => {
        const claims = claimsOf(ctx);
        return {
          content: [{ type: "text", text: JSON.stringify(claims) }],
          structuredContent: { claims },
        };
      },
    ),
  );
  tools.set(
    "note",
    server.registerTool(
      "note",
      {
        description: "Writes a note (a write: no readOnlyHint)",
        inputSchema: z.object({ text: z.string().max(200) }),
      },
      async ({ text }, ctx) => ({
        content: [{ type: "text", text: `noted ${text.length} chars` }],
        structuredContent: { noted: text.length, by: claimsOf(ctx)?.sub ?? null },
      }),
    ),
  );
  tools.set(
    "fails",
    server.registerTool(
      "fails",
      { description: "Always reports an error", annotations: read },
      async () => ({ isError: true, content: [{ type: "text", text: "the v2 lab refuses" }] }),
    ),
  );
  const change = src ? changes.get(src) : undefined;
  for (const name of change?.added ?? []) addTool(server, tools, name);
  for (const name of change?.removed ?? []) {
    tools.get(name)?.remove();
    tools.delete(name);
  }
  return server;
}

interface Session {
  server: McpServer;
  transport: NodeStreamableHTTPServerTransport;
  src: string | null;
  tools: Map<string, RegisteredTool>;
}

export async function startV2ToolServers(): Promise<{ url: string; server: Server }> {
  let url = "";
  const sessions = new Map<string, Session>();
  /** One `createMcpHandler` per mode and source (as a tenant runs its own), so `notify` is theirs. */
  const handlers = new Map<string, McpHttpHandler>();
  const handlerFor = (mode: "handler" | "modern", src: string | null) => {
    const key = `${mode}:${src}`;
    let handler = handlers.get(key);
    if (!handler) {
      handler = createMcpHandler(
        () => v2Server(src),
        mode === "modern" ? { legacy: "reject" } : {},
      );
      handlers.set(key, handler);
    }
    return handler;
  };

  async function changeTools(req: IncomingMessage, res: ServerResponse) {
    const {
      src,
      add = [],
      remove = [],
    } = JSON.parse(await readBody(req)) as {
      src: string;
      add?: string[];
      remove?: string[];
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
    let live = 0;
    for (const session of sessions.values()) {
      if (session.src !== src) continue;
      live++;
      for (const name of add) addTool(session.server, session.tools, name);
      for (const name of remove) {
        session.tools.get(name)?.remove();
        session.tools.delete(name);
      }
    }
    for (const mode of ["handler", "modern"] as const) {
      handlers.get(`${mode}:${src}`)?.notify.toolsChanged();
    }
    send(res, 200, { live });
  }

  const server = createServer(async (req, res) => {
    try {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      if (await control(req, res, path)) return;
      if (path === "/__tools" && req.method === "POST") return changeTools(req, res);
      const match = /^\/(session|stateless|handler|modern)\/(mcp|wrong-aud|scoped)$/.exec(path);
      if (!match) return send(res, 404, {});
      const mode = match[1] as V2Mode;
      const raw = req.method === "POST" ? await readBody(req) : "";
      let body: unknown;
      try {
        body = raw === "" ? undefined : JSON.parse(raw);
      } catch {
        body = undefined;
      }
      const rpc = Array.isArray(body)
        ? "batch"
        : ((body as { method?: string } | undefined)?.method ?? null);
      const audience = `${url}${match[2] === "wrong-aud" ? `/${mode}/elsewhere` : path}`;
      const verify = anyOrgVerifier(audience);
      const entry: Seen = {
        server: "v2",
        path,
        method: req.method ?? "",
        rpc,
        claims: null,
        refused: null,
        apiKey: null,
      };
      let auth: AuthInfo;
      try {
        auth = await verifyBearerToken(req.headers.authorization, {
          verifier: {
            verifyAccessToken: async (token) => {
              // A token the verifier refuses is the SDK's `invalid_token` (its 401); any other
              // error it answers 500.
              const claims = await verify(`Bearer ${token}`).catch((error: Error) => {
                throw new OAuthError(OAuthErrorCode.InvalidToken, error.message);
              });
              // The SDK's check refuses a token without an expiry: Parley's carry `exp`.
              return {
                token,
                clientId: "parley",
                scopes: [],
                expiresAt: claims.exp,
                extra: { claims },
              };
            },
          },
          requiredScopes: match[2] === "scoped" ? ["orders:write"] : undefined,
        });
      } catch (error) {
        entry.refused = (error as Error).message;
        record(entry);
        const answer = bearerAuthChallengeResponse(error);
        res.writeHead(answer.status, Object.fromEntries(answer.headers));
        res.end(await answer.text());
        return;
      }
      const claims = auth.extra?.claims as JWTPayload;
      entry.claims = claims;
      record(entry);
      const src = typeof claims.src === "string" ? claims.src : null;
      const withAuth = Object.assign(req, { auth });

      if (mode === "handler" || mode === "modern") {
        return await toNodeHandler(handlerFor(mode, src))(withAuth, res, body);
      }
      if (mode === "stateless") {
        const mcp = v2Server(src);
        const transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        await mcp.connect(transport);
        res.on("close", () => {
          void transport.close();
          void mcp.close();
        });
        return await transport.handleRequest(withAuth, res, body);
      }
      const id = req.headers["mcp-session-id"] as string | undefined;
      let session = id ? sessions.get(id) : undefined;
      if (!session) {
        if (id || rpc !== "initialize") {
          // Not an initialize and no live session: the transport answers as the SDK does.
          const orphan = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: randomUUID });
          await v2Server(src).connect(orphan);
          return await orphan.handleRequest(withAuth, res, body);
        }
        const tools = new Map<string, RegisteredTool>();
        const mcp = v2Server(src, tools);
        const transport: NodeStreamableHTTPServerTransport = new NodeStreamableHTTPServerTransport({
          sessionIdGenerator: randomUUID,
          onsessioninitialized: (sid) => {
            sessions.set(sid, created);
          },
          onsessionclosed: (sid) => {
            sessions.delete(sid);
          },
        });
        const created: Session = { server: mcp, transport, src, tools };
        await mcp.connect(transport);
        session = created;
      }
      await session.transport.handleRequest(withAuth, res, body);
    } catch (error) {
      if (!res.headersSent) send(res, 500, { error: (error as Error).message });
    }
  });
  url = await listen(server);
  return { url, server };
}
