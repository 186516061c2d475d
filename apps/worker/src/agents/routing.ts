import { AppError } from "@parley/shared";
import { routeAgentRequest } from "agents";
import type { Context } from "hono";
import { projectAccess, sessionAccess } from "../auth/access.ts";
import { redeemConnectTicket } from "../auth/connect-tickets.ts";
import { bearerToken, type LiveToken, requireLiveUser } from "../auth/middleware.ts";
import { verifyAccessToken } from "../auth/tokens.ts";
import { config } from "../env.ts";
import type { AppEnv } from "../http/context.ts";
import { errorResponse } from "../http/errors.ts";
import { type AgentCaller, CALLER_HEADER } from "./caller.ts";

/** The agent classes reachable from outside, by URL segment. Every other binding stays internal. */
export const PUBLIC_AGENTS = ["onboarding-agent", "assistant-agent"] as const;
export type PublicAgent = (typeof PUBLIC_AGENTS)[number];

const isPublicAgent = (agent: string): agent is PublicAgent =>
  (PUBLIC_AGENTS as readonly string[]).includes(agent);

/**
 * Who may reach which agent object, for a token that is known to be good: any member of the
 * project's org for its onboarding chat; only the session's owner for an assistant session (admins
 * read it through the API, they do not drive it). A foreign or missing object is `not_found`.
 */
export async function agentCaller(
  db: D1Database,
  token: LiveToken & { expiresAt: number },
  agent: PublicAgent,
  name: string,
): Promise<AgentCaller> {
  const { userId } = token;
  const facts = {
    familyId: token.familyId,
    tokenVersion: token.version,
    expiresAt: token.expiresAt,
  };
  if (agent === "onboarding-agent") {
    const { project, access } = await projectAccess(db, userId, name);
    return {
      userId,
      orgId: access.orgId,
      projectId: project.id,
      sessionId: null,
      role: access.role,
      ...facts,
    };
  }
  const { session, access } = await sessionAccess(db, userId, name);
  if (session.owner_id !== userId) throw new AppError("not_found", "Session not found");
  return {
    userId,
    orgId: access.orgId,
    projectId: session.project_id,
    sessionId: session.id,
    role: access.role,
    ...facts,
  };
}

/**
 * Authorizes `/agents/:agent/:name` before any Durable Object is addressed: addressing an object
 * creates it, and the SDK sends the transcript to a socket before any hook of the agent runs.
 *
 * A WebSocket upgrade carries a single-use connect ticket (`?ticket=`, from
 * `POST /api/connect-tickets`) or an `Authorization` header (clients that can set one); HTTP calls
 * (`get-messages`) carry the header. A bearer token in the URL is refused outright, even a valid
 * one: URLs are recorded in request traces and logs, and a token there would outlive the request.
 */
async function authorize(
  request: Request,
  env: Env,
  agent: PublicAgent,
  name: string,
  upgrade: boolean,
): Promise<Request> {
  const url = new URL(request.url);
  if (url.searchParams.has("token")) {
    throw new AppError(
      "unauthorized",
      "Access tokens are not accepted in URLs: open the socket with a connect ticket (POST /api/connect-tickets) or an Authorization header",
    );
  }
  const ticket = url.searchParams.get("ticket");
  let token: LiveToken & { expiresAt: number };
  if (ticket !== null) {
    if (!upgrade) throw new AppError("unauthorized", "Connect tickets open WebSockets only");
    token = await redeemConnectTicket(env.DB, ticket, { agent, name });
  } else {
    const bearer = bearerToken(request.headers.get("authorization") ?? undefined);
    if (!bearer) throw new AppError("unauthorized", "Missing access token or connect ticket");
    token = await verifyAccessToken(config(env), bearer);
  }
  // As for the API: a token outliving its account, its sign-in or its rights opens nothing.
  await requireLiveUser(env.DB, token);
  const caller = await agentCaller(env.DB, token, agent, name);

  url.searchParams.delete("ticket");
  const forwarded = new Request(url, request);
  forwarded.headers.delete("authorization");
  forwarded.headers.delete("x-agents-lifecycle-props");
  forwarded.headers.set(CALLER_HEADER, JSON.stringify(caller));
  return forwarded;
}

export async function handleAgentRequest(c: Context<AppEnv>): Promise<Response> {
  const [, prefix, agent, name] = new URL(c.req.url).pathname.split("/");
  if (prefix !== "agents" || !agent || !name || !isPublicAgent(agent)) {
    return errorResponse(new AppError("not_found", "No such agent"), c);
  }
  // A client may not choose its own identity or lifecycle props, whatever it sends.
  const request = new Request(c.req.raw);
  request.headers.delete(CALLER_HEADER);
  request.headers.delete("x-agents-lifecycle-props");
  const guard = (upgrade: boolean) => async (incoming: Request) => {
    try {
      return await authorize(incoming, c.env, agent, name, upgrade);
    } catch (error) {
      return errorResponse(error, c);
    }
  };
  const response = await routeAgentRequest(request, c.env, {
    onBeforeConnect: guard(true),
    onBeforeRequest: guard(false),
  });
  return response ?? errorResponse(new AppError("not_found", "No such agent"), c);
}
