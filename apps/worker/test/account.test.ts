import { describe, expect, it } from "vitest";
import { api, errorCode, inOneWindow, signUp, snapshot, uniqueEmail } from "./helpers.ts";

/**
 * A person changes their own account (routes/me.ts, 2026-12-02): their name and their password
 * (which ends every other sign-in). Their email changes through a link mailed to the new address
 * (2026-12-06, test/account-mail.test.ts).
 */

const PASSWORD = "a long enough password";
const withCookie = (cookie: string) => ({ headers: { cookie: `parley_refresh=${cookie}` } });
const login = (email: string, password: string) =>
  api("POST", "/api/auth/login", { body: { email, password } });

describe("the account", () => {
  it("changes its display name", async () => {
    const ada = await signUp("ada");
    const res = await api("PATCH", "/api/me", {
      token: ada.accessToken,
      body: { name: "Ada King" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: ada.userId, name: "Ada King", email: ada.email });
    expect((await api("GET", "/api/me", { token: ada.accessToken })).body).toMatchObject({
      name: "Ada King",
    });
  });

  it("no longer changes its email in place: a new address is verified first (POST /api/me/email)", async () => {
    const ada = await signUp("ada");
    const next = uniqueEmail("ada-new");
    const before = await snapshot();
    const refused = [
      // No password (the schema), and with it: a different address is not taken here.
      await api("PATCH", "/api/me", { token: ada.accessToken, body: { email: next } }),
      await api("PATCH", "/api/me", {
        token: ada.accessToken,
        body: { email: next, currentPassword: PASSWORD },
      }),
      await api("PATCH", "/api/me", {
        token: ada.accessToken,
        body: { email: "nope", currentPassword: PASSWORD },
      }),
      await api("PATCH", "/api/me", { token: ada.accessToken, body: {} }),
    ];
    expect(refused.map((res) => [res.status, errorCode(res)])).toEqual([
      [400, "invalid_request"],
      [400, "invalid_request"],
      [400, "invalid_request"],
      [400, "invalid_request"],
    ]);
    expect((refused[1]?.body as { error?: { field?: string } } | undefined)?.error?.field).toBe(
      "email",
    );
    expect(await snapshot()).toEqual(before);
    expect((await login(ada.email, PASSWORD)).status).toBe(200);
    expect((await login(next, PASSWORD)).status).toBe(401);
    // The current address with a name is fine: nothing to verify.
    const same = await api("PATCH", "/api/me", {
      token: ada.accessToken,
      body: { name: "Ada L.", email: ada.email, currentPassword: PASSWORD },
    });
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ name: "Ada L.", email: ada.email, emailVerified: true });
  });

  it("changes its password: the old one stops, other sign-ins end, this one stays", async () => {
    const ada = await signUp("ada");
    // A second sign-in elsewhere (another device, or whoever knew the old password).
    const elsewhere = await login(ada.email, PASSWORD);
    const elsewhereToken = (elsewhere.body as { accessToken: string }).accessToken;
    const elsewhereCookie =
      /parley_refresh=([^;]+)/.exec(elsewhere.headers.get("set-cookie") ?? "")?.[1] ?? "";

    const wrong = await api("POST", "/api/me/password", {
      token: ada.accessToken,
      body: { currentPassword: "not the password", newPassword: "another long password" },
    });
    expect(wrong.status).toBe(403);
    const weak = await api("POST", "/api/me/password", {
      token: ada.accessToken,
      body: { currentPassword: PASSWORD, newPassword: "short" },
    });
    expect(weak.status).toBe(400);
    expect((await login(ada.email, PASSWORD)).status).toBe(200);

    const changed = await api("POST", "/api/me/password", {
      token: ada.accessToken,
      body: { currentPassword: PASSWORD, newPassword: "another long password" },
    });
    expect(changed.status).toBe(204);
    expect((await login(ada.email, PASSWORD)).status).toBe(401);
    expect((await login(ada.email, "another long password")).status).toBe(200);
    // The other sign-in is over: its access token and its refresh cookie are refused.
    expect((await api("GET", "/api/me", { token: elsewhereToken })).status).toBe(401);
    expect((await api("POST", "/api/auth/refresh", withCookie(elsewhereCookie))).status).toBe(401);
    // This one goes on.
    expect((await api("GET", "/api/me", { token: ada.accessToken })).status).toBe(200);
    expect((await api("POST", "/api/auth/refresh", withCookie(ada.refreshCookie))).status).toBe(
      200,
    );
  });

  it("limits password checks like sign-in guesses: 429 after ten a minute, nothing changed", async () => {
    const ada = await signUp("ada");
    await inOneWindow(20_000);
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await api("POST", "/api/me/password", {
        token: ada.accessToken,
        body: { currentPassword: `guess ${i}`, newPassword: "another long password" },
      });
      statuses.push(res.status);
    }
    expect(statuses.slice(0, 10).every((status) => status === 403)).toBe(true);
    expect(statuses.slice(10)).toEqual([429, 429]);
    expect((await login(ada.email, PASSWORD)).status).toBe(200);
  }, 90_000);
});
