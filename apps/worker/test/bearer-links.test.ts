import { env } from "cloudflare:test";
import type { DataExport, EmbedToken, Session } from "@parley/shared";
import { describe, expect, it } from "vitest";
import { connectTicket, upgrade } from "./chat.ts";
import {
  addMembership,
  api,
  BASE,
  errorCode,
  finishExport,
  person,
  signUp,
  snapshot,
  world,
} from "./helpers.ts";

/**
 * A link dies with its holder (issue 28.3; docs/2026-12-06-bearer-links.md): every bearer secret
 * the platform hands out (an export's download link, an invitation link, a connect ticket) is
 * checked at use against the standing of the person it was issued to, not only when it was made.
 * A dead link answers as a missing one (or 410 where that is the contract) and changes nothing.
 */

const count = async (sql: string, ...bindings: unknown[]) =>
  (
    await env.DB.prepare(sql)
      .bind(...bindings)
      .first<{ n: number }>()
  )?.n ?? -1;

const downloads = (exportId: string) =>
  count(
    "SELECT COUNT(*) AS n FROM audit_log WHERE action = 'export.downloaded' AND subject_id = ?",
    exportId,
  );

/** An org export requested by `token`'s owner, finished, with its link. */
async function orgExportLink(orgId: string, token: string): Promise<{ id: string; path: string }> {
  const started = await api<DataExport>("POST", `/api/orgs/${orgId}/exports`, { token });
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  await finishExport(started.body.id);
  const done = await api<DataExport>("GET", `/api/orgs/${orgId}/exports/${started.body.id}`, {
    token,
  });
  expect(done.body.downloadUrl).toMatch(/\/download\?key=/);
  return { id: started.body.id, path: (done.body.downloadUrl ?? "").slice(BASE.length) };
}

describe("an export's download link dies with its holder", () => {
  it("a second owner removed: their org export is 404 at once, and the refusal writes nothing (found by the outside probe)", async () => {
    const w = await world();
    const second = await person("second-owner");
    await addMembership(w.orgId, second.id, "owner");
    const link = await orgExportLink(w.orgId, second.token);
    const before = await api("GET", link.path);
    expect(before.status).toBe(200);
    // The probe's measure: the archive holds the org's data (it read 5,970 bytes of it).
    expect(JSON.stringify(before.body).length).toBeGreaterThan(1000);
    expect(await downloads(link.id)).toBe(1);
    const removed = await api("DELETE", `/api/orgs/${w.orgId}/members/${second.id}`, {
      token: w.owner.token,
    });
    expect(removed.status).toBe(204);
    const state = await snapshot();
    const after = await api("GET", link.path);
    expect(after.status).toBe(404);
    expect(errorCode(after)).toBe("not_found");
    // The same answer as a link that never existed.
    const missing = await api("GET", `/api/exports/${link.id}/download?key=${"x".repeat(43)}`);
    expect(after.body).toEqual(missing.body);
    expect(await downloads(link.id)).toBe(1);
    expect(await snapshot()).toEqual(state);
  });

  it("an owner demoted to admin loses the link too; promoted again, it works (the link needs an owner now, not then)", async () => {
    const w = await world();
    const second = await person("second-owner");
    await addMembership(w.orgId, second.id, "owner");
    const link = await orgExportLink(w.orgId, second.token);
    const demoted = await api("PATCH", `/api/orgs/${w.orgId}/members/${second.id}`, {
      token: w.owner.token,
      body: { role: "admin" },
    });
    expect(demoted.status).toBe(200);
    expect((await api("GET", link.path)).status).toBe(404);
    await env.DB.prepare("UPDATE memberships SET role = 'owner' WHERE org_id = ? AND user_id = ?")
      .bind(w.orgId, second.id)
      .run();
    expect((await api("GET", link.path)).status).toBe(200);
  });

  it("an account whose erasure is filed: its own export's link is dead before the job reaches it", async () => {
    const w = await world();
    const started = await api<DataExport>("POST", "/api/me/exports", { token: w.member.token });
    await finishExport(started.body.id);
    const done = await api<DataExport>("GET", `/api/me/exports/${started.body.id}`, {
      token: w.member.token,
    });
    const path = (done.body.downloadUrl ?? "").slice(BASE.length);
    expect((await api("GET", path)).status).toBe(200);
    // Filed, not yet run: the tombstone is what the API sees first.
    await env.DB.prepare(
      `INSERT INTO tombstones (subject_id, subject_type, org_id, request_id, erased_at)
       VALUES (?, 'account', NULL, 'era_test', ?)`,
    )
      .bind(w.member.id, Date.now())
      .run();
    expect((await api("GET", path)).status).toBe(404);
    expect(await downloads(started.body.id)).toBe(1);
  });
});

interface Created {
  url: string;
}

