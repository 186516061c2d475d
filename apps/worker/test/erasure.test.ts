import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { OnboardingAgent } from "../src/agents/onboarding-agent.ts";
import { billingAccount } from "../src/billing/account.ts";
import type { ErasurePlan } from "../src/erasure/plan.ts";
import { pseudonym } from "../src/erasure/pseudonym.ts";
import { d1Source, type ScanSource, scanStore } from "../src/erasure/scan.ts";
import { verifyErasure } from "../src/erasure/verify.ts";
import { connect, mustConnect } from "./chat.ts";
import { api, errorCode, snapshot, type World } from "./helpers.ts";
import { funded, returnLeases, settledBalance } from "./metering.ts";

interface ErasureView {
  id: string;
  status: string;
  subject: { type: string; hash: string };
  steps: { name: string; status: string }[];
  verification: { ok: boolean; findings: string[] } | null;
  legalBasis: string;
}

const file = (w: World, token: string, subject: { type: string; id: string }) =>
  api<ErasureView>("POST", `/api/orgs/${w.orgId}/erasure-requests`, {
    token,
    body: { subject, reason: "user asked" },
  });

const count = async (sql: string, ...bindings: string[]) =>
  (
    await env.DB.prepare(sql)
      .bind(...bindings)
      .first<{ n: number }>()
  )?.n ?? -1;

function expectCompleted(view: ErasureView) {
  expect(view.status).toBe("completed");
  expect(view.steps.map((s) => [s.name, s.status])).toEqual([
    ["agents", "done"],
    ["exports", "done"],
    ["knowledge", "done"],
    ["tools", "done"],
    ["d1", "done"],
    ["ledger", "done"],
    ["audit", "done"],
    ["stripe", "done"],
    ["verify", "done"],
  ]);
  expect(view.verification).toMatchObject({ ok: true, findings: [] });
  expect(view.legalBasis).toMatch(/Art\. 17/);
}

describe("erasure of a session", () => {
  it("by its owner: the chat, the row and the socket go; a reconnect gets 410; the ledger keeps its entries", async () => {
    const w = await funded();
    const chat = await mustConnect(`/agents/assistant-agent/${w.sessionId}`, w.member.token);
    await chat.turn("remember my secret plan");
    await returnLeases(w.orgId);
    const spent = (await billingAccount(env, w.orgId).sessionSpend(w.sessionId)).priceMicros;
    expect(spent).toBeGreaterThan(0);
    const res = await file(w, w.member.token, { type: "session", id: w.sessionId });
    expect(res.status).toBe(202);
    expectCompleted(res.body);
    expect(res.body.subject.hash).toBe(await pseudonym(env.ERASURE_HASH_KEY, w.sessionId));
    expect(JSON.stringify(res.body)).not.toContain(w.sessionId);

    await chat.waitFor(() => chat.closed !== null).catch(() => undefined);
    expect(chat.closed?.code).toBe(4410);
    expect((await connect(`/agents/assistant-agent/${w.sessionId}`, w.member.token)).status).toBe(
      410,
    );
    expect(
      (await api("GET", `/api/sessions/${w.sessionId}`, { token: w.member.token })).status,
    ).toBe(410);
    // Someone outside the org learns nothing.
    expect(
      (await api("GET", `/api/sessions/${w.sessionId}`, { token: w.outsider.token })).status,
    ).toBe(404);
    expect(await count("SELECT COUNT(*) AS n FROM sessions WHERE id = ?", w.sessionId)).toBe(0);
    expect(
      await count("SELECT COUNT(*) AS n FROM audit_log WHERE subject_id = ?", w.sessionId),
    ).toBe(0);
    expect((await billingAccount(env, w.orgId).sessionSpend(w.sessionId)).priceMicros).toBe(spent);
  });

  it("requested twice is one request, completed once", async () => {
    const w = await funded();
    const first = await file(w, w.owner.token, { type: "session", id: w.sessionId });
    const second = await file(w, w.owner.token, { type: "session", id: w.sessionId });
    expect(second.body.id).toBe(first.body.id);
    expectCompleted(second.body);
    expect(
      await count(
        "SELECT COUNT(*) AS n FROM erasure_requests WHERE subject_hash = ?",
        first.body.subject.hash,
      ),
    ).toBe(1);
  });
});

