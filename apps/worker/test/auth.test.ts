import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ROTATION_GRACE_MS } from "../src/auth/refresh-tokens.ts";
import { api, errorCode, inOneWindow, snapshot, uniqueEmail } from "./helpers.ts";

const password = "correct horse battery";

async function signup(email = uniqueEmail(), extra: Record<string, unknown> = {}) {
  const res = await api<{ accessToken: string; user: { id: string; email: string; name: string } }>(
    "POST",
    "/api/auth/signup",
    { body: { email, password, name: "Ada", ...extra } },
  );
  expect(res.status).toBe(201);
  return { ...res, cookie: refreshCookie(res.headers) };
}

function refreshCookie(headers: Headers): string {
  const setCookie = headers.get("set-cookie") ?? "";
  const match = /parley_refresh=([^;]*)/.exec(setCookie);
  return match?.[1] ?? "";
}

const withCookie = (cookie: string) => ({ headers: { cookie: `parley_refresh=${cookie}` } });

describe("sign-up and login", () => {
  it("creates the user, their first org as owner, and signs them in", async () => {
    const email = uniqueEmail("ada");
    const res = await signup(email.toUpperCase(), { orgName: "Analytical" });
    expect(res.body.user).toEqual({ id: expect.stringMatching(/^usr_/), email, name: "Ada" });
    expect(res.body.accessToken.split(".")).toHaveLength(3);
    const setCookie = res.headers.get("set-cookie") ?? "";
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Strict/i);
    expect(setCookie).toMatch(/Path=\/api\/auth/);
    expect(setCookie).toMatch(/Secure/);

    const me = await api("GET", "/api/me", { token: res.body.accessToken });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({
      id: res.body.user.id,
      email,
      orgs: [{ name: "Analytical", role: "owner" }],
    });
  });

  it("stores a salted PBKDF2 hash, never the password", async () => {
    const a = await signup();
    const b = await signup();
    const rows = await env.DB.prepare("SELECT password_hash FROM users WHERE id IN (?, ?)")
      .bind(a.body.user.id, b.body.user.id)
      .all<{ password_hash: string }>();
    const [ha, hb] = rows.results.map((r) => r.password_hash);
    expect(ha).toMatch(/^pbkdf2-sha256\$100000\$/);
    expect(ha).not.toContain(password);
    expect(ha).not.toBe(hb);
  });

  it("refuses a second account with the same email, changing nothing", async () => {
    const email = uniqueEmail();
    await signup(email);
    const before = await snapshot();
    const res = await api("POST", "/api/auth/signup", { body: { email, password, name: "B" } });
    expect(res.status).toBe(409);
    expect(errorCode(res)).toBe("conflict");
    expect(await snapshot()).toEqual(before);
  });

  it("logs in with the right password and gives one generic error otherwise", async () => {
    const email = uniqueEmail();
    await signup(email);
    const ok = await api("POST", "/api/auth/login", { body: { email, password } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ user: { email } });

    const wrongPassword = await api("POST", "/api/auth/login", {
      body: { email, password: "nope-nope-nope" },
    });
    const wrongEmail = await api("POST", "/api/auth/login", {
      body: { email: uniqueEmail(), password },
    });
    expect(wrongPassword.status).toBe(401);
    expect(wrongEmail.status).toBe(401);
    expect(wrongPassword.body).toEqual(wrongEmail.body);
  });
});

describe("sign-in rate limit", () => {
  it("slows password guessing per email with rate_limited, leaving other accounts alone", async () => {
    await inOneWindow(20_000);
    const email = uniqueEmail("guessed");
    await signup(email);
    const codes: number[] = [];
    for (let i = 0; i < 12; i++) {
      codes.push(
        (await api("POST", "/api/auth/login", { body: { email, password: `wrong-guess-${i}` } }))
          .status,
      );
    }
    expect(codes.slice(0, 10).every((s) => s === 401)).toBe(true);
    expect(codes.slice(10)).toEqual([429, 429]);
    const limited = await api("POST", "/api/auth/login", { body: { email, password } });
    expect(limited.status).toBe(429);
    const other = uniqueEmail("other");
    await signup(other);
    expect(
      (await api("POST", "/api/auth/login", { body: { email: other, password } })).status,
    ).toBe(200);
  }, 90_000);
});