async function inviteLink(token: string, orgId: string, email: string, role = "member") {
  const res = await api<Created>("POST", `/api/orgs/${orgId}/invitations`, {
    token,
    body: { email, role },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return new URL(res.body.url).hash.slice(1);
}

const previewOf = (secret: string) =>
  api("POST", "/api/auth/invitations/preview", { body: { token: secret } });
const acceptWith = (secret: string, token: string) =>
  api("POST", "/api/invitations/accept", { token, body: { token: secret } });

describe("an invitation link dies with its maker's rights", () => {
  it("an admin erased: the links they made no longer let anyone in (they stayed open before)", async () => {
    const w = await world();
    const invitee = await signUp("invitee");
    const secret = await inviteLink(w.admin.token, w.orgId, invitee.email);
    expect((await previewOf(secret)).status).toBe(200);
    const filed = await api<{ status: string }>("POST", `/api/orgs/${w.orgId}/erasure-requests`, {
      token: w.owner.token,
      body: { subject: { type: "member", id: w.admin.id } },
    });
    expect(filed.status, JSON.stringify(filed.body)).toBe(202);
    const state = await snapshot();
    const preview = await previewOf(secret);
    expect(preview.status).toBe(410);
    expect(errorCode(preview)).toBe("gone");
    const accepted = await acceptWith(secret, invitee.accessToken);
    expect(accepted.status).toBe(410);
    expect(await snapshot()).toEqual(state);
    expect(
      await count(
        "SELECT COUNT(*) AS n FROM memberships WHERE org_id = ? AND user_id = ?",
        w.orgId,
        invitee.userId,
      ),
    ).toBe(0);
  });

  it("checked at use, whatever closed the maker's rights: a maker demoted or removed behind the API's back opens nothing", async () => {
    const w = await world();
    const invitee = await signUp("invitee");
    const secret = await inviteLink(w.admin.token, w.orgId, invitee.email);
    // Not through the API (which also closes the links as it writes): the link itself must know.
    await env.DB.prepare("UPDATE memberships SET role = 'member' WHERE org_id = ? AND user_id = ?")
      .bind(w.orgId, w.admin.id)
      .run();
    const state = await snapshot();
    const refused = await acceptWith(secret, invitee.accessToken);
    expect(refused.status).toBe(410);
    expect(await snapshot()).toEqual(state);
    expect((await previewOf(secret)).status).toBe(410);
    // The role back: the link is good again (it was never revoked, only unusable).
    await env.DB.prepare("UPDATE memberships SET role = 'admin' WHERE org_id = ? AND user_id = ?")
      .bind(w.orgId, w.admin.id)
      .run();
    expect((await previewOf(secret)).status).toBe(200);
    // An owner's invitation to the owner role needs an owner: as an admin, its maker grants no owner.
    const ownerInvitee = await signUp("owner-invitee");
    const ownerLink = await inviteLink(w.owner.token, w.orgId, ownerInvitee.email, "owner");
    await env.DB.prepare("UPDATE memberships SET role = 'admin' WHERE org_id = ? AND user_id = ?")
      .bind(w.orgId, w.owner.id)
      .run();
    expect((await acceptWith(ownerLink, ownerInvitee.accessToken)).status).toBe(410);
    await env.DB.prepare("DELETE FROM memberships WHERE org_id = ? AND user_id = ?")
      .bind(w.orgId, w.admin.id)
      .run();
    expect((await acceptWith(secret, invitee.accessToken)).status).toBe(410);
  });
});

const PAGE = "https://shop.example";

describe("a connect ticket opens nothing once its holder lost standing", () => {
  async function ticketThen(change: () => Promise<void>, path: string, token: string) {
    const ticket = await connectTicket(path, token);
    if (!ticket.ok) throw new Error(`ticket refused: ${ticket.status}`);
    await change();
    return upgrade(path, { query: { ticket: ticket.ticket } });
  }

  it("a member's ticket: their sign-in revoked, their membership gone", async () => {
    const w = await world();
    const path = `/agents/assistant-agent/${w.sessionId}`;
    const member = await signUp("ticket-holder");
    await addMembership(w.orgId, member.userId, "member");
    const own = await api<Session>("POST", `/api/projects/${w.projectId}/sessions`, {
      token: member.accessToken,
      body: {},
    });
    const ownPath = `/agents/assistant-agent/${own.body.id}`;
    const signedOut = await ticketThen(
      async () => {
        // Signed out with the access token alone: it names the sign-in (`sid`).
        const out = await api("POST", "/api/auth/logout", { token: member.accessToken });
        expect(out.status).toBe(204);
      },
      ownPath,
      member.accessToken,
    );
    expect(signedOut.status).toBe(401);
    const removed = await ticketThen(
      async () => {
        await env.DB.prepare("DELETE FROM memberships WHERE org_id = ? AND user_id = ?")
          .bind(w.orgId, w.member.id)
          .run();
      },
      path,
      w.member.token,
    );
    expect(removed.status).toBe(404);
  });

  it("an end user's ticket: the end user erased, their app deleted", async () => {
    const w = await world();
    const endUser = async (sub: string) => {
      const minted = await api<EmbedToken>("POST", `/api/apps/${w.appId}/end-user-tokens`, {
        token: w.apiKey.secret,
        body: { sub },
      });
      const token = minted.body.accessToken;
      const session = await api<Session>("POST", "/api/embed/sessions", {
        token,
        body: {},
        headers: { origin: PAGE },
      });
      const ticket = await api<{ ticket: string }>("POST", "/api/embed/connect-tickets", {
        token,
        body: { sessionId: session.body.id },
        headers: { origin: PAGE },
      });
      expect(ticket.status).toBe(201);
      return { id: minted.body.endUser.id, session: session.body.id, ticket: ticket.body.ticket };
    };
    const open = (who: { session: string; ticket: string }) =>
      upgrade(`/agents/assistant-agent/${who.session}`, {
        query: { ticket: who.ticket },
        headers: { origin: PAGE },
      });
    const erased = await endUser("erased-1");
    await env.DB.prepare(
      `INSERT INTO tombstones (subject_id, subject_type, org_id, request_id, erased_at)
       VALUES (?, 'member', ?, 'era_test', ?)`,
    )
      .bind(erased.id, w.orgId, Date.now())
      .run();
    expect((await open(erased)).status).toBe(401);
    const orphan = await endUser("orphan-1");
    await env.DB.prepare("UPDATE apps SET deleted_at = ? WHERE id = ?")
      .bind(Date.now(), w.appId)
      .run();
    expect((await open(orphan)).status).toBe(401);
  });
});