describe("erasure of a project", () => {
  it("erases its onboarding chat, its sessions and its memory; members get 410, others 404", async () => {
    const w = await funded();
    const preview = await mustConnect(`/agents/onboarding-agent/${w.projectId}`, w.member.token);
    await preview.turn("hello preview");
    preview.close();
    const res = await file(w, w.admin.token, { type: "project", id: w.projectId });
    expectCompleted(res.body);
    expect(await count("SELECT COUNT(*) AS n FROM projects WHERE id = ?", w.projectId)).toBe(0);
    expect(
      await count("SELECT COUNT(*) AS n FROM sessions WHERE project_id = ?", w.projectId),
    ).toBe(0);
    expect((await connect(`/agents/onboarding-agent/${w.projectId}`, w.member.token)).status).toBe(
      410,
    );
    expect(
      (await api("GET", `/api/projects/${w.projectId}`, { token: w.member.token })).status,
    ).toBe(410);
    expect(
      (await api("GET", `/api/projects/${w.projectId}`, { token: w.outsider.token })).status,
    ).toBe(404);
    const stub = env.ONBOARDING_AGENT.get(env.ONBOARDING_AGENT.idFromName(w.projectId));
    await runInDurableObject(stub, (instance: OnboardingAgent) => {
      expect(instance.messages).toEqual([]);
    });
  });

  it("a schedule pending at erasure time does not revive the object", async () => {
    const w = await funded();
    const stub = env.ONBOARDING_AGENT.get(env.ONBOARDING_AGENT.idFromName(w.projectId));
    const chat = await mustConnect(`/agents/onboarding-agent/${w.projectId}`, w.member.token);
    await chat.turn("before the schedule");
    chat.close();
    await runInDurableObject(stub, async (instance: OnboardingAgent) => {
      await instance.schedule(1, "retryPendingUsage");
    });
    expectCompleted((await file(w, w.owner.token, { type: "project", id: w.projectId })).body);
    await new Promise((r) => setTimeout(r, 1_500));
    await runInDurableObject(stub, async (instance: OnboardingAgent, state) => {
      expect(instance.messages).toEqual([]);
      expect(await state.storage.getAlarm()).toBeNull();
      const schedules = state.storage.sql
        .exec(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'cf_agents_schedules'",
        )
        .toArray();
      if (schedules.length > 0) {
        expect(
          state.storage.sql.exec("SELECT COUNT(*) AS n FROM cf_agents_schedules").one().n,
        ).toBe(0);
      }
    });
  });
});

describe("erasure of a member", () => {
  it("removes their sessions and membership and pseudonymizes their usage, leaving the org's totals", async () => {
    const w = await funded();
    const chat = await mustConnect(`/agents/assistant-agent/${w.sessionId}`, w.member.token);
    await chat.turn("spend a little");
    chat.close();
    const before = await settledBalance(w.orgId);
    const res = await file(w, w.owner.token, { type: "member", id: w.member.id });
    expectCompleted(res.body);
    const alias = await pseudonym(env.ERASURE_HASH_KEY, w.member.id);
    expect(
      await count(
        "SELECT COUNT(*) AS n FROM memberships WHERE user_id = ? AND org_id = ?",
        w.member.id,
        w.orgId,
      ),
    ).toBe(0);
    expect(
      await count(
        "SELECT COUNT(*) AS n FROM sessions WHERE owner_id = ? AND org_id = ?",
        w.member.id,
        w.orgId,
      ),
    ).toBe(0);
    const rows = await billingAccount(env, w.orgId).usageRows({
      from: 0,
      to: Date.now() + 1,
      limit: 100,
    });
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.memberId === alias)).toBe(true);
    expect(await billingAccount(env, w.orgId).scanFor([w.member.id])).toEqual([]);
    expect(await settledBalance(w.orgId)).toEqual(before);
    expect((await billingAccount(env, w.orgId).reconcile()).ok).toBe(true);
    // Their account itself stays (it is not theirs alone to lose): they just left this org.
    expect(await count("SELECT COUNT(*) AS n FROM users WHERE id = ?", w.member.id)).toBe(1);
    expect((await api("GET", `/api/orgs/${w.orgId}`, { token: w.member.token })).status).toBe(404);
  });

  it("who may: a member cannot erase another member (403) or see their session (404); another org is 404", async () => {
    const w = await funded();
    const before = await snapshot();
    const member = await file(w, w.member.token, { type: "member", id: w.otherMember.id });
    expect(member.status).toBe(403);
    expect(errorCode(member)).toBe("forbidden");
    const session = await file(w, w.otherMember.token, { type: "session", id: w.sessionId });
    expect(session.status).toBe(404);
    const foreign = await api("POST", `/api/orgs/${w.otherOrgId}/erasure-requests`, {
      token: w.owner.token,
      body: { subject: { type: "project", id: w.otherProjectId } },
    });
    expect(foreign.status).toBe(404);
    const lastOwner = await file(w, w.owner.token, { type: "member", id: w.owner.id });
    expect(lastOwner.status).toBe(409);
    expect(await snapshot()).toEqual(before);
  });
});

