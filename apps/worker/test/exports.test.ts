import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { type DataExport, EXPORT_FORMAT, newId } from "@parley/shared";
import { describe, expect, it } from "vitest";
import { STEP_NAMES } from "../src/erasure/plan.ts";
import { verifyErasure } from "../src/erasure/verify.ts";
import { exportJob, exportRow, fileExport } from "../src/exports/file.ts";
import { EXPORT_COVERAGE, SECTIONS } from "../src/exports/sections.ts";
import { mustConnect } from "./chat.ts";
import {
  api,
  apiKeyFor,
  BASE,
  errorCode,
  finishExport,
  profileIn,
  randomClientAddress,
  snapshot,
  uniqueEmail,
  type World,
  world,
} from "./helpers.ts";
import { documentIn } from "./knowledge.ts";
import { linkSecret, nextMail } from "./mail.ts";
import { funded, returnLeases, usageRowsOf } from "./metering.ts";

type Archive = {
  format: string;
  version: number;
  kind: string;
  sections: Record<string, unknown>;
};

const count = async (sql: string, ...bindings: unknown[]) =>
  (
    await env.DB.prepare(sql)
      .bind(...bindings)
      .first<{ n: number }>()
  )?.n ?? -1;

/** The chunks the export's object holds (none once its storage was deleted). */
const chunksIn = (id: string) =>
  runInDurableObject(exportJob(env, id), (_i, state) => {
    const sql = state.storage.sql;
    const table = sql.exec("SELECT name FROM sqlite_master WHERE name = 'export_chunks'").toArray();
    return table.length === 0
      ? 0
      : Number(sql.exec("SELECT COUNT(*) AS n FROM export_chunks").one().n);
  });

