import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { billingAccount } from "../src/billing/account.ts";
import { mustConnect } from "./chat.ts";
import {
  api,
  apiWithVars,
  errorCode,
  inOneWindow,
  randomClientAddress,
  signUp,
  snapshot,
  uniqueEmail,
  world,
} from "./helpers.ts";
import { lastMailId, linkSecret, mailArrived, nextMail } from "./mail.ts";

/**
 * Email verification and the account's address (docs/2026-12-06-mail.md): sign-up mails a link,
 * the sign-up grant waits for it (the free preview does not), and a new address replaces the old
 * one only once a link mailed to it is used, with a notice to the old one.
 */

const verify = (token: string) => api("POST", "/api/auth/verify-email", { body: { token } });
const me = (token: string) =>
  api<{ email: string; emailVerified: boolean; signupGrantWaits: boolean }>("GET", "/api/me", {
    token,
  });
const available = async (orgId: string, token: string) =>
  (await api<{ availableMicros: number }>("GET", `/api/orgs/${orgId}/billing`, { token })).body
    .availableMicros;
const login = (email: string, password: string) =>
  api<{ accessToken: string }>("POST", "/api/auth/login", { body: { email, password } });
const GRANT = () => Number(env.SIGNUP_GRANT_MICROS);

describe("email verification at sign-up", () => {
  it("mails a link; until it is used the account has the free preview but no credits; using it gives the grant once", async () => {
    const ada = await signUp("verify-ada", { verified: false });
    expect((await me(ada.accessToken)).body).toMatchObject({
      emailVerified: false,
      signupGrantWaits: true,
    });
    expect(await available(ada.orgId, ada.accessToken)).toBe(0);
    // The free onboarding preview works unverified (it costs the org nothing).
    const project = await api<{ id: string }>("POST", `/api/orgs/${ada.orgId}/projects`, {
      token: ada.accessToken,
      body: { name: "Preview" },
    });
    const preview = await mustConnect(
      `/agents/onboarding-agent/${project.body.id}`,
      ada.accessToken,
    );
    const turn = await preview.turn("Hello, what can you do?");
    expect(turn.text.length).toBeGreaterThan(0);
    expect(turn.metadata.code).toBeUndefined();
    preview.close();
    // A paid turn finds nothing to spend: the grant has not been given.
    const session = await api<{ id: string }>("POST", `/api/projects/${project.body.id}/sessions`, {
      token: ada.accessToken,
      body: {},
    });
    const chat = await mustConnect(`/agents/assistant-agent/${session.body.id}`, ada.accessToken);
    // Refused at admission (no reply): the org has nothing to pay with.
    expect((await chat.turn("Spend something")).parleyError).toMatchObject({
      code: "insufficient_credits",
    });
    chat.close();

    const mail = await nextMail(ada.email, "verify_email");
    expect(mail.subject).toBe("Confirm your email address for Parley");
    expect(mail.text).toContain("Your organization's free credits arrive once it is confirmed.");
    const token = linkSecret(mail, "/verify-email");
    expect(token).toMatch(/^vfy_/);
    const used = await verify(token);
    expect(used.status).toBe(200);
    expect(used.body).toEqual({ email: ada.email, changed: false, signupGrant: true });
    expect((await me(ada.accessToken)).body).toMatchObject({
      emailVerified: true,
      signupGrantWaits: false,
    });
    expect(await available(ada.orgId, ada.accessToken)).toBe(GRANT());

    // Once: a second use is gone, and changes nothing (no second grant).
    const before = await snapshot();
    const again = await verify(token);
    expect([again.status, errorCode(again)]).toEqual([410, "gone"]);
    expect(await snapshot()).toEqual(before);
    expect(await available(ada.orgId, ada.accessToken)).toBe(GRANT());
  });

  it("a resent link supersedes the older one; an expired one is gone; a verified account is refused a resend", async () => {
    const bo = await signUp("verify-resend", { verified: false });
    const first = linkSecret(await nextMail(bo.email, "verify_email"), "/verify-email");
    const after = await lastMailId(bo.email);
    const resend = await api("POST", "/api/me/email-verification", { token: bo.accessToken });
    expect([resend.status, resend.body]).toEqual([202, { accepted: true }]);
    const second = linkSecret(await nextMail(bo.email, "verify_email", { after }), "/verify-email");
    expect(second).not.toBe(first);
    const old = await verify(first);
    expect([old.status, errorCode(old)]).toEqual([410, "gone"]);
    expect((await me(bo.accessToken)).body.emailVerified).toBe(false);

    await env.DB.prepare("UPDATE account_tokens SET expires_at = ? WHERE user_id = ?")
      .bind(Date.now() - 1, bo.userId)
      .run();
    const late = await verify(second);
    expect([late.status, errorCode(late)]).toEqual([410, "gone"]);
    expect((await me(bo.accessToken)).body.emailVerified).toBe(false);

    const beforeThird = await lastMailId(bo.email);
    const third = await api("POST", "/api/me/email-verification", { token: bo.accessToken });
    expect(third.status).toBe(202);
    const fresh = linkSecret(
      await nextMail(bo.email, "verify_email", { after: beforeThird }),
      "/verify-email",
    );
    expect((await verify(fresh)).status).toBe(200);
    const verified = await api("POST", "/api/me/email-verification", { token: bo.accessToken });
    expect([verified.status, errorCode(verified)]).toEqual([409, "conflict"]);
  });

  it("limits resends to 3 a minute per account, and refuses a malformed link with 400", async () => {
    await inOneWindow(15_000);
    const cy = await signUp("verify-limit", { verified: false });
    const statuses = [];
    for (let i = 0; i < 4; i++) {
      statuses.push(
        (await api("POST", "/api/me/email-verification", { token: cy.accessToken })).status,
      );
    }
    expect(statuses).toEqual([202, 202, 202, 429]);
    const before = await snapshot();
    for (const token of ["", "vfy_short", `rst_${"A".repeat(43)}`, `vfy_${"A".repeat(43)}x`]) {
      const res = await verify(token);
      expect([res.status, errorCode(res)]).toEqual([400, "invalid_request"]);
    }
    const unknown = await verify(`vfy_${"A".repeat(43)}`);
    expect([unknown.status, errorCode(unknown)]).toEqual([410, "gone"]);
    expect(await snapshot()).toEqual(before);
  }, 90_000);

  it("the grant stays once per person: a second account at another spelling of a verified address gets none", async () => {
    const base = `grant-${crypto.randomUUID().slice(0, 8)}`;
    const first = await signUp("grant-first", { email: `${base}@gmail.com` });
    expect(await available(first.orgId, first.accessToken)).toBe(GRANT());
    const variant = await signUp("grant-variant", {
      email: `${base.replace("-", ".-")}+x@gmail.com`,
      verified: false,
    });
    // Nothing waits for this account: the person had their grant, and neither the mail, the
    // answer to its link nor GET /api/me promises one.
    expect((await me(variant.accessToken)).body.signupGrantWaits).toBe(false);
    const mail = await nextMail(variant.email, "verify_email");
    expect(mail.text).not.toContain("credits");
    const used = await verify(linkSecret(mail, "/verify-email"));
    expect([used.status, used.body.signupGrant]).toEqual([200, false]);
    expect((await me(variant.accessToken)).body.emailVerified).toBe(true);
    expect(await available(variant.orgId, variant.accessToken)).toBe(0);
  });
});