describe("erasure of a former member", () => {
  it("finds someone removed (or who left) by name, erases what they left behind, and lists them no more", async () => {
    const w = await funded();
    const chat = await mustConnect(`/agents/assistant-agent/${w.sessionId}`, w.member.token);
    await chat.turn("spend a little");
    chat.close();
    const formerOf = async (orgId: string) =>
      (
        await api<{ items: { userId: string; name: string; leftAt: string }[] }>(
          "GET",
          `/api/orgs/${orgId}/former-members`,
          { token: w.owner.token },
        )
      ).body.items;
    expect(await formerOf(w.orgId)).toEqual([]);
    // One is removed by the owner, the other leaves.
    const removed = await api("DELETE", `/api/orgs/${w.orgId}/members/${w.member.id}`, {
      token: w.owner.token,
    });
    expect(removed.status).toBe(204);
    const left = await api("DELETE", `/api/orgs/${w.orgId}/members/${w.otherMember.id}`, {
      token: w.otherMember.token,
    });
    expect(left.status).toBe(204);
    const listed = await formerOf(w.orgId);
    expect(listed.map((item) => item.userId).sort()).toEqual(
      [w.member.id, w.otherMember.id].sort(),
    );
    expect(listed[0]).toMatchObject({ name: expect.any(String), leftAt: expect.any(String) });
    // A member cannot read the list; another org's owner sees no org of theirs (404).
    expect(
      (await api("GET", `/api/orgs/${w.orgId}/former-members`, { token: w.admin.token })).status,
    ).toBe(200);
    const outsider = await api("GET", `/api/orgs/${w.orgId}/former-members`, {
      token: w.outsider.token,
    });
    expect(outsider.status).toBe(404);

    // Erased as a member is: their session goes, their spend stays under a pseudonym.
    const before = await settledBalance(w.orgId);
    const res = await file(w, w.owner.token, { type: "member", id: w.member.id });
    expect(res.status).toBe(202);
    expectCompleted(res.body);
    expect(
      await count(
        "SELECT COUNT(*) AS n FROM sessions WHERE owner_id = ? AND org_id = ?",
        w.member.id,
        w.orgId,
      ),
    ).toBe(0);
    expect(await billingAccount(env, w.orgId).scanFor([w.member.id])).toEqual([]);
    expect(await settledBalance(w.orgId)).toEqual(before);
    expect((await formerOf(w.orgId)).map((item) => item.userId)).toEqual([w.otherMember.id]);
    // Filing again answers the same request.
    const again = await file(w, w.owner.token, { type: "member", id: w.member.id });
    expect(again.body.id).toBe(res.body.id);
  });

  it("is only someone who was a member of this org: a stranger or another org's member is 404, changing nothing", async () => {
    const w = await funded();
    const before = await snapshot();
    for (const id of [w.outsider.id, "usr_00000000000000000000000000"]) {
      const res = await file(w, w.owner.token, { type: "member", id });
      expect(res.status).toBe(404);
      expect(errorCode(res)).toBe("not_found");
    }
    expect(await snapshot()).toEqual(before);
  });
});

describe("erasure of an account", () => {
  it("needs an explicit confirmation, then removes the user everywhere and erases orgs they alone belonged to", async () => {
    const w = await funded();
    const refused = await api("DELETE", "/api/me", { token: w.outsider.token, body: {} });
    expect(refused.status).toBe(400);
    const res = await api<ErasureView>("DELETE", "/api/me", {
      token: w.outsider.token,
      body: { confirm: true },
    });
    expect(res.status).toBe(202);
    expectCompleted(res.body);
    expect(await count("SELECT COUNT(*) AS n FROM users WHERE id = ?", w.outsider.id)).toBe(0);
    expect(
      await count("SELECT COUNT(*) AS n FROM memberships WHERE user_id = ?", w.outsider.id),
    ).toBe(0);
    expect(await count("SELECT COUNT(*) AS n FROM projects WHERE org_id = ?", w.otherOrgId)).toBe(
      0,
    );
    expect(
      await count("SELECT COUNT(*) AS n FROM audit_log WHERE actor_id = ?", w.outsider.id),
    ).toBe(0);
    expect((await api("GET", "/api/me", { token: w.outsider.token })).status).toBe(401);
  });

  it("is refused while the user is the only owner of an org with other members", async () => {
    const w = await funded();
    const res = await api("DELETE", "/api/me", { token: w.owner.token, body: { confirm: true } });
    expect(res.status).toBe(409);
    expect((res.body as { error: { message: string } }).error.message).toMatch(/only owner/);
  });
});