async function view(path: string, token: string): Promise<DataExport> {
  const res = await api<DataExport>("GET", path, { token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function download(url: string) {
  const res = await api<Archive>("GET", url.slice(BASE.length));
  return res;
}

/**
 * A world with data in every store the erasure step list knows: a real assistant turn and a real
 * onboarding turn by the member (transcripts, usage, ledger), an invitation to their email, an API
 * key they made, an erasure request they filed, an app secret and an end user, a Stripe payment.
 */
async function richWorld() {
  const w = await funded();
  const chat = await mustConnect(`/agents/assistant-agent/${w.sessionId}`, w.member.token);
  await chat.turn("my assistant note about export-canary-1");
  chat.close();
  const preview = await mustConnect(`/agents/onboarding-agent/${w.projectId}`, w.member.token);
  await preview.turn("my preview question export-canary-2");
  preview.close();
  await returnLeases(w.orgId);
  await usageRowsOf(w.orgId, (row) => row.memberId === w.member.id, 2);
  const now = Date.now();
  const tokenHash = `invitation-hash-${crypto.randomUUID()}`;
  await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO invitations (id, org_id, email, role, token_hash, invited_by, created_at, expires_at)
       VALUES (?, ?, ?, 'member', ?, ?, ?, ?)`,
    ).bind(
      newId("invitation"),
      w.otherOrgId,
      w.member.email,
      tokenHash,
      w.outsider.id,
      now,
      now + 1e8,
    ),
    // And one the org made, for its own export.
    env.DB.prepare(
      `INSERT INTO invitations (id, org_id, email, role, token_hash, invited_by, created_at, expires_at)
       VALUES (?, ?, 'new-hire@example.test', 'member', ?, ?, ?, ?)`,
    ).bind(newId("invitation"), w.orgId, `${tokenHash}-2`, w.owner.id, now, now + 1e8),
    env.DB.prepare(
      `INSERT INTO erasure_requests (id, org_id, requested_by, subject_type, subject_hash, legal_basis, status, steps, created_at, updated_at)
       VALUES (?, ?, ?, 'session', 'anon_y', 'GDPR Art. 17', 'completed', '[]', ?, ?)`,
    ).bind(newId("erasure"), w.orgId, w.member.id, now, now),
    env.DB.prepare(
      `INSERT INTO stripe_payments (payment_intent_id, checkout_session_id, org_id, amount_micros, created_at)
       VALUES (?, ?, ?, 5000000, ?)`,
    ).bind(`pi_${crypto.randomUUID()}`, `cs_${crypto.randomUUID()}`, w.orgId, now),
    env.DB.prepare(
      `INSERT INTO end_users (id, org_id, app_id, external_id, name, created_at, last_seen_at)
       VALUES (?, ?, ?, 'shop-user-7', 'Shopper', ?, ?)`,
    ).bind(newId("endUser"), w.orgId, w.appId, now, now),
  ]);
  // Mail: a reset the member asked for (a link and its mail) and an invitation the org mailed.
  await api("POST", "/api/auth/password-reset", {
    body: { email: w.member.email },
    headers: { "cf-connecting-ip": randomClientAddress() },
  });
  const resetMail = await nextMail(w.member.email, "password_reset");
  const hire = uniqueEmail("export-hire");
  await api("POST", `/api/orgs/${w.orgId}/invitations`, {
    token: w.owner.token,
    body: { email: hire, role: "member" },
  });
  await nextMail(hire, "invitation");
  // A tool source of the org (its credential sealed) and a call made for the member (issue 30).
  const toolSourceId = newId("toolSource");
  await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO tool_sources (id, org_id, kind, name, url, credential_header, credential_sealed, tools, created_by, created_at, updated_at)
       VALUES (?, ?, 'http', 'Shop API', 'https://shop.example/api', 'X-Api-Key', 'v1.sealed-tool-credential', '[]', ?, ?, ?)`,
    ).bind(toolSourceId, w.orgId, w.owner.id, now, now),
    env.DB.prepare(
      `INSERT INTO tool_calls (id, org_id, source_id, tool_name, session_id, project_id, caller_kind,
         caller_id, access, approved_by, status, duration_ms, request_bytes, response_bytes, price_micros, created_at)
       VALUES (?, ?, ?, 'request_refund', ?, ?, 'member', ?, 'write', ?, 'ok', 5, 10, 20, 0, ?)`,
    ).bind(
      newId("toolCall"),
      w.orgId,
      toolSourceId,
      w.sessionId,
      w.projectId,
      w.member.id,
      w.member.id,
      now,
    ),
  ]);
  const memberKey = await apiKeyFor(w.orgId, ["usage:read"], { createdBy: w.member.id });
  // Knowledge (2026-12-06): a document the member uploaded (an admin then), with its text.
  await documentIn(w, w.member.id, "export-canary-4: the harbor closes at dusk.");
  // Assistant profiles (2026-12-06): one the member wrote two versions of (an admin then), one the
  // owner wrote, and the org's choice of models.
  const profileId = await profileIn(w.orgId, w.member.id, {
    name: "Support",
    instructions: "export-canary-3",
    versions: 2,
  });
  await profileIn(w.orgId, w.owner.id, { name: "Owner's" });
  await env.DB.prepare(
    "INSERT INTO org_models (org_id, model_id, position) VALUES (?, 'parley/dev', 0)",
  )
    .bind(w.orgId)
    .run();
  const rotated = await api<{ secret: { secret: string } }>(
    "POST",
    `/api/apps/${w.appId}/secrets`,
    {
      token: w.owner.token,
      body: {},
    },
  );
  expect(rotated.status).toBe(201);
  // A finished export of each kind from before: an archive lists those, never itself.
  const earlier = { account: `exp_0${crypto.randomUUID()}`, org: `exp_0${crypto.randomUUID()}` };
  await env.DB.batch(
    [
      [earlier.account, "account", w.member.id, null, w.member.id],
      [earlier.org, "org", w.owner.id, w.orgId, w.owner.id],
    ].map(([id, kind, subject, org, by]) =>
      env.DB.prepare(
        `INSERT INTO data_exports (id, kind, subject_user_id, org_id, requested_by, status, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, 'completed', ?, ?)`,
      ).bind(id, kind, subject, org, by, now, now),
    ),
  );
  return {
    w,
    memberKey,
    appSecret: rotated.body.secret.secret,
    tokenHash,
    earlier,
    resetLink: linkSecret(resetMail, "/reset-password"),
    profileId,
  };
}

