import { describe, expect, it } from "vitest";
import { createEmbedClient } from "./client.ts";
import { apiError, type Call, fakeNetwork, json } from "./test-server.ts";
import type { TokenAnswer } from "./tokens.ts";
import { tokenUrlSource } from "./tokens.ts";

const PARLEY = "https://parley.example";
const me = {
  endUser: { id: "eu_1", externalId: "user-1", name: "Ada" },
  app: { id: "app_1", name: "Docs", showCost: false, projects: [{ id: "prj_1", name: "P" }] },
};

/** A Parley that exchanges `tenant-N` for `eu-token-N` and answers /me for any `eu-token-*`. */
function parley(options: { lifetime?: number; meStatus?: (call: Call) => number } = {}) {
  let minted = 0;
  const network = fakeNetwork((call) => {
    if (call.path === "/api/embed/token" && call.method === "POST") {
      minted += 1;
      return json({
        accessToken: `eu-token-${minted}`,
        expiresIn: options.lifetime ?? 900,
        endUser: { id: "eu_1", externalId: "user-1" },
      });
    }
    if (!call.headers.authorization?.startsWith("Bearer eu-token-"))
      return apiError(401, "unauthorized", "Missing token");
    if (call.path === "/api/embed/me") {
      const status = options.meStatus?.(call) ?? 200;
      return status === 200 ? json(me) : apiError(status, "unauthorized", "Token expired");
    }
    if (call.path === "/api/embed/connect-tickets")
      return json({ ticket: "ct_1", expiresAt: "2026-12-02T00:00:00Z" }, 201);
    return apiError(404, "not_found", "Not found");
  });
  return network;
}

function tenantTokens() {
  let n = 0;
  const getToken = async (): Promise<TokenAnswer> => {
    n += 1;
    return { token: `tenant-${n}` };
  };
  return { getToken, count: () => n };
}

