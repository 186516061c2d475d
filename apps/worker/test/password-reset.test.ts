import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { type ChatSocket, mustConnect } from "./chat.ts";
import {
  api,
  errorCode,
  inOneWindow,
  randomClientAddress,
  signUp,
  snapshot,
  uniqueEmail,
} from "./helpers.ts";
import { lastMailId, linkSecret, mailArrived, nextMail } from "./mail.ts";

/**
 * Password reset by mail (routes/account-recovery.ts, docs/2026-12-06-mail.md): the same answer for
 * every address, limits per address and per client, a single-use 30-minute link mailed with its
 * secret in the fragment, and a reset that ends every sign-in of the account.
 */

const NEW_PASSWORD = "a brand new long password";
const onboardingPath = (projectId: string) => `/agents/onboarding-agent/${projectId}`;

/** Each request from a client address of its own, unless the test is about one client. */
const ask = (email: string, ip = randomClientAddress()) =>
  api("POST", "/api/auth/password-reset", {
    body: { email },
    headers: { "cf-connecting-ip": ip },
  });
const confirm = (token: string, password = NEW_PASSWORD) =>
  api("POST", "/api/auth/password-reset/confirm", { body: { token, password } });
const login = (email: string, password: string) =>
  api<{ accessToken: string }>("POST", "/api/auth/login", { body: { email, password } });

async function resetLink(email: string, after?: string): Promise<string> {
  return linkSecret(
    await nextMail(email, "password_reset", after ? { after } : {}),
    "/reset-password",
  );
}

async function closedWithin(chat: ChatSocket, ms: number): Promise<number | null> {
  await chat.waitFor(() => chat.closed !== null, ms).catch(() => undefined);
  return chat.closed?.code ?? null;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? 0;

describe("asking for a password reset", () => {
  it("answers the same, in about the same time, for a known and an unknown address; only the known one gets mail", async () => {
    const ada = await signUp("reset-known");
    const unknown = uniqueEmail("reset-unknown");
    const before = await snapshot({ mail: false });
    const outboxBefore = await env.DB.prepare("SELECT COUNT(*) AS n FROM mail_outbox").first<{
      n: number;
    }>();
    const times = { known: [] as number[], unknown: [] as number[] };
    const answers: unknown[][] = [];
    for (let i = 0; i < 3; i++) {
      for (const [which, email] of [
        ["known", ada.email],
        ["unknown", unknown],
      ] as const) {
        const started = performance.now();
        const res = await ask(email);
        times[which].push(performance.now() - started);
        answers.push([res.status, res.body, [...res.headers].filter(([name]) => name !== "date")]);
      }
    }
    // One status, one body, the same headers, for both.
    expect(new Set(answers.map((a) => JSON.stringify(a.slice(0, 2))))).toEqual(
      new Set([JSON.stringify([202, { accepted: true }])]),
    );
    expect(new Set(answers.map((a) => JSON.stringify(a)))).toHaveProperty("size", 1);
    // The lookup happens after the answer: neither waits for it. (Loose bounds: the machine is
    // shared; what matters is that no step of the answer depends on the address.)
    expect(Math.abs(median(times.known) - median(times.unknown))).toBeLessThan(100);
    const mail = await nextMail(ada.email, "password_reset");
    expect(
      mail.links.some((url) => url.startsWith("https://parley.test/reset-password#rst_")),
    ).toBe(true);
    expect(await mailArrived(unknown, "password_reset", "0", 500)).toBe(false);
    // Nothing of the directory changed; the only rows written are the known account's link and mail.
    expect(await snapshot({ mail: false })).toEqual(before);
    const outboxAfter = await env.DB.prepare(
      "SELECT COUNT(*) AS n, COUNT(DISTINCT recipient) AS r FROM mail_outbox WHERE id > ?",
    )
      .bind("mail_0")
      .first<{ n: number; r: number }>();
    expect(outboxAfter?.n).toBeGreaterThan(outboxBefore?.n ?? 0);
    const toUnknown = await env.DB.prepare(
      "SELECT COUNT(*) AS n FROM mail_outbox WHERE recipient = ?",
    )
      .bind(unknown)
      .first<{ n: number }>();
    expect(toUnknown?.n).toBe(0);
  });

  it("is limited per address (3 a minute, known or not) and per client (10 a minute), before any lookup", async () => {
    await inOneWindow(20_000);
    const known = (await signUp("reset-limit")).email;
    const unknown = uniqueEmail("reset-limit-unknown");
    for (const email of [known, unknown]) {
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await ask(email)).status);
      expect(statuses).toEqual([202, 202, 202, 429]);
    }
    const refused = await ask(unknown);
    expect(refused.status).toBe(429);
    expect(errorCode(refused)).toBe("rate_limited");
    // One client asking for many addresses.
    const ip = randomClientAddress();
    const statuses = [];
    for (let i = 0; i < 11; i++) statuses.push((await ask(uniqueEmail("spray"), ip)).status);
    expect(statuses.slice(0, 10).every((s) => s === 202)).toBe(true);
    expect(statuses[10]).toBe(429);
    // The known address's three resets start after their answers (200 ms later): waited for, so
    // their rows land in this test and not in the next one's snapshot.
    const queued = async () =>
      (
        await env.DB.prepare(
          "SELECT COUNT(*) AS n FROM mail_outbox WHERE recipient = ? AND kind = 'password_reset'",
        )
          .bind(known)
          .first<{ n: number }>()
      )?.n ?? 0;
    for (let waited = 0; (await queued()) < 3 && waited < 5_000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await queued()).toBe(3);
  }, 60_000);

  it("refuses a malformed request with 400 and writes nothing", async () => {
    const before = await snapshot();
    for (const body of [{}, { email: "not an address" }, { email: "a@b.co", extra: 1 }]) {
      const res = await api("POST", "/api/auth/password-reset", { body });
      expect([res.status, errorCode(res)]).toEqual([400, "invalid_request"]);
    }
    expect(await snapshot()).toEqual(before);
  });
});