/** Every value that must never reach an archive: hashes, keys, app secrets. */
async function secretsOf(w: World, extra: string[]): Promise<string[]> {
  const { results } = await env.DB.prepare(
    `SELECT secret_hash AS v FROM api_keys WHERE org_id = ?1
     UNION ALL SELECT sealed FROM app_secrets WHERE org_id = ?1
     UNION ALL SELECT password_hash FROM users WHERE id IN (SELECT user_id FROM memberships WHERE org_id = ?1)
     UNION ALL SELECT token_hash FROM invitations
     UNION ALL SELECT credential_sealed FROM tool_sources WHERE org_id = ?1`,
  )
    .bind(w.orgId)
    .all<{ v: string }>();
  // D1 takes at most five terms in one compound SELECT: the mail's secrets on their own.
  const { results: mail } = await env.DB.prepare(
    `SELECT token_hash AS v FROM account_tokens
     UNION ALL SELECT data FROM mail_outbox WHERE data IS NOT NULL`,
  ).all<{ v: string }>();
  return [
    ...[...results, ...mail].map((r) => r.v).filter((v) => v !== "none"),
    w.apiKey.secret,
    ...extra,
  ];
}

function expectCovered(archive: Archive, kind: "account" | "org") {
  expect(archive.format).toBe(EXPORT_FORMAT);
  expect(archive.version).toBe(1);
  expect(Object.keys(archive.sections)).toEqual([...SECTIONS[kind]]);
  for (const step of STEP_NAMES) {
    const coverage = EXPORT_COVERAGE[step];
    expect(coverage, `erasure step ${step} has no export mapping`).toBeDefined();
    if ("none" in coverage) continue;
    for (const section of coverage[kind]) {
      const value = archive.sections[section];
      expect(value, `${kind} section ${section} (erasure step ${step})`).toBeTruthy();
      if (Array.isArray(value))
        expect(value.length, `${kind} ${section} is empty`).toBeGreaterThan(0);
    }
  }
}

