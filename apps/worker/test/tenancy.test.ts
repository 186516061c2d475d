import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  addMembership,
  api,
  errorCode,
  person,
  project,
  session,
  snapshot,
  world,
} from "./helpers.ts";

const auditActions = async (orgId: string) =>
  (
    await env.DB.prepare("SELECT action FROM audit_log WHERE org_id = ? ORDER BY id")
      .bind(orgId)
      .all<{
        action: string;
      }>()
  ).results.map((r) => r.action);

describe("members and roles", () => {
  it("an admin adds members and admins but not owners; an owner adds owners", async () => {
    const w = await world();
    const path = `/api/orgs/${w.orgId}/members`;
    const asOwner = await api("POST", path, {
      token: w.admin.token,
      body: { email: w.newcomer.email, role: "owner" },
    });
    expect(asOwner.status).toBe(403);
    const added = await api("POST", path, {
      token: w.admin.token,
      body: { email: w.newcomer.email, role: "admin" },
    });
    expect(added.status).toBe(201);
    // Adding is inviting: the newcomer gets a link and joins only by accepting it.
    expect(added.body).toMatchObject({
      role: "admin",
      email: w.newcomer.email,
      status: "pending",
      url: expect.stringMatching(/\/invite#inv_/),
    });
    const joined = await env.DB.prepare(
      "SELECT COUNT(*) AS n FROM memberships WHERE org_id = ? AND user_id = ?",
    )
      .bind(w.orgId, w.newcomer.id)
      .first<{ n: number }>();
    expect(joined?.n).toBe(0);
    const third = await person("third");
    const owner = await api("POST", path, {
      token: w.owner.token,
      body: { email: third.email, role: "owner" },
    });
    expect(owner.status).toBe(201);
  });

  it("adding an existing member is a conflict that leaves no trace; an unknown email is invited like any", async () => {
    const w = await world();
    const path = `/api/orgs/${w.orgId}/members`;
    const before = await snapshot();
    const dup = await api("POST", path, {
      token: w.owner.token,
      body: { email: w.member.email, role: "admin" },
    });
    expect(dup.status).toBe(409);
    expect(errorCode(dup)).toBe("conflict");
    expect(await snapshot()).toEqual(before);
    // No 404 for an email without an account: the answer would tell who has one.
    const unknown = await api("POST", path, {
      token: w.owner.token,
      body: { email: "ghost@example.test", role: "member" },
    });
    expect(unknown.status).toBe(201);
    expect(unknown.body).toMatchObject({ email: "ghost@example.test", status: "pending" });
    const member = await env.DB.prepare(
      "SELECT role FROM memberships WHERE org_id = ? AND user_id = ?",
    )
      .bind(w.orgId, w.member.id)
      .first<{ role: string }>();
    expect(member?.role).toBe("member");
  });

  it("a member cannot raise their own role; an admin cannot make themselves owner or touch an owner", async () => {
    const w = await world();
    const members = `/api/orgs/${w.orgId}/members`;
    const self = await api("PATCH", `${members}/${w.member.id}`, {
      token: w.member.token,
      body: { role: "admin" },
    });
    expect(self.status).toBe(403);
    const adminSelf = await api("PATCH", `${members}/${w.admin.id}`, {
      token: w.admin.token,
      body: { role: "owner" },
    });
    expect(adminSelf.status).toBe(403);
    const demoteOwner = await api("PATCH", `${members}/${w.owner.id}`, {
      token: w.admin.token,
      body: { role: "member" },
    });
    expect(demoteOwner.status).toBe(403);
    const removeOwner = await api("DELETE", `${members}/${w.owner.id}`, { token: w.admin.token });
    expect(removeOwner.status).toBe(403);
    const roles = await env.DB.prepare("SELECT user_id, role FROM memberships WHERE org_id = ?")
      .bind(w.orgId)
      .all<{ user_id: string; role: string }>();
    expect(Object.fromEntries(roles.results.map((r) => [r.user_id, r.role]))).toMatchObject({
      [w.owner.id]: "owner",
      [w.admin.id]: "admin",
      [w.member.id]: "member",
    });
  });

  it("the last owner can be neither demoted nor removed, until there is another owner", async () => {
    const w = await world();
    const me = `/api/orgs/${w.orgId}/members/${w.owner.id}`;
    const demote = await api("PATCH", me, { token: w.owner.token, body: { role: "admin" } });
    expect(demote.status).toBe(409);
    const leave = await api("DELETE", me, { token: w.owner.token });
    expect(leave.status).toBe(409);
    expect(await auditActions(w.orgId)).toEqual([]);

    const promote = await api("PATCH", `/api/orgs/${w.orgId}/members/${w.admin.id}`, {
      token: w.owner.token,
      body: { role: "owner" },
    });
    expect(promote.status).toBe(200);
    expect((await api("DELETE", me, { token: w.owner.token })).status).toBe(204);
    expect(await auditActions(w.orgId)).toEqual(["member.role_changed", "member.removed"]);
  });

  it("two owners demoting each other at once leave exactly one owner", async () => {
    const w = await world();
    await env.DB.prepare("UPDATE memberships SET role = 'owner' WHERE org_id = ? AND user_id = ?")
      .bind(w.orgId, w.admin.id)
      .run();
    const [a, b] = await Promise.all([
      api("PATCH", `/api/orgs/${w.orgId}/members/${w.admin.id}`, {
        token: w.owner.token,
        body: { role: "member" },
      }),
      api("PATCH", `/api/orgs/${w.orgId}/members/${w.owner.id}`, {
        token: w.admin.token,
        body: { role: "member" },
      }),
    ]);
    // Whichever lands second is refused: its caller's token by then predates their own demotion
    // (401), or by the role check (403) if the first already finished, or by the owner-count guard
    // inside the UPDATE (409) if they interleaved.
    const statuses = [a.status, b.status].sort();
    expect(statuses[0]).toBe(200);
    expect([401, 403, 409]).toContain(statuses[1]);
    const owners = await env.DB.prepare(
      "SELECT COUNT(*) AS n FROM memberships WHERE org_id = ? AND role = 'owner'",
    )
      .bind(w.orgId)
      .first<{ n: number }>();
    expect(owners?.n).toBe(1);
  });

  it("a member may leave, and loses access at once", async () => {
    const w = await world();
    const leave = await api("DELETE", `/api/orgs/${w.orgId}/members/${w.member.id}`, {
      token: w.member.token,
    });
    expect(leave.status).toBe(204);
    expect(
      (await api("GET", `/api/projects/${w.projectId}`, { token: w.member.token })).status,
    ).toBe(404);
    expect(
      (await api("GET", `/api/sessions/${w.sessionId}`, { token: w.member.token })).status,
    ).toBe(404);
  });

  it("lists members with pagination", async () => {
    const w = await world();
    const first = await api<{ items: { userId: string }[]; nextCursor: string }>(
      "GET",
      `/api/orgs/${w.orgId}/members?limit=3`,
      { token: w.member.token },
    );
    expect(first.status).toBe(200);
    expect(first.body.items).toHaveLength(3);
    const rest = await api<{ items: { userId: string }[]; nextCursor: string | null }>(
      "GET",
      `/api/orgs/${w.orgId}/members?limit=3&cursor=${first.body.nextCursor}`,
      { token: w.member.token },
    );
    expect(rest.body.items).toHaveLength(1);
    expect(rest.body.nextCursor).toBeNull();
    const ids = [...first.body.items, ...rest.body.items].map((m) => m.userId).sort();
    expect(ids).toEqual([w.owner.id, w.admin.id, w.member.id, w.otherMember.id].sort());
  });
});

describe("organizations", () => {
  it("creating an org makes the caller its owner, and lists it", async () => {
    const w = await world();
    const created = await api<{ id: string }>("POST", "/api/orgs", {
      token: w.member.token,
      body: { name: "Side" },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: "Side", role: "owner" });
    const list = await api<{ items: { id: string; role: string }[] }>("GET", "/api/orgs", {
      token: w.member.token,
    });
    expect(list.body.items.map((o) => [o.id, o.role]).sort()).toEqual(
      [
        [w.orgId, "member"],
        [created.body.id, "owner"],
      ].sort(),
    );
  });
});

describe("projects", () => {
  it("creates, reads, updates memory, and lists projects page by page", async () => {
    const w = await world();
    const ids: string[] = [];
    for (const name of ["a", "b", "c", "d"]) {
      const res = await api<{ id: string }>("POST", `/api/orgs/${w.orgId}/projects`, {
        token: w.member.token,
        body: { name, memory: { name } },
      });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    const patched = await api("PATCH", `/api/projects/${ids[0]}`, {
      token: w.member.token,
      body: { memory: { audience: "founders", steps: [1, 2] } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      name: "a",
      memory: { audience: "founders", steps: [1, 2] },
    });
    const read = await api("GET", `/api/projects/${ids[0]}`, { token: w.admin.token });
    expect(read.body).toMatchObject({ memory: { audience: "founders", steps: [1, 2] } });

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: { items: { id: string }[]; nextCursor: string | null } } =
        await api(
          "GET",
          `/api/orgs/${w.orgId}/projects?limit=2${cursor ? `&cursor=${cursor}` : ""}`,
          { token: w.member.token },
        );
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.items.map((p) => p.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen.sort()).toEqual([...ids, w.projectId].sort());
  });

  it("refuses a memory over the size limit with payload_too_large, changing nothing", async () => {
    const w = await world();
    const before = await snapshot();
    const big = { notes: "x".repeat(17 * 1024) };
    const res = await api("PATCH", `/api/projects/${w.projectId}`, {
      token: w.owner.token,
      body: { memory: big },
    });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ error: { code: "payload_too_large", field: "memory" } });
    const created = await api("POST", `/api/orgs/${w.orgId}/projects`, {
      token: w.owner.token,
      body: { name: "n", memory: big },
    });
    expect(created.status).toBe(413);
    expect(await snapshot()).toEqual(before);
  });

  it("a deleted project answers 410 and takes its sessions with it", async () => {
    const w = await world();
    expect(
      (await api("DELETE", `/api/projects/${w.projectId}`, { token: w.admin.token })).status,
    ).toBe(204);
    const read = await api("GET", `/api/projects/${w.projectId}`, { token: w.member.token });
    expect(read.status).toBe(410);
    expect(errorCode(read)).toBe("gone");
    expect(
      (await api("GET", `/api/sessions/${w.sessionId}`, { token: w.member.token })).status,
    ).toBe(410);
    expect(
      (
        await api("POST", `/api/projects/${w.projectId}/sessions`, {
          token: w.member.token,
          body: {},
        })
      ).status,
    ).toBe(410);
    const list = await api<{ items: { id: string }[] }>("GET", `/api/orgs/${w.orgId}/projects`, {
      token: w.member.token,
    });
    expect(list.body.items).toEqual([]);
    // A foreign caller still learns nothing: 404, not 410.
    expect(
      (await api("GET", `/api/projects/${w.projectId}`, { token: w.outsider.token })).status,
    ).toBe(404);
  });
});

