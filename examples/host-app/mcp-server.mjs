// Acme Shop's MCP server: the shop's own orders, offered to Parley's assistant as two tools, built
// with the official MCP TypeScript SDK (streamable HTTP, stateless). Parley calls it for the shopper
// who is chatting, and says who that is in a short-lived token it signs (`Authorization: Bearer`):
// this server checks the token against Parley's published keys (its JWKS), and acts only on that
// shopper's orders. It never sees the shopper's Parley token, and trusts nothing the model wrote
// about who the shopper is.
//
//   order_status   (read: runs when the model asks)    the status of one of the shopper's orders
//   request_refund (write: runs only after the shopper approves that exact call in the chat)
//
// Used by run.mjs (the shop, at /mcp) and by Parley's workerd tests (apps/worker/test/tool-servers.ts).

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { z } from "zod";

/** The `typ` of the identity tokens Parley signs for tool calls. */
export const PARLEY_TOOL_TOKEN_TYPE = "parley-tool+jwt";

/**
 * Verifies Parley's identity token for this server: signature by a key of Parley's JWKS (ES256
 * only), issuer, audience (this server's URL exactly as it was registered in Parley), expiry (with
 * a few seconds of clock skew), the token's type, **the org** (`org` must be the shop's own Parley
 * org id) and **the kind** of caller (`end_user`, `member`, or `source` for Parley's own listing). Resolves to the token's claims;
 * rejects with the reason otherwise.
 *
 * The org is not optional: any Parley org can register any URL as a tool source, this one
 * included, and Parley then signs tokens with this server's URL as their audience for that org's
 * own users, whose `sub` that org chooses. Only `org` says whose user `sub` is, so a verifier that
 * does not pin it acts for another org's users as if they were the shop's (docs/2026-12-06-tools.md,
 * "Verifying the org"). Pin it as a multi-tenant Entra ID application pins the tenant id.
 *
 * `keys` is a jose key getter: `createRemoteJWKSet(new URL("<parley>/.well-known/jwks.json"))` in
 * a real deployment (it caches the keys and refetches on an unknown `kid`). `org` is the shop's
 * Parley org id (Settings, or `GET /api/orgs`), from the server's configuration.
 */
export function parleyVerifier({ keys, issuer, audience, org }) {
  if (typeof org !== "string" || !org.startsWith("org_")) {
    throw new Error("parleyVerifier needs the tenant's Parley org id (org_...) to pin");
  }
  return async (authorization) => {
    const token = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/.exec(authorization ?? "")?.[1];
    if (!token) throw new Error("no bearer token");
    const { payload } = await jwtVerify(token, keys, {
      algorithms: ["ES256"],
      issuer,
      audience,
      typ: PARLEY_TOOL_TOKEN_TYPE,
      requiredClaims: ["sub", "exp", "iat", "jti", "org", "kind"],
      maxTokenAge: "120s",
      clockTolerance: 5,
    });
    if (payload.org !== org) throw new Error("token of another Parley org");
    // `source`: Parley's own requests (listing the tools, the list_changed stream), no person.
    if (payload.kind !== "end_user" && payload.kind !== "member" && payload.kind !== "source") {
      throw new Error("token of an unknown kind");
    }
    return payload;
  };
}

/** Parley's JWKS as a jose key getter. */
export const parleyKeys = (parleyUrl) =>
  createRemoteJWKSet(new URL("/.well-known/jwks.json", parleyUrl));

/**
 * The shop's orders, per shopper (the id the shop knows them by: the token's `sub`). An example:
 * every shopper gets two orders the first time they are looked up.
 */
export function shopOrders(seed = {}) {
  const byShopper = new Map(Object.entries(seed));
  return {
    of(shopper) {
      if (!byShopper.has(shopper)) {
        byShopper.set(shopper, [
          { id: "1001", status: "shipped", total: "$42.00", carrier: "DHL", refund: null },
          { id: "1002", status: "delivered", total: "$18.50", carrier: "UPS", refund: null },
        ]);
      }
      return byShopper.get(shopper);
    },
  };
}

