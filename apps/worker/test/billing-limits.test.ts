import { env } from "cloudflare:test";
import { devReply } from "@parley/dev-model/reply";
import type { LimitRule, LimitStatus } from "@parley/shared";
import { describe, expect, it } from "vitest";
import { billingAccount } from "../src/billing/account.ts";
import { mustConnect, settled } from "./chat.ts";
import { api, errorCode, project, session, type World } from "./helpers.ts";
import { funded, modelRequests } from "./metering.ts";

const agentPath = (sessionId: string) => `/agents/assistant-agent/${sessionId}`;
const limitsPath = (w: World) => `/api/orgs/${w.orgId}/billing/limits`;

async function putLimit(w: World, path: string, token: string, body: unknown) {
  return api<{ items: LimitRule[] }>("PUT", `${limitsPath(w)}${path}`, { token, body });
}

async function ruleList(w: World): Promise<LimitRule[]> {
  const res = await api<{ items: LimitRule[] }>("GET", limitsPath(w), { token: w.admin.token });
  expect(res.status).toBe(200);
  return res.body.items;
}

describe("limits on a project, a member and oneself", () => {
  it("an admin's weekly project limit stops every member's next call in that project, and says when it resets", async () => {
    const w = await funded();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    await settled(agentPath(w.sessionId));
    expect((await chat.turn("First")).text).toBe(devReply("First"));
    // A limit under what was spent: the open lease is returned, and the next call is refused.
    const set = await putLimit(w, `/projects/${w.projectId}`, w.admin.token, {
      period: "week",
      amountMicros: 1,
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.items).toMatchObject([
      { subject: "project", subjectId: w.projectId, label: expect.any(String), period: "week" },
    ]);
    const before = await modelRequests();
    const refused = await chat.turn("Second");
    expect(refused.parleyError).toMatchObject({
      code: "spend_limit",
      details: { limit: "project_weekly", period: "week" },
    });
    expect(refused.parleyError?.message).toContain(
      "This project has reached its weekly spending limit",
    );
    expect(refused.parleyError?.message).toContain("Monday at 00:00 UTC");
    expect(await modelRequests()).toBe(before);
    chat.close();
    // Another project of the org is not limited.
    const other = await project(w.orgId, w.owner.id);
    const otherSession = await session(other, w.orgId, w.member.id);
    const free = await mustConnect(agentPath(otherSession), w.member.token);
    expect((await free.turn("Elsewhere")).text).toBe(devReply("Elsewhere"));
    free.close();
    // Removing it lets the project spend again.
    const removed = await putLimit(w, `/projects/${w.projectId}`, w.admin.token, {
      period: "week",
      amountMicros: null,
    });
    expect(removed.body.items).toEqual([]);
    const again = await mustConnect(agentPath(w.sessionId), w.member.token);
    expect((await again.turn("Third")).text).toBe(devReply("Third"));
    again.close();
  });

  it("a member lowers their own limit, sees it with its reset, and is stopped by it; an admin's limit on them replaces the org's daily one", async () => {
    const w = await funded();
    const own = await putLimit(w, "/me", w.member.token, { period: "day", amountMicros: 1 });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    expect(own.body.items).toMatchObject([{ subject: "own", subjectId: w.member.id }]);
    const status = await api<LimitStatus>("GET", `${limitsPath(w)}/me`, { token: w.member.token });
    expect(status.body).toMatchObject({
      warningPct: 80,
      limits: [{ limit: "own_daily", period: "day", limitMicros: 1, raisedBy: "you" }],
    });
    const tomorrow = new Date();
    tomorrow.setUTCHours(24, 0, 0, 0);
    expect(status.body.limits[0]?.resetsAt).toBe(tomorrow.toISOString());
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    const refused = await chat.turn("Mine?");
    expect(refused.parleyError).toMatchObject({
      code: "spend_limit",
      details: { limit: "own_daily", period: "day", resetsAt: tomorrow.toISOString() },
    });
    expect(refused.parleyError?.message).toContain("the daily spending limit you set for yourself");
    await putLimit(w, "/me", w.member.token, { period: "day", amountMicros: null });

    // The org's member daily limit of 10 would stop them; an admin's monthly limit for them
    // takes its place.
    await billingAccount(env, w.orgId).updateSettings(w.orgId, { memberDailyLimitMicros: 10 });
    expect((await chat.turn("Daily?")).parleyError).toMatchObject({
      code: "spend_limit",
      details: { limit: "member_daily" },
    });
    const override = await putLimit(w, `/members/${w.member.id}`, w.admin.token, {
      period: "month",
      amountMicros: 100_000_000,
    });
    expect(override.status, JSON.stringify(override.body)).toBe(200);
    expect((await chat.turn("Monthly")).text).toBe(devReply("Monthly"));
    chat.close();
    expect(await ruleList(w)).toMatchObject([
      { subject: "member", subjectId: w.member.id, period: "month", amountMicros: 100_000_000 },
    ]);
  });

  it("the chat's status warns past the org's warning share, and the share is a setting", async () => {
    const w = await funded();
    await putLimit(w, `/projects/${w.projectId}`, w.admin.token, {
      period: "month",
      amountMicros: 1_000_000,
    });
    const statusPath = `/api/sessions/${w.sessionId}/limits`;
    const before = await api<LimitStatus>("GET", statusPath, { token: w.member.token });
    expect(before.body.limits).toMatchObject([
      { limit: "project_monthly", spentMicros: 0, warning: false, raisedBy: "admins" },
    ]);
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    await chat.turn("Spend a little");
    chat.close();
    // The status counts what the session's lease reported.
    const spent = (await api<LimitStatus>("GET", statusPath, { token: w.member.token })).body
      .limits[0]?.spentMicros;
    expect(spent).toBeGreaterThan(0);
    // Spent is 2% of a limit of 50 times it: a 1% share warns, a 99% share does not.
    await putLimit(w, `/projects/${w.projectId}`, w.admin.token, {
      period: "month",
      amountMicros: (spent ?? 0) * 50,
    });
    const share = async (limitWarningPct: number | null) => {
      const patched = await api("PATCH", `/api/orgs/${w.orgId}/billing/settings`, {
        token: w.admin.token,
        body: { limitWarningPct },
      });
      expect(patched.status).toBe(200);
      return (await api<LimitStatus>("GET", statusPath, { token: w.member.token })).body;
    };
    expect(await share(1)).toMatchObject({ warningPct: 1, limits: [{ warning: true }] });
    expect(await share(99)).toMatchObject({ warningPct: 99, limits: [{ warning: false }] });
    // Turned off: no warning, whatever the spend.
    expect(await share(null)).toMatchObject({ warningPct: null, limits: [{ warning: false }] });
    // Another member's session is not theirs to read (404, as for a foreign one).
    const foreign = await api("GET", statusPath, { token: w.otherMember.token });
    expect(foreign.status).toBe(404);
  });

  it("refuses bad limits with a clear code and changes nothing; only admins set others' limits", async () => {
    const w = await funded();
    await putLimit(w, `/projects/${w.projectId}`, w.admin.token, {
      period: "day",
      amountMicros: 5_000,
    });
    const rules = await ruleList(w);
    const bad: unknown[] = [
      { period: "year", amountMicros: 5 },
      { period: "day", amountMicros: 0 },
      { period: "day", amountMicros: -1 },
      { period: "day", amountMicros: 1.5 },
      { period: "day" },
      { period: "day", amountMicros: 5, memberId: w.member.id },
      "day",
    ];
    for (const body of bad) {
      const res = await putLimit(w, `/projects/${w.projectId}`, w.admin.token, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(errorCode(res)).toBe("invalid_request");
    }
    expect(
      (
        await putLimit(w, `/projects/${w.projectId}`, w.member.token, {
          period: "day",
          amountMicros: 1,
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await putLimit(w, `/members/${w.otherMember.id}`, w.member.token, {
          period: "day",
          amountMicros: 1,
        })
      ).status,
    ).toBe(403);
    // Someone who is not a member, another org's project: 404 like a missing one.
    expect(
      (
        await putLimit(w, `/members/${w.outsider.id}`, w.admin.token, {
          period: "day",
          amountMicros: 1,
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await putLimit(w, `/projects/${w.otherProjectId}`, w.admin.token, {
          period: "day",
          amountMicros: 1,
        })
      ).status,
    ).toBe(404);
    expect((await api("GET", limitsPath(w), { token: w.member.token })).status).toBe(403);
    expect((await api("GET", limitsPath(w), { token: w.outsider.token })).status).toBe(404);
    const settings = await api("PATCH", `/api/orgs/${w.orgId}/billing/settings`, {
      token: w.admin.token,
      body: { limitWarningPct: 100 },
    });
    expect(settings.status).toBe(400);
    expect(await ruleList(w)).toEqual(rules);
  });

  it("erasing a member or a project leaves no limit naming them, and the verification scan agrees", async () => {
    const w = await funded();
    await putLimit(w, "/me", w.member.token, { period: "day", amountMicros: 5_000 });
    await putLimit(w, `/members/${w.member.id}`, w.admin.token, {
      period: "week",
      amountMicros: 9_000,
    });
    await putLimit(w, `/projects/${w.projectId}`, w.admin.token, {
      period: "month",
      amountMicros: 7_000,
    });
    for (const subject of [
      { type: "member", id: w.member.id },
      { type: "project", id: w.projectId },
    ]) {
      const erased = await api<{ status: string; verification: { ok: boolean } }>(
        "POST",
        `/api/orgs/${w.orgId}/erasure-requests`,
        { token: w.owner.token, body: { subject, reason: "asked" } },
      );
      expect(erased.status, JSON.stringify(erased.body)).toBe(202);
      expect(erased.body).toMatchObject({ status: "completed", verification: { ok: true } });
    }
    const left = await ruleList(w);
    expect(JSON.stringify(left)).not.toContain(w.member.id);
    expect(JSON.stringify(left)).not.toContain(w.projectId);
    // The member's limits stay, on their pseudonym (the spend they bound stays too); the
    // erased project's go with it.
    expect(left.map((rule) => [rule.subject, rule.label]).sort()).toEqual([
      ["member", "Erased member"],
      ["own", "Erased member"],
    ]);
  });
});
