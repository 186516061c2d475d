import { env, SELF } from "cloudflare:test";
import type { ToolSource } from "@parley/shared";
import { api, BASE } from "./helpers.ts";

/** Shared by the tool source tests (issue 30): the loopback tool servers and registering sources. */

export const lab = () => env.TEST_TOOL_LAB_URL;
export const actions = () => env.TEST_TOOL_HTTP_URL;
export const shop = () => env.TEST_SHOP_URL;
export const v2 = () => env.TEST_TOOL_V2_URL;
/** A second lab that `setFlaky(false)` stops (connections refused) and `setFlaky(true)` starts. */
export const flaky = () => env.TEST_TOOL_FLAKY_URL;
/** A loopback port nothing listens on: every connection is refused. */
export const down = () => env.TEST_TOOL_DOWN_URL;

export async function setFlaky(up: boolean): Promise<void> {
  const res = await fetch(`${lab()}/__flaky`, { method: "POST", body: JSON.stringify({ up }) });
  if (!res.ok) throw new Error(`flaky: ${res.status}`);
}

/** Puts the Worker's JWKS on the tool servers (they verify Parley's tokens with it). */
export async function shareJwks(): Promise<void> {
  const jwks = await (await SELF.fetch(`${BASE}/.well-known/jwks.json`)).text();
  for (const url of [lab(), actions(), shop(), v2()]) {
    const res = await fetch(`${url}/__jwks`, { method: "PUT", body: jwks });
    if (!res.ok) throw new Error(`jwks to ${url}: ${res.status}`);
  }
}

export interface Seen {
  server: "lab" | "http" | "shop" | "v2";
  path: string;
  method: string;
  rpc: string | null;
  claims: Record<string, unknown> | null;
  refused: string | null;
  apiKey: string | null;
}

/** What the tool servers received (all of them share one log). */
export async function seen(): Promise<Seen[]> {
  return (await fetch(`${lab()}/__log`)).json();
}

export async function register(
  orgId: string,
  token: string,
  body: Record<string, unknown>,
): Promise<ToolSource> {
  const res = await api<ToolSource>("POST", `/api/orgs/${orgId}/tool-sources`, { token, body });
  if (res.status !== 201) throw new Error(`register: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** The lab MCP server as a source of `orgId`. */
export const labSource = (orgId: string, token: string, extra: Record<string, unknown> = {}) =>
  register(orgId, token, {
    kind: "mcp",
    name: `Lab ${crypto.randomUUID().slice(0, 8)}`,
    url: `${lab()}/mcp`,
    ...extra,
  });

/** The HTTP action server as a source of `orgId`, with its actions. */
export const httpSource = (orgId: string, token: string, extra: Record<string, unknown> = {}) =>
  register(orgId, token, {
    kind: "http",
    name: `Actions ${crypto.randomUUID().slice(0, 8)}`,
    url: `${actions()}/api`,
    actions: [
      {
        name: "order_status",
        description: "An order's status",
        method: "GET",
        path: "/orders/{orderId}",
        inputSchema: {
          type: "object",
          properties: { orderId: { type: "string" }, include: { type: "string" } },
          required: ["orderId"],
        },
        access: "read",
      },
      {
        name: "request_refund",
        description: "Ask for a refund",
        method: "POST",
        path: "/refunds",
        inputSchema: {
          type: "object",
          properties: { orderId: { type: "string" }, reason: { type: "string" } },
          required: ["orderId"],
        },
      },
      { name: "slow", description: "Slow", method: "GET", path: "/slow", access: "read" },
      { name: "big", description: "Big", method: "GET", path: "/big", access: "read" },
      {
        name: "malformed",
        description: "Bad JSON",
        method: "GET",
        path: "/malformed",
        access: "read",
      },
      {
        name: "redirect",
        description: "Redirects",
        method: "GET",
        path: "/redirect",
        access: "read",
      },
    ],
    ...extra,
  });
