import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, apiWithVars, errorCode, signUp, snapshot, uniqueEmail } from "./helpers.ts";

/**
 * Invitations by link (routes/invitations.ts): someone without an account is invited with a role,
 * signs up with the invited email, and joins with the link, once. Wrong people, used, revoked and
 * expired links change nothing.
 */

interface Erasure {
  status: string;
  verification: { ok: boolean; findings: string[] } | null;
}
const COMPLETED = { status: "completed", verification: { ok: true, findings: [] } };

interface Created {
  id: string;
  email: string;
  role: string;
  status: string;
  url: string;
}

async function invite(token: string, orgId: string, email: string, role = "member") {
  const res = await api<Created>("POST", `/api/orgs/${orgId}/invitations`, {
    token,
    body: { email, role },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const secret = new URL(res.body.url).hash.slice(1);
  return { ...res.body, secret };
}

/** The link's secret travels in the body, never in a path a request log keeps. */
const previewOf = (secret: string) =>
  api("POST", "/api/auth/invitations/preview", { body: { token: secret } });
const acceptWith = (secret: string, token: string) =>
  api("POST", "/api/invitations/accept", { token, body: { token: secret } });

/** Someone with an account joins the org the only way there is: invited, and accepting. */
async function join(
  ownerToken: string,
  orgId: string,
  who: { email: string; accessToken: string },
  role = "member",
) {
  const { secret } = await invite(ownerToken, orgId, who.email, role);
  const accepted = await acceptWith(secret, who.accessToken);
  expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);
}

async function membersOf(token: string, orgId: string) {
  const res = await api<{ items: { userId: string; role: string }[] }>(
    "GET",
    `/api/orgs/${orgId}/members`,
    { token },
  );
  return res.body.items;
}

describe("invitations by link", () => {
  it("lets someone with no account sign up with the invited email and join with the role, once", async () => {
    const owner = await signUp("owner");
    const email = uniqueEmail("newcomer");
    const invitation = await invite(owner.accessToken, owner.orgId, email, "admin");
    expect(invitation).toMatchObject({ email, role: "admin", status: "pending" });
    // The secret is in the link's fragment, which browsers never send: no request log keeps it.
    expect(invitation.url).toMatch(/\/invite#inv_[A-Za-z0-9_-]{43}$/);
    // The secret is stored only as its hash.
    const stored = await env.DB.prepare("SELECT * FROM invitations WHERE id = ?")
      .bind(invitation.id)
      .first();
    expect(JSON.stringify(stored)).not.toContain(invitation.secret.slice(4));
    // Listed without the link.
    const list = await api<{ items: Record<string, unknown>[] }>(
      "GET",
      `/api/orgs/${owner.orgId}/invitations`,
      { token: owner.accessToken },
    );
    expect(list.body.items).toEqual([expect.objectContaining({ id: invitation.id })]);
    expect(list.body.items[0]).not.toHaveProperty("url");

    // Before signing in, the link says what it invites to.
    const preview = await previewOf(invitation.secret);
    expect(preview.status).toBe(200);
    expect(preview.body).toMatchObject({ email, role: "admin", orgName: expect.any(String) });

    const newcomer = await signUp("newcomer", { email });
    // Acceptance takes the secret and nothing else (a role or org is not read): refused, and
    // nobody joins.
    const stray = await api("POST", "/api/invitations/accept", {
      token: newcomer.accessToken,
      body: { token: invitation.secret, role: "owner" },
    });
    expect(stray.status).toBe(400);
    expect(errorCode(stray)).toBe("invalid_request");
    const accepted = await acceptWith(invitation.secret, newcomer.accessToken);
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);
    expect(accepted.body).toEqual({ orgId: owner.orgId, role: "admin" });
    expect(await membersOf(owner.accessToken, owner.orgId)).toContainEqual(
      expect.objectContaining({ userId: newcomer.userId, role: "admin" }),
    );

    // Used: the same link opens nothing again, and says so.
    const again = await acceptWith(invitation.secret, newcomer.accessToken);
    expect(again.status).toBe(410);
    expect((await previewOf(invitation.secret)).status).toBe(410);
  });

  it("refuses another account, a revoked link and an expired one, changing nothing", async () => {
    const owner = await signUp("owner");
    const email = uniqueEmail("invited");
    const invitation = await invite(owner.accessToken, owner.orgId, email);
    const lateEmail = uniqueEmail("late");
    const other = await invite(owner.accessToken, owner.orgId, lateEmail);

    // A forwarded link does not let another account in.
    const stranger = await signUp("stranger");
    let before = await snapshot();
    const wrong = await acceptWith(invitation.secret, stranger.accessToken);
    expect(wrong.status).toBe(403);
    expect(errorCode(wrong)).toBe("forbidden");
    expect(await snapshot()).toEqual(before);

    // Revoked: refused at once.
    const revoked = await api("DELETE", `/api/orgs/${owner.orgId}/invitations/${invitation.id}`, {
      token: owner.accessToken,
    });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ status: "revoked" });
    const invited = await signUp("invited", { email });
    before = await snapshot();
    const late = await acceptWith(invitation.secret, invited.accessToken);
    expect(late.status).toBe(410);
    expect(await snapshot()).toEqual(before);

    // Expired: refused.
    await env.DB.prepare("UPDATE invitations SET expires_at = ? WHERE id = ?")
      .bind(Date.now() - 1, other.id)
      .run();
    const tardy = await signUp("late", { email: lateEmail });
    const expired = await acceptWith(other.secret, tardy.accessToken);
    expect(expired.status).toBe(410);
    const members = await membersOf(owner.accessToken, owner.orgId);
    for (const who of [invited, tardy]) {
      expect(members).not.toContainEqual(expect.objectContaining({ userId: who.userId }));
    }

    // Unknown and malformed secrets are 404, like a missing invitation.
    for (const secret of [`inv_${"A".repeat(43)}`, "inv_short", "x"]) {
      expect((await previewOf(secret)).status).toBe(404);
    }
  });

  it("takes the secret only in the body; the first forms, with it in the path, still answer until their end (deprecated)", async () => {
    const owner = await signUp("owner");
    const email = uniqueEmail("pathform");
    const first = await invite(owner.accessToken, owner.orgId, email);
    const newcomer = await signUp("pathform", { email });
    const before = await snapshot();
    // No secret, a secret of another type, or no body: 400 invalid_request, and nothing changes.
    for (const body of [{}, { token: "" }, { token: 42 }, { secret: first.secret }, undefined]) {
      const preview = await api("POST", "/api/auth/invitations/preview", { body });
      expect(preview.status, JSON.stringify(body)).toBe(400);
      expect(errorCode(preview)).toBe("invalid_request");
      const accept = await api("POST", "/api/invitations/accept", {
        token: newcomer.accessToken,
        body,
      });
      expect(accept.status, JSON.stringify(body)).toBe(400);
      expect(errorCode(accept)).toBe("invalid_request");
    }
    // Accepting needs a signed-in caller, whatever the body holds.
    const anonymous = await api("POST", "/api/invitations/accept", {
      body: { token: first.secret },
    });
    expect(anonymous.status).toBe(401);
    expect(await snapshot()).toEqual(before);

    // Links sent before the change: the path forms answer as they did until their last day
    // (INVITATION_PATH_FORMS_END), saying so in their headers; after it, 410 and nothing changes.
    const until = (day: string) => ({ INVITATION_PATH_FORMS_END: day });
    const old = await apiWithVars(
      until("2999-12-31"),
      "GET",
      `/api/auth/invitations/${first.secret}`,
    );
    expect(old.status).toBe(200);
    expect(old.body).toEqual((await previewOf(first.secret)).body);
    expect(old.headers.get("deprecation")).toBe(`@${Date.parse("2026-12-04") / 1000}`);
    expect(old.headers.get("sunset")).toBe("Wed, 01 Jan 3000 00:00:00 GMT");
    expect(old.headers.get("link")).toBe(
      '</api/auth/invitations/preview>; rel="successor-version"',
    );
    const ended = { day: "2000-01-01" };
    const gone = await apiWithVars(
      until(ended.day),
      "GET",
      `/api/auth/invitations/${first.secret}`,
    );
    expect(gone.status).toBe(410);
    expect(errorCode(gone)).toBe("gone");
    const goneAccept = await apiWithVars(
      until(ended.day),
      "POST",
      `/api/invitations/${first.secret}/accept`,
      { token: newcomer.accessToken },
    );
    expect(goneAccept.status).toBe(410);
    expect(await snapshot()).toEqual(before);
    const accepted = await apiWithVars(
      until("2999-12-31"),
      "POST",
      `/api/invitations/${first.secret}/accept`,
      { token: newcomer.accessToken },
    );
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);
    expect((await acceptWith(first.secret, newcomer.accessToken)).status).toBe(410);
  });

  it("the path forms' last day is a config value with a documented default, 2026-12-18: they answer through it and are gone the instant after", async () => {
    const { config } = await import("../src/env.ts");
    const { deprecatedForm } = await import("../src/http/deprecated.ts");
    const end = config({ ...env } as Env).pathFormsEnd.invitationSecret;
    expect(new Date(end).toISOString()).toBe("2026-12-19T00:00:00.000Z");
    expect(
      config({ ...env, INVITATION_PATH_FORMS_END: "" } as Env).pathFormsEnd.invitationSecret,
    ).toBe(end);
    const form = { deprecatedAt: "2026-12-04", endsAt: end, successor: "/x" };
    const headers = new Map<string, string>();
    const c = { header: (name: string, value: string) => headers.set(name, value) };
    // An injected clock on both sides of the end: the last millisecond of 2026-12-18 still answers.
    expect(() => deprecatedForm(c as never, form, end - 1)).not.toThrow();
    expect(() => deprecatedForm(c as never, form, end)).toThrow(/ended on 2026-12-18/);
    expect(headers.get("sunset")).toBe("Sat, 19 Dec 2026 00:00:00 GMT");
  });

  it("never adds an account unasked: it gets a link too, the same answer as for no account (found by the outside probe)", async () => {
    const owner = await signUp("owner");
    const known = await signUp("known");
    const unknownEmail = uniqueEmail("unknown");
    for (const path of ["invitations", "members"]) {
      const before = await membersOf(owner.accessToken, owner.orgId);
      const forKnown = await api<Created>("POST", `/api/orgs/${owner.orgId}/${path}`, {
        token: owner.accessToken,
        body: { email: known.email, role: "admin" },
      });
      const forUnknown = await api<Created>("POST", `/api/orgs/${owner.orgId}/${path}`, {
        token: owner.accessToken,
        body: { email: unknownEmail, role: "admin" },
      });
      expect(forKnown.status, JSON.stringify(forKnown.body)).toBe(201);
      expect(forUnknown.status).toBe(201);
      expect(forKnown.body).toMatchObject({ email: known.email, role: "admin", status: "pending" });
      expect(forKnown.body.url).toMatch(/\/invite#inv_/);
      // Nothing tells the inviter whether an email has an account.
      expect(Object.keys(forKnown.body).sort()).toEqual(Object.keys(forUnknown.body).sort());
      expect(forUnknown.body.status).toBe("pending");
      // Nobody joined.
      expect(await membersOf(owner.accessToken, owner.orgId)).toEqual(before);
    }
    // The account joins when it accepts the (latest) link, with the role.
    const invitation = await invite(owner.accessToken, owner.orgId, known.email, "admin");
    const accepted = await acceptWith(invitation.secret, known.accessToken);
    expect(accepted.status).toBe(201);
    expect(await membersOf(owner.accessToken, owner.orgId)).toContainEqual(
      expect.objectContaining({ userId: known.userId, role: "admin" }),
    );
  });

  it("does not let an account squatting on an invited email in without the link", async () => {
    const owner = await signUp("owner");
    // Parley verifies no address: anyone can sign up as the person an admin will invite.
    const squatter = await signUp("squatter", { email: uniqueEmail("cfo") });
    const before = await snapshot();
    const res = await api<Created>("POST", `/api/orgs/${owner.orgId}/members`, {
      token: owner.accessToken,
      body: { email: squatter.email, role: "admin" },
    });
    expect(res.status).toBe(201);
    // The org is not theirs to open: the link went to the inviter, to send to the real mailbox.
    const orgs = await api<{ items: { id: string }[] }>("GET", "/api/orgs", {
      token: squatter.accessToken,
    });
    expect(orgs.body.items.map((org) => org.id)).not.toContain(owner.orgId);
    expect(
      (await api("GET", `/api/orgs/${owner.orgId}/projects`, { token: squatter.accessToken }))
        .status,
    ).toBe(404);
    const after = await snapshot();
    expect(after.memberships).toEqual(before.memberships);
  });

  it("lets only owners invite owners, and not an existing member, and checks the email", async () => {
    const owner = await signUp("owner");
    const admin = await signUp("admin");
    await join(owner.accessToken, owner.orgId, admin, "admin");
    const before = await snapshot();
    const ownerInvite = await api("POST", `/api/orgs/${owner.orgId}/invitations`, {
      token: admin.accessToken,
      body: { email: uniqueEmail("boss"), role: "owner" },
    });
    expect(ownerInvite.status).toBe(403);
    const member = await api("POST", `/api/orgs/${owner.orgId}/invitations`, {
      token: owner.accessToken,
      body: { email: admin.email, role: "member" },
    });
    expect(member.status).toBe(409);
    const bad = await api("POST", `/api/orgs/${owner.orgId}/invitations`, {
      token: owner.accessToken,
      body: { email: "not an email", role: "member" },
    });
    expect(bad.status).toBe(400);
    expect(await snapshot()).toEqual(before);
  });

  it("are erased with the person they name and with the org", async () => {
    const owner = await signUp("owner");
    const email = uniqueEmail("gone");
    const invitation = await invite(owner.accessToken, owner.orgId, email);
    const invited = await signUp("gone", { email });
    // The invited person erases their account: the invitation to their email goes with it.
    const erased = await api<Erasure>("DELETE", "/api/me", {
      token: invited.accessToken,
      body: { confirm: true },
    });
    // Completed, its verification scan (every D1 table, for the email) clean.
    expect(erased.body, JSON.stringify(erased.body)).toMatchObject(COMPLETED);
    const left = await env.DB.prepare("SELECT COUNT(*) AS n FROM invitations WHERE id = ?")
      .bind(invitation.id)
      .first<{ n: number }>();
    expect(left?.n).toBe(0);

    // The owner's own erasure takes the org they alone belong to, and its invitations.
    await invite(owner.accessToken, owner.orgId, uniqueEmail("later"));
    const ownerErased = await api<Erasure>("DELETE", "/api/me", {
      token: owner.accessToken,
      body: { confirm: true },
    });
    expect(ownerErased.body, JSON.stringify(ownerErased.body)).toMatchObject(COMPLETED);
    const orgLeft = await env.DB.prepare("SELECT COUNT(*) AS n FROM invitations WHERE org_id = ?")
      .bind(owner.orgId)
      .first<{ n: number }>();
    expect(orgLeft?.n).toBe(0);
  });

  it("leaves no way back in: one live link per person, links close on joining, removal and erasure", async () => {
    const owner = await signUp("owner");
    const email = uniqueEmail("carl");
    // Two links for one person: the second (a lower role) replaces the first.
    const asAdmin = await invite(owner.accessToken, owner.orgId, email, "admin");
    const asMember = await invite(owner.accessToken, owner.orgId, email, "member");
    expect((await previewOf(asAdmin.secret)).status).toBe(410);
    const carl = await signUp("carl", { email });
    expect((await acceptWith(asMember.secret, carl.accessToken)).status).toBe(201);
    // Carl leaves: the old admin link does not bring him back.
    expect(
      (
        await api("DELETE", `/api/orgs/${owner.orgId}/members/${carl.userId}`, {
          token: carl.accessToken,
        })
      ).status,
    ).toBe(204);
    expect((await acceptWith(asAdmin.secret, carl.accessToken)).status).toBe(410);

    // An admin cannot plant a link to another spelling of their own address.
    const dan = await signUp("dan", { email: uniqueEmail("dan") });
    await join(owner.accessToken, owner.orgId, dan, "admin");
    const [local, domain] = dan.email.split("@");
    const planted = await api("POST", `/api/orgs/${owner.orgId}/invitations`, {
      token: dan.accessToken,
      body: { email: `${local}+backdoor@${domain}`, role: "admin" },
    });
    expect(planted.status).toBe(409);
    // What a removed admin invited goes with them; so do links to a removed member's address.
    const eve = uniqueEmail("eve");
    const fromDan = await invite(dan.accessToken, owner.orgId, eve, "admin");
    const danLink = await invite(owner.accessToken, owner.orgId, uniqueEmail("spare"), "member");
    expect(
      (
        await api("DELETE", `/api/orgs/${owner.orgId}/members/${dan.userId}`, {
          token: owner.accessToken,
        })
      ).status,
    ).toBe(204);
    expect((await previewOf(fromDan.secret)).status).toBe(410);
    // The owner's own invitation to someone else is untouched.
    expect((await previewOf(danLink.secret)).status).toBe(200);
  });

  it("a member's erasure takes the invitations to any spelling of their address", async () => {
    const owner = await signUp("owner");
    const gus = await signUp("gus", { email: uniqueEmail("gus") });
    const [local, domain] = gus.email.split("@");
    const tagged = await invite(owner.accessToken, owner.orgId, `${local}+tag@${domain}`, "admin");
    await join(owner.accessToken, owner.orgId, gus);
    // Joined by another link: the pending one to another spelling of them is revoked already.
    expect((await previewOf(tagged.secret)).status).toBe(410);
    const filed = await api<Erasure>("POST", `/api/orgs/${owner.orgId}/erasure-requests`, {
      token: owner.accessToken,
      body: { subject: { type: "member", id: gus.userId } },
    });
    expect(filed.body, JSON.stringify(filed.body)).toMatchObject(COMPLETED);
    const left = await env.DB.prepare("SELECT COUNT(*) AS n FROM invitations WHERE id = ?")
      .bind(tagged.id)
      .first<{ n: number }>();
    expect(left?.n).toBe(0);
  });

  it("builds the link on PUBLIC_URL, whatever Host the request names", async () => {
    const owner = await signUp("owner");
    const res = await api<Created>("POST", `/api/orgs/${owner.orgId}/invitations`, {
      token: owner.accessToken,
      headers: { host: "evil.example" },
      body: { email: uniqueEmail("host"), role: "member" },
    });
    expect(res.status).toBe(201);
    expect(new URL(res.body.url).origin).toBe("https://parley.test");
  });

  it("takes the invited address exactly: a +tag of it does not accept (found by the outside probe)", async () => {
    const owner = await signUp("owner");
    const email = uniqueEmail("carol");
    const invitation = await invite(owner.accessToken, owner.orgId, email);
    const [local, domain] = email.split("@");
    const tagged = await signUp("carol-tagged", { email: `${local}+evil@${domain}` });
    const before = await snapshot();
    const res = await acceptWith(invitation.secret, tagged.accessToken);
    expect(res.status).toBe(403);
    expect(await snapshot()).toEqual(before);
  });

  it("closes a demoted admin's pending links: they no longer grant what the admin could", async () => {
    const owner = await signUp("owner");
    const dave = await signUp("dave");
    await join(owner.accessToken, owner.orgId, dave, "admin");
    const link = await invite(dave.accessToken, owner.orgId, uniqueEmail("kate"), "admin");
    const demoted = await api("PATCH", `/api/orgs/${owner.orgId}/members/${dave.userId}`, {
      token: owner.accessToken,
      body: { role: "member" },
    });
    expect(demoted.status, JSON.stringify(demoted.body)).toBe(200);
    const preview = await previewOf(link.secret);
    expect(preview.status).toBe(410);
  });

  it("leaves a removed or demoted admin no link made while it happened, and one live link per person under racing invitations (found by the outside probe)", async () => {
    const pendingMadeBy = async (orgId: string, userId: string) =>
      (
        await env.DB.prepare(
          `SELECT COUNT(*) AS n FROM invitations WHERE org_id = ? AND invited_by = ?
           AND accepted_at IS NULL AND revoked_at IS NULL`,
        )
          .bind(orgId, userId)
          .first<{ n: number }>()
      )?.n;
    for (const change of ["remove", "demote"] as const) {
      for (let round = 0; round < 3; round++) {
        const owner = await signUp("owner");
        const mal = await signUp("mal");
        await join(owner.accessToken, owner.orgId, mal, "admin");
        // The admin keeps invitations in flight while the owner removes or demotes them.
        const invites = Array.from({ length: 8 }, () =>
          api("POST", `/api/orgs/${owner.orgId}/invitations`, {
            token: mal.accessToken,
            body: { email: uniqueEmail("alt"), role: "admin" },
          }),
        );
        const member = `/api/orgs/${owner.orgId}/members/${mal.userId}`;
        const changed =
          change === "remove"
            ? api("DELETE", member, { token: owner.accessToken })
            : api("PATCH", member, { token: owner.accessToken, body: { role: "member" } });
        const answers = await Promise.all([changed, ...invites]);
        expect(answers[0]?.status).toBe(change === "remove" ? 204 : 200);
        // Each invitation either was refused or made a link the change closed. A role change also
        // ends the demoted admin's tokens (token version): a request checked after it is 401.
        for (const res of answers.slice(1)) expect([201, 401, 403, 404]).toContain(res.status);
        expect(await pendingMadeBy(owner.orgId, mal.userId)).toBe(0);
      }
    }

    // Ten invitations of one person at once, in two roles: one live link, the last made.
    const owner = await signUp("owner");
    const email = uniqueEmail("raced");
    const made = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        api<Created>("POST", `/api/orgs/${owner.orgId}/invitations`, {
          token: owner.accessToken,
          body: { email, role: i % 2 === 0 ? "member" : "admin" },
        }),
      ),
    );
    for (const res of made) expect(res.status).toBe(201);
    const live = await env.DB.prepare(
      `SELECT COUNT(*) AS n FROM invitations WHERE org_id = ? AND email = ?
       AND accepted_at IS NULL AND revoked_at IS NULL`,
    )
      .bind(owner.orgId, email)
      .first<{ n: number }>();
    expect(live?.n).toBe(1);
  }, 120_000);
});