describe("createEmbedClient", () => {
  it("exchanges a tenant token ({ token }) and sends the end-user token as a bearer", async () => {
    const network = parley();
    const client = createEmbedClient({
      appId: "app_1",
      parleyUrl: `${PARLEY}/`,
      getToken: tenantTokens().getToken,
      fetch: network.fetch,
    });
    const result = await client.me();
    expect(result).toEqual({ ok: true, data: me });
    const [exchange, call] = network.calls;
    expect(exchange).toMatchObject({
      method: "POST",
      url: `${PARLEY}/api/embed/token`,
      body: { appId: "app_1", token: "tenant-1" },
    });
    expect(call).toMatchObject({ url: `${PARLEY}/api/embed/me`, credentials: "omit" });
    expect(call?.headers.authorization).toBe("Bearer eu-token-1");
    expect(client.endUser()).toEqual({ id: "eu_1", externalId: "user-1" });
  });

  it("uses an access token the host minted ({ accessToken, expiresIn }) without an exchange", async () => {
    const network = parley();
    const client = createEmbedClient({
      appId: "app_1",
      parleyUrl: PARLEY,
      getToken: async () => ({ accessToken: "eu-token-minted", expiresIn: 900 }),
      fetch: network.fetch,
    });
    expect((await client.me()).ok).toBe(true);
    expect(network.calls.map((c) => c.path)).toEqual(["/api/embed/me"]);
    expect(network.calls[0]?.headers.authorization).toBe("Bearer eu-token-minted");
  });

  it("keeps a token for 80% of its life, then gets a new one before the next call", async () => {
    const network = parley({ lifetime: 100 });
    const source = tenantTokens();
    let clock = 1_000_000;
    const client = createEmbedClient({
      appId: "app_1",
      parleyUrl: PARLEY,
      getToken: source.getToken,
      fetch: network.fetch,
      now: () => clock,
    });
    await client.me();
    clock += 79_000;
    await client.me();
    expect(source.count()).toBe(1);
    clock += 2_000; // 81 s of 100
    await client.me();
    expect(source.count()).toBe(2);
    const bearers = network.calls
      .filter((c) => c.path === "/api/embed/me")
      .map((c) => c.headers.authorization);
    expect(bearers).toEqual(["Bearer eu-token-1", "Bearer eu-token-1", "Bearer eu-token-2"]);
  });

  it("on a 401 gets one new token and retries once, then reports unauthorized", async () => {
    // The first token is refused (revoked), the second accepted.
    const network = parley({
      meStatus: (call) => (call.headers.authorization === "Bearer eu-token-1" ? 401 : 200),
    });
    const source = tenantTokens();
    const client = createEmbedClient({
      appId: "app_1",
      parleyUrl: PARLEY,
      getToken: source.getToken,
      fetch: network.fetch,
    });
    expect(await client.me()).toEqual({ ok: true, data: me });
    expect(source.count()).toBe(2);

    // Always refused: exactly one retry, then the 401 as data.
    const refusing = parley({ meStatus: () => 401 });
    const again = tenantTokens();
    const stuck = createEmbedClient({
      appId: "app_1",
      parleyUrl: PARLEY,
      getToken: again.getToken,
      fetch: refusing.fetch,
    });
    const result = await stuck.me();
    expect(result).toEqual({
      ok: false,
      error: { code: "unauthorized", status: 401, message: "Token expired" },
    });
    expect(again.count()).toBe(2);
    expect(refusing.calls.filter((c) => c.path === "/api/embed/me")).toHaveLength(2);
  });

  it("shares one refresh between concurrent calls", async () => {
    const network = parley();
    const source = tenantTokens();
    const client = createEmbedClient({
      appId: "app_1",
      parleyUrl: PARLEY,
      getToken: source.getToken,
      fetch: network.fetch,
    });
    const results = await Promise.all([client.me(), client.me(), client.me()]);
    expect(results.every((r) => r.ok)).toBe(true);
    expect(source.count()).toBe(1);
  });

  it("asks for a connect ticket with a token good for five more minutes", async () => {
    const network = parley({ lifetime: 900 });
    const source = tenantTokens();
    let clock = 0;
    const client = createEmbedClient({
      appId: "app_1",
      parleyUrl: PARLEY,
      getToken: source.getToken,
      fetch: network.fetch,
      now: () => clock,
    });
    await client.me();
    clock = 11 * 60_000; // before 80% (12 min), but with 4 min left
    const ticket = await client.connectTicket("ses_1");
    expect(ticket).toEqual({ ok: true, data: { ticket: "ct_1", expiresAt: expect.any(String) } });
    expect(source.count()).toBe(2);
    expect(network.calls.at(-1)).toMatchObject({
      method: "POST",
      path: "/api/embed/connect-tickets",
      body: { sessionId: "ses_1" },
    });
  });

  it("reports the server's error body, a refused exchange and an unreachable server as data", async () => {
    const spending = fakeNetwork((call) =>
      call.path === "/api/embed/token"
        ? json({ accessToken: "eu-token-1", expiresIn: 900 })
        : apiError(402, "spend_limit", "Daily limit reached", { limitMicros: 5 }),
    );
    const client = createEmbedClient({
      appId: "app_1",
      parleyUrl: PARLEY,
      getToken: async () => ({ token: "t" }),
      fetch: spending.fetch,
    });
    expect(await client.createSession()).toEqual({
      ok: false,
      error: {
        code: "spend_limit",
        status: 402,
        message: "Daily limit reached",
        details: { limitMicros: 5 },
      },
    });

    const refused = fakeNetwork(() => apiError(401, "unauthorized", "Invalid end-user token"));
    const result = await createEmbedClient({
      appId: "app_1",
      parleyUrl: PARLEY,
      getToken: async () => ({ token: "forged" }),
      fetch: refused.fetch,
    }).me();
    expect(result).toMatchObject({ ok: false, error: { code: "unauthorized", status: 401 } });
    // A refused exchange is not retried: the tenant token would be refused again.
    expect(refused.calls).toHaveLength(1);

    const offline = fakeNetwork(() => undefined);
    expect(
      await createEmbedClient({
        appId: "app_1",
        parleyUrl: PARLEY,
        getToken: async () => ({ accessToken: "eu-token-1", expiresIn: 900 }),
        fetch: offline.fetch,
      }).sessions({ limit: 20 }),
    ).toMatchObject({ ok: false, error: { code: "network", status: 0 } });
    expect(offline.calls[0]?.path).toBe("/api/embed/sessions?limit=20");
  });

  it("refuses a token answer of neither shape", async () => {
    const network = parley();
    for (const answer of [{}, { accessToken: "x" }, { accessToken: "x", expiresIn: -1 }, null]) {
      const client = createEmbedClient({
        appId: "app_1",
        parleyUrl: PARLEY,
        getToken: async () => answer as unknown as TokenAnswer,
        fetch: network.fetch,
      });
      expect(await client.me()).toMatchObject({ ok: false, error: { code: "invalid_response" } });
    }
    expect(network.calls).toHaveLength(0);
  });
});

describe("tokenUrlSource", () => {
  it("POSTs to the host's URL with its cookies and reads the answer", async () => {
    const host = fakeNetwork((call) =>
      call.path === "/parley-token" ? json({ token: "tenant-jwt" }) : undefined,
    );
    await expect(tokenUrlSource("/parley-token", host.fetch)()).resolves.toEqual({
      token: "tenant-jwt",
    });
    expect(host.calls[0]).toMatchObject({ method: "POST", credentials: "include" });
  });

  it("turns a signed-out host (401 from the token URL) into token_unavailable", async () => {
    const network = fakeNetwork((call) =>
      call.path === "/parley-token" ? new Response("no", { status: 401 }) : undefined,
    );
    const client = createEmbedClient({
      appId: "app_1",
      parleyUrl: PARLEY,
      getToken: tokenUrlSource("/parley-token", network.fetch),
      fetch: network.fetch,
    });
    expect(await client.me()).toMatchObject({
      ok: false,
      error: { code: "token_unavailable", status: 401 },
    });
    expect(network.calls).toHaveLength(1);
  });
});