describe("data export: completeness", () => {
  it("maps every erasure step to export sections that exist", () => {
    for (const step of STEP_NAMES) {
      const coverage = EXPORT_COVERAGE[step];
      expect(coverage, step).toBeDefined();
      if ("none" in coverage) continue;
      for (const kind of ["account", "org"] as const) {
        for (const section of coverage[kind]) expect(SECTIONS[kind]).toContain(section);
      }
    }
    expect(Object.keys(EXPORT_COVERAGE).sort()).toEqual([...STEP_NAMES].sort());
  });

  it("an account export holds the person's data from every store, and no secret", async () => {
    const { w, memberKey, appSecret, tokenHash, earlier, resetLink, profileId } = await richWorld();
    const started = await api<DataExport>("POST", "/api/me/exports", { token: w.member.token });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ kind: "account", orgId: null, downloadUrl: null });
    expect(started.body.progress.total).toBeGreaterThan(5);
    await finishExport(started.body.id);
    const done = await view(`/api/me/exports/${started.body.id}`, w.member.token);
    expect(done).toMatchObject({ status: "completed", error: null });
    expect(done.progress.done).toBe(done.progress.total);
    expect(done.downloadUrl).toMatch(
      /^https:\/\/parley\.test\/api\/exports\/exp_.+\/download\?key=/,
    );
    expect(Date.parse(done.expiresAt ?? "") - Date.now()).toBeGreaterThan(23 * 3600_000);

    const res = await download(done.downloadUrl ?? "");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename=/);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const archive = res.body;
    expectCovered(archive, "account");
    const s = archive.sections;
    expect(s.profile).toMatchObject({ id: w.member.id, email: w.member.email });
    expect(s.memberships).toEqual([expect.objectContaining({ orgId: w.orgId, role: "member" })]);
    expect(s.mail).toMatchObject({
      messages: [expect.objectContaining({ kind: "password_reset", to: w.member.email })],
      links: [expect.objectContaining({ purpose: "reset_password", email: w.member.email })],
    });
    expect(s.invitations).toEqual([
      expect.objectContaining({ orgId: w.otherOrgId, email: w.member.email }),
    ]);
    const sessions = s.sessions as { id: string; messages: unknown[] }[];
    expect(sessions.map((x) => x.id)).toEqual([w.sessionId]);
    expect(JSON.stringify(sessions[0]?.messages)).toContain("export-canary-1");
    expect(JSON.stringify(s.previewMessages)).toContain("export-canary-2");
    const usage = s.usage as { memberId: string; requestId: string }[];
    expect(usage.length).toBeGreaterThanOrEqual(2);
    expect(usage.every((u) => u.memberId === w.member.id)).toBe(true);
    const ledger = s.ledger as { reference: string; kind: string }[];
    expect(ledger.every((e) => e.kind === "usage")).toBe(true);
    expect(ledger.map((e) => e.reference)).toContain(usage.find((u) => u.requestId)?.requestId);
    expect(s.apiKeys).toEqual([
      expect.objectContaining({ id: memberKey.id, prefix: memberKey.prefix }),
    ]);
    // The profile versions they wrote, and only those.
    expect(
      (s.profileVersions as { profileId: string; version: number; instructions: string }[]).map(
        (v) => [v.profileId, v.version, v.instructions],
      ),
    ).toEqual([
      [profileId, 1, "export-canary-3"],
      [profileId, 2, "export-canary-3"],
    ]);
    // The documents they uploaded, with their text.
    expect(JSON.stringify(s.documents)).toContain("export-canary-4");
    expect((s.erasureRequests as unknown[]).length).toBe(1);
    expect(JSON.stringify(s.audit)).toContain("export.requested");
    // The earlier export, and not this one (it was still running as it was written).
    expect(s.exports).toEqual([
      expect.objectContaining({ id: earlier.account, status: "completed" }),
    ]);
    // Nothing of anyone else's private sessions, and no secret at all.
    const text = JSON.stringify(archive);
    expect(text).not.toContain(w.otherSessionId);
    for (const secret of await secretsOf(w, [
      memberKey.secret,
      appSecret,
      tokenHash,
      `${tokenHash}-2`,
      resetLink,
    ])) {
      expect(text).not.toContain(secret);
    }
    expect(text).not.toMatch(/password_?hash|secret_?hash|token_?hash|"sealed"/i);
    // The download is audited, without content.
    const audit = await env.DB.prepare(
      "SELECT data FROM audit_log WHERE action = 'export.downloaded' AND subject_id = ?",
    )
      .bind(started.body.id)
      .first<{ data: string }>();
    expect(audit?.data).not.toContain("export-canary");
  });

  it("an org export holds the org's data from every store, and no secret", async () => {
    const { w, memberKey, appSecret, tokenHash, earlier, resetLink, profileId } = await richWorld();
    const started = await api<DataExport>("POST", `/api/orgs/${w.orgId}/exports`, {
      token: w.owner.token,
    });
    expect(started.status).toBe(202);
    await finishExport(started.body.id);
    const done = await view(`/api/orgs/${w.orgId}/exports/${started.body.id}`, w.owner.token);
    expect(done.status).toBe("completed");
    const res = await download(done.downloadUrl ?? "");
    expect(res.status).toBe(200);
    const archive = res.body;
    expectCovered(archive, "org");
    const s = archive.sections;
    expect(s.organization).toMatchObject({ id: w.orgId, name: "Acme" });
    expect((s.members as unknown[]).length).toBe(4);
    expect(JSON.stringify(s.sessions)).toContain("export-canary-1");
    expect(JSON.stringify(s.previewChats)).toContain("export-canary-2");
    expect(JSON.stringify(s.projects)).toContain("ship");
    expect(JSON.stringify(s.apps)).toContain(w.appId);
    expect(JSON.stringify(s.endUsers)).toContain("shop-user-7");
    // Every profile with every version; the org's models.
    const profiles = s.profiles as { id: string; currentVersion: number; versions: unknown[] }[];
    expect(profiles).toHaveLength(2);
    const support = profiles.find((p) => p.id === profileId);
    expect(support?.currentVersion).toBe(2);
    expect(support?.versions).toHaveLength(2);
    expect(JSON.stringify(support?.versions)).toContain("export-canary-3");
    expect(JSON.stringify(s.documents)).toContain("export-canary-4");
    expect(s.organization).toMatchObject({ allowedModels: ["parley/dev"], previewProfileId: null });
    expect((s.apiKeys as unknown[]).length).toBe(2);
    expect((s.payments as unknown[]).length).toBe(1);
    expect(s.mail).toEqual([expect.objectContaining({ kind: "invitation", orgId: w.orgId })]);
    expect(s.autoTopUp).toMatchObject({ enabled: false, card: null, charges: [] });
    expect((s.erasureRequests as unknown[]).length).toBe(2);
    const text = JSON.stringify(archive);
    expect(text).not.toContain(w.otherSessionId);
    expect(text).not.toContain(w.otherOrgId);
    for (const secret of await secretsOf(w, [
      memberKey.secret,
      appSecret,
      tokenHash,
      `${tokenHash}-2`,
      resetLink,
    ])) {
      expect(text).not.toContain(secret);
    }
    // The org's exports, with the link for the owner who asked.
    const list = await api<{ items: DataExport[] }>("GET", `/api/orgs/${w.orgId}/exports`, {
      token: w.owner.token,
    });
    const listed = list.body.items.map((x) => [x.id, x.downloadUrl !== null]);
    expect(listed).toHaveLength(2);
    expect(listed).toEqual(
      expect.arrayContaining([
        [started.body.id, true],
        [earlier.org, false],
      ]),
    );
    expect(JSON.stringify(s.exports)).not.toContain(started.body.id);
  });
});

