import { env } from "cloudflare:test";
import type { ToolSource } from "@parley/shared";
import { beforeAll, describe, expect, it } from "vitest";
import { api, errorCode, snapshot, world } from "./helpers.ts";
import { actions, httpSource, lab, labSource, register, seen, shareJwks, shop } from "./tools.ts";

beforeAll(shareJwks);

describe("registering tool sources", () => {
  it("an MCP server is registered and its tools listed at once, as the source (never the admin)", async () => {
    const w = await world();
    const source = await labSource(w.orgId, w.admin.token);
    expect(source).toMatchObject({ kind: "mcp", orgId: w.orgId, url: `${lab()}/mcp`, version: 1 });
    const names = source.tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["whoami", "slow", "big", "fails", "note"]));
    // readOnlyHint: true is read; a tool without it is write.
    expect(source.tools.find((t) => t.name === "whoami")?.access).toBe("read");
    expect(source.tools.find((t) => t.name === "note")?.access).toBe("write");
    expect(source.tools.find((t) => t.name === "whoami")?.ref).toBe(`source:${source.id}:whoami`);
    expect(source.toolsListedAt).not.toBeNull();
    // The listing carried an identity token naming the source itself (no person), without a
    // tool (docs/2026-12-06-tool-list-listener.md).
    const listed = (await seen()).filter((s) => s.server === "lab" && s.claims?.src === source.id);
    expect(listed.length).toBeGreaterThan(0);
    for (const s of listed) {
      expect(s.claims).toMatchObject({
        sub: source.id,
        kind: "source",
        org: w.orgId,
        aud: source.url,
      });
      expect(s.claims?.tool).toBeUndefined();
    }
    // Members read sources; the credential never shows.
    const read = await api<ToolSource>("GET", `/api/tool-sources/${source.id}`, {
      token: w.member.token,
    });
    expect(read.status).toBe(200);
    expect(read.body.tools.length).toBe(source.tools.length);
  });

  it("an owner marks an MCP tool read or write over the server's hint", async () => {
    const w = await world();
    const source = await labSource(w.orgId, w.owner.token, {
      access: { note: "read", whoami: "write" },
    });
    expect(source.tools.find((t) => t.name === "note")?.access).toBe("read");
    expect(source.tools.find((t) => t.name === "whoami")?.access).toBe("write");
  });

  it("HTTP actions are written by hand: an action not marked read is write", async () => {
    const w = await world();
    const source = await httpSource(w.orgId, w.admin.token);
    expect(source.tools.find((t) => t.name === "order_status")).toMatchObject({
      access: "read",
      method: "GET",
      path: "/orders/{orderId}",
    });
    expect(source.tools.find((t) => t.name === "request_refund")?.access).toBe("write");
  });

  it("a static credential is sealed, never returned, and sent with calls", async () => {
    const w = await world();
    const source = await labSource(w.orgId, w.admin.token, {
      credential: { header: "X-Api-Key", value: "lab-secret-123" },
    });
    expect(source.credential).toEqual({ header: "X-Api-Key" });
    expect(JSON.stringify(source)).not.toContain("lab-secret-123");
    const row = await env.DB.prepare("SELECT credential_sealed FROM tool_sources WHERE id = ?")
      .bind(source.id)
      .first<{ credential_sealed: string }>();
    expect(row?.credential_sealed).toMatch(/^v1\./);
    expect(row?.credential_sealed).not.toContain("lab-secret-123");
    const listed = (await seen()).filter((s) => s.claims?.src === source.id);
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.every((s) => s.apiKey === "lab-secret-123")).toBe(true);
  });

  it("refuses what the URL rule refuses, and changes nothing", async () => {
    const w = await world();
    const before = await snapshot();
    const port = new URL(lab()).port;
    const cases: [string, RegExp][] = [
      ["http://169.254.169.254/latest/meta-data", /https/],
      ["https://169.254.169.254/mcp", /loopback, private, link-local or reserved/],
      ["https://10.0.0.8/mcp", /private/],
      ["https://[::1]/mcp", /private/],
      ["https://[::ffff:127.0.0.1]/mcp", /private/],
      ["http://example.com/mcp", /https/],
      ["https://example.com:8443/mcp", /standard https port/],
      ["https://localhost/mcp", /local/],
      ["https://user:pw@example.com/mcp", /user name or password/],
      // A listed host on another port than its entry names.
      [`http://127.0.0.1:${Number(port) + 1}/mcp`, /https/],
      ["ftp://example.com/mcp", /url/],
    ];
    for (const [url, reason] of cases) {
      const res = await api("POST", `/api/orgs/${w.orgId}/tool-sources`, {
        token: w.admin.token,
        body: { kind: "mcp", name: "Bad", url },
      });
      expect(res.status, url).toBe(400);
      expect(errorCode(res), url).toBe("invalid_request");
      expect(JSON.stringify(res.body), url).toMatch(reason);
    }
    expect(await snapshot()).toEqual(before);
  });

  it("refuses bad shapes: unknown fields, reserved credential headers, bad action paths", async () => {
    const w = await world();
    const before = await snapshot();
    const bodies = [
      { kind: "mcp", name: "X", url: `${lab()}/mcp`, extra: 1 },
      {
        kind: "mcp",
        name: "X",
        url: `${lab()}/mcp`,
        credential: { header: "Authorization", value: "x" },
      },
      {
        kind: "mcp",
        name: "X",
        url: `${lab()}/mcp`,
        credential: { header: "X-Key", value: "a\r\nb" },
      },
      { kind: "mcp", name: "X", url: `${lab()}/mcp`, priceMicros: -1 },
      { kind: "grpc", name: "X", url: `${lab()}/mcp` },
      {
        kind: "http",
        name: "X",
        url: `${actions()}/api`,
        actions: [{ name: "a", description: "d", method: "GET", path: "/../admin" }],
      },
      {
        kind: "http",
        name: "X",
        url: `${actions()}/api`,
        actions: [{ name: "a", description: "d", method: "GET", path: "//evil.example/x" }],
      },
      {
        kind: "http",
        name: "X",
        url: `${actions()}/api`,
        actions: [
          {
            name: "a",
            description: "d",
            method: "GET",
            path: "/x",
            inputSchema: { type: "string" },
          },
        ],
      },
    ];
    for (const body of bodies) {
      const res = await api("POST", `/api/orgs/${w.orgId}/tool-sources`, {
        token: w.admin.token,
        body,
      });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect(await snapshot()).toEqual(before);
  });

  it("only owners and admins register, change and delete; another org's source is 404", async () => {
    const w = await world();
    const before = await snapshot();
    const byMember = await api("POST", `/api/orgs/${w.orgId}/tool-sources`, {
      token: w.member.token,
      body: { kind: "mcp", name: "Lab", url: `${lab()}/mcp` },
    });
    expect(byMember.status).toBe(403);
    const byOutsider = await api("POST", `/api/orgs/${w.orgId}/tool-sources`, {
      token: w.outsider.token,
      body: { kind: "mcp", name: "Lab", url: `${lab()}/mcp` },
    });
    expect(byOutsider.status).toBe(404);
    expect(await snapshot()).toEqual(before);
    const source = await labSource(w.orgId, w.admin.token);
    for (const [method, path, body] of [
      ["GET", `/api/tool-sources/${source.id}`, undefined],
      ["PATCH", `/api/tool-sources/${source.id}`, { name: "Mine now" }],
      ["DELETE", `/api/tool-sources/${source.id}`, undefined],
      ["POST", `/api/tool-sources/${source.id}/refresh`, undefined],
    ] as const) {
      const res = await api(method, path, { token: w.outsider.token, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect(
      (
        await api("PATCH", `/api/tool-sources/${source.id}`, {
          token: w.member.token,
          body: { name: "x" },
        })
      ).status,
    ).toBe(403);
    expect(
      (await api("GET", `/api/tool-sources/${source.id}`, { token: w.owner.token })).status,
    ).toBe(200);
  });

  it("two sources of an org cannot share a name (409)", async () => {
    const w = await world();
    await register(w.orgId, w.admin.token, {
      kind: "mcp",
      name: "Shop",
      url: `${shop()}/${w.orgId}/mcp`,
    });
    const again = await api("POST", `/api/orgs/${w.orgId}/tool-sources`, {
      token: w.admin.token,
      body: { kind: "mcp", name: "Shop", url: `${shop()}/${w.orgId}/mcp` },
    });
    expect(again.status).toBe(409);
  });
});

describe("listing and refreshing", () => {
  it("refresh lists the tools again; a tool the server adds shows up", async () => {
    const w = await world();
    // The lab without the GET stream: nothing tells Parley the list changed (the listener
    // re-lists such a server hourly), so only the refresh can see it now.
    const source = await labSource(w.orgId, w.admin.token, { url: `${lab()}/mcp-poll` });
    expect(source.tools.map((t) => t.name)).not.toContain("added_by_deploy");
    // The lab adds a tool for this source (as a deploy of the server would).
    const added = await fetch(`${lab()}/__tools`, {
      method: "POST",
      body: JSON.stringify({ src: source.id, add: ["added_by_deploy"] }),
    });
    expect(added.status).toBe(200);
    const stored = await api<ToolSource>("GET", `/api/tool-sources/${source.id}`, {
      token: w.admin.token,
    });
    expect(stored.body.tools.map((t) => t.name)).not.toContain("added_by_deploy");
    await fetch(`${lab()}/__log`, { method: "DELETE" });
    const refreshed = await api<ToolSource>("POST", `/api/tool-sources/${source.id}/refresh`, {
      token: w.admin.token,
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.tools.map((t) => t.name)).toEqual([
      ...source.tools.map((t) => t.name),
      "added_by_deploy",
    ]);
    expect(Date.parse(refreshed.body.toolsListedAt ?? "")).toBeGreaterThanOrEqual(
      Date.parse(source.toolsListedAt ?? ""),
    );
    expect((await seen()).some((s) => s.claims?.src === source.id && s.rpc === "tools/list")).toBe(
      true,
    );
  });

  it("a server that cannot be listed leaves a clear error in the source's health, not a 500", async () => {
    const w = await world();
    const source = await register(w.orgId, w.admin.token, {
      kind: "mcp",
      name: "Garbage",
      url: `${lab()}/garbage`,
    });
    expect(source.tools).toEqual([]);
    expect(source.health.lastError).toMatch(/malformed|could not/);
    const redirecting = await register(w.orgId, w.admin.token, {
      kind: "mcp",
      name: "Redirect",
      url: `${lab()}/redirect`,
    });
    expect(redirecting.health.lastError).toMatch(/redirect/);
    // Nothing followed the redirect to the metadata address.
    expect((await seen()).some((s) => s.path.includes("meta-data"))).toBe(false);
  });

  it("the last error's text is for owners and admins; a member sees its class only", async () => {
    const w = await world();
    const source = await register(w.orgId, w.admin.token, {
      kind: "mcp",
      name: "Garbage",
      url: `${lab()}/garbage`,
    });
    expect(source.health.lastError).not.toBeNull();
    const code = source.health.lastErrorCode;
    expect(code).not.toBeNull();
    const asMember = await api<ToolSource>("GET", `/api/tool-sources/${source.id}`, {
      token: w.member.token,
    });
    expect(asMember.body.health).toMatchObject({ lastError: null, lastErrorCode: code });
    const listed = await api<{ items: ToolSource[] }>("GET", `/api/orgs/${w.orgId}/tool-sources`, {
      token: w.member.token,
    });
    expect(listed.body.items[0]?.health).toMatchObject({ lastError: null, lastErrorCode: code });
    // The owner reads the text back, as the admin who registered it did.
    const asOwner = await api<ToolSource>("GET", `/api/tool-sources/${source.id}`, {
      token: w.owner.token,
    });
    expect(asOwner.body.health.lastError).toBe(source.health.lastError);
  });

  it("an HTTP source is not refreshed (400) and an MCP source takes no actions (400)", async () => {
    const w = await world();
    const http = await httpSource(w.orgId, w.admin.token);
    const mcp = await labSource(w.orgId, w.admin.token);
    expect(
      (await api("POST", `/api/tool-sources/${http.id}/refresh`, { token: w.admin.token })).status,
    ).toBe(400);
    const patch = await api("PATCH", `/api/tool-sources/${mcp.id}`, {
      token: w.admin.token,
      body: { actions: [] },
    });
    expect(patch.status).toBe(400);
  });
});

describe("OpenAPI import", () => {
  it("each operation becomes an action: GET read, others write unless marked", async () => {
    const w = await world();
    const source = await httpSource(w.orgId, w.admin.token, { actions: [] });
    const document = {
      openapi: "3.1.0",
      info: { title: "Shop", version: "1" },
      paths: {
        "/orders/{orderId}": {
          parameters: [{ name: "orderId", in: "path", required: true, schema: { type: "string" } }],
          get: { operationId: "getOrder", summary: "An order" },
          delete: { operationId: "cancelOrder", summary: "Cancel an order" },
        },
        "/refunds": {
          post: {
            operationId: "createRefund",
            requestBody: {
              content: { "application/json": { schema: { $ref: "#/components/schemas/Refund" } } },
            },
          },
        },
        "/search": { post: { operationId: "search", "x-parley-access": "read" } },
        "/../bad": { get: { operationId: "bad" } },
      },
      components: {
        schemas: {
          Refund: {
            type: "object",
            properties: { orderId: { type: "string" }, reason: { type: "string" } },
            required: ["orderId"],
          },
        },
      },
    };
    const res = await api<{ source: ToolSource; imported: number; skipped: unknown[] }>(
      "POST",
      `/api/tool-sources/${source.id}/import-openapi`,
      { token: w.admin.token, body: { document } },
    );
    expect(res.status).toBe(200);
    expect(res.body.imported).toBe(4);
    expect(res.body.skipped).toHaveLength(1);
    const tools = Object.fromEntries(res.body.source.tools.map((t) => [t.name, t]));
    expect(tools.get_order).toMatchObject({
      access: "read",
      method: "GET",
      path: "/orders/{orderId}",
    });
    expect(tools.cancel_order?.access).toBe("write");
    expect(tools.create_refund).toMatchObject({ access: "write", method: "POST" });
    expect(tools.create_refund?.inputSchema).toMatchObject({
      properties: { orderId: { type: "string" } },
      required: ["orderId"],
    });
    expect(tools.search?.access).toBe("read");
    const bad = await api("POST", `/api/tool-sources/${source.id}/import-openapi`, {
      token: w.admin.token,
      body: { document: { swagger: "2.0", paths: {} } },
    });
    expect(bad.status).toBe(400);
  });
});