const text = (value) => ({
  content: [{ type: "text", text: JSON.stringify(value) }],
  structuredContent: value,
});

/**
 * What a tool answers when the token is not a shopper's: a member of the shop's Parley org (a
 * teammate trying the profile) sees the tools but has no orders, and Parley's own requests
 * (`kind: "source"`: its listing of the tools, its stream) name the source, no person. `sub` is a
 * shopper's id only when `kind` is `end_user`: a member's `sub` is their Parley user id, and a
 * shopper's id chosen by the shop could be the same string.
 */
const notAShopper = {
  isError: true,
  content: [{ type: "text", text: "Orders are a signed-in shopper's only" }],
};

/**
 * The shop's MCP server for one request, acting for `shopper` only (null: nobody's orders).
 */
function shopServer(orders, shopper) {
  const server = new McpServer({ name: "acme-shop", version: "1.0.0" });
  server.registerTool(
    "order_status",
    {
      title: "Order status",
      description: "The status, total and carrier of one of the signed-in shopper's orders.",
      inputSchema: { orderId: z.string().min(1).max(20).describe("The order number, e.g. 1001") },
      annotations: { readOnlyHint: true },
    },
    async ({ orderId }) => {
      if (shopper === null) return notAShopper;
      const order = orders.of(shopper).find((o) => o.id === orderId);
      if (!order) {
        return {
          isError: true,
          content: [{ type: "text", text: `No order ${orderId} for this shopper` }],
        };
      }
      return text({
        orderId: order.id,
        status: order.status,
        total: order.total,
        carrier: order.carrier,
        refund: order.refund,
      });
    },
  );
  server.registerTool(
    "request_refund",
    {
      title: "Request a refund",
      description: "Request a refund of one of the signed-in shopper's orders, with a reason.",
      inputSchema: {
        orderId: z.string().min(1).max(20).describe("The order number, e.g. 1001"),
        reason: z.string().min(1).max(500).describe("Why the shopper wants a refund"),
      },
      annotations: { readOnlyHint: false, destructiveHint: false },
    },
    async ({ orderId, reason }) => {
      if (shopper === null) return notAShopper;
      const order = orders.of(shopper).find((o) => o.id === orderId);
      if (!order) {
        return {
          isError: true,
          content: [{ type: "text", text: `No order ${orderId} for this shopper` }],
        };
      }
      if (order.refund) return text({ orderId, refund: order.refund, note: "already requested" });
      order.refund = { status: "requested", reason, at: new Date().toISOString() };
      return text({ orderId, refund: order.refund });
    },
  );
  return server;
}

async function readJson(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > 64 * 1024) throw new Error("body too large");
    chunks.push(chunk);
  }
  const body = Buffer.concat(chunks).toString();
  return body === "" ? undefined : JSON.parse(body);
}

/**
 * A Node request handler for the MCP endpoint: verifies Parley's token (401 otherwise, before
 * any MCP work), then serves the request statelessly (a server per request, JSON answers).
 * `onCall` (optional) hears each verified request's claims: the tests read it.
 */
export function shopMcpHandler({ verify, orders, onCall }) {
  return async (req, res) => {
    let claims;
    try {
      claims = await verify(req.headers.authorization);
    } catch {
      res.writeHead(401, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          jsonrpc: "2.0",
          error: { code: -32001, message: "Unauthorized" },
          id: null,
        }),
      );
      return;
    }
    if (req.method !== "POST") {
      res.writeHead(405, { allow: "POST" }).end();
      return;
    }
    let body;
    try {
      body = await readJson(req);
    } catch {
      res.writeHead(400).end();
      return;
    }
    onCall?.(claims, body);
    // A shopper's actions only for a shopper's token: `kind` separates them from the members.
    const server = shopServer(orders, claims.kind === "end_user" ? String(claims.sub) : null);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on("close", () => {
      transport.close();
      server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };
}
