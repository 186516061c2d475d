import { AppError, isEndUserId } from "@parley/shared";
import { routeAgentRequest } from "agents";
import type { Context } from "hono";
import { projectAccessRead, sessionAccessRead } from "../auth/access.ts";
import { redeemConnectTicket } from "../auth/connect-tickets.ts";
import { endUserSessionAccessRead } from "../auth/end-user-access.ts";
import { bearerToken, type LiveToken, liveUserRead } from "../auth/middleware.ts";
import { verifyAccessToken, verifyEndUserAccessToken } from "../auth/tokens.ts";
import { anyAppListsOrigin, preflightResponse } from "../db/apps.ts";
import { type BatchedRead, batchAnswers, firstRow, runRead } from "../db/batched-read.ts";
import { config } from "../env.ts";
import type { AppEnv } from "../http/context.ts";
import { errorResponse } from "../http/errors.ts";
import { isPlatformOrigin } from "../http/same-origin.ts";
import { type AgentCaller, CALLER_HEADER, readCaller } from "./caller.ts";
import { relaySocket } from "./socket-relay.ts";

const readCallerKind = (request: Request) => readCaller(request)?.kind ?? null;

/** The agent classes reachable from outside, by URL segment. Every other binding stays internal. */
export const PUBLIC_AGENTS = ["onboarding-agent", "assistant-agent"] as const;
export type PublicAgent = (typeof PUBLIC_AGENTS)[number];

const isPublicAgent = (agent: string): agent is PublicAgent =>
  (PUBLIC_AGENTS as readonly string[]).includes(agent);

/** What the caller's right to an object says: its org, project, session and their role. */
type Rights = Pick<AgentCaller, "orgId" | "projectId" | "sessionId" | "role">;

/**
 * Who may reach which agent object: any member of the project's org for its onboarding chat; only
 * the session's owner for an assistant session (admins read it through the API, they do not
 * drive it). A foreign or missing object is `not_found`. A read that can share a `DB.batch`.
 */
function rightsRead(
  db: D1Database,
  userId: string,
  agent: PublicAgent,
  name: string,
): BatchedRead<Rights> {
  if (agent === "onboarding-agent") {
    const read = projectAccessRead(db, userId, name);
    return {
      statements: read.statements,
      read: async (answers) => {
        const { project, access } = await read.read(answers);
        return { orgId: access.orgId, projectId: project.id, sessionId: null, role: access.role };
      },
    };
  }
  const read = sessionAccessRead(db, userId, name);
  return {
    statements: read.statements,
    read: async (answers) => {
      const { session, access } = await read.read(answers);
      if (session.owner_id !== userId) throw new AppError("not_found", "Session not found");
      return {
        orgId: access.orgId,
        projectId: session.project_id,
        sessionId: session.id,
        role: access.role,
      };
    },
  };
}

const memberCaller = (token: LiveToken & { expiresAt: number }, rights: Rights): AgentCaller => ({
  kind: "member",
  appId: null,
  userId: token.userId,
  ...rights,
  familyId: token.familyId,
  tokenVersion: token.version,
  expiresAt: token.expiresAt,
});

/** The caller of an agent object, for a token that is known to be good (`rightsRead`). */
export async function agentCaller(
  db: D1Database,
  token: LiveToken & { expiresAt: number },
  agent: PublicAgent,
  name: string,
): Promise<AgentCaller> {
  return memberCaller(token, await runRead(db, rightsRead(db, token.userId, agent, name)));
}

/**
 * A member's token, still good (as for the API), and their right to the object: both read in one
 * `DB.batch` (one round trip: each connect and each transcript read asks).
 */
export async function memberAgentCaller(
  db: D1Database,
  token: LiveToken & { expiresAt: number },
  agent: PublicAgent,
  name: string,
): Promise<AgentCaller> {
  // As for the API: a token outliving its account, its sign-in or its rights opens nothing.
  const live = liveUserRead(db, token);
  const rights = rightsRead(db, token.userId, agent, name);
  const [liveAnswers = [], rightsAnswers = []] = await batchAnswers(db, [live, rights]);
  await live.read(liveAnswers);
  return memberCaller(token, await rights.read(rightsAnswers));
}

/**
 * The end user's standing now, as `requireLiveEndUser` reads it for the API: their row, their app
 * not deleted, no erasure of them or their org filed. A ticket issued a moment before any of those
 * changed opens nothing (docs/2026-12-06-bearer-links.md).
 */
function endUserStandingRead(
  db: D1Database,
  who: { endUserId: string; appId: string },
): BatchedRead<void> {
  const statement = db
    .prepare(
      `SELECT e.org_id FROM end_users e JOIN apps a ON a.id = e.app_id AND a.deleted_at IS NULL
       WHERE e.id = ?1 AND e.app_id = ?2
         AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.subject_id IN (?1, e.org_id))`,
    )
    .bind(who.endUserId, who.appId);
  return {
    statements: [statement],
    read: async ([answer]) => {
      if (!firstRow(answer)) throw new AppError("unauthorized", "Invalid or expired access token");
    },
  };
}

/**
 * An end user (docs/2026-12-02-apps-and-end-users.md) reaches only their own assistant sessions,
 * opened through their app, in a project the app lists, while the app and they live; the
 * onboarding chat and every other session are `not_found`. Their standing and their right to the
 * session are read in one `DB.batch`; a standing lost is `unauthorized` before anything else.
 */
