import { env, runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { billingAccount } from "../src/billing/account.ts";
import {
  type ApiResponse,
  api,
  errorCode,
  project,
  session,
  verifyByMail,
  type World,
  world,
} from "./helpers.ts";

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
      "created_at,request_id,member_id,project_id,session_id,model,prompt_tokens,completion_tokens,cached_prompt_tokens,reasoning_tokens,cost_micros,price_micros,billable,member_label,project_label,session_label,grants,model_label",
    );
    expect(lines).toHaveLength(3);
    // Names at the end of each row: the member's, the project's and the session's.
    expect(lines.slice(1).map((line) => line.split(",").slice(-5, -2))).toEqual([
      ["member", "P", "S"],
      ["admin", "P", "S"],
    ]);
    // Then the grants that paid for each call: the sign-up grant here, or none (debt).
    for (const line of lines.slice(1)) {
      expect(line.split(",").at(-2)).toMatch(/^(grant-[\w-]+:[a-z_]+:\d+(;|$))*$/);
    }
    // Last, the model's name: models the catalogue does not list keep their id.
    expect(lines.slice(1).map((line) => line.split(",").at(-1))).toEqual([
      "m/one",
      "'=HYPERLINK(evil)",
    ]);
    // A formula-looking value is defused for spreadsheets.
    expect(all.body).toContain("'=HYPERLINK(evil)");
    const mine = await api<string>("GET", `/api/orgs/${w.orgId}/billing/usage.csv`, {
      token: w.member.token,
    });
    expect(mine.body.trim().split("\n")).toHaveLength(2);
    expect(mine.body).toContain(w.member.id);
    expect(mine.body).not.toContain(w.admin.id);
  });

  it("names models by the catalogue's display name in usage, the CSV and the activity, keeping the id (2026-12-06)", async () => {
    const w = await world();
    await spend(w, [
      [w.member.id, "parley/dev-large", 3_000],
      [w.member.id, "retired/unlisted", 1_000],
    ]);
    const byModel = await api<{ items: { key: string; label: string }[] }>(
      "GET",
      `/api/orgs/${w.orgId}/billing/usage?groupBy=model`,
      { token: w.owner.token },
    );
    expect(byModel.status).toBe(200);
    expect(byModel.body.items.map((g) => [g.key, g.label]).sort()).toEqual([
      ["parley/dev-large", "Parley Dev Large"],
      ["retired/unlisted", "retired/unlisted"],
    ]);
    const csv = await api<string>("GET", `/api/orgs/${w.orgId}/billing/usage.csv`, {
      token: w.owner.token,
    });
    const rows = csv.body.trim().split("\n").slice(1);
    expect(rows.map((line) => [line.split(",")[5], line.split(",").at(-1)]).sort()).toEqual([
      ["parley/dev-large", "Parley Dev Large"],
      ["retired/unlisted", "retired/unlisted"],
    ]);
    const activity = await api<{ items: { model: string; modelLabel: string }[] }>(
      "GET",
      `/api/orgs/${w.orgId}/billing/activity`,
      { token: w.owner.token },
    );
    expect(activity.body.items.map((i) => [i.model, i.modelLabel]).sort()).toEqual([
      ["parley/dev-large", "Parley Dev Large"],
      ["retired/unlisted", "retired/unlisted"],
    ]);
  });

  it("names a tool call by its source and tool, not its usage key, and says it is a tool call; a deleted source still reads sensibly (2026-12-06)", async () => {
    const w = await world();
    const now = Date.now();
    await env.DB.prepare(
      "INSERT INTO tool_sources (id, org_id, kind, name, url, created_at, updated_at) VALUES (?, ?, 'mcp', ?, 'https://tools.example/mcp', ?, ?)",
    )
      .bind("tsrc_orders", w.orgId, "Acme Shop orders", now, now)
      .run();
    await spend(w, [
      [w.member.id, "tool:tsrc_orders:order_status", 1_000],
      [w.member.id, "tool:tsrc_gone:lookup", 1_000],
      [w.member.id, "parley/dev-large", 3_000],
    ]);
    const activity = await api<{ items: { model: string; modelLabel: string; kind: string }[] }>(
      "GET",
      `/api/orgs/${w.orgId}/billing/activity`,
      { token: w.owner.token },
    );
    expect(activity.status).toBe(200);
    expect(activity.body.items.map((i) => [i.model, i.modelLabel, i.kind]).sort()).toEqual([
      ["parley/dev-large", "Parley Dev Large", "model"],
      ["tool:tsrc_gone:lookup", "Removed tool source · lookup", "tool"],
      ["tool:tsrc_orders:order_status", "Acme Shop orders · order_status", "tool"],
    ]);
    // The usage report (the Model filter's options and the chart) names it the same way.
    const byModel = await api<{ items: { key: string; label: string }[] }>(
      "GET",
      `/api/orgs/${w.orgId}/billing/usage?groupBy=model`,
      { token: w.owner.token },
    );
    expect(byModel.body.items.map((g) => [g.key, g.label]).sort()).toContainEqual([
      "tool:tsrc_orders:order_status",
      "Acme Shop orders · order_status",
    ]);
    // The ledger names its usage entries the same way (its memo is the usage key).
    const ledger = await api<{ items: { kind: string; memo: string; memoLabel: string }[] }>(
      "GET",
      `/api/orgs/${w.orgId}/billing/ledger`,
      { token: w.owner.token },
    );
    expect(ledger.status).toBe(200);
    const usage = ledger.body.items.filter((entry) => entry.kind === "usage");
    expect(usage.map((entry) => [entry.memo, entry.memoLabel]).sort()).toEqual([
      ["parley/dev-large", "Parley Dev Large"],
      ["tool:tsrc_gone:lookup", "Removed tool source · lookup"],
      ["tool:tsrc_orders:order_status", "Acme Shop orders · order_status"],
    ]);
    // Other entries' memos are words already, kept as they are.
    for (const entry of ledger.body.items.filter((e) => e.kind !== "usage")) {
      expect(entry.memoLabel).toBe(entry.memo);
    }
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

describe("refusals state the rule a value broke", () => {
  it("a page size, a checkout amount and a webhook URL each name their rule", async () => {
    const w = await world();
    const page = await api("GET", `/api/orgs/${w.orgId}/billing/ledger?limit=-1`, {
      token: w.owner.token,
    });
    expect(page.status).toBe(400);
    expect(JSON.stringify(page.body)).toContain("must be a whole number from 1 to 100");
    // Past JavaScript's largest safe integer: the top-up range, not "<=9007199254740991".
    for (const amountMicros of [1e30, 4_990_000, 1_000_010_000]) {
      const checkout = await api("POST", `/api/orgs/${w.orgId}/billing/checkout`, {
        token: w.owner.token,
        body: { amountMicros },
      });
      expect(checkout.status, String(amountMicros)).toBe(400);
      expect((checkout.body as { error: { message: string } }).error.message).toBe(
        "amountMicros: must be from 5000000 to 1000000000 micro-dollars ($5 to $1,000)",
      );
    }
    const webhook = await api("PATCH", `/api/orgs/${w.orgId}/billing/settings`, {
      token: w.owner.token,
      body: { alertWebhookUrl: "ftp://hooks.example.com/parley" },
    });
    expect(webhook.status).toBe(400);
    expect((webhook.body as { error: { message: string } }).error.message).toMatch(
      /^alertWebhookUrl: must be an https:\/\/ URL/,
    );
  });
});

describe("balance and settings", () => {
  it("a new organization starts with the sign-up grant once its owner's address is verified", async () => {
    const email = `grant-${Date.now()}@example.test`;
    const res = await api<{ accessToken: string }>("POST", "/api/auth/signup", {
      body: { email, password: "long enough pw", name: "G" },
    });
    await verifyByMail(email);
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
        runwayAlertDays: 14,
      },
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({
      orgMonthlyLimitMicros: 50_000_000,
      memberDailyLimitMicros: null,
      runwayAlertDays: 14,
    });
    for (const body of [
      { orgMonthlyLimitMicros: 1.5 },
      { alertWebhookUrl: "ftp://x" },
      { lowBalanceMicros: -1 },
      { runwayAlertDays: 0 },
      { runwayAlertDays: 366 },
      { runwayAlertDays: 2.5 },
      { runwayAlertDays: "7" },
      {},
    ]) {
      const res = await api("PATCH", path, { token: w.admin.token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const summary = await api("GET", `/api/orgs/${w.orgId}/billing`, { token: w.admin.token });
    expect(summary.body).toMatchObject({
      orgMonthlyLimitMicros: 50_000_000,
      alertWebhookUrl: "https://hooks.example.test/parley",
      runwayAlertDays: 14,
      forecast: { windowDays: 7, spentMicros: 0, daysLeft: null },
    });
  });

  it("a member reads the limits but not the alert webhook's URL (it may be its own credential)", async () => {
    const w = await world();
    const url = "https://hooks.example.test/services/T0/B0/secret-part";
    await api("PATCH", `/api/orgs/${w.orgId}/billing/settings`, {
      token: w.owner.token,
      body: { alertWebhookUrl: url, orgMonthlyLimitMicros: 9_000_000 },
    });
    const asMember = await api("GET", `/api/orgs/${w.orgId}/billing`, { token: w.member.token });
    expect(asMember.body).toMatchObject({
      orgMonthlyLimitMicros: 9_000_000,
      alertWebhookUrl: null,
    });
    expect(JSON.stringify(asMember.body)).not.toContain("secret-part");
    const asAdmin = await api("GET", `/api/orgs/${w.orgId}/billing`, { token: w.admin.token });
    expect(asAdmin.body).toMatchObject({ alertWebhookUrl: url });
  });
});

/** One settled, billable provider call with the attribution given. */
async function call(
  w: World,
  input: {
    requestId: string;
    memberId: string;
    projectId?: string | null;
    sessionId?: string | null;
    model?: string;
    priceMicros?: number;
  },
) {
  const stub = billingAccount(env, w.orgId);
  await stub.open({ orgId: w.orgId, grantMicros: 10_000_000 });
  const priceMicros = input.priceMicros ?? 1_000;
  await stub.reserve({
    requestId: input.requestId,
    amountMicros: priceMicros,
    memberId: input.memberId,
    projectId: input.projectId === undefined ? w.projectId : input.projectId,
    sessionId: input.sessionId === undefined ? w.sessionId : input.sessionId,
  });
  await stub.settle({
    requestId: input.requestId,
    costMicros: priceMicros - 10,
    priceMicros,
    tokens: { promptTokens: 100, completionTokens: 50, cachedPromptTokens: 0, reasoningTokens: 0 },
    model: input.model ?? "m/one",
    generationIds: [],
    billable: true,
  });
}

type Groups = ApiResponse<{ items: { key: string | null; label: string; priceMicros: number }[] }>;

describe("names in usage breakdowns", () => {
  it("labels members, projects, sessions, models and days, with fallbacks for what is gone", async () => {
    const w = await world();
    const untitled = await session(w.projectId, w.orgId, w.admin.id);
    await env.DB.prepare("UPDATE sessions SET title = NULL WHERE id = ?").bind(untitled).run();
    await env.DB.prepare("UPDATE projects SET name = 'Launch plan' WHERE id = ?")
      .bind(w.projectId)
      .run();
    await call(w, { requestId: "a", memberId: w.member.id });
    await call(w, { requestId: "b", memberId: w.admin.id, sessionId: untitled, model: "m/two" });
    // An erased member's rows carry their pseudonym; a deleted session's id names nothing.
    await call(w, { requestId: "c", memberId: "anon_erased0000000000000", sessionId: "ses_gone" });
    await call(w, { requestId: "d", memberId: w.member.id, projectId: null, sessionId: null });
    const by = (groupBy: string): Promise<Groups> =>
      api("GET", `/api/orgs/${w.orgId}/billing/usage?groupBy=${groupBy}`, {
        token: w.owner.token,
      });
    const labels = (res: Groups) =>
      Object.fromEntries(res.body.items.map((item) => [item.key, item.label]));
    expect(labels(await by("member"))).toEqual({
      [w.member.id]: "member",
      [w.admin.id]: "admin",
      anon_erased0000000000000: "Erased member",
    });
    expect(labels(await by("project"))).toEqual({
      [w.projectId]: "Launch plan",
      null: "No project",
    });
    expect(labels(await by("session"))).toEqual({
      [w.sessionId]: "S",
      [untitled]: "Untitled session",
      ses_gone: "Deleted session",
      null: "No session",
    });
    expect(labels(await by("model"))).toEqual({ "m/one": "m/one", "m/two": "m/two" });
    const today = new Date().toISOString().slice(0, 10);
    expect(labels(await by("day"))).toEqual({ [today]: today });
  });

  it("shows a member with no display name by their email, and never another org's names", async () => {
    const w = await world();
    await env.DB.prepare("UPDATE users SET name = '' WHERE id = ?").bind(w.member.id).run();
    await call(w, { requestId: "a", memberId: w.member.id });
    // A session id of another org in this org's usage (it cannot happen; the lookup is scoped).
    await call(w, { requestId: "b", memberId: w.admin.id, sessionId: w.otherSessionId });
    const members: Groups = await api("GET", `/api/orgs/${w.orgId}/billing/usage?groupBy=member`, {
      token: w.admin.token,
    });
    expect(members.body.items.find((item) => item.key === w.member.id)?.label).toBe(w.member.email);
    const sessions: Groups = await api(
      "GET",
      `/api/orgs/${w.orgId}/billing/usage?groupBy=session`,
      { token: w.admin.token },
    );
    expect(sessions.body.items.find((item) => item.key === w.otherSessionId)?.label).toBe(
      "Deleted session",
    );
  });
});

type Activity = ApiResponse<{
  items: {
    id: string;
    createdAt: string;
    member: { id: string; label: string } | null;
    project: { id: string; label: string } | null;
    session: { id: string; label: string } | null;
    model: string;
    promptTokens: number;
    completionTokens: number;
    priceMicros: number;
    costMicros: number;
    billable: boolean;
  }[];
  nextCursor: string | null;
}>;

describe("activity: every provider call", () => {
  it("lists each call newest first with names, filters, and pages like the ledger", async () => {
    const w = await world();
    const other = await project(w.orgId, w.owner.id);
    for (const [i, [memberId, model, projectId]] of (
      [
        [w.member.id, "m/one", w.projectId],
        [w.admin.id, "m/two", w.projectId],
        [w.member.id, "m/two", other],
        [w.admin.id, "m/one", other],
        [w.member.id, "m/one", w.projectId],
      ] as const
    ).entries()) {
      await call(w, {
        requestId: `r${i}`,
        memberId,
        model,
        projectId,
        sessionId: projectId === w.projectId ? w.sessionId : null,
        priceMicros: 1_000 * (i + 1),
      });
    }
    const path = `/api/orgs/${w.orgId}/billing/activity`;
    const all: Activity = await api("GET", path, { token: w.owner.token });
    expect(all.status).toBe(200);
    expect(all.body.nextCursor).toBeNull();
    expect(all.body.items.map((item) => item.id)).toEqual(["r4", "r3", "r2", "r1", "r0"]);
    expect(all.body.items[0]).toEqual({
      id: "r4",
      createdAt: expect.any(String),
      member: { id: w.member.id, label: "member" },
      project: { id: w.projectId, label: "P" },
      session: { id: w.sessionId, label: "S" },
      model: "m/one",
      modelLabel: "m/one",
      kind: "model",
      promptTokens: 100,
      completionTokens: 50,
      cachedPromptTokens: 0,
      reasoningTokens: 0,
      costMicros: 4_990,
      priceMicros: 5_000,
      billable: true,
    });
    expect(all.body.items[1]?.session).toBeNull();

    const ids = async (q: string, token = w.owner.token) => {
      const res: Activity = await api("GET", `${path}?${q}`, { token });
      expect(res.status, q).toBe(200);
      return res.body.items.map((item) => item.id);
    };
    expect(await ids(`member=${w.admin.id}`)).toEqual(["r3", "r1"]);
    expect(await ids(`project=${other}`)).toEqual(["r3", "r2"]);
    expect(await ids(`session=${w.sessionId}`)).toEqual(["r4", "r1", "r0"]);
    expect(await ids("model=m%2Ftwo")).toEqual(["r2", "r1"]);
    expect(await ids(`model=m%2Fone&member=${w.member.id}`)).toEqual(["r4", "r0"]);
    expect(await ids("from=2000-01-01&to=2000-01-02")).toEqual([]);
    expect(
      await ids(`to=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`),
    ).toHaveLength(5);

    // Pages of two: the same rows, in the same order, three pages.
    const paged: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: Activity = await api(
        "GET",
        `${path}?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
        { token: w.admin.token },
      );
      paged.push(...res.body.items.map((item) => item.id));
      cursor = res.body.nextCursor;
      pages++;
    } while (cursor !== null && pages < 10);
    expect(pages).toBe(3);
    expect(paged).toEqual(["r4", "r3", "r2", "r1", "r0"]);
  });

  it("shows a member only their own calls, and refuses someone else's, bad input and unknown params", async () => {
    const w = await world();
    await call(w, { requestId: "mine", memberId: w.member.id });
    await call(w, { requestId: "theirs", memberId: w.admin.id });
    const path = `/api/orgs/${w.orgId}/billing/activity`;
    const mine: Activity = await api("GET", path, { token: w.member.token });
    expect(mine.body.items.map((item) => item.id)).toEqual(["mine"]);
    const ownFilter: Activity = await api("GET", `${path}?member=${w.member.id}`, {
      token: w.member.token,
    });
    expect(ownFilter.body.items.map((item) => item.id)).toEqual(["mine"]);
    const theirs = await api("GET", `${path}?member=${w.admin.id}`, { token: w.member.token });
    expect(theirs.status).toBe(403);
    expect(errorCode(theirs)).toBe("forbidden");
    for (const q of [
      "memberId=x",
      "groupBy=day",
      "limit=0",
      "limit=101",
      "limit=1e2",
      "cursor=zzz",
      "cursor=",
      "from=yesterday",
      "from=2026-12-02&to=2026-12-01",
      "member=",
    ]) {
      const res = await api("GET", `${path}?${q}`, { token: w.owner.token });
      expect(res.status, q).toBe(400);
      expect(errorCode(res), q).toBe("invalid_request");
    }
    const foreign = await api("GET", `/api/orgs/${w.otherOrgId}/billing/activity`, {
      token: w.owner.token,
    });
    expect(foreign.status).toBe(404);
  });
});

type AlertItem = {
  kind: string;
  thresholdPct: number | null;
  period: string | null;
  periodKey: string;
  message: string;
};

describe("alerts people can read", () => {
  it("one step over several thresholds fires the highest only, with a sentence and a readable period", async () => {
    const w = await world();
    const mailbox = `/alerts/${w.orgId}/readable`;
    const stub = billingAccount(env, w.orgId);
    await stub.open({ orgId: w.orgId, grantMicros: 10_000_000 });
    await stub.updateSettings(w.orgId, {
      orgMonthlyLimitMicros: 1_000_000,
      lowBalanceMicros: 9_500_000,
      alertWebhookUrl: `${env.TEST_MAILBOX_URL}${mailbox}`,
    });
    // One call of $0.90 against a $1.00 monthly limit: past 50 and 80% at once, and low balance.
    await call(w, { requestId: "big", memberId: w.member.id, priceMicros: 900_000 });
    const res: ApiResponse<{ items: AlertItem[] }> = await api(
      "GET",
      `/api/orgs/${w.orgId}/billing/alerts`,
      { token: w.admin.token },
    );
    expect(res.status).toBe(200);
    const month = new Date().toISOString().slice(0, 7);
    const monthName = new Date().toLocaleString("en-US", { month: "long", timeZone: "UTC" });
    const readableMonth = `${monthName} ${month.slice(0, 4)}`;
    const byKind = Object.fromEntries(res.body.items.map((item) => [item.kind, item]));
    expect(res.body.items.filter((item) => item.kind === "org_monthly_spend")).toHaveLength(1);
    expect(byKind.org_monthly_spend).toMatchObject({
      thresholdPct: 80,
      period: readableMonth,
      periodKey: month,
      message: `Organization spend reached 80% of its monthly limit: $0.90 of $1.00 in ${readableMonth}.`,
    });
    expect(byKind.low_balance).toMatchObject({
      thresholdPct: null,
      period: null,
      periodKey: expect.stringMatching(/^entry-/),
      message: "The available balance fell to $9.10, below the low-balance threshold of $9.50.",
    });

    // The webhook carries the same sentence and readable period, its other fields unchanged.
    await runDurableObjectAlarm(stub);
    type Delivery = { body: string };
    let received: Delivery[] = [];
    for (let i = 0; i < 100 && received.length < 2; i++) {
      received = (await (
        await fetch(`${env.TEST_MAILBOX_URL}/?path=${mailbox}`)
      ).json()) as Delivery[];
      if (received.length < 2) await new Promise((r) => setTimeout(r, 20));
    }
    const payloads = received.map(
      (d) => (JSON.parse(d.body) as { alert: AlertItem & { periodLabel: string | null } }).alert,
    );
    expect(payloads.find((a) => a.kind === "org_monthly_spend")).toMatchObject({
      period: month,
      periodLabel: readableMonth,
      message: byKind.org_monthly_spend?.message,
    });
    expect(payloads.find((a) => a.kind === "low_balance")).toMatchObject({
      periodLabel: null,
      message: byKind.low_balance?.message,
    });
  });
});
