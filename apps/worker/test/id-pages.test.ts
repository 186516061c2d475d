import { env } from "cloudflare:test";
import { newId } from "@parley/shared";
import { describe, expect, it } from "vitest";
import { asEndUser, endUserToken, openSession } from "./end-users.ts";
import {
  addMembership,
  api,
  apiKeyFor,
  embedApp,
  errorCode,
  org,
  person,
  profileIn,
  project,
  session,
  type World,
  world,
} from "./helpers.ts";
import { newestFirst, type Page, pages } from "./pages.ts";

/**
 * Every list keyed by time-sortable ids pages the same way (db/pagination.ts `idPage`): newest
 * first, `limit` at a time, each page's `nextCursor` leading to the next until the last says
 * null, and nothing outside the list's filter on any page (another org's, another owner's, a
 * deleted one). The org's members, projects and sessions and an app's end users page in
 * test/tenancy.test.ts and test/app-end-user-list.test.ts; the tool lists in
 * test/tool-pages.test.ts.
 */

type Item = { id: string };

const reader = (token: string) => (path: string) => api<Page<Item>>("GET", path, { token });

async function deleted(table: "sessions" | "apps", id: string): Promise<void> {
  await env.DB.prepare(`UPDATE ${table} SET deleted_at = ? WHERE id = ?`)
    .bind(Date.now(), id)
    .run();
}

async function erasureRequest(w: World, requestedBy: string, orgId = w.orgId): Promise<string> {
  const id = newId("erasure");
  await env.DB.prepare(
    `INSERT INTO erasure_requests (id, org_id, requested_by, subject_type, subject_hash, legal_basis, status, steps, created_at, updated_at)
     VALUES (?, ?, ?, 'session', 'anon_x', 'GDPR Art. 17', 'completed', '[]', ?, ?)`,
  )
    .bind(id, orgId, requestedBy, Date.now(), Date.now())
    .run();
  return id;
}

async function document(orgId: string, projectId: string, createdBy: string): Promise<string> {
  const id = newId("document");
  await env.DB.prepare(
    `INSERT INTO knowledge_documents (id, org_id, project_id, name, content_type, version, bytes, created_by, created_at, updated_at)
     VALUES (?, ?, ?, 'Doc', 'text/plain', 1, 10, ?, ?, ?)`,
  )
    .bind(id, orgId, projectId, createdBy, Date.now(), Date.now())
    .run();
  return id;
}

/** A failed export (no link to mint): `account` of `userId`, or `org` of `orgId` asked by them. */
async function dataExport(userId: string, orgId: string | null): Promise<string> {
  const id = newId("dataExport");
  await env.DB.prepare(
    `INSERT INTO data_exports (id, kind, subject_user_id, org_id, requested_by, status, error, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, 'failed', 'internal', ?, ?)`,
  )
    .bind(id, orgId === null ? "account" : "org", userId, orgId, userId, Date.now(), Date.now())
    .run();
  return id;
}

async function invitation(orgId: string, invitedBy: string): Promise<string> {
  const id = newId("invitation");
  await env.DB.prepare(
    `INSERT INTO invitations (id, org_id, email, role, token_hash, invited_by, created_at, expires_at)
     VALUES (?, ?, ?, 'member', ?, ?, ?, ?)`,
  )
    .bind(
      id,
      orgId,
      `${id}@example.com`,
      crypto.randomUUID(),
      invitedBy,
      Date.now(),
      Date.now() + 60_000,
    )
    .run();
  return id;
}