describe("a sign-up grant that expires (SIGNUP_GRANT_DAYS)", () => {
  it("counts its days from the verification that gives it, not from the sign-up", async () => {
    const vars = { SIGNUP_GRANT_DAYS: "7" };
    const email = uniqueEmail("grant-days");
    const made = await apiWithVars<{ accessToken: string }>(vars, "POST", "/api/auth/signup", {
      body: { email, password: "a long enough password", name: "Gia" },
      headers: { "cf-connecting-ip": randomClientAddress() },
    });
    expect(made.status).toBe(201);
    const orgId =
      (await api<{ orgs: { id: string }[] }>("GET", "/api/me", { token: made.body.accessToken }))
        .body.orgs[0]?.id ?? "";
    expect((await billingAccount(env, orgId).summary()).grants).toEqual([]);
    const token = linkSecret(await nextMail(email, "verify_email"), "/verify-email");
    const verifiedAt = Date.now();
    const used = await apiWithVars(vars, "POST", "/api/auth/verify-email", { body: { token } });
    expect(used.status).toBe(200);
    const [grant] = (await billingAccount(env, orgId).summary()).grants;
    expect(grant).toMatchObject({ source: "signup", remainingMicros: GRANT() });
    const expires = Date.parse(grant?.expiresAt ?? "");
    expect(expires).toBeGreaterThanOrEqual(verifiedAt + 7 * 86_400_000);
    expect(expires).toBeLessThan(Date.now() + 7 * 86_400_000 + 1);
  });
});

