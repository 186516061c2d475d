import type { EmbedToken, Session } from "@parley/shared";
import { expect } from "vitest";
import { type ChatSocket, upgrade } from "./chat.ts";
import { api, type World } from "./helpers.ts";

/** End users in workerd tests: tokens minted with the org's key, sessions and sockets from the embed's page. */

/** The embed's page: the origin test/helpers.ts's `embedApp` allows. */
export const PAGE = "https://shop.example";
const agentPath = (sessionId: string) => `/agents/assistant-agent/${sessionId}`;

/** An end-user access token for the tenant's user `sub`, minted with the org's API key. */
export async function endUserToken(w: World, sub: string, appId = w.appId): Promise<EmbedToken> {
  const res = await api<EmbedToken>("POST", `/api/apps/${appId}/end-user-tokens`, {
    token: w.apiKey.secret,
    body: { sub, name: `Customer ${sub}` },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** An end-user call as the embed makes it: bearer token, from the app's page. */
export const asEndUser = <T>(method: string, path: string, token: string, body?: unknown) =>
  api<T>(method, path, { token, body, headers: { origin: PAGE } });

export async function openSession(token: string): Promise<Session> {
  const res = await asEndUser<Session>("POST", "/api/embed/sessions", token, {});
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** The embed's socket: a ticket from /api/embed/connect-tickets, the upgrade from the page. */
export async function openSocket(sessionId: string, token: string, origin = PAGE) {
  const ticket = await asEndUser<{ ticket: string }>("POST", "/api/embed/connect-tickets", token, {
    sessionId,
  });
  if (ticket.status !== 201) return { socket: null, status: ticket.status, body: ticket.body };
  return upgrade(agentPath(sessionId), {
    query: { ticket: ticket.body.ticket },
    headers: { origin },
  });
}

export async function mustOpen(sessionId: string, token: string): Promise<ChatSocket> {
  const opened = await openSocket(sessionId, token);
  if (!opened.socket) throw new Error(`refused: ${opened.status} ${JSON.stringify(opened.body)}`);
  await opened.socket.waitFor((f) => f.type === "cf_agent_identity");
  return opened.socket;
}