describe("resetting with the mailed link", () => {
  it("sets the password and ends every sign-in: refresh tokens, access tokens and open sockets", async () => {
    const ada = await signUp("reset-ada");
    const elsewhere = await login(ada.email, ada.password);
    const project = await api<{ id: string }>("POST", `/api/orgs/${ada.orgId}/projects`, {
      token: ada.accessToken,
      body: { name: "Reset" },
    });
    const chat = await mustConnect(onboardingPath(project.body.id), ada.accessToken);
    expect((await ask(ada.email)).status).toBe(202);
    const token = await resetLink(ada.email);
    const res = await confirm(token);
    expect(res.status).toBe(204);

    expect((await login(ada.email, ada.password)).status).toBe(401);
    expect((await login(ada.email, NEW_PASSWORD)).status).toBe(200);
    // Both sign-ins are over: access tokens (the token version moved) and refresh cookies.
    expect((await api("GET", "/api/me", { token: ada.accessToken })).status).toBe(401);
    expect((await api("GET", "/api/me", { token: elsewhere.body.accessToken })).status).toBe(401);
    const refresh = await api("POST", "/api/auth/refresh", {
      headers: { cookie: `parley_refresh=${ada.refreshCookie}` },
    });
    expect(refresh.status).toBe(401);
    // The socket that sign-in opened is closed (1013: its token is no longer good).
    expect(await closedWithin(chat, 2_000)).toBe(1013);
    // And the account is told.
    await nextMail(ada.email, "password_changed");
  });

  it("works once: a used link answers gone and changes nothing", async () => {
    const ada = await signUp("reset-once");
    await ask(ada.email);
    const token = await resetLink(ada.email);
    expect((await confirm(token)).status).toBe(204);
    const before = await snapshot();
    const again = await confirm(token, "yet another long password");
    expect([again.status, errorCode(again)]).toEqual([410, "gone"]);
    expect(await snapshot()).toEqual(before);
    expect((await login(ada.email, NEW_PASSWORD)).status).toBe(200);
  });

  it("works for 30 minutes: an expired link answers gone and changes nothing", async () => {
    const ada = await signUp("reset-late");
    await ask(ada.email);
    const token = await resetLink(ada.email);
    const row = await env.DB.prepare(
      "SELECT created_at, expires_at FROM account_tokens WHERE user_id = ? AND purpose = 'reset_password'",
    )
      .bind(ada.userId)
      .first<{ created_at: number; expires_at: number }>();
    expect((row?.expires_at ?? 0) - (row?.created_at ?? 0)).toBe(30 * 60 * 1000);
    await env.DB.prepare("UPDATE account_tokens SET expires_at = ? WHERE user_id = ?")
      .bind(Date.now() - 1, ada.userId)
      .run();
    const before = await snapshot();
    const late = await confirm(token);
    expect([late.status, errorCode(late)]).toEqual([410, "gone"]);
    expect(await snapshot()).toEqual(before);
    expect((await login(ada.email, ada.password)).status).toBe(200);
  });

  it("only the newest link works: an older one is superseded", async () => {
    const ada = await signUp("reset-newest");
    await ask(ada.email);
    const first = await resetLink(ada.email);
    const after = await lastMailId(ada.email);
    await ask(ada.email);
    const second = await resetLink(ada.email, after);
    expect(second).not.toBe(first);
    const old = await confirm(first);
    expect([old.status, errorCode(old)]).toEqual([410, "gone"]);
    expect((await login(ada.email, ada.password)).status).toBe(200);
    expect((await confirm(second)).status).toBe(204);
  });

  it("refuses a weak password (400) and keeps the link; an unknown or malformed link is refused too", async () => {
    const ada = await signUp("reset-weak");
    await ask(ada.email);
    const token = await resetLink(ada.email);
    const weak = await confirm(token, "short");
    expect([weak.status, errorCode(weak)]).toEqual([400, "invalid_request"]);
    const unknown = await confirm(`rst_${"A".repeat(43)}`);
    expect([unknown.status, errorCode(unknown)]).toEqual([410, "gone"]);
    const malformed = await confirm("not-a-token");
    expect([malformed.status, errorCode(malformed)]).toEqual([400, "invalid_request"]);
    // A verification link is not a reset link.
    const wrongKind = await confirm(`vfy_${"A".repeat(43)}`);
    expect([wrongKind.status, errorCode(wrongKind)]).toEqual([400, "invalid_request"]);
    expect((await confirm(token)).status).toBe(204);
  });

  it("two resets racing with one link: one wins, the other is gone", async () => {
    const ada = await signUp("reset-race");
    await ask(ada.email);
    const token = await resetLink(ada.email);
    const [a, b] = await Promise.all([
      confirm(token, "first racing password"),
      confirm(token, "second racing password"),
    ]);
    expect([a.status, b.status].sort()).toEqual([204, 410]);
    const winner = a.status === 204 ? "first racing password" : "second racing password";
    const loser = a.status === 204 ? "second racing password" : "first racing password";
    expect((await login(ada.email, winner)).status).toBe(200);
    expect((await login(ada.email, loser)).status).toBe(401);
  });

  it("proves the mailbox: an unverified account is verified by it and its sign-up grant arrives", async () => {
    const bo = await signUp("reset-unverified", { verified: false });
    const balance = async (token: string) =>
      (await api<{ availableMicros: number }>("GET", `/api/orgs/${bo.orgId}/billing`, { token }))
        .body.availableMicros;
    expect(await balance(bo.accessToken)).toBe(0);
    await ask(bo.email);
    expect((await confirm(await resetLink(bo.email))).status).toBe(204);
    const signedIn = await login(bo.email, NEW_PASSWORD);
    const me = await api<{ emailVerified: boolean }>("GET", "/api/me", {
      token: signedIn.body.accessToken,
    });
    expect(me.body.emailVerified).toBe(true);
    expect(await balance(signedIn.body.accessToken)).toBe(Number(env.SIGNUP_GRANT_MICROS));
  });

  it("a password change afterwards ends a reset link still unused", async () => {
    const ada = await signUp("reset-then-change");
    await ask(ada.email);
    const token = await resetLink(ada.email);
    const changed = await api("POST", "/api/me/password", {
      token: ada.accessToken,
      body: { currentPassword: ada.password, newPassword: "changed long password" },
    });
    expect(changed.status).toBe(204);
    const late = await confirm(token);
    expect([late.status, errorCode(late)]).toEqual([410, "gone"]);
    await nextMail(ada.email, "password_changed");
  });
});