describe("refresh tokens", () => {
  it("refresh and logout take no body: a stray one is a 400 that rotates and revokes nothing", async () => {
    const start = await signup();
    for (const path of ["/api/auth/refresh", "/api/auth/logout"]) {
      const res = await api("POST", path, { ...withCookie(start.cookie), body: { foo: 1 } });
      expect(res.status, path).toBe(400);
      expect(errorCode(res)).toBe("invalid_request");
    }
    // The cookie was neither rotated nor revoked: it still refreshes, once.
    const res = await api("POST", "/api/auth/refresh", { ...withCookie(start.cookie), body: {} });
    expect(res.status).toBe(200);
  });

  it("rotates: the new cookie works, the old one is refused and revokes the family", async () => {
    const start = await signup();
    const first = await api("POST", "/api/auth/refresh", withCookie(start.cookie));
    expect(first.status).toBe(200);
    const second = refreshCookie(first.headers);
    expect(second).not.toBe(start.cookie);
    expect(second).not.toBe("");
    expect(first.body).toMatchObject({ user: { id: start.body.user.id } });

    // The rotated token is presented again after its grace window (see the adversarial suite for
    // the window itself): theft. The family dies, including the newest token.
    await env.DB.prepare(
      "UPDATE refresh_tokens SET rotated_at = rotated_at - ? WHERE user_id = ? AND rotated_at IS NOT NULL",
    )
      .bind(ROTATION_GRACE_MS, start.body.user.id)
      .run();
    const reuse = await api("POST", "/api/auth/refresh", withCookie(start.cookie));
    expect(reuse.status).toBe(401);
    expect(errorCode(reuse)).toBe("unauthorized");
    const afterReuse = await api("POST", "/api/auth/refresh", withCookie(second));
    expect(afterReuse.status).toBe(401);
  });

  it("stores refresh tokens hashed", async () => {
    const start = await signup();
    const row = await env.DB.prepare("SELECT token_hash FROM refresh_tokens WHERE user_id = ?")
      .bind(start.body.user.id)
      .first<{ token_hash: string }>();
    expect(row?.token_hash).toBeTruthy();
    expect(row?.token_hash).not.toBe(start.cookie);
  });

  it("logout revokes the family and clears the cookie", async () => {
    const start = await signup();
    const out = await api("POST", "/api/auth/logout", withCookie(start.cookie));
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toMatch(/parley_refresh=;/);
    const res = await api("POST", "/api/auth/refresh", withCookie(start.cookie));
    expect(res.status).toBe(401);
  });

  it("logout with only the access token ends the sign-in it names; a bad one is refused (found by the outside probe)", async () => {
    const email = uniqueEmail();
    const start = await signup(email);
    const token = start.body.accessToken;
    const other = await api<{ accessToken: string }>("POST", "/api/auth/login", {
      body: { email, password },
    });
    // A token that does not verify: 401, and nothing is revoked.
    const forged = await api("POST", "/api/auth/logout", { token: `${token.slice(0, -4)}AAAA` });
    expect(forged.status).toBe(401);
    expect((await api("GET", "/api/me", { token })).status).toBe(200);
    // The access token alone: its sign-in ends, its cookie with it; the other sign-in lives on.
    const out = await api("POST", "/api/auth/logout", { token });
    expect(out.status).toBe(204);
    expect((await api("GET", "/api/me", { token })).status).toBe(401);
    expect((await api("POST", "/api/auth/refresh", withCookie(start.cookie))).status).toBe(401);
    expect((await api("GET", "/api/me", { token: other.body.accessToken })).status).toBe(200);
    // Nothing to end (no cookie, no token): nothing is revoked, and that is what it says.
    expect((await api("POST", "/api/auth/logout")).status).toBe(204);
  });

  it("pairs the HttpOnly cookie with a readable marker holding no secret, cleared with it", async () => {
    // The web app tries a refresh on load only when the marker is there, so a signed-out visit
    // makes no request that fails.
    const start = await signup();
    const cookies = start.headers.getSetCookie();
    const marker = cookies.find((cookie) => cookie.startsWith("parley_signed_in="));
    expect(marker).toMatch(/^parley_signed_in=1; /);
    expect(marker).toMatch(/Path=\//);
    expect(marker).not.toMatch(/HttpOnly/i);
    expect(cookies.find((c) => c.startsWith("parley_refresh="))).toMatch(/HttpOnly/);
    const rotated = await api("POST", "/api/auth/refresh", withCookie(start.cookie));
    expect(rotated.headers.getSetCookie().some((c) => c.startsWith("parley_signed_in=1"))).toBe(
      true,
    );
    const leaver = await signup();
    for (const response of [
      await api("POST", "/api/auth/logout", withCookie(refreshCookie(rotated.headers))),
      // Deleting the account ends the sign-in too: no marker left to set off a refresh that 401s.
      await api("DELETE", "/api/me", { token: leaver.body.accessToken, body: { confirm: true } }),
      await api("POST", "/api/auth/refresh"),
      await api("POST", "/api/auth/refresh", withCookie("bogus")),
    ]) {
      expect(response.headers.getSetCookie()).toContainEqual(
        expect.stringMatching(/^parley_signed_in=; .*Path=\//),
      );
    }
  });

  it("refuses a missing or unknown refresh token", async () => {
    expect((await api("POST", "/api/auth/refresh")).status).toBe(401);
    expect((await api("POST", "/api/auth/refresh", withCookie("bogus"))).status).toBe(401);
  });

  it("refuses an expired refresh token", async () => {
    const start = await signup();
    await env.DB.prepare("UPDATE refresh_tokens SET expires_at = 0 WHERE user_id = ?")
      .bind(start.body.user.id)
      .run();
    expect((await api("POST", "/api/auth/refresh", withCookie(start.cookie))).status).toBe(401);
  });
});

describe("JWKS", () => {
  it("publishes the public key only", async () => {
    const res = await api<{ keys: Record<string, string>[] }>("GET", "/.well-known/jwks.json");
    expect(res.status).toBe(200);
    expect(res.body.keys).toHaveLength(1);
    const [key] = res.body.keys;
    expect(key).toMatchObject({ kty: "EC", crv: "P-256", alg: "ES256", use: "sig" });
    expect(key?.kid).toBeTruthy();
    expect(key).not.toHaveProperty("d");
  });
});