describe("data export: the job", () => {
  it("shows progress, and resumes after its object is reset mid-job without writing a unit twice", async () => {
    const { w } = await richWorld();
    const filed = await fileExport(env, {
      kind: "org",
      subjectUserId: w.owner.id,
      orgId: w.orgId,
      requestedBy: w.owner.id,
    });
    const stub = exportJob(env, filed.id);
    expect(await stub.run(filed.id, 2)).toBe("running");
    const partway = await view(`/api/orgs/${w.orgId}/exports/${filed.id}`, w.owner.token);
    expect(partway.status).toBe("running");
    expect(partway.progress.done).toBe(2);
    expect(partway.progress.total).toBeGreaterThan(2);
    await runInDurableObject(stub, (_instance, state) => state.abort("test: reset mid-job")).catch(
      () => undefined,
    );
    // The safety net (or the next alarm) resumes at the first unit not written, in a new instance.
    expect(await runDurableObjectAlarm(exportJob(env, filed.id))).toBe(true);
    const after = await view(`/api/orgs/${w.orgId}/exports/${filed.id}`, w.owner.token);
    expect(after.progress.done).toBeGreaterThan(2);
    await finishExport(filed.id);
    const done = await view(`/api/orgs/${w.orgId}/exports/${filed.id}`, w.owner.token);
    expect(done.status).toBe("completed");
    const res = await download(done.downloadUrl ?? "");
    expect(res.status).toBe(200);
    expectCovered(res.body, "org");
    expect((res.body.sections.sessions as unknown[]).length).toBe(1);
    expect(done.sizeBytes).toBe(new TextEncoder().encode(JSON.stringify(res.body)).length);
  });

  it("takes no body: anything but none or {} is a 400 that starts nothing (found by the outside probe)", async () => {
    const w = await world();
    const before = await snapshot();
    for (const [path, token] of [
      ["/api/me/exports", w.member.token],
      [`/api/orgs/${w.orgId}/exports`, w.owner.token],
      [`/api/orgs/${w.orgId}/billing/portal`, w.owner.token],
    ] as const) {
      const res = await api("POST", path, { token, body: { foo: 1 } });
      expect(res.status, path).toBe(400);
      expect(errorCode(res)).toBe("invalid_request");
    }
    expect(await snapshot()).toEqual(before);
    const started = await api("POST", "/api/me/exports", { token: w.member.token, body: {} });
    expect(started.status).toBe(202);
  });

  it("refuses a second export of the same subject while one runs (409)", async () => {
    const { w } = await richWorld();
    await fileExport(env, {
      kind: "account",
      subjectUserId: w.member.id,
      orgId: null,
      requestedBy: w.member.id,
    });
    const second = await api("POST", "/api/me/exports", { token: w.member.token });
    expect(second.status).toBe(409);
    expect(errorCode(second)).toBe("conflict");
    // Two at once: one is filed, the other refused (the unique index closes the race).
    const both = await Promise.all([
      api("POST", "/api/me/exports", { token: w.admin.token }),
      api("POST", "/api/me/exports", { token: w.admin.token }),
    ]);
    expect(both.map((r) => r.status).sort()).toEqual([202, 409]);
    expect(
      await count("SELECT COUNT(*) AS n FROM data_exports WHERE subject_user_id = ?", w.admin.id),
    ).toBe(1);
  });

  it("the link: a wrong key is 404, an expired link 410, and the archive goes at expiry", async () => {
    const { w } = await richWorld();
    const started = await api<DataExport>("POST", "/api/me/exports", { token: w.member.token });
    await finishExport(started.body.id);
    const done = await view(`/api/me/exports/${started.body.id}`, w.member.token);
    const url = new URL(done.downloadUrl ?? "");
    const wrong = await api("GET", `${url.pathname}?key=${"x".repeat(43)}`);
    expect(wrong.status).toBe(404);
    expect((await api("GET", url.pathname)).status).toBe(404);
    // Others never see the link or the job.
    expect(
      (await api("GET", `/api/me/exports/${started.body.id}`, { token: w.owner.token })).status,
    ).toBe(404);
    await env.DB.prepare("UPDATE data_exports SET expires_at = ? WHERE id = ?")
      .bind(Date.now() - 1, started.body.id)
      .run();
    const expired = await api("GET", `${url.pathname}${url.search}`);
    expect(expired.status).toBe(410);
    expect(errorCode(expired)).toBe("gone");
    // The expiry alarm deletes the archive; the job stays listed, without a link.
    await runDurableObjectAlarm(exportJob(env, started.body.id));
    const row = await exportRow(env, started.body.id);
    expect(row?.purged_at).not.toBeNull();
    expect(await chunksIn(started.body.id)).toBe(0);
    const later = await view(`/api/me/exports/${started.body.id}`, w.member.token);
    expect(later).toMatchObject({ downloadUrl: null, expiresAt: null });
  });

  it("owners only: a member or admin gets 403, another org 404", async () => {
    const { w } = await richWorld();
    for (const who of [w.member, w.admin]) {
      const res = await api("POST", `/api/orgs/${w.orgId}/exports`, { token: who.token });
      expect(res.status).toBe(403);
    }
    const started = await api<DataExport>("POST", `/api/orgs/${w.orgId}/exports`, {
      token: w.owner.token,
    });
    const foreign = await api("GET", `/api/orgs/${w.orgId}/exports/${started.body.id}`, {
      token: w.outsider.token,
    });
    expect(foreign.status).toBe(404);
    const wrongOrg = await api("GET", `/api/orgs/${w.otherOrgId}/exports/${started.body.id}`, {
      token: w.outsider.token,
    });
    expect(wrongOrg.status).toBe(404);
    await finishExport(started.body.id);
  });
});