describe("changing the email", () => {
  const change = (token: string, newEmail: string, password: string) =>
    api("POST", "/api/me/email", { token, body: { newEmail, password } });

  it("mails a link to the new address and a notice to the old; the change happens when the link is used, once", async () => {
    const ada = await signUp("change-ada");
    const next = uniqueEmail("change-next");
    const before = await snapshot({ mail: false });
    const res = await change(ada.accessToken, next.toUpperCase(), ada.password);
    expect([res.status, res.body]).toEqual([202, { accepted: true }]);
    // Nothing changes until the new address proves itself (only a link and its mails are new).
    expect(await snapshot({ mail: false })).toEqual(before);
    expect((await me(ada.accessToken)).body.email).toBe(ada.email);
    const notice = await nextMail(ada.email, "email_change_notice");
    expect(notice.text).toContain(`${next[0]}•••@example.test`);
    expect(notice.text).not.toContain(next);
    const mail = await nextMail(next, "email_change");
    const token = linkSecret(mail, "/verify-email");
    expect(token).toMatch(/^eml_/);
    const used = await verify(token);
    expect([used.status, used.body]).toEqual([
      200,
      { email: next, changed: true, signupGrant: false },
    ]);
    expect((await me(ada.accessToken)).body).toMatchObject({ email: next, emailVerified: true });
    expect((await login(next, ada.password)).status).toBe(200);
    expect((await login(ada.email, ada.password)).status).toBe(401);
    const again = await verify(token);
    expect([again.status, errorCode(again)]).toEqual([410, "gone"]);
  });

  it("refuses a wrong password (403), its own address (400) and bad input (400), changing nothing", async () => {
    const ada = await signUp("change-refused");
    const next = uniqueEmail("change-refused-next");
    const after = await lastMailId(next);
    const before = await snapshot();
    const refused = [
      await change(ada.accessToken, next, "not the password"),
      await change(ada.accessToken, ada.email, ada.password),
      await change(ada.accessToken, "nope", ada.password),
      await api("POST", "/api/me/email", { token: ada.accessToken, body: { newEmail: next } }),
      await api("POST", "/api/me/email", { body: { newEmail: next, password: ada.password } }),
    ];
    expect(refused.map((r) => [r.status, errorCode(r)])).toEqual([
      [403, "forbidden"],
      [400, "invalid_request"],
      [400, "invalid_request"],
      [400, "invalid_request"],
      [401, "unauthorized"],
    ]);
    expect(await snapshot()).toEqual(before);
    expect(await mailArrived(next, "email_change", after, 500)).toBe(false);
  });

  it("answers the same for an address another account has, and tells only that address's owner", async () => {
    const ada = await signUp("change-taken");
    const bob = await signUp("change-owner");
    const res = await change(ada.accessToken, bob.email, ada.password);
    expect([res.status, res.body]).toEqual([202, { accepted: true }]);
    const taken = await nextMail(bob.email, "email_taken");
    expect(taken.links.every((url) => !url.includes("#"))).toBe(true);
    expect(await mailArrived(bob.email, "email_change", "0", 500)).toBe(false);
    expect((await me(ada.accessToken)).body.email).toBe(ada.email);
  });

  it("an address taken between the request and the link answers 409 and changes nothing", async () => {
    const ada = await signUp("change-race");
    const next = uniqueEmail("change-race-next");
    await change(ada.accessToken, next, ada.password);
    const token = linkSecret(await nextMail(next, "email_change"), "/verify-email");
    await signUp("change-race-squatter", { email: next, verified: false });
    const before = await snapshot();
    const res = await verify(token);
    expect([res.status, errorCode(res)]).toEqual([409, "conflict"]);
    expect(await snapshot()).toEqual(before);
    expect((await me(ada.accessToken)).body.email).toBe(ada.email);
  });

  it("a change link expires (gone, nothing changes); asking is limited with the resends, 3 a minute per account", async () => {
    await inOneWindow(15_000);
    const ada = await signUp("change-expiry");
    const next = uniqueEmail("change-expiry-next");
    expect((await change(ada.accessToken, next, ada.password)).status).toBe(202);
    const token = linkSecret(await nextMail(next, "email_change"), "/verify-email");
    await env.DB.prepare(
      "UPDATE account_tokens SET expires_at = ? WHERE user_id = ? AND purpose = 'change_email'",
    )
      .bind(Date.now() - 1, ada.userId)
      .run();
    const before = await snapshot();
    const late = await verify(token);
    expect([late.status, errorCode(late)]).toEqual([410, "gone"]);
    expect(await snapshot()).toEqual(before);
    expect((await me(ada.accessToken)).body.email).toBe(ada.email);
    // Two more asks fill the minute's three; the fourth is refused, issues no link, mails nothing.
    let after = await lastMailId(next);
    for (let i = 0; i < 2; i++) {
      expect((await change(ada.accessToken, next, ada.password)).status).toBe(202);
      after = (await nextMail(next, "email_change", { after })).id;
    }
    const full = await snapshot();
    const refused = await change(ada.accessToken, next, ada.password);
    expect([refused.status, errorCode(refused)]).toEqual([429, "rate_limited"]);
    expect(await snapshot()).toEqual(full);
    expect(await mailArrived(next, "email_change", after, 500)).toBe(false);
  }, 90_000);

  it("a password change cancels a pending email change", async () => {
    const ada = await signUp("change-cancel");
    const next = uniqueEmail("change-cancel-next");
    await change(ada.accessToken, next, ada.password);
    const token = linkSecret(await nextMail(next, "email_change"), "/verify-email");
    const changed = await api("POST", "/api/me/password", {
      token: ada.accessToken,
      body: { currentPassword: ada.password, newPassword: "another long password" },
    });
    expect(changed.status).toBe(204);
    const late = await verify(token);
    expect([late.status, errorCode(late)]).toEqual([410, "gone"]);
    expect((await me(ada.accessToken)).body.email).toBe(ada.email);
  });
});

