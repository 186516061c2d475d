import { env, runInDurableObject } from "cloudflare:test";
import {
  InsufficientScopeError,
  SdkErrorCode,
  SdkHttpError,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import { newId, type ToolSource } from "@parley/shared";
import type { ToolSet } from "ai";
import { importJWK, type JWK, SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { signToolCallToken } from "../src/auth/tokens.ts";
import { config } from "../src/env.ts";
import { isToolCallError } from "../src/tools/call-error.ts";
import { mcpError } from "../src/tools/mcp-tools.ts";
import type { FramedResult } from "../src/tools/result-frame.ts";
import type { ToolCallMeter } from "../src/tools/tool-meter.ts";
import { sourceTools } from "../src/tools/turn-tools.ts";
import type { World } from "./helpers.ts";
import { api } from "./helpers.ts";
import { funded } from "./metering.ts";
import { register, seen, shareJwks, shop } from "./tools.ts";

/**
 * The example shop's MCP server (examples/host-app/mcp-server.mjs, the official MCP SDK) behind
 * Parley: its two tools for the shopper who chats, as the embed's end user, and its verifier of
 * Parley's identity token (jose, against the Worker's JWKS) refusing what it must.
 */

beforeAll(shareJwks);

type Execute = (args: unknown, options: Record<string, unknown>) => Promise<unknown>;

async function shopper(w: World, externalId: string): Promise<string> {
  const id = newId("endUser");
  await env.DB.prepare(
    "INSERT INTO end_users (id, org_id, app_id, external_id, name, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
  )
    .bind(id, w.orgId, w.appId, externalId, externalId, Date.now(), Date.now())
    .run();
  return id;
}

/** Calls one of the shop's tools as an end user, inside their session's chat object. */
function asShopper(
  w: World,
  source: ToolSource,
  endUserId: string,
  tool: string,
  args: unknown,
  approve?: boolean,
): Promise<{ result: unknown; error: unknown }> {
  const stub = env.ASSISTANT_AGENT.get(env.ASSISTANT_AGENT.idFromName(w.sessionId));
  return runInDurableObject(stub, async (instance) => {
    const meter = (instance as unknown as { toolCalls: ToolCallMeter }).toolCalls;
    const tools: ToolSet = await sourceTools(env, {
      orgId: w.orgId,
      projectId: w.projectId,
      sessionId: w.sessionId,
      caller: { kind: "end_user", userId: endUserId, appId: w.appId },
      profileTools: source.tools.map((t) => t.ref),
      meter,
    });
    const toolCallId = crypto.randomUUID();
    if (approve !== undefined)
      meter.noteAnswer(toolCallId, approve, { kind: "end_user", id: endUserId });
    const execute = tools[tool]?.execute as unknown as Execute;
    try {
      return { result: await execute(args, { toolCallId, messages: [] }), error: undefined };
    } catch (error) {
      return { result: undefined, error };
    } finally {
      await Promise.allSettled([...meter.inFlight]);
    }
  });
}

describe("the example shop's MCP server behind Parley", () => {
  it("order status for the shopper who asks; a refund only once they approve; never another's order", async () => {
    const w = await funded();
    const source = await register(w.orgId, w.admin.token, {
      kind: "mcp",
      name: "Acme Shop orders",
      url: `${shop()}/${w.orgId}/mcp`,
    });
    expect(source.tools.map((t) => [t.name, t.access])).toEqual([
      ["order_status", "read"],
      ["request_refund", "write"],
    ]);
    const alice = await shopper(w, "shop-user-alice");
    const bob = await shopper(w, "shop-user-bob");

    const status = await asShopper(w, source, alice, "order_status", { orderId: "1001" });
    expect(status.error).toBeUndefined();
    expect((status.result as FramedResult).result).toMatchObject({
      orderId: "1001",
      status: "shipped",
    });

    // Bob asks for Alice's order: the shop answers as Bob, who has none such.
    const theirs = await asShopper(w, source, bob, "order_status", { orderId: "1001" });
    expect(isToolCallError(theirs.error) && theirs.error.code).toBe("tool_error");
    expect((theirs.error as Error).message).toMatch(/No order 1001 for this shopper/);

    const unapproved = await asShopper(w, source, alice, "request_refund", {
      orderId: "1001",
      reason: "Arrived broken",
    });
    expect(isToolCallError(unapproved.error) && unapproved.error.code).toBe("not_approved");
    const refund = await asShopper(
      w,
      source,
      alice,
      "request_refund",
      { orderId: "1001", reason: "Arrived broken" },
      true,
    );
    expect(refund.error).toBeUndefined();
    expect((refund.result as FramedResult).result).toMatchObject({
      orderId: "1001",
      refund: { status: "requested", reason: "Arrived broken" },
    });
    expect((refund.result as FramedResult).approvedBy).toEqual({ kind: "end_user", id: alice });
    // What the shop's server accepted named Alice by the shop's own id, never a Parley id.
    const log = (await seen()).filter((s) => s.server === "shop" && s.claims?.src === source.id);
    // The listing (registration, the listener) and the connection's own requests acted as the
    // source, never as the admin who registered it nor a shopper.
    const own = log.filter((s) => s.claims && s.claims.kind !== "end_user");
    expect(own.length).toBeGreaterThan(0);
    expect(own.every((s) => s.claims?.kind === "source" && s.claims?.sub === source.id)).toBe(true);
    const accepted = log.filter((s) => s.claims?.kind === "end_user");
    expect(accepted.length).toBeGreaterThan(0);
    expect(new Set(accepted.map((s) => s.claims?.sub))).toEqual(
      new Set(["shop-user-alice", "shop-user-bob"]),
    );
    expect(accepted.every((s) => s.claims?.app === w.appId && s.claims?.kind === "end_user")).toBe(
      true,
    );
    expect(JSON.stringify(accepted)).not.toContain(alice);
  });

  it("the shop's verifier refuses a tampered, expired, foreign-audience or missing token", async () => {
    const mcpUrl = `${shop()}/org_x/mcp`;
    const initialize = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "probe", version: "1" },
      },
    });
    const post = (authorization?: string) =>
      fetch(mcpUrl, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...(authorization ? { authorization } : {}),
        },
        body: initialize,
      });
    const identity = {
      subject: "shop-user-alice",
      subjectKind: "end_user" as const,
      orgId: "org_x",
      appId: "app_x",
      sessionId: null,
      sourceId: "tsrc_x",
      tool: null,
    };
    const good = await signToolCallToken(config(env), { ...identity, audience: mcpUrl });
    const ok = await post(`Bearer ${good}`);
    expect(ok.status).toBe(200);
    await ok.body?.cancel();

    const [head, payload, signature] = good.split(".");
    const flipped = `${signature?.[0] === "A" ? "B" : "A"}${signature?.slice(1)}`;
    const tampered = await post(`Bearer ${head}.${payload}.${flipped}`);
    expect(tampered.status).toBe(401);
    // A payload swapped for another shopper's, under the original signature.
    const forged = btoa(
      JSON.stringify({
        ...JSON.parse(atob(payload?.replace(/-/g, "+").replace(/_/g, "/") ?? "")),
        sub: "shop-user-bob",
      }),
    )
      .replace(/\+/g, "-")
      .replace(/\//g, "_")
      .replace(/=+$/, "");
    expect((await post(`Bearer ${head}.${forged}.${signature}`)).status).toBe(401);

    const jwk = JSON.parse(env.JWT_PRIVATE_KEY) as JWK;
    const key = await importJWK({ ...jwk, alg: "ES256" }, "ES256");
    const now = Math.floor(Date.now() / 1000);
    const expired = await new SignJWT({ kind: "end_user", org: "org_x" })
      .setProtectedHeader({ alg: "ES256", kid: jwk.kid ?? "", typ: "parley-tool+jwt" })
      .setSubject("shop-user-alice")
      .setIssuer("parley")
      .setAudience(mcpUrl)
      .setIssuedAt(now - 300)
      .setExpirationTime(now - 200)
      .setJti(crypto.randomUUID())
      .sign(key);
    expect((await post(`Bearer ${expired}`)).status).toBe(401);

    const elsewhere = await signToolCallToken(config(env), {
      ...identity,
      audience: "https://other-tool.example/mcp",
    });
    expect((await post(`Bearer ${elsewhere}`)).status).toBe(401);
    expect((await post()).status).toBe(401);
  });
  it("another org that registers the shop's URL gets nothing the shop's verifier accepts (probe finding 1)", async () => {
    const a = await funded();
    const b = await funded();
    const url = `${shop()}/${a.orgId}/mcp`;
    const mine = await register(a.orgId, a.admin.token, { kind: "mcp", name: "Shop", url });
    expect(mine.tools.map((t) => t.name)).toEqual(["order_status", "request_refund"]);
    // Org B registers the very same URL: Parley lets it (any org may name any URL), but the shop
    // refuses B's admin's listing: the token names org B, the shop pins org A.
    const created = await api("POST", `/api/orgs/${b.orgId}/tool-sources`, {
      token: b.admin.token,
      body: { kind: "mcp", name: "Not the shop", url },
    });
    expect(created.status).toBe(201);
    const theirs = created.body as ToolSource;
    expect(theirs.tools).toEqual([]);
    // A 401 from an MCP server is `unauthorized`, as documented (it read `malformed`).
    expect(theirs.health.lastError).toMatch(/^unauthorized: /);
    // Even with the tools in its list (a server that lists without a token), B's end user who
    // took A's shopper's id is refused by the shop for every call.
    await env.DB.prepare(
      "UPDATE tool_sources SET tools = (SELECT tools FROM tool_sources WHERE id = ?1) WHERE id = ?2",
    )
      .bind(mine.id, theirs.id)
      .run();
    const copied: ToolSource = {
      ...theirs,
      tools: mine.tools.map((t) => ({ ...t, ref: t.ref.replace(mine.id, theirs.id) })),
    };
    const mallory = await shopper(b, "shop-user-alice");
    const forged = await asShopper(b, copied, mallory, "order_status", { orderId: "1001" });
    expect(isToolCallError(forged.error) && forged.error.code).toBe("unauthorized");
    const refund = await asShopper(
      b,
      copied,
      mallory,
      "request_refund",
      { orderId: "1001", reason: "mine now" },
      true,
    );
    expect(isToolCallError(refund.error) && refund.error.code).toBe("unauthorized");
    const refused = (await seen()).filter(
      (s) => s.server === "shop" && s.path === `/${a.orgId}/mcp`,
    );
    expect(refused.some((s) => s.refused === "token of another Parley org")).toBe(true);
    expect(refused.every((s) => s.refused !== null || s.claims?.org === a.orgId)).toBe(true);

    // A's own shopper with the same id is still served.
    const alice = await shopper(a, "shop-user-alice");
    const own = await asShopper(a, mine, alice, "order_status", { orderId: "1001" });
    expect(own.error).toBeUndefined();
    expect((own.result as FramedResult).result).toMatchObject({ orderId: "1001" });
  });

  it("the shop acts on orders only for a shopper's token, never a member's with the same sub (probe finding 4)", async () => {
    const w = await funded();
    const source = await register(w.orgId, w.admin.token, {
      kind: "mcp",
      name: "Shop",
      url: `${shop()}/${w.orgId}/mcp`,
    });
    const stub = env.ASSISTANT_AGENT.get(env.ASSISTANT_AGENT.idFromName(w.sessionId));
    // A member of the shop's org whose Parley id a shopper could also have as their shop id.
    const asMember = await runInDurableObject(stub, async (instance) => {
      const meter = (instance as unknown as { toolCalls: ToolCallMeter }).toolCalls;
      const tools: ToolSet = await sourceTools(env, {
        orgId: w.orgId,
        projectId: w.projectId,
        sessionId: w.sessionId,
        caller: { kind: "member", userId: w.admin.id, appId: null },
        profileTools: source.tools.map((t) => t.ref),
        meter,
      });
      const execute = tools.order_status?.execute as unknown as Execute;
      try {
        return {
          result: await execute(
            { orderId: "1001" },
            { toolCallId: crypto.randomUUID(), messages: [] },
          ),
          error: undefined,
        };
      } catch (error) {
        return { result: undefined, error };
      } finally {
        await Promise.allSettled([...meter.inFlight]);
      }
    });
    expect(isToolCallError(asMember.error) && asMember.error.code).toBe("tool_error");
    expect((asMember.error as Error).message).toMatch(/signed-in shopper's only/);
    // The shopper whose shop id is the member's Parley id is served as a shopper.
    const twin = await shopper(w, w.admin.id);
    const status = await asShopper(w, source, twin, "order_status", { orderId: "1001" });
    expect(status.error).toBeUndefined();
  });

  it("the shop's verifier refuses a token of another org, or of no known kind", async () => {
    const mcpUrl = `${shop()}/org_mine/mcp`;
    const post = (token: string) =>
      fetch(mcpUrl, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: `Bearer ${token}`,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
    const identity = {
      audience: mcpUrl,
      subject: "shop-user-alice",
      subjectKind: "end_user" as const,
      appId: "app_x",
      sessionId: null,
      sourceId: "tsrc_x",
      tool: null,
    };
    const own = await post(
      await signToolCallToken(config(env), { ...identity, orgId: "org_mine" }),
    );
    expect(own.status).toBe(200);
    await own.body?.cancel();
    const foreign = await post(
      await signToolCallToken(config(env), { ...identity, orgId: "org_someone_else" }),
    );
    expect(foreign.status).toBe(401);
    const jwk = JSON.parse(env.JWT_PRIVATE_KEY) as JWK;
    const key = await importJWK({ ...jwk, alg: "ES256" }, "ES256");
    const odd = await new SignJWT({ kind: "robot", org: "org_mine" })
      .setProtectedHeader({ alg: "ES256", kid: jwk.kid ?? "", typ: "parley-tool+jwt" })
      .setSubject("shop-user-alice")
      .setIssuer("parley")
      .setAudience(mcpUrl)
      .setIssuedAt()
      .setExpirationTime("60s")
      .setJti(crypto.randomUUID())
      .sign(key);
    expect((await post(odd)).status).toBe(401);
  });
  it("the shop lists its tools for Parley's own token (kind source) but acts on no orders for it", async () => {
    const mcpUrl = `${shop()}/org_x/mcp`;
    const rpc = async (method: string, params: Record<string, unknown>) => {
      const token = await signToolCallToken(config(env), {
        subject: "tsrc_x",
        subjectKind: "source",
        orgId: "org_x",
        appId: null,
        sessionId: null,
        sourceId: "tsrc_x",
        tool: null,
        audience: mcpUrl,
      });
      const res = await fetch(mcpUrl, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2025-06-18",
          authorization: `Bearer ${token}`,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      });
      expect(res.status).toBe(200);
      return (await res.json()) as { result?: Record<string, unknown> };
    };
    const listed = await rpc("tools/list", {});
    expect(((listed.result?.tools ?? []) as { name: string }[]).map((t) => t.name)).toEqual([
      "order_status",
      "request_refund",
    ]);
    const called = await rpc("tools/call", {
      name: "order_status",
      arguments: { orderId: "1001" },
    });
    expect(called.result).toMatchObject({
      isError: true,
      content: [{ type: "text", text: "Orders are a signed-in shopper's only" }],
    });
  });

  it("an MCP server's 401 or 403 is `unauthorized` however the SDKs carry it, a JSON-RPC error a tool error", () => {
    // What the agents SDK's MCP client (the MCP SDK's v2 client) throws.
    const http = (status: number) =>
      new SdkHttpError(
        SdkErrorCode.ClientHttpNotImplemented,
        `Error POSTing to endpoint (${status})`,
        {
          status,
          statusText: "",
          text: "",
        },
      );
    const codes = [
      http(401),
      http(403),
      new Error("wrapped", { cause: http(403) }),
      new UnauthorizedError("Unauthorized"),
      new InsufficientScopeError({ requiredScope: "orders:write" }),
      http(500),
      Object.assign(new Error("MCP error -32001: Unauthorized"), { code: -32001 }),
    ].map((error) => mcpError(error).code);
    expect(codes).toEqual([
      "unauthorized",
      "unauthorized",
      "unauthorized",
      "unauthorized",
      "unauthorized",
      "http_status",
      "tool_error",
    ]);
  });
});