describe("sessions", () => {
  it("belong to their creator: members list their own, admins list all", async () => {
    const w = await world();
    const mine = await api<{ id: string; ownerId: string }>(
      "POST",
      `/api/projects/${w.projectId}/sessions`,
      {
        token: w.otherMember.token,
        body: { title: "Mine" },
      },
    );
    expect(mine.status).toBe(201);
    expect(mine.body).toMatchObject({
      ownerId: w.otherMember.id,
      title: "Mine",
      projectId: w.projectId,
    });
    const list = (token: string) =>
      api<{ items: { id: string }[] }>("GET", `/api/projects/${w.projectId}/sessions`, { token });
    expect((await list(w.otherMember.token)).body.items.map((s) => s.id)).toEqual([mine.body.id]);
    expect((await list(w.member.token)).body.items.map((s) => s.id)).toEqual([w.sessionId]);
    expect((await list(w.admin.token)).body.items.map((s) => s.id).sort()).toEqual(
      [w.sessionId, mine.body.id].sort(),
    );
  });

  it("a deleted session answers 410 to its owner", async () => {
    const w = await world();
    expect(
      (await api("DELETE", `/api/sessions/${w.sessionId}`, { token: w.member.token })).status,
    ).toBe(204);
    expect(
      (await api("GET", `/api/sessions/${w.sessionId}`, { token: w.member.token })).status,
    ).toBe(410);
    expect(
      (await api("DELETE", `/api/sessions/${w.sessionId}`, { token: w.member.token })).status,
    ).toBe(410);
  });

  it("a new member sees the org's projects", async () => {
    const w = await world();
    await addMembership(w.orgId, w.newcomer.id, "member");
    const res = await api<{ items: { id: string }[] }>("GET", `/api/orgs/${w.orgId}/projects`, {
      token: w.newcomer.token,
    });
    expect(res.body.items.map((p) => p.id)).toEqual([w.projectId]);
  });
});

