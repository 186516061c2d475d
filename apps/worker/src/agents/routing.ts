import { AppError } from "@parley/shared";
import { routeAgentRequest } from "agents";
import type { Context } from "hono";
import { projectAccess, sessionAccess } from "../auth/access.ts";
import { bearerToken, requireLiveUser } from "../auth/middleware.ts";
import { verifyAccessToken } from "../auth/tokens.ts";
import { config } from "../env.ts";
import type { AppEnv } from "../http/context.ts";
import { errorResponse } from "../http/errors.ts";
import { type AgentCaller, CALLER_HEADER } from "./caller.ts";

/** The agent classes reachable from outside, by URL segment. Every other binding stays internal. */
const PUBLIC_AGENTS = new Set(["onboarding-agent", "assistant-agent"]);

/**
 * Authorizes `/agents/:agent/:name` before any Durable Object is addressed: addressing an object
 * creates it, and the SDK sends the transcript to a socket before any hook of the agent runs. The
 * token comes from `?token=` (WebSocket upgrades cannot carry headers from a browser) or the
 * Authorization header; it is removed from the URL before the request goes on.
 */
async function authorize(
  request: Request,
  env: Env,
  agent: string,
  name: string,
): Promise<Request> {
  const url = new URL(request.url);
  const token =
    url.searchParams.get("token") ?? bearerToken(request.headers.get("authorization") ?? undefined);
  if (!token) throw new AppError("unauthorized", "Missing access token");
  const { userId } = await verifyAccessToken(config(env), token);
  // As for the API: a token outliving its account (or filed for erasure) opens nothing.
  await requireLiveUser(env.DB, userId);

  let caller: AgentCaller;
  if (agent === "onboarding-agent") {
    const { project, access } = await projectAccess(env.DB, userId, name);
    caller = {
      userId,
      orgId: access.orgId,
      projectId: project.id,
      sessionId: null,
      role: access.role,
    };
  } else {
    const { session, access } = await sessionAccess(env.DB, userId, name);
    // Only the session's owner chats in it; admins may read it through the API, not drive it.
    if (session.owner_id !== userId) throw new AppError("not_found", "Session not found");
    caller = {
      userId,
      orgId: access.orgId,
      projectId: session.project_id,
      sessionId: session.id,
      role: access.role,
    };
  }

  url.searchParams.delete("token");
  const forwarded = new Request(url, request);
  forwarded.headers.delete("authorization");
  forwarded.headers.delete("x-agents-lifecycle-props");
  forwarded.headers.set(CALLER_HEADER, JSON.stringify(caller));
  return forwarded;
}

export async function handleAgentRequest(c: Context<AppEnv>): Promise<Response> {
  const [, prefix, agent, name] = new URL(c.req.url).pathname.split("/");
  if (prefix !== "agents" || !agent || !name || !PUBLIC_AGENTS.has(agent)) {
    return errorResponse(new AppError("not_found", "No such agent"), c);
  }
  // A client may not choose its own identity or lifecycle props, whatever it sends.
  const request = new Request(c.req.raw);
  request.headers.delete(CALLER_HEADER);
  request.headers.delete("x-agents-lifecycle-props");
  const guard = async (incoming: Request) => {
    try {
      return await authorize(incoming, c.env, agent, name);
    } catch (error) {
      return errorResponse(error, c);
    }
  };
  const response = await routeAgentRequest(request, c.env, {
    onBeforeConnect: guard,
    onBeforeRequest: guard,
  });
  return response ?? errorResponse(new AppError("not_found", "No such agent"), c);
}
