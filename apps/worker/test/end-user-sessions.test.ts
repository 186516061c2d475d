import { env } from "cloudflare:test";
import { devReply } from "@parley/dev-model/reply";
import type { EmbedMe, LimitStatus, Session } from "@parley/shared";
import { describe, expect, it } from "vitest";
import { billingAccount } from "../src/billing/account.ts";
import { settled } from "./chat.ts";
import { asEndUser, endUserToken, mustOpen, openSession, openSocket, PAGE } from "./end-users.ts";
import { api, errorCode } from "./helpers.ts";
import { funded, modelRequests, returnLeases, usageRowsOf } from "./metering.ts";

const agentPath = (sessionId: string) => `/agents/assistant-agent/${sessionId}`;

describe("end users: sessions through the embed", () => {
  it("a tenant's server mints a token with its key; the end user opens a session, chats, and the org pays", async () => {
    const w = await funded();
    const { accessToken, endUser } = await endUserToken(w, "cust-1");
    const me = await asEndUser<EmbedMe>("GET", "/api/embed/me", accessToken);
    expect(me.status).toBe(200);
    expect(me.headers.get("access-control-allow-origin")).toBe(PAGE);
    expect(me.body).toMatchObject({
      endUser: { id: endUser.id, externalId: "cust-1", name: "Customer cust-1" },
      app: { id: w.appId, showCost: false, projects: [{ id: w.projectId }] },
    });
    const session = await openSession(accessToken);
    expect(session).toMatchObject({ projectId: w.projectId, ownerId: endUser.id });
    const chat = await mustOpen(session.id, accessToken);
    const turn = await chat.turn("Where is my order?");
    expect(turn.text).toBe(devReply("Where is my order?"));
    // The app hides cost: the reply carries no price at all, not merely an unshown one.
    expect(turn.metadata).toMatchObject({ finish: "completed" });
    expect(turn.metadata).not.toHaveProperty("priceMicros");
    chat.close();
    // Charged to the org, named by the end user.
    const rows = await usageRowsOf(w.orgId, (row) => row.sessionId === session.id, 1);
    expect(rows[0]).toMatchObject({ memberId: endUser.id });
    expect(rows[0]?.priceMicros).toBeGreaterThan(0);
    await returnLeases(w.orgId);
    const usage = await api<{ rows: { label: string }[] }>(
      "GET",
      `/api/orgs/${w.orgId}/billing/usage?groupBy=member`,
      { token: w.owner.token },
    );
    expect(JSON.stringify(usage.body)).toContain("End user: Customer cust-1");
    // Their transcript, read as the embed does (bearer, from the page, with CORS).
    const stored = await asEndUser<unknown[]>(
      "GET",
      `${agentPath(session.id)}/get-messages`,
      accessToken,
    );
    expect(stored.status).toBe(200);
    expect(stored.body).toHaveLength(2);
    expect(JSON.stringify(stored.body)).not.toContain("priceMicros");
    expect(stored.headers.get("access-control-allow-origin")).toBe(PAGE);
    // Listed: only their own.
    const list = await asEndUser<{ items: Session[] }>("GET", "/api/embed/sessions", accessToken);
    expect(list.body.items.map((item) => item.id)).toEqual([session.id]);
    // The app hides cost: no spend either, in the list or the session (found by the outside probe).
    expect(list.body.items[0]?.spendMicros).toBe(0);
    const one = await asEndUser<Session>("GET", `/api/embed/sessions/${session.id}`, accessToken);
    expect(one.body.spendMicros).toBe(0);
    // The org's own view keeps the real figure.
    const orgView = await api<Session>("GET", `/api/sessions/${session.id}`, {
      token: w.owner.token,
    });
    expect(orgView.body.spendMicros).toBeGreaterThan(0);
  });

  it("an end user reaches only their own sessions: not another end user's, not a member's, not another app's", async () => {
    const w = await funded();
    const a = await endUserToken(w, "a");
    const b = await endUserToken(w, "b");
    const sessionOfA = await openSession(a.accessToken);
    for (const id of [sessionOfA.id, w.sessionId, w.otherSessionId]) {
      const read = await asEndUser("GET", `/api/embed/sessions/${id}`, b.accessToken);
      expect(read.status).toBe(404);
      const ticket = await asEndUser("POST", "/api/embed/connect-tickets", b.accessToken, {
        sessionId: id,
      });
      expect(ticket.status).toBe(404);
      const transcript = await asEndUser("GET", `${agentPath(id)}/get-messages`, b.accessToken);
      expect(transcript.status).toBe(404);
    }
    expect((await asEndUser("GET", "/api/embed/sessions", b.accessToken)).body).toMatchObject({
      items: [],
    });
    // The onboarding chat is not an end user's either.
    const onboarding = await asEndUser(
      "GET",
      `/agents/onboarding-agent/${w.projectId}/get-messages`,
      b.accessToken,
    );
    expect(onboarding.status).toBe(404);
    // A project the app does not offer is refused.
    const foreign = await asEndUser("POST", "/api/embed/sessions", b.accessToken, {
      projectId: w.otherProjectId,
    });
    expect(foreign.status).toBe(400);
  });

  it("end-user tokens open no member surface, and member tokens open no end-user route", async () => {
    const w = await funded();
    const { accessToken } = await endUserToken(w, "c");
    for (const [method, path] of [
      ["GET", `/api/orgs/${w.orgId}`],
      ["GET", `/api/orgs/${w.orgId}/sessions`],
      ["GET", `/api/sessions/${w.sessionId}`],
      ["GET", "/api/me"],
    ] as const) {
      expect((await api(method, path, { token: accessToken })).status, path).toBe(401);
    }
    const ticket = await api("POST", "/api/connect-tickets", {
      token: accessToken,
      body: { agent: "assistant-agent", name: w.sessionId },
    });
    expect(ticket.status).toBe(401);
    for (const path of ["/api/embed/me", "/api/embed/sessions"]) {
      expect((await api("GET", path, { token: w.member.token })).status).toBe(401);
      expect((await api("GET", path, { token: w.apiKey.secret })).status).toBe(401);
    }
    // Minting needs an API key with its scope: a member's token is refused.
    const minted = await api("POST", `/api/apps/${w.appId}/end-user-tokens`, {
      token: w.owner.token,
      body: { sub: "x" },
    });
    expect(minted.status).toBe(401);
  });

  it("a page from another origin gets nothing: API, preflight and socket", async () => {
    const w = await funded();
    const { accessToken } = await endUserToken(w, "d");
    const session = await openSession(accessToken);
    const evil = { origin: "https://evil.example" };
    const read = await api("GET", "/api/embed/sessions", { token: accessToken, headers: evil });
    expect(read.status).toBe(403);
    expect(read.headers.get("access-control-allow-origin")).toBeNull();
    const preflight = await api("OPTIONS", "/api/embed/sessions", { headers: evil });
    expect(preflight.status).toBe(403);
    const listed = await api("OPTIONS", "/api/embed/sessions", { headers: { origin: PAGE } });
    expect(listed.status).toBe(204);
    expect(listed.headers.get("access-control-allow-headers")).toContain("authorization");
    const socket = await openSocket(session.id, accessToken, "https://evil.example");
    expect(socket.status).toBe(403);
  });

  it("an end user of an org out of credits is told to come back later, not about the org's money", async () => {
    const w = await funded(1);
    const { accessToken } = await endUserToken(w, "broke");
    const session = await openSession(accessToken);
    const chat = await mustOpen(session.id, accessToken);
    const turn = await chat.turn("Anything?");
    expect(turn.parleyError).toEqual({
      code: "insufficient_credits",
      message: "This assistant cannot answer right now. Please try again later.",
    });
    chat.close();
  });

  it("an end user over their app's daily limit is stopped before the model call, with the limit named", async () => {
    const w = await funded();
    await env.DB.prepare("UPDATE apps SET end_user_daily_limit_micros = 10 WHERE id = ?")
      .bind(w.appId)
      .run();
    const { accessToken } = await endUserToken(w, "e");
    const session = await openSession(accessToken);
    const chat = await mustOpen(session.id, accessToken);
    const before = await modelRequests();
    const turn = await chat.turn("Anything?");
    expect(turn.parleyError).toMatchObject({
      code: "spend_limit",
      details: { limit: "end_user_daily", period: "day" },
    });
    expect(turn.parleyError?.message).toContain("daily usage limit");
    expect(await modelRequests()).toBe(before);
    // A member of the same org is not bound by the end users' limit.
    chat.close();
    const balance = await billingAccount(env, w.orgId).balance();
    expect(balance.heldMicros).toBe(0);
  });

  it("the embed reads the limits on its end user's calls, a project's included, for its warning", async () => {
    const w = await funded();
    await env.DB.prepare("UPDATE apps SET end_user_monthly_limit_micros = 50000000 WHERE id = ?")
      .bind(w.appId)
      .run();
    const { accessToken } = await endUserToken(w, "limits");
    const session = await openSession(accessToken);
    const path = `/api/embed/sessions/${session.id}/limits`;
    const before = await asEndUser<LimitStatus>("GET", path, accessToken);
    expect(before.status).toBe(200);
    expect(before.headers.get("access-control-allow-origin")).toBe(PAGE);
    expect(before.body).toMatchObject({
      warningPct: 80,
      limits: [
        { limit: "end_user_monthly", limitMicros: 50_000_000, spentMicros: 0, raisedBy: "admins" },
      ],
    });
    const chat = await mustOpen(session.id, accessToken);
    expect((await chat.turn("Hello")).text).toBe(devReply("Hello"));
    // A project limit binds end users too, and the stop names it.
    const set = await api("PUT", `/api/orgs/${w.orgId}/billing/limits/projects/${w.projectId}`, {
      token: w.owner.token,
      body: { period: "day", amountMicros: 1 },
    });
    expect(set.status).toBe(200);
    const after = await asEndUser<LimitStatus>("GET", path, accessToken);
    expect(after.body.limits.map((limit) => [limit.limit, limit.warning])).toEqual([
      ["end_user_monthly", false],
      ["project_daily", true],
    ]);
    expect(after.body.limits[0]?.spentMicros).toBeGreaterThan(0);
    const refused = await chat.turn("Again");
    // In the end user's words: the assistant's limit and its reset, nothing about the org.
    expect(refused.parleyError).toMatchObject({
      code: "spend_limit",
      message: "This assistant has reached its daily usage limit. It resets at midnight UTC.",
      details: { limit: "project_daily", period: "day" },
    });
    chat.close();
    // Another end user's session, and a member's token: 404 and 401.
    const other = await endUserToken(w, "someone-else");
    expect((await asEndUser("GET", path, other.accessToken)).status).toBe(404);
    expect((await asEndUser("GET", path, w.member.token)).status).toBe(401);
  });

  it("an app's weekly end-user limit, set through the API, stops the end user until Monday", async () => {
    const w = await funded();
    const set = await api<{ endUserWeeklyLimitMicros: number | null }>(
      "PATCH",
      `/api/apps/${w.appId}`,
      { token: w.owner.token, body: { endUserWeeklyLimitMicros: 10 } },
    );
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.endUserWeeklyLimitMicros).toBe(10);
    const { accessToken } = await endUserToken(w, "weekly");
    const session = await openSession(accessToken);
    const chat = await mustOpen(session.id, accessToken);
    const before = await modelRequests();
    const turn = await chat.turn("This week?");
    expect(turn.parleyError).toMatchObject({ code: "spend_limit" });
    expect(turn.parleyError?.message).toBe(
      "You have reached your weekly usage limit for this assistant. It resets on Monday at 00:00 UTC.",
    );
    expect(await modelRequests()).toBe(before);
    chat.close();
    const status = await asEndUser<LimitStatus>(
      "GET",
      `/api/embed/sessions/${session.id}/limits`,
      accessToken,
    );
    expect(status.body.limits).toMatchObject([
      { limit: "end_user_weekly", period: "week", limitMicros: 10 },
    ]);
  });

  it("the app's cost setting decides whether its end users' replies carry a price", async () => {
    const w = await funded();
    const { accessToken } = await endUserToken(w, "priced");
    const session = await openSession(accessToken);
    const chat = await mustOpen(session.id, accessToken);
    await settled(agentPath(session.id));
    expect((await chat.turn("Hidden")).metadata).not.toHaveProperty("priceMicros");
    const shown = await api("PATCH", `/api/apps/${w.appId}`, {
      token: w.owner.token,
      body: { showCost: true },
    });
    expect(shown.status, JSON.stringify(shown.body)).toBe(200);
    const turn = await chat.turn("Shown");
    expect(turn.text).toBe(devReply("Shown"));
    expect(turn.metadata?.priceMicros).toBeGreaterThan(0);
    chat.close();
  });

  it("raising the app's limit through the API reaches an open session at once", async () => {
    const w = await funded();
    await env.DB.prepare("UPDATE apps SET end_user_daily_limit_micros = 10 WHERE id = ?")
      .bind(w.appId)
      .run();
    const { accessToken } = await endUserToken(w, "f");
    const session = await openSession(accessToken);
    const chat = await mustOpen(session.id, accessToken);
    await settled(agentPath(session.id));
    expect((await chat.turn("One")).parleyError).toMatchObject({ code: "spend_limit" });
    const raised = await api("PATCH", `/api/apps/${w.appId}`, {
      token: w.owner.token,
      body: { endUserDailyLimitMicros: 100_000_000 },
    });
    expect(raised.status, JSON.stringify(raised.body)).toBe(200);
    const turn = await chat.turn("Two");
    expect(turn.text).toBe(devReply("Two"));
    chat.close();
  });

  it("deleting the app closes its end users' sockets and refuses their tokens", async () => {
    const w = await funded();
    const { accessToken } = await endUserToken(w, "g");
    const session = await openSession(accessToken);
    const chat = await mustOpen(session.id, accessToken);
    await settled(agentPath(session.id));
    const deleted = await api("DELETE", `/api/apps/${w.appId}`, { token: w.owner.token });
    expect(deleted.status).toBe(204);
    await chat.waitFor(() => chat.closed !== null);
    expect(chat.closed?.code).toBe(4403);
    // The tenant's server (no Origin) is refused the token; its page, no longer listed, too.
    expect((await api("GET", "/api/embed/sessions", { token: accessToken })).status).toBe(401);
    expect((await asEndUser("GET", "/api/embed/sessions", accessToken)).status).toBe(403);
  });

  it("the tenant erases an end user with its key: sessions, transcript, identity gone; usage kept under a pseudonym", async () => {
    const w = await funded();
    const { accessToken, endUser } = await endUserToken(w, "h");
    const session = await openSession(accessToken);
    const chat = await mustOpen(session.id, accessToken);
    await chat.turn("Remember my address is 1 Main St");
    chat.close();
    await usageRowsOf(w.orgId, (row) => row.sessionId === session.id, 1);
    const erased = await api<{ status: string }>("POST", `/api/apps/${w.appId}/end-users/erase`, {
      token: w.apiKey.secret,
      body: { externalId: "h" },
    });
    expect(erased.status, JSON.stringify(erased.body)).toBe(202);
    expect(erased.body.status).toBe("completed");
    const row = await env.DB.prepare("SELECT COUNT(*) AS n FROM end_users WHERE id = ?")
      .bind(endUser.id)
      .first<{ n: number }>();
    expect(row?.n).toBe(0);
    const sessions = await env.DB.prepare("SELECT COUNT(*) AS n FROM sessions WHERE owner_id = ?")
      .bind(endUser.id)
      .first<{ n: number }>();
    expect(sessions?.n).toBe(0);
    expect((await asEndUser("GET", "/api/embed/sessions", accessToken)).status).toBe(401);
    const usage = await billingAccount(env, w.orgId).usageRows({
      from: 0,
      to: Date.now() + 1,
      limit: 100,
    });
    expect(usage.length).toBeGreaterThan(0);
    expect(JSON.stringify(usage)).not.toContain(endUser.id);
    // Unknown end user, another org's key, a key without the scope.
    const eraseAs = (token: string, externalId: string) =>
      api("POST", `/api/apps/${w.appId}/end-users/erase`, { token, body: { externalId } });
    expect((await eraseAs(w.apiKey.secret, "nobody")).status).toBe(404);
    const { apiKeyFor } = await import("./helpers.ts");
    const other = await apiKeyFor(w.otherOrgId);
    expect((await eraseAs(other.secret, "h")).status).toBe(404);
    const narrow = await apiKeyFor(w.orgId, ["end_users:token"]);
    const refused = await eraseAs(narrow.secret, "h");
    expect(refused.status).toBe(403);
    expect(errorCode(refused)).toBe("forbidden");
  });
});
