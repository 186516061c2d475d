import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { billingAccount } from "../src/billing/account.ts";
import { api, errorCode, type World, world } from "./helpers.ts";

/** Settles one billable request per entry on the world's org, as the agents will. */
async function spend(w: World, plan: [memberId: string, model: string, priceMicros: number][]) {
  const stub = billingAccount(env, w.orgId);
  await stub.open({ orgId: w.orgId, grantMicros: 10_000_000 });
  for (const [i, [memberId, model, priceMicros]] of plan.entries()) {
    const requestId = `req-${w.orgId}-${i}`;
    await stub.reserve({
      requestId,
      amountMicros: priceMicros,
      memberId,
      projectId: w.projectId,
      sessionId: w.sessionId,
    });
    await stub.settle({
      requestId,
      costMicros: priceMicros - 10,
      priceMicros,
      tokens: {
        promptTokens: 100,
        completionTokens: 50,
        cachedPromptTokens: 0,
        reasoningTokens: 0,
      },
      model,
      generationIds: [`gen-${i}`],
      billable: true,
    });
  }
}

describe("usage API", () => {
  it("shows owners and admins the whole org, grouped as asked, with totals", async () => {
    const w = await world();
    await spend(w, [
      [w.member.id, "m/one", 1_000],
      [w.member.id, "m/two", 2_000],
      [w.admin.id, "m/one", 4_000],
    ]);
    const res = await api<{
      items: { key: string; priceMicros: number; requests: number }[];
      totals: { priceMicros: number; costMicros: number };
    }>("GET", `/api/orgs/${w.orgId}/billing/usage?groupBy=member`, { token: w.admin.token });
    expect(res.status).toBe(200);
    expect(
      Object.fromEntries(res.body.items.map((g) => [g.key, [g.requests, g.priceMicros]])),
    ).toEqual({
      [w.member.id]: [2, 3_000],
      [w.admin.id]: [1, 4_000],
    });
    expect(res.body.totals).toMatchObject({ priceMicros: 7_000, costMicros: 6_970 });
    const byDay = await api<{ items: { key: string }[] }>(
      "GET",
      `/api/orgs/${w.orgId}/billing/usage?groupBy=day`,
      {
        token: w.owner.token,
      },
    );
    expect(byDay.body.items.map((g) => g.key)).toEqual([new Date().toISOString().slice(0, 10)]);
  });

  it("shows a member only their own usage, and refuses to show them someone else's", async () => {
    const w = await world();
    await spend(w, [
      [w.member.id, "m/one", 1_000],
      [w.admin.id, "m/one", 4_000],
    ]);
    const mine = await api<{ totals: { priceMicros: number } }>(
      "GET",
      `/api/orgs/${w.orgId}/billing/usage?groupBy=model`,
      {
        token: w.member.token,
      },
    );
    expect(mine.body.totals.priceMicros).toBe(1_000);
    const theirs = await api("GET", `/api/orgs/${w.orgId}/billing/usage?memberId=${w.admin.id}`, {
      token: w.member.token,
    });
    expect(theirs.status).toBe(403);
    expect(errorCode(theirs)).toBe("forbidden");
  });

  it("exports CSV with a header and one row per event, members limited to their own", async () => {
    const w = await world();
    await spend(w, [
      [w.member.id, "m/one", 1_000],
      [w.admin.id, "=HYPERLINK(evil)", 2_000],
    ]);
    const all = await api<string>("GET", `/api/orgs/${w.orgId}/billing/usage.csv`, {
      token: w.owner.token,
    });
    expect(all.status).toBe(200);
    expect(all.headers.get("content-type")).toContain("text/csv");
    const lines = all.body.trim().split("\n");
    expect(lines[0]).toBe(
      "created_at,request_id,member_id,project_id,session_id,model,prompt_tokens,completion_tokens,cached_prompt_tokens,reasoning_tokens,cost_micros,price_micros,billable",
    );
    expect(lines).toHaveLength(3);
    // A formula-looking value is defused for spreadsheets.
    expect(all.body).toContain("'=HYPERLINK(evil)");
    const mine = await api<string>("GET", `/api/orgs/${w.orgId}/billing/usage.csv`, {
      token: w.member.token,
    });
    expect(mine.body.trim().split("\n")).toHaveLength(2);
    expect(mine.body).toContain(w.member.id);
    expect(mine.body).not.toContain(w.admin.id);
  });

  it("validates the window and grouping", async () => {
    const w = await world();
    for (const q of [
      "groupBy=week",
      "from=yesterday",
      "from=2026-12-01&to=2026-11-01",
      "unknown=1",
    ]) {
      const res = await api("GET", `/api/orgs/${w.orgId}/billing/usage?${q}`, {
        token: w.owner.token,
      });
      expect(res.status, q).toBe(400);
      expect(errorCode(res)).toBe("invalid_request");
    }
  });
});

describe("balance and settings", () => {
  it("a new organization starts with the sign-up grant", async () => {
    const res = await api<{ accessToken: string }>("POST", "/api/auth/signup", {
      body: { email: `grant-${Date.now()}@example.test`, password: "long enough pw", name: "G" },
    });
    const me = await api<{ orgs: { id: string }[] }>("GET", "/api/me", {
      token: res.body.accessToken,
    });
    const orgId = me.body.orgs[0]?.id;
    const balance = await api("GET", `/api/orgs/${orgId}/billing`, { token: res.body.accessToken });
    expect(balance.body).toMatchObject({
      orgId,
      currency: "usd",
      availableMicros: Number(env.SIGNUP_GRANT_MICROS),
      heldMicros: 0,
      postedMicros: Number(env.SIGNUP_GRANT_MICROS),
    });
  });

  it("admins set limits and an alert webhook; bad values are refused", async () => {
    const w = await world();
    const path = `/api/orgs/${w.orgId}/billing/settings`;
    const ok = await api("PATCH", path, {
      token: w.admin.token,
      body: {
        orgMonthlyLimitMicros: 50_000_000,
        alertWebhookUrl: "https://hooks.example.test/parley",
      },
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({
      orgMonthlyLimitMicros: 50_000_000,
      memberDailyLimitMicros: null,
    });
    for (const body of [
      { orgMonthlyLimitMicros: 1.5 },
      { alertWebhookUrl: "ftp://x" },
      { lowBalanceMicros: -1 },
      {},
    ]) {
      const res = await api("PATCH", path, { token: w.admin.token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const summary = await api("GET", `/api/orgs/${w.orgId}/billing`, { token: w.member.token });
    expect(summary.body).toMatchObject({
      orgMonthlyLimitMicros: 50_000_000,
      alertWebhookUrl: "https://hooks.example.test/parley",
    });
  });
});