describe("sessions for the sidebar and the erasure picker", () => {
  type SessionList = {
    items: {
      id: string;
      ownerId: string;
      ownerLabel: string;
      title: string | null;
      updatedAt: string;
      spendMicros: number;
      projectId: string;
    }[];
    nextCursor: string | null;
  };

  it("lists the org's sessions with their owner's name: everyone's for admins, a member's own", async () => {
    const w = await world();
    const otherProject = await project(w.orgId, w.owner.id);
    const adminSession = await session(otherProject, w.orgId, w.admin.id);
    const path = `/api/orgs/${w.orgId}/sessions`;
    const all = await api<SessionList>("GET", path, { token: w.owner.token });
    expect(all.status).toBe(200);
    expect(all.body.items.map((s) => [s.id, s.ownerLabel, s.title, s.spendMicros])).toEqual([
      [adminSession, "admin", "S", 0],
      [w.sessionId, "member", "S", 0],
    ]);
    expect(all.body.items[0]).toMatchObject({ updatedAt: expect.any(String) });
    const byProject = await api<SessionList>("GET", `${path}?project=${w.projectId}`, {
      token: w.admin.token,
    });
    expect(byProject.body.items.map((s) => s.id)).toEqual([w.sessionId]);
    const byMember = await api<SessionList>("GET", `${path}?member=${w.admin.id}`, {
      token: w.admin.token,
    });
    expect(byMember.body.items.map((s) => s.id)).toEqual([adminSession]);
    const paged = await api<SessionList>("GET", `${path}?limit=1`, { token: w.owner.token });
    expect(paged.body.items.map((s) => s.id)).toEqual([adminSession]);
    const next = await api<SessionList>(
      "GET",
      `${path}?limit=1&cursor=${encodeURIComponent(paged.body.nextCursor ?? "")}`,
      { token: w.owner.token },
    );
    expect(next.body.items.map((s) => s.id)).toEqual([w.sessionId]);
    expect(next.body.nextCursor).toBeNull();

    // A member sees their own only, and may not ask for someone else's.
    const mine = await api<SessionList>("GET", path, { token: w.member.token });
    expect(mine.body.items.map((s) => s.id)).toEqual([w.sessionId]);
    const theirs = await api("GET", `${path}?member=${w.admin.id}`, { token: w.member.token });
    expect(theirs.status).toBe(403);
    for (const q of ["limit=0", "projectId=x", "unknown=1", "project="]) {
      const res = await api("GET", `${path}?${q}`, { token: w.owner.token });
      expect(res.status, q).toBe(400);
      expect(errorCode(res), q).toBe("invalid_request");
    }
    expect((await api("GET", path, { token: w.outsider.token })).status).toBe(404);
    // The project's own list names owners too.
    const projectList = await api<SessionList>("GET", `/api/projects/${w.projectId}/sessions`, {
      token: w.admin.token,
    });
    expect(projectList.body.items[0]).toMatchObject({ id: w.sessionId, ownerLabel: "member" });
  });

  it("renames a session by its owner only, with the rules of titles; others change nothing", async () => {
    const w = await world();
    const path = `/api/sessions/${w.sessionId}`;
    const renamed = await api<{ title: string; ownerLabel: string; updatedAt: string }>(
      "PATCH",
      path,
      { token: w.member.token, body: { title: "  Launch   plan  " } },
    );
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id: w.sessionId, ownerLabel: "member" });
    const title = renamed.body.title;
    expect((await api<{ title: string }>("GET", path, { token: w.member.token })).body.title).toBe(
      title,
    );
    const before = await snapshot();
    for (const [token, status] of [
      [w.admin.token, 403],
      [w.owner.token, 403],
      [w.otherMember.token, 404],
      [w.outsider.token, 404],
    ] as const) {
      const res = await api("PATCH", path, { token, body: { title: "Mine now" } });
      expect(res.status).toBe(status);
    }
    for (const body of [
      {},
      { title: "" },
      { title: "x".repeat(201) },
      { title: "bad\u202Etitle" },
      { title: 5 },
      { title: "ok", ownerId: w.admin.id },
    ]) {
      const res = await api("PATCH", path, { token: w.member.token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(errorCode(res)).toBe("invalid_request");
    }
    expect(await snapshot()).toEqual(before);
    expect((await api<{ title: string }>("GET", path, { token: w.member.token })).body.title).toBe(
      title,
    );
  });
});
