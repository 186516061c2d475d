import { describe, expect, it, vi } from "vitest";
import { ApiError, createApiClient } from "./api.ts";

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

const auth = (token: string) => ({
  accessToken: token,
  expiresIn: 900,
  user: { id: "u1", email: "ada@example.com", name: "Ada" },
});

const me = { id: "u1", email: "ada@example.com", name: "Ada", createdAt: "x", orgs: [] };

function fakeServer(handler: (path: string, init: RequestInit) => Response | Promise<Response>) {
  const calls: { path: string; authorization: string | undefined; method: string }[] = [];
  const fetch = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
    const path = String(input);
    const headers = (init?.headers ?? {}) as Record<string, string>;
    calls.push({ path, authorization: headers.authorization, method: init?.method ?? "GET" });
    return handler(path, init ?? {});
  });
  return { fetch: fetch as unknown as typeof globalThis.fetch, calls };
}

describe("api client", () => {
  it("refreshes once on a 401 and retries with the new token", async () => {
    const server = fakeServer((path, init) => {
      if (path === "/api/auth/login") return json(200, auth("old"));
      if (path === "/api/auth/refresh") return json(200, auth("new"));
      const headers = init.headers as Record<string, string>;
      return headers.authorization === "Bearer new"
        ? json(200, me)
        : json(401, { error: { code: "unauthorized", message: "expired" } });
    });
    const client = createApiClient({ fetch: server.fetch });
    await client.login({ email: "ada@example.com", password: "x" });

    await expect(client.me()).resolves.toEqual(me);
    expect(server.calls.map((call) => [call.path, call.authorization])).toEqual([
      ["/api/auth/login", undefined],
      ["/api/me", "Bearer old"],
      ["/api/auth/refresh", undefined],
      ["/api/me", "Bearer new"],
    ]);
  });

  it("makes no request for the ended session once signing out starts, until the next sign-in", async () => {
    let release = () => {};
    const server = fakeServer(async (path) => {
      if (path === "/api/auth/login") return json(200, auth("t1"));
      if (path === "/api/auth/logout") {
        // The sign-out is on its way while the page still asks for things.
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        return new Response(null, { status: 204 });
      }
      if (path === "/api/me") return json(200, me);
      return json(401, { error: { code: "unauthorized", message: "signed out" } });
    });
    const client = createApiClient({ fetch: server.fetch });
    await client.login({ email: "ada@example.com", password: "x" });
    const out = client.logout();
    // A chat reconnecting and a page refetching, during the sign-out and after it.
    await expect(client.me()).rejects.toMatchObject({ code: "unauthorized" });
    await expect(client.connectTicket("assistant-agent", "ses_1")).rejects.toMatchObject({
      code: "unauthorized",
    });
    release();
    await out;
    await expect(client.me()).rejects.toMatchObject({ code: "unauthorized" });
    await expect(client.refresh()).rejects.toMatchObject({ code: "unauthorized" });
    expect(server.calls.map((call) => call.path)).toEqual(["/api/auth/login", "/api/auth/logout"]);
    // Signing in again ends it.
    await client.login({ email: "ada@example.com", password: "x" });
    await expect(client.me()).resolves.toEqual(me);
  });

  it("shares one refresh between concurrent 401s", async () => {
    let refreshes = 0;
    const server = fakeServer((path, init) => {
      if (path === "/api/auth/refresh") {
        refreshes++;
        return json(200, auth("new"));
      }
      const headers = init.headers as Record<string, string>;
      return headers.authorization === "Bearer new"
        ? json(200, { items: [], nextCursor: null })
        : json(401, { error: { code: "unauthorized", message: "expired" } });
    });
    const client = createApiClient({ fetch: server.fetch });
    await Promise.all([
      client.get("/api/orgs/o1/projects"),
      client.get("/api/orgs/o2/projects"),
      client.sessions("p1"),
    ]);
    expect(refreshes).toBe(1);
  });

  it("gives up after one refresh: a failed refresh surfaces as unauthorized and signs out", async () => {
    const server = fakeServer((path) =>
      path === "/api/auth/refresh"
        ? json(401, { error: { code: "unauthorized", message: "No refresh token" } })
        : json(401, { error: { code: "unauthorized", message: "expired" } }),
    );
    const client = createApiClient({ fetch: server.fetch });
    const signedIn: boolean[] = [];
    client.onAuthChange((value) => signedIn.push(value));

    const error = await client.me().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: "unauthorized", status: 401, message: "No refresh token" });
    expect(server.calls.filter((call) => call.path === "/api/me")).toHaveLength(1);
    expect(signedIn).toEqual([false]);
    expect(client.hasToken()).toBe(false);
  });

  it("does not retry when the retried call is refused again", async () => {
    const server = fakeServer((path) =>
      path === "/api/auth/refresh"
        ? json(200, auth("new"))
        : json(401, { error: { code: "unauthorized", message: "still no" } }),
    );
    const client = createApiClient({ fetch: server.fetch });
    await expect(client.me()).rejects.toMatchObject({ code: "unauthorized" });
    expect(server.calls.map((call) => call.path)).toEqual([
      "/api/me",
      "/api/auth/refresh",
      "/api/me",
    ]);
  });

  it("turns the error envelope into a typed ApiError with its field", async () => {
    const server = fakeServer(() =>
      json(409, {
        error: {
          code: "conflict",
          message: "An account with this email already exists",
          field: "email",
        },
      }),
    );
    const client = createApiClient({ fetch: server.fetch });
    await expect(
      client.signup({ email: "ada@example.com", password: "correct horse", name: "Ada" }),
    ).rejects.toMatchObject({ name: "ApiError", code: "conflict", status: 409, field: "email" });
  });

  it("reports a network failure as code network", async () => {
    const client = createApiClient({
      fetch: (() => Promise.reject(new TypeError("Failed to fetch"))) as typeof fetch,
    });
    await expect(client.login({ email: "a@b.co", password: "x" })).rejects.toMatchObject({
      code: "network",
      status: 0,
    });
  });

  it("hands out the current token while valid and refreshes it close to expiry", async () => {
    let clock = 0;
    let issued = 0;
    const server = fakeServer((path) =>
      path === "/api/auth/refresh" ? json(200, auth(`t${++issued}`)) : json(200, auth("t0")),
    );
    const client = createApiClient({ fetch: server.fetch, now: () => clock });
    await client.login({ email: "a@b.co", password: "x" });
    await expect(client.accessToken()).resolves.toBe("t0");
    clock = 850_000; // 50 s left of 900: under the 60 s margin
    await expect(client.accessToken()).resolves.toBe("t1");
  });

  it("takes the refresh the page started early once, then refreshes over the network", async () => {
    let issued = 0;
    const server = fakeServer((path) =>
      path === "/api/auth/refresh" ? json(200, auth(`t${++issued}`)) : json(200, auth("x")),
    );
    let early: Promise<Response> | undefined = Promise.resolve(json(200, auth("early")));
    const client = createApiClient({
      fetch: server.fetch,
      takeEarlyRefresh: () => {
        const taken = early;
        early = undefined;
        return taken;
      },
    });
    await expect(client.refresh()).resolves.toMatchObject({ accessToken: "early" });
    expect(server.calls.filter((c) => c.path === "/api/auth/refresh")).toHaveLength(0);
    await expect(client.refresh()).resolves.toMatchObject({ accessToken: "t1" });
    expect(server.calls.filter((c) => c.path === "/api/auth/refresh")).toHaveLength(1);
  });

  it("reports a refused early refresh as signed out and a failed one as a network error", async () => {
    const server = fakeServer(() => json(200, auth("x")));
    const refused = createApiClient({
      fetch: server.fetch,
      takeEarlyRefresh: () =>
        Promise.resolve(
          json(401, { error: { code: "unauthorized", message: "No refresh token" } }),
        ),
    });
    await expect(refused.refresh()).rejects.toMatchObject({ code: "unauthorized", status: 401 });
    expect(refused.hasToken()).toBe(false);
    const offline = createApiClient({
      fetch: server.fetch,
      takeEarlyRefresh: () => Promise.reject(new TypeError("Failed to fetch")),
    });
    await expect(offline.refresh()).rejects.toMatchObject({ code: "network", status: 0 });
  });

  it("asks for a connect ticket with a token good for five more minutes, never putting it in a URL", async () => {
    let clock = 0;
    let issued = 0;
    const bodies: unknown[] = [];
    const server = fakeServer((path, init) => {
      if (path === "/api/auth/refresh") return json(200, auth(`t${++issued}`));
      if (path === "/api/connect-tickets") {
        bodies.push(JSON.parse(String(init.body)));
        return json(201, { ticket: `ct_${bodies.length}`, expiresAt: "x" });
      }
      return json(200, auth("t0"));
    });
    const client = createApiClient({ fetch: server.fetch, now: () => clock });
    await client.login({ email: "a@b.co", password: "x" });
    clock = 700_000; // 200 s left: enough for a request, too little for a socket
    await expect(client.connectTicket("assistant-agent", "ses_1")).resolves.toBe("ct_1");
    expect(bodies).toEqual([{ agent: "assistant-agent", name: "ses_1" }]);
    const ticketCall = server.calls.find((c) => c.path === "/api/connect-tickets");
    expect(ticketCall).toMatchObject({ method: "POST", authorization: "Bearer t1" });
    expect(server.calls.every((c) => !c.path.includes("t0") && !c.path.includes("t1"))).toBe(true);
  });
});