describe("erasure of a person's mail", () => {
  it("takes their links and every mail record about them or to their address, and verification passes", async () => {
    const w = await world();
    const gone = await signUp("erase-mail");
    // A reset link, a change of address asked for, an invitation mailed to them.
    await api("POST", "/api/auth/password-reset", {
      body: { email: gone.email },
      headers: { "cf-connecting-ip": randomClientAddress() },
    });
    await nextMail(gone.email, "password_reset");
    await api("POST", "/api/me/email", {
      token: gone.accessToken,
      body: { newEmail: uniqueEmail("erase-mail-next"), password: gone.password },
    });
    const invited = await api("POST", `/api/orgs/${w.orgId}/invitations`, {
      token: w.owner.token,
      body: { email: gone.email, role: "member" },
    });
    expect(invited.status).toBe(201);
    await nextMail(gone.email, "invitation");
    const count = async () =>
      env.DB.prepare(
        `SELECT (SELECT COUNT(*) FROM mail_outbox WHERE user_id = ?1 OR recipient = ?2)
              + (SELECT COUNT(*) FROM account_tokens WHERE user_id = ?1) AS n`,
      )
        .bind(gone.userId, gone.email)
        .first<{ n: number }>();
    expect((await count())?.n).toBeGreaterThan(4);
    const erased = await api<{ status: string; verification: { ok: boolean; findings: string[] } }>(
      "DELETE",
      "/api/me",
      { token: gone.accessToken, body: { confirm: true } },
    );
    expect(erased.status).toBe(202);
    expect(erased.body.status).toBe("completed");
    expect(erased.body.verification).toMatchObject({ ok: true, findings: [] });
    expect((await count())?.n).toBe(0);
  }, 30_000);
});