export async function endUserAgentCaller(
  db: D1Database,
  who: { endUserId: string; appId: string; expiresAt: number },
  agent: PublicAgent,
  name: string,
): Promise<AgentCaller> {
  if (agent !== "assistant-agent") throw new AppError("not_found", "Project not found");
  const standing = endUserStandingRead(db, who);
  const access = endUserSessionAccessRead(
    db,
    { endUserId: who.endUserId, appId: who.appId, orgId: null },
    name,
  );
  const [standingAnswers = [], accessAnswers = []] = await batchAnswers(db, [standing, access]);
  await standing.read(standingAnswers);
  const { session } = await access.read(accessAnswers);
  return {
    kind: "end_user",
    appId: who.appId,
    userId: who.endUserId,
    orgId: session.org_id,
    projectId: session.project_id,
    sessionId: session.id,
    role: "member",
    familyId: who.appId,
    tokenVersion: 0,
    expiresAt: who.expiresAt,
  };
}

/** A bearer token: a member's, or else an end user's (each verifier pins its own `typ`). */
async function bearerCaller(
  env: Env,
  bearer: string,
  agent: PublicAgent,
  name: string,
): Promise<AgentCaller> {
  let member: LiveToken & { expiresAt: number };
  try {
    member = await verifyAccessToken(config(env), bearer);
  } catch (error) {
    const endUser = await verifyEndUserAccessToken(config(env), bearer).catch(() => null);
    if (endUser === null) throw error;
    return endUserAgentCaller(env.DB, endUser, agent, name);
  }
  return memberAgentCaller(env.DB, member, agent, name);
}

/**
 * An end user's request from a browser must come from one of their app's origins, or from
 * Parley's own pages (the developers' area's preview, `isPlatformOrigin`).
 */
async function requireListedOrigin(env: Env, caller: AgentCaller, request: Request): Promise<void> {
  const origin = request.headers.get("origin");
  if (origin === null) return; // not a browser: the tenant's own server
  if (isPlatformOrigin(origin, request, config(env).publicUrl)) return;
  const listed = await env.DB.prepare(
    "SELECT 1 AS ok FROM app_origins WHERE app_id = ? AND origin = ?",
  )
    .bind(caller.appId, origin)
    .first<{ ok: number }>();
  if (!listed) throw new AppError("forbidden", "This page's origin is not allowed to use this app");
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
  let caller: AgentCaller;
  if (ticket !== null) {
    if (!upgrade) throw new AppError("unauthorized", "Connect tickets open WebSockets only");
    const token = await redeemConnectTicket(env.DB, ticket, { agent, name });
    caller = isEndUserId(token.userId)
      ? await endUserAgentCaller(
          env.DB,
          { endUserId: token.userId, appId: token.familyId, expiresAt: token.expiresAt },
          agent,
          name,
        )
      : await memberAgentCaller(env.DB, token, agent, name);
  } else {
    const bearer = bearerToken(request.headers.get("authorization") ?? undefined);
    if (!bearer) throw new AppError("unauthorized", "Missing access token or connect ticket");
    caller = await bearerCaller(env, bearer, agent, name);
  }
  if (caller.kind === "end_user") {
    // A browser's page must be one of the app's: a socket or a transcript read from anywhere
    // else is refused, whatever token it carries.
    await requireListedOrigin(env, caller, request);
  }

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
  const origin = c.req.header("origin") ?? null;
  if (c.req.method === "OPTIONS") {
    // An embed's transcript read (`get-messages` with its Authorization header) from a page of
    // some app; the request itself then checks the end user's own app.
    if (origin === null || !(await anyAppListsOrigin(c.env.DB, origin))) {
      return errorResponse(new AppError("forbidden", "Origin not allowed"), c);
    }
    return preflightResponse(origin);
  }
  // A client may not choose its own identity or lifecycle props, whatever it sends.
  const request = new Request(c.req.raw);
  request.headers.delete(CALLER_HEADER);
  request.headers.delete("x-agents-lifecycle-props");
  // An end user's HTTP call from a listed page gets CORS headers for that page (its origin was
  // checked against the end user's app in `authorize`).
  let corsOrigin: string | null = null;
  const guard = (upgrade: boolean) => async (incoming: Request) => {
    try {
      const forwarded = await authorize(incoming, c.env, agent, name, upgrade);
      if (!upgrade && origin !== null && readCallerKind(forwarded) === "end_user") {
        corsOrigin = origin;
      }
      return forwarded;
    } catch (error) {
      return errorResponse(error, c);
    }
  };
  const response = await routeAgentRequest(request, c.env, {
    onBeforeConnect: guard(true),
    onBeforeRequest: guard(false),
  });
  if (!response) return errorResponse(new AppError("not_found", "No such agent"), c);
  // A socket closes for its client when the agent closes it, not up to 10 s later (socket-relay.ts).
  if (response.status === 101) return relaySocket(response);
  if (corsOrigin === null) return response;
  const withCors = new Response(response.body, response);
  withCors.headers.set("access-control-allow-origin", corsOrigin);
  withCors.headers.append("vary", "Origin");
  return withCors;
}