describe("erasure and assistant profiles", () => {
  it("a member's erasure takes their name off the profile versions they wrote; the content stays with the org", async () => {
    const w = await funded();
    const created = await api<{ id: string }>("POST", `/api/orgs/${w.orgId}/profiles`, {
      token: w.admin.token,
      body: { name: "Support", instructions: `Escalate to ${w.admin.email} when stuck.` },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    await api("PATCH", `/api/profiles/${id}`, {
      token: w.owner.token,
      body: { welcome: "Hi!" },
    });
    expectCompleted((await file(w, w.owner.token, { type: "member", id: w.admin.id })).body);
    const alias = await pseudonym(env.ERASURE_HASH_KEY, w.admin.id);
    const versions = await api<{
      items: { version: number; authorId: string; authorLabel: string; instructions: string }[];
    }>("GET", `/api/profiles/${id}/versions`, { token: w.owner.token });
    expect(versions.body.items.map((v) => [v.version, v.authorId, v.authorLabel])).toEqual([
      [2, w.owner.id, "owner"],
      [1, alias, "Erased member"],
    ]);
    // The org keeps its assistant's words; the erased email in them is scrubbed.
    expect(versions.body.items[1]?.instructions).toBe("Escalate to [erased] when stuck.");
    expect(
      await count(
        "SELECT COUNT(*) AS n FROM assistant_profile_versions WHERE author_id = ?",
        w.admin.id,
      ),
    ).toBe(0);
  });

  it("an org erased whole takes its profiles, their versions and its allowed models", async () => {
    const w = await funded();
    const other = { token: w.outsider.token };
    await api("PUT", `/api/orgs/${w.otherOrgId}/models`, {
      ...other,
      body: { models: ["parley/dev", "parley/dev-fast"] },
    });
    const made = await api<{ id: string }>("POST", `/api/orgs/${w.otherOrgId}/profiles`, {
      ...other,
      body: { name: "Theirs", instructions: "Private instructions.", model: "parley/dev-fast" },
    });
    expect(made.status).toBe(201);
    await api("PUT", `/api/orgs/${w.otherOrgId}/preview-profile`, {
      ...other,
      body: { profileId: made.body.id },
    });
    const res = await api<ErasureView>("DELETE", "/api/me", { ...other, body: { confirm: true } });
    expectCompleted(res.body);
    for (const table of ["org_models", "assistant_profiles", "assistant_profile_versions"]) {
      expect(await count(`SELECT COUNT(*) AS n FROM ${table} WHERE org_id = ?`, w.otherOrgId)).toBe(
        0,
      );
    }
    expect(
      await count(
        "SELECT COUNT(*) AS n FROM organizations WHERE id = ? AND preview_profile_id IS NOT NULL",
        w.otherOrgId,
      ),
    ).toBe(0);
    // The scan knows the tables: a planted profile of the erased org fails it.
    await env.DB.prepare(
      "INSERT INTO assistant_profiles (id, org_id, current_version, created_at, updated_at) VALUES ('apf_planted', ?, 1, 0, 0)",
    )
      .bind(w.otherOrgId)
      .run();
    const plan: ErasurePlan = {
      userId: null,
      orgIds: [],
      projectIds: [],
      sessionIds: [],
      deleteOrgIds: [w.otherOrgId],
      membershipOrgId: null,
    };
    const scan = await verifyErasure(env, plan);
    expect(scan.ok).toBe(false);
    expect(scan.findings.join()).toMatch(/assistant_profiles: 1 rows of an org erased whole left/);
  });
});

describe("the job", () => {
  it("resumes after a crash between steps and completes", async () => {
    const w = await funded();
    const plan: ErasurePlan = {
      userId: null,
      orgIds: [],
      projectIds: [],
      sessionIds: [w.sessionId],
      deleteOrgIds: [],
      membershipOrgId: null,
    };
    // The state a crash after the first step leaves: the chat erased, the rest pending.
    await env.ASSISTANT_AGENT.get(env.ASSISTANT_AGENT.idFromName(w.sessionId)).destroyForErasure();
    const id = "era_crashtest0000000000000000";
    const steps = [
      "agents",
      "exports",
      "knowledge",
      "tools",
      "d1",
      "ledger",
      "audit",
      "stripe",
      "verify",
    ].map((name, i) => ({
      name,
      status: i === 0 ? "done" : "pending",
      at: null,
      detail: null,
    }));
    await env.DB.batch([
      env.DB.prepare(
        `INSERT INTO erasure_requests (id, org_id, requested_by, subject_type, subject_hash, subject_id, plan, legal_basis, status, steps, created_at, updated_at)
         VALUES (?, ?, ?, 'session', 'anon_crash', ?, ?, 'GDPR Art. 17', 'running', ?, ?, ?)`,
      ).bind(
        id,
        w.orgId,
        w.member.id,
        w.sessionId,
        JSON.stringify(plan),
        JSON.stringify(steps),
        Date.now(),
        Date.now(),
      ),
      env.DB.prepare(
        "INSERT INTO tombstones (subject_id, subject_type, org_id, request_id, erased_at) VALUES (?, 'session', ?, ?, ?)",
      ).bind(w.sessionId, w.orgId, id, Date.now()),
    ]);
    // The job's alarm fires again after the crash (run here at once), and resumes where it stopped;
    // run() joins the alarm's run if it is still going.
    const job = env.ERASURE_JOB.get(env.ERASURE_JOB.idFromName(id));
    await job.start(id);
    const { runDurableObjectAlarm } = await import("cloudflare:test");
    await runDurableObjectAlarm(job);
    expect(await job.run(id)).toBe("completed");
    const view = await api<ErasureView>("GET", `/api/orgs/${w.orgId}/erasure-requests/${id}`, {
      token: w.owner.token,
    });
    expectCompleted(view.body);
    expect(await count("SELECT COUNT(*) AS n FROM sessions WHERE id = ?", w.sessionId)).toBe(0);
  });

  it("its verification scan fails when something is left behind", async () => {
    const w = await funded();
    expectCompleted((await file(w, w.owner.token, { type: "member", id: w.member.id })).body);
    const plan: ErasurePlan = {
      userId: w.member.id,
      orgIds: [w.orgId],
      projectIds: [],
      sessionIds: [w.sessionId],
      deleteOrgIds: [],
      membershipOrgId: w.orgId,
    };
    expect((await verifyErasure(env, plan)).ok).toBe(true);
    // Plant a leftover: an audit row naming the member.
    await env.DB.prepare(
      "INSERT INTO audit_log (id, org_id, actor_id, action, created_at) VALUES ('aud_planted', ?, ?, 'planted', ?)",
    )
      .bind(w.orgId, w.member.id, Date.now())
      .run();
    const scan = await verifyErasure(env, plan);
    expect(scan.ok).toBe(false);
    expect(scan.findings.join()).toMatch(/audit_log\.actor_id: 1 left/);
  });

  it("lets admins read the trail, without the erased content or ids", async () => {
    const w = await funded();
    await file(w, w.owner.token, { type: "session", id: w.sessionId });
    const list = await api<{ items: ErasureView[] }>(
      "GET",
      `/api/orgs/${w.orgId}/erasure-requests`,
      { token: w.admin.token },
    );
    expect(list.body.items.length).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(list.body)).not.toContain(w.sessionId);
    const mine = await api<{ items: ErasureView[] }>(
      "GET",
      `/api/orgs/${w.orgId}/erasure-requests`,
      { token: w.member.token },
    );
    expect(mine.body.items).toEqual([]);
  });
});

describe("the whole-store scan", () => {
  it("reads D1 with one query per table, not one per column (each erasure scans it twice)", async () => {
    let queries = 0;
    const d1 = d1Source(env.DB);
    const counting: ScanSource = {
      all: (sql, ...bindings) => {
        queries++;
        return d1.all(sql, ...bindings);
      },
      run: d1.run,
    };
    const tables = await env.DB.prepare(
      `SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
       AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND name NOT LIKE 'd1\\_%' ESCAPE '\\'`,
    ).first<{ n: number }>();
    const found = await scanStore(counting, { needles: [`usr_${crypto.randomUUID()}`] });
    expect(found).toEqual([]);
    // The columns of every table in one read, then a count per table.
    expect(queries).toBeLessThanOrEqual((tables?.n ?? 0) + 1);
  });
});