describe("id-keyed lists, page by page", () => {
  it("the caller's orgs: every org they belong to, and only those", async () => {
    const joiner = await person("joiner");
    const other = await person("other");
    const ids = [await org(joiner, "A"), await org(joiner, "B"), await org(other, "C")];
    await addMembership(ids[2] as string, joiner.id, "member");
    await org(other, "D");
    expect(await pages(reader(joiner.token), "/api/orgs", 2)).toEqual(newestFirst(ids, 2));
  });

  it("a project's sessions: everyone's for an admin, a member's own, never a deleted one", async () => {
    const w = await world();
    const mine = [w.sessionId];
    for (let i = 0; i < 2; i++) mine.push(await session(w.projectId, w.orgId, w.member.id));
    const admins = await session(w.projectId, w.orgId, w.admin.id);
    await deleted("sessions", await session(w.projectId, w.orgId, w.member.id));
    await session(await project(w.orgId, w.owner.id), w.orgId, w.member.id);
    const path = `/api/projects/${w.projectId}/sessions`;
    expect(await pages(reader(w.admin.token), path, 3)).toEqual(newestFirst([...mine, admins], 3));
    expect(await pages(reader(w.member.token), path, 2)).toEqual(newestFirst(mine, 2));
  });

  it("the org's sessions filtered by project and by member, across pages", async () => {
    const w = await world();
    const elsewhere = await project(w.orgId, w.owner.id);
    const inProject = [w.sessionId, await session(w.projectId, w.orgId, w.admin.id)];
    inProject.push(await session(w.projectId, w.orgId, w.member.id));
    const members = [w.sessionId, inProject[2] as string];
    members.push(await session(elsewhere, w.orgId, w.member.id));
    const admins = [inProject[1] as string, await session(elsewhere, w.orgId, w.admin.id)];
    const path = `/api/orgs/${w.orgId}/sessions`;
    const owner = reader(w.owner.token);
    expect(await pages(owner, `${path}?project=${w.projectId}`, 2)).toEqual(
      newestFirst(inProject, 2),
    );
    expect(await pages(owner, `${path}?member=${w.member.id}`, 2)).toEqual(newestFirst(members, 2));
    expect(await pages(owner, path, 2)).toEqual(newestFirst([...members, ...admins], 2));
    expect(await pages(reader(w.member.token), path, 1)).toEqual(newestFirst(members, 1));
  });

  it("an end user's own sessions of the app", async () => {
    const w = await world();
    const token = (await endUserToken(w, "pager")).accessToken;
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await openSession(token)).id);
    await openSession((await endUserToken(w, "someone-else")).accessToken);
    const read = (path: string) => asEndUser<Page<Item>>("GET", path, token);
    expect(await pages(read, "/api/embed/sessions", 2)).toEqual(newestFirst(ids, 2));
  });

  it("the org's API keys", async () => {
    const w = await world();
    const ids = [w.apiKey.id, (await apiKeyFor(w.orgId)).id, (await apiKeyFor(w.orgId)).id];
    await apiKeyFor(w.otherOrgId);
    const path = `/api/orgs/${w.orgId}/api-keys`;
    expect(await pages(reader(w.admin.token), path, 2)).toEqual(newestFirst(ids, 2));
  });

  it("the org's erasure requests: everyone's for an owner, a member's own", async () => {
    const w = await world();
    const members = [await erasureRequest(w, w.member.id), await erasureRequest(w, w.member.id)];
    const all = [w.erasureRequestId, await erasureRequest(w, w.owner.id), ...members];
    await erasureRequest(w, w.outsider.id, w.otherOrgId);
    const path = `/api/orgs/${w.orgId}/erasure-requests`;
    expect(await pages(reader(w.owner.token), path, 3)).toEqual(newestFirst(all, 3));
    expect(await pages(reader(w.member.token), path, 1)).toEqual(newestFirst(members, 1));
  });

  it("a project's documents", async () => {
    const w = await world();
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await document(w.orgId, w.projectId, w.owner.id));
    await document(w.orgId, await project(w.orgId, w.owner.id), w.owner.id);
    const path = `/api/projects/${w.projectId}/documents`;
    expect(await pages(reader(w.member.token), path, 2)).toEqual(newestFirst(ids, 2));
  });

  it("one's own data exports, and the org's", async () => {
    const w = await world();
    const mine = [await dataExport(w.member.id, null), await dataExport(w.member.id, null)];
    mine.push(await dataExport(w.member.id, null));
    await dataExport(w.admin.id, null);
    const orgs = [await dataExport(w.owner.id, w.orgId), await dataExport(w.owner.id, w.orgId)];
    orgs.push(await dataExport(w.owner.id, w.orgId));
    await dataExport(w.outsider.id, w.otherOrgId);
    expect(await pages(reader(w.member.token), "/api/me/exports", 2)).toEqual(newestFirst(mine, 2));
    const path = `/api/orgs/${w.orgId}/exports`;
    expect(await pages(reader(w.owner.token), path, 2)).toEqual(newestFirst(orgs, 2));
  });

  it("the org's assistant profiles", async () => {
    const w = await world();
    const ids = [await profileIn(w.orgId, w.owner.id), await profileIn(w.orgId, w.owner.id)];
    ids.push(await profileIn(w.orgId, w.admin.id, { versions: 2 }));
    await profileIn(w.otherOrgId, w.outsider.id);
    const path = `/api/orgs/${w.orgId}/profiles`;
    expect(await pages(reader(w.member.token), path, 2)).toEqual(newestFirst(ids, 2));
  });

  it("the org's invitations", async () => {
    const w = await world();
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await invitation(w.orgId, w.owner.id));
    await invitation(w.otherOrgId, w.outsider.id);
    const path = `/api/orgs/${w.orgId}/invitations`;
    expect(await pages(reader(w.admin.token), path, 2)).toEqual(newestFirst(ids, 2));
  });

  it("the org's apps, never a deleted one", async () => {
    const w = await world();
    const ids = [
      w.appId,
      await embedApp(w.orgId, w.projectId),
      await embedApp(w.orgId, w.projectId),
    ];
    await deleted("apps", await embedApp(w.orgId, w.projectId));
    await embedApp(w.otherOrgId, w.otherProjectId);
    const path = `/api/orgs/${w.orgId}/apps`;
    expect(await pages(reader(w.admin.token), path, 2)).toEqual(newestFirst(ids, 2));
  });

  it("a cursor none of them handed out is a 400 on query.cursor (lists test/adversarial.test.ts does not try)", async () => {
    const w = await world();
    const token = (await endUserToken(w, "bad-cursor")).accessToken;
    const asOwner = (path: string) => api("GET", path, { token: w.owner.token });
    const lists = [
      ["/api/me/exports", asOwner],
      [`/api/orgs/${w.orgId}/exports`, asOwner],
      [`/api/orgs/${w.orgId}/profiles`, asOwner],
      [`/api/projects/${w.projectId}/documents`, asOwner],
      ["/api/embed/sessions", (path: string) => asEndUser("GET", path, token)],
    ] as const;
    for (const [path, read] of lists) {
      for (const cursor of ["garbage", "usr_short", `prj_${"0".repeat(26)}x`]) {
        const res = await read(`${path}?cursor=${cursor}`);
        const field = (res.body as { error?: { field?: string } } | null)?.error?.field;
        expect([res.status, errorCode(res), field], `${path} ${cursor}`).toEqual([
          400,
          "invalid_request",
          "query.cursor",
        ]);
      }
    }
  });
});