describe("data export: erasure", () => {
  it("an erasure of the member deletes the archives holding them, and verification passes", async () => {
    const { w } = await richWorld();
    const mine = await api<DataExport>("POST", "/api/me/exports", { token: w.member.token });
    const org = await api<DataExport>("POST", `/api/orgs/${w.orgId}/exports`, {
      token: w.owner.token,
    });
    await finishExport(mine.body.id);
    await finishExport(org.body.id);
    const link = (await view(`/api/me/exports/${mine.body.id}`, w.member.token)).downloadUrl ?? "";
    const erasure = await api<{ status: string; steps: { name: string; status: string }[] }>(
      "POST",
      `/api/orgs/${w.orgId}/erasure-requests`,
      { token: w.owner.token, body: { subject: { type: "member", id: w.member.id } } },
    );
    expect(erasure.status).toBe(202);
    expect(erasure.body.status).toBe("completed");
    expect(erasure.body.steps.find((s) => s.name === "exports")?.status).toBe("done");
    expect(
      await count(
        "SELECT COUNT(*) AS n FROM data_exports WHERE id IN (?, ?)",
        mine.body.id,
        org.body.id,
      ),
    ).toBe(0);
    expect((await download(link)).status).toBe(404);
    expect(await chunksIn(mine.body.id)).toBe(0);
    expect(await chunksIn(org.body.id)).toBe(0);
  });

  it("the verification scan fails while an export holding erased data is left (planted)", async () => {
    const { w } = await richWorld();
    await fileExport(env, {
      kind: "org",
      subjectUserId: w.owner.id,
      orgId: w.orgId,
      requestedBy: w.owner.id,
    });
    const plan = {
      userId: null,
      orgIds: [w.orgId],
      projectIds: [],
      sessionIds: [],
      deleteOrgIds: [],
      membershipOrgId: null,
    };
    const verification = await verifyErasure(env, plan, w.orgId);
    expect(verification.ok).toBe(false);
    // This one and the world's earlier org export.
    expect(verification.findings).toContain("D1 data_exports: 2 exports holding erased data left");
  });

  it("an export whose subject was erased meanwhile fails and keeps nothing", async () => {
    const { w } = await richWorld();
    const filed = await fileExport(env, {
      kind: "account",
      subjectUserId: w.member.id,
      orgId: null,
      requestedBy: w.member.id,
    });
    await env.DB.prepare(
      "INSERT INTO tombstones (subject_id, subject_type, org_id, request_id, erased_at) VALUES (?, 'account', NULL, 'era_x', ?)",
    )
      .bind(w.member.id, Date.now())
      .run();
    expect(await exportJob(env, filed.id).run(filed.id)).toBe("failed");
    expect(await exportRow(env, filed.id)).toMatchObject({
      status: "failed",
      error: expect.stringMatching(/erased/),
    });
    expect(await chunksIn(filed.id)).toBe(0);
  });

  it("refuses to start an org export while an erasure runs in that org (409)", async () => {
    const { w } = await richWorld();
    await env.DB.prepare(
      `INSERT INTO erasure_requests (id, org_id, requested_by, subject_type, subject_hash, subject_id, legal_basis, status, steps, created_at, updated_at)
       VALUES (?, ?, ?, 'session', 'anon_z', ?, 'GDPR Art. 17', 'running', '[]', ?, ?)`,
    )
      .bind(newId("erasure"), w.orgId, w.owner.id, w.sessionId, Date.now(), Date.now())
      .run();
    const res = await api("POST", `/api/orgs/${w.orgId}/exports`, { token: w.owner.token });
    expect(res.status).toBe(409);
  });
});
