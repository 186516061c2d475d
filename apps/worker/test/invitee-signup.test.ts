import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, errorCode, signUp, snapshot, uniqueEmail } from "./helpers.ts";
import { linkSecret, nextMail } from "./mail.ts";

/**
 * Signing up through an invitation (2026-12-06): the invitee gets an account and no organization
 * of their own (no founder's org, no welcome grant), with the invited email only; the link is
 * then theirs to accept. Bad links and other addresses are refused before anything is written.
 */

async function invite(token: string, orgId: string, email: string, role = "member") {
  const res = await api<{ url: string }>("POST", `/api/orgs/${orgId}/invitations`, {
    token,
    body: { email, role },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return new URL(res.body.url).hash.slice(1);
}

const signUpWith = (body: Record<string, unknown>) =>
  api<{ accessToken: string; user: { id: string } }>("POST", "/api/auth/signup", { body });

describe("signing up through an invitation", () => {
  it("makes the account with no org of its own, and the link then joins it to the inviting org", async () => {
    const owner = await signUp("owner");
    const email = uniqueEmail("invitee");
    const secret = await invite(owner.accessToken, owner.orgId, email, "admin");
    const count = async (table: string) =>
      (await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table}`).first<{ n: number }>())?.n;
    const before = {
      users: await count("users"),
      orgs: await count("organizations"),
      grants: await count("signup_grants"),
    };
    const res = await signUpWith({
      email,
      password: "a long enough password",
      name: "Invited Person",
      invitation: secret,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(await count("users")).toBe((before.users ?? 0) + 1);
    expect(await count("organizations")).toBe(before.orgs);
    const me = await api<{ orgs: unknown[]; signupGrantWaits: boolean }>("GET", "/api/me", {
      token: res.body.accessToken,
    });
    expect(me.body.orgs).toEqual([]);
    // No grant waits for their address (the web's banner promises none).
    expect(me.body.signupGrantWaits).toBe(false);
    // Accepting joins the inviting org with the role: the one org they are in.
    const accepted = await api("POST", "/api/invitations/accept", {
      token: res.body.accessToken,
      body: { token: secret },
    });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);
    const joined = await api<{ orgs: { id: string; role: string }[] }>("GET", "/api/me", {
      token: res.body.accessToken,
    });
    expect(joined.body.orgs).toEqual([expect.objectContaining({ id: owner.orgId, role: "admin" })]);
    // No welcome grant was recorded for them (they founded nothing).
    expect(await count("signup_grants")).toBe(before.grants);
    // Their address is proven as any sign-up's is, by the link mailed to it; that gives no grant
    // either. (Here the invitation went out unmailed or not yet sent: see the next test.)
    const verification = await nextMail(email, "verify_email");
    expect(verification.text).not.toContain("credits");
    const verified = await api("POST", "/api/auth/verify-email", {
      body: { token: linkSecret(verification, "/verify-email") },
    });
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);
    expect(verified.body).toMatchObject({ signupGrant: false });
    const after = await api<{ emailVerified: boolean }>("GET", "/api/me", {
      token: res.body.accessToken,
    });
    expect(after.body.emailVerified).toBe(true);
    expect(await count("signup_grants")).toBe(before.grants);
  });

  it("joining through the invitation MAILED to the address proves it; a link never mailed does not (2026-12-06)", async () => {
    // A verified inviter: the invitation is mailed to the invitee.
    const owner = await signUp("owner");
    const email = uniqueEmail("mailedinvitee");
    const secret = await invite(owner.accessToken, owner.orgId, email);
    const mailed = await nextMail(email, "invitation");
    expect(linkSecret(mailed, "/invite")).toBe(secret);
    // The outbox records it sent once the mailbox has it.
    await expect
      .poll(
        async () =>
          (
            await env.DB.prepare("SELECT status FROM mail_outbox WHERE dedupe_key = ?")
              .bind(
                `invitation:${(await env.DB.prepare("SELECT id FROM invitations WHERE email = ?").bind(email).first<{ id: string }>())?.id}`,
              )
              .first<{ status: string }>()
          )?.status,
      )
      .toBe("sent");
    const res = await signUpWith({
      email,
      password: "a long enough password",
      name: "Mailed Invitee",
      invitation: secret,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const before = await api<{ emailVerified: boolean }>("GET", "/api/me", {
      token: res.body.accessToken,
    });
    expect(before.body.emailVerified).toBe(false);
    const accepted = await api("POST", "/api/invitations/accept", {
      token: res.body.accessToken,
      body: { token: secret },
    });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);
    const after = await api<{ emailVerified: boolean; orgs: unknown[] }>("GET", "/api/me", {
      token: res.body.accessToken,
    });
    expect(after.body.emailVerified).toBe(true);
    expect(after.body.orgs).toHaveLength(1);

    // An unverified inviter's invitation is not mailed (its link is only handed to them): joining
    // through it proves nothing about the mailbox.
    const unproven = await signUp("unverified-owner", { verified: false });
    const email2 = uniqueEmail("handedinvitee");
    const secret2 = await invite(unproven.accessToken, unproven.orgId, email2);
    const res2 = await signUpWith({
      email: email2,
      password: "a long enough password",
      name: "Handed Invitee",
      invitation: secret2,
    });
    expect(res2.status, JSON.stringify(res2.body)).toBe(201);
    const accepted2 = await api("POST", "/api/invitations/accept", {
      token: res2.body.accessToken,
      body: { token: secret2 },
    });
    expect(accepted2.status, JSON.stringify(accepted2.body)).toBe(201);
    const after2 = await api<{ emailVerified: boolean }>("GET", "/api/me", {
      token: res2.body.accessToken,
    });
    expect(after2.body.emailVerified).toBe(false);
  });

  it("refuses another address, an unknown or revoked link, and an org name beside it, writing nothing", async () => {
    const owner = await signUp("owner");
    const email = uniqueEmail("invitee");
    const secret = await invite(owner.accessToken, owner.orgId, email);
    const body = { email, password: "a long enough password", name: "Someone", invitation: secret };
    const before = await snapshot();
    const other = await signUpWith({ ...body, email: uniqueEmail("other") });
    expect(other.status).toBe(400);
    expect(errorCode(other)).toBe("invalid_request");
    const unknown = await signUpWith({ ...body, invitation: `inv_${"x".repeat(43)}` });
    expect(unknown.status).toBe(404);
    const withOrg = await signUpWith({ ...body, orgName: "My own" });
    expect(withOrg.status).toBe(400);
    expect(await snapshot()).toEqual(before);
    // Revoked by the owner: gone.
    const listed = await api<{ items: { id: string }[] }>(
      "GET",
      `/api/orgs/${owner.orgId}/invitations`,
      { token: owner.accessToken },
    );
    const id = listed.body.items[0]?.id ?? "";
    const revoked = await api("DELETE", `/api/orgs/${owner.orgId}/invitations/${id}`, {
      token: owner.accessToken,
    });
    expect(revoked.status).toBeLessThan(300);
    const afterRevoke = await snapshot();
    const gone = await signUpWith(body);
    expect(gone.status).toBe(410);
    expect(errorCode(gone)).toBe("gone");
    expect(await snapshot()).toEqual(afterRevoke);
  });
});
