import { env } from "cloudflare:test";
import { newId } from "@parley/shared";
import { describe, expect, it } from "vitest";
import type { ErasurePlan } from "../src/erasure/plan.ts";
import { pseudonym } from "../src/erasure/pseudonym.ts";
import { verifyErasure } from "../src/erasure/verify.ts";
import { api, type World } from "./helpers.ts";
import { funded } from "./metering.ts";
import { actions } from "./tools.ts";

/** Erasure reaches tool call records with their session, member or end user (issue 30). */

interface ErasureView {
  status: string;
  steps: { name: string; status: string }[];
  verification: { ok: boolean; findings: string[] } | null;
}

async function sourceOf(w: World, createdBy: string): Promise<string> {
  const id = newId("toolSource");
  await env.DB.prepare(
    `INSERT INTO tool_sources (id, org_id, kind, name, url, credential_header, credential_sealed, created_by, created_at, updated_at)
     VALUES (?, ?, 'http', ?, ?, 'X-Api-Key', 'v1.sealed-canary', ?, ?, ?)`,
  )
    .bind(
      id,
      w.orgId,
      `Source ${id.slice(-6)}`,
      `${actions()}/api`,
      createdBy,
      Date.now(),
      Date.now(),
    )
    .run();
  return id;
}

async function callOf(
  w: World,
  sourceId: string,
  caller: { kind: "member" | "end_user"; id: string },
  sessionId: string | null,
): Promise<string> {
  const id = newId("toolCall");
  await env.DB.prepare(
    `INSERT INTO tool_calls (id, org_id, source_id, tool_name, session_id, project_id, caller_kind,
       caller_id, app_id, access, approved_by, status, duration_ms, request_bytes, response_bytes,
       price_micros, created_at)
     VALUES (?, ?, ?, 'request_refund', ?, ?, ?, ?, NULL, 'write', ?, 'ok', 5, 10, 20, 0, ?)`,
  )
    .bind(
      id,
      w.orgId,
      sourceId,
      sessionId,
      w.projectId,
      caller.kind,
      caller.id,
      caller.id,
      Date.now(),
    )
    .run();
  return id;
}

const callsWhere = async (column: string, value: string) =>
  (
    await env.DB.prepare(`SELECT COUNT(*) AS n FROM tool_calls WHERE ${column} = ?`)
      .bind(value)
      .first<{ n: number }>()
  )?.n;

const file = (w: World, token: string, subject: { type: string; id: string }) =>
  api<ErasureView>("POST", `/api/orgs/${w.orgId}/erasure-requests`, {
    token,
    body: { subject, reason: "asked" },
  });

describe("erasure reaches tool call records", () => {
  it("a session's calls go with the session", async () => {
    const w = await funded();
    const source = await sourceOf(w, w.admin.id);
    await callOf(w, source, { kind: "member", id: w.member.id }, w.sessionId);
    const kept = await callOf(w, source, { kind: "member", id: w.otherMember.id }, null);
    const res = await file(w, w.member.token, { type: "session", id: w.sessionId });
    expect(res.body.status).toBe("completed");
    expect(res.body.steps.find((s) => s.name === "tools")?.status).toBe("done");
    expect(await callsWhere("session_id", w.sessionId)).toBe(0);
    expect(await callsWhere("id", kept)).toBe(1);
  });

  it("a member's calls go with them; a source they registered stays the org's, under their pseudonym", async () => {
    const w = await funded();
    const source = await sourceOf(w, w.member.id);
    await callOf(w, source, { kind: "member", id: w.member.id }, null);
    const res = await file(w, w.admin.token, { type: "member", id: w.member.id });
    expect(res.body.status).toBe("completed");
    expect(res.body.verification?.ok).toBe(true);
    expect(await callsWhere("caller_id", w.member.id)).toBe(0);
    const row = await env.DB.prepare("SELECT created_by FROM tool_sources WHERE id = ?")
      .bind(source)
      .first<{ created_by: string }>();
    expect(row?.created_by).toBe(await pseudonym(env.ERASURE_HASH_KEY, w.member.id));
  });

  it("an end user's calls go when the tenant erases them", async () => {
    const w = await funded();
    const source = await sourceOf(w, w.admin.id);
    const euId = newId("endUser");
    await env.DB.prepare(
      "INSERT INTO end_users (id, org_id, app_id, external_id, name, created_at, last_seen_at) VALUES (?, ?, ?, 'shopper-9', 'Nine', ?, ?)",
    )
      .bind(euId, w.orgId, w.appId, Date.now(), Date.now())
      .run();
    await callOf(w, source, { kind: "end_user", id: euId }, null);
    const res = await api("POST", `/api/apps/${w.appId}/end-users/erase`, {
      token: w.apiKey.secret,
      body: { externalId: "shopper-9" },
    });
    expect(res.status).toBe(202);
    for (let i = 0; i < 50 && (await callsWhere("caller_id", euId)) !== 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await callsWhere("caller_id", euId)).toBe(0);
  });

  it("an org erased whole loses its sources and calls; the scan counts the tool tables", async () => {
    const w = await funded();
    const source = await sourceOf(w, w.outsider.id);
    void source;
    // The outsider's own org, erased with their account (they alone belong to it).
    const theirs = newId("toolSource");
    await env.DB.prepare(
      `INSERT INTO tool_sources (id, org_id, kind, name, url, credential_sealed, created_by, created_at, updated_at)
       VALUES (?, ?, 'http', 'Theirs', ?, 'v1.sealed-2', ?, ?, ?)`,
    )
      .bind(theirs, w.otherOrgId, `${actions()}/api`, w.outsider.id, Date.now(), Date.now())
      .run();
    await env.DB.prepare(
      `INSERT INTO tool_calls (id, org_id, source_id, tool_name, session_id, caller_kind, caller_id,
         access, status, duration_ms, request_bytes, response_bytes, created_at)
       VALUES (?, ?, ?, 't', ?, 'member', ?, 'read', 'ok', 1, 1, 1, ?)`,
    )
      .bind(newId("toolCall"), w.otherOrgId, theirs, w.otherSessionId, w.outsider.id, Date.now())
      .run();
    const res = await api<ErasureView>("DELETE", "/api/me", {
      token: w.outsider.token,
      body: { confirm: true },
    });
    expect(res.body.status).toBe("completed");
    expect(res.body.verification?.ok).toBe(true);
    for (const table of ["tool_sources", "tool_calls"]) {
      const left = await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE org_id = ?`)
        .bind(w.otherOrgId)
        .first<{ n: number }>();
      expect(left?.n, table).toBe(0);
    }
    // A row planted after the fact fails the verification scan.
    await env.DB.prepare(
      `INSERT INTO tool_sources (id, org_id, kind, name, url, created_at, updated_at)
       VALUES (?, ?, 'http', 'Planted', 'https://example.com', 1, 1)`,
    )
      .bind(newId("toolSource"), w.otherOrgId)
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
    expect(scan.findings.join()).toMatch(/tool_sources: 1 rows/);
  });
});
