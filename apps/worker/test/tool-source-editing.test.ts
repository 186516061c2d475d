import { env, runInDurableObject } from "cloudflare:test";
import { type EndUserToolCall, newId, type ToolSource } from "@parley/shared";
import { beforeAll, describe, expect, it } from "vitest";
import { isToolCallError } from "../src/tools/call-error.ts";
import type { ToolCallMeter } from "../src/tools/tool-meter.ts";
import { sourceTools } from "../src/tools/turn-tools.ts";
import { asEndUser, endUserToken, openSession } from "./end-users.ts";
import { api, errorCode, snapshot, world } from "./helpers.ts";
import { httpSource, shareJwks } from "./tools.ts";

/**
 * What the web app's source editor and the embed's "actions taken" list need of the API (issue
 * 30, docs/2026-12-06-tools.md, "Editing a source" and "An end user's calls"): switching a source
 * off and on, the class of its last error, and an end user's own calls.
 */

beforeAll(shareJwks);

/** The tools a member's turn in the world's session would get from `source`. */
async function offered(
  w: { orgId: string; projectId: string; sessionId: string; member: { id: string } },
  source: ToolSource,
) {
  const stub = env.ASSISTANT_AGENT.get(env.ASSISTANT_AGENT.idFromName(w.sessionId));
  return runInDurableObject(stub, async (instance) => {
    const tools = await sourceTools(env, {
      orgId: w.orgId,
      projectId: w.projectId,
      sessionId: w.sessionId,
      caller: { kind: "member", userId: w.member.id, appId: null },
      profileTools: [`source:${source.id}:order_status`],
      meter: (instance as unknown as { toolCalls: ToolCallMeter }).toolCalls,
    });
    return Object.keys(tools);
  });
}

describe("a PATCH changes what it names and nothing else", () => {
  it("keeps the description when the price or the name changes", async () => {
    const w = await world();
    const source = await httpSource(w.orgId, w.admin.token);
    const described = await api<ToolSource>("PATCH", `/api/tool-sources/${source.id}`, {
      token: w.admin.token,
      body: { description: "Orders of the shop" },
    });
    expect(described.body.description).toBe("Orders of the shop");
    for (const body of [{ priceMicros: 5000 }, { name: "Shop orders" }, { enabled: false }]) {
      const changed = await api<ToolSource>("PATCH", `/api/tool-sources/${source.id}`, {
        token: w.admin.token,
        body,
      });
      expect(changed.status, JSON.stringify(changed.body)).toBe(200);
      expect(changed.body.description).toBe("Orders of the shop");
    }
    const cleared = await api<ToolSource>("PATCH", `/api/tool-sources/${source.id}`, {
      token: w.admin.token,
      body: { description: null },
    });
    expect(cleared.body.description).toBeNull();
  });
});

describe("switching a source off and on (PATCH enabled)", () => {
  it("a switched-off source's tools are offered to no turn, and come back when it is on", async () => {
    const w = await world();
    const source = await httpSource(w.orgId, w.admin.token);
    expect(source.enabled).toBe(true);
    expect(await offered(w, source)).toEqual(["order_status"]);

    const off = await api<ToolSource>("PATCH", `/api/tool-sources/${source.id}`, {
      token: w.admin.token,
      body: { enabled: false },
    });
    expect(off.status, JSON.stringify(off.body)).toBe(200);
    expect(off.body.enabled).toBe(false);
    // A call built before the switch is refused by the source's client object (version moved).
    expect(off.body.version).toBe(source.version + 1);
    expect(await offered(w, source)).toEqual([]);

    const on = await api<ToolSource>("PATCH", `/api/tool-sources/${source.id}`, {
      token: w.owner.token,
      body: { enabled: true },
    });
    expect(on.body.enabled).toBe(true);
    expect(await offered(w, source)).toEqual(["order_status"]);
  });

  it("a turn's tools built before the switch are refused at the call (source_gone)", async () => {
    const w = await world();
    const source = await httpSource(w.orgId, w.admin.token);
    const stub = env.ASSISTANT_AGENT.get(env.ASSISTANT_AGENT.idFromName(w.sessionId));
    const error = await runInDurableObject(stub, async (instance) => {
      const tools = await sourceTools(env, {
        orgId: w.orgId,
        projectId: w.projectId,
        sessionId: w.sessionId,
        caller: { kind: "member", userId: w.member.id, appId: null },
        profileTools: [`source:${source.id}:order_status`],
        meter: (instance as unknown as { toolCalls: ToolCallMeter }).toolCalls,
      });
      const off = await api("PATCH", `/api/tool-sources/${source.id}`, {
        token: w.admin.token,
        body: { enabled: false },
      });
      expect(off.status).toBe(200);
      const execute = tools.order_status?.execute as unknown as (
        args: unknown,
        options: Record<string, unknown>,
      ) => Promise<unknown>;
      return execute({ orderId: "A-1" }, { toolCallId: crypto.randomUUID(), messages: [] }).then(
        () => null,
        (caught: unknown) => caught,
      );
    });
    expect(isToolCallError(error) && error.code).toBe("source_gone");
  });

  it("a member cannot switch it, another org's owner finds nothing, a non-boolean is refused", async () => {
    const w = await world();
    const source = await httpSource(w.orgId, w.admin.token);
    const before = await snapshot();
    const path = `/api/tool-sources/${source.id}`;
    const asMember = await api("PATCH", path, { token: w.member.token, body: { enabled: false } });
    expect(asMember.status).toBe(403);
    const foreign = await api("PATCH", path, { token: w.outsider.token, body: { enabled: false } });
    expect(foreign.status).toBe(404);
    const bad = await api("PATCH", path, { token: w.admin.token, body: { enabled: "no" } });
    expect(bad.status).toBe(400);
    expect(errorCode(bad)).toBe("invalid_request");
    expect(await snapshot()).toEqual(before);
    const row = await api<ToolSource>("GET", path, { token: w.member.token });
    expect(row.body.enabled).toBe(true);
  });
});

describe("a source's health", () => {
  it("shows the last error's class apart from its text", async () => {
    const w = await world();
    const source = await httpSource(w.orgId, w.admin.token);
    await env.DB.prepare(
      `UPDATE tool_sources SET consecutive_failures = 3, last_error = ?, last_error_at = ?
       WHERE id = ?`,
    )
      .bind("unauthorized: The tool's server refused Parley (403)", Date.now(), source.id)
      .run();
    const res = await api<ToolSource>("GET", `/api/tool-sources/${source.id}`, {
      token: w.member.token,
    });
    expect(res.body.health.status).toBe("unhealthy");
    expect(res.body.health.lastErrorCode).toBe("unauthorized");
    // A text without a code is one class, "error", not its words.
    await env.DB.prepare("UPDATE tool_sources SET last_error = ? WHERE id = ?")
      .bind("secret-ish words", source.id)
      .run();
    const plain = await api<ToolSource>("GET", `/api/tool-sources/${source.id}`, {
      token: w.member.token,
    });
    expect(plain.body.health.lastErrorCode).toBe("error");
  });
});

/** A call record as a round writes it (tools/sources-db.ts `recordCalls`). */
async function recordCall(input: {
  orgId: string;
  sourceId: string;
  sessionId: string;
  caller: { kind: "member" | "end_user"; id: string };
  tool: string;
  approvedBy?: string | null;
  priceMicros?: number;
}): Promise<string> {
  const id = newId("toolCall");
  await env.DB.prepare(
    `INSERT INTO tool_calls (id, org_id, source_id, tool_name, session_id, caller_kind, caller_id,
       access, approved_by, status, duration_ms, request_bytes, response_bytes, price_micros,
       created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'ok', 12, 10, 20, ?, ?)`,
  )
    .bind(
      id,
      input.orgId,
      input.sourceId,
      input.tool,
      input.sessionId,
      input.caller.kind,
      input.caller.id,
      input.approvedBy ? "write" : "read",
      input.approvedBy ?? null,
      input.priceMicros ?? 0,
      Date.now(),
    )
    .run();
  return id;
}

describe("GET /api/embed/sessions/:sessionId/tool-calls", () => {
  it("lists the end user's own calls in their session, with the source's name", async () => {
    const w = await world();
    const source = await httpSource(w.orgId, w.admin.token);
    const alice = await endUserToken(w, "alice");
    const session = await openSession(alice.accessToken);
    const who = { kind: "end_user" as const, id: alice.endUser.id };
    const read = await recordCall({
      orgId: w.orgId,
      sourceId: source.id,
      sessionId: session.id,
      caller: who,
      tool: "order_status",
      priceMicros: 5_000,
    });
    const write = await recordCall({
      orgId: w.orgId,
      sourceId: source.id,
      sessionId: session.id,
      caller: who,
      tool: "request_refund",
      approvedBy: alice.endUser.id,
    });
    const res = await asEndUser<{ items: EndUserToolCall[]; nextCursor: string | null }>(
      "GET",
      `/api/embed/sessions/${session.id}/tool-calls`,
      alice.accessToken,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.items.map((call) => call.id)).toEqual([write, read]);
    expect(res.body.items[0]).toMatchObject({
      toolName: "request_refund",
      sourceName: source.name,
      access: "write",
      approved: true,
      status: "ok",
    });
    // The embed app hides cost (embedApp's default): no price shown, as no spend is.
    expect(res.body.items[1]).toMatchObject({ approved: false, priceMicros: 0 });
    expect(JSON.stringify(res.body)).not.toContain(alice.endUser.id);
  });

  it("another end user's, a member's and another org's session answer 404; a member token 401", async () => {
    const w = await world();
    const source = await httpSource(w.orgId, w.admin.token);
    const alice = await endUserToken(w, "alice");
    const bob = await endUserToken(w, "bob");
    const session = await openSession(alice.accessToken);
    await recordCall({
      orgId: w.orgId,
      sourceId: source.id,
      sessionId: session.id,
      caller: { kind: "end_user", id: alice.endUser.id },
      tool: "order_status",
    });
    await recordCall({
      orgId: w.orgId,
      sourceId: source.id,
      sessionId: w.sessionId,
      caller: { kind: "member", id: w.member.id },
      tool: "order_status",
    });
    const list = (sessionId: string, token: string) =>
      asEndUser("GET", `/api/embed/sessions/${sessionId}/tool-calls`, token);
    for (const res of [
      await list(session.id, bob.accessToken),
      await list(w.sessionId, alice.accessToken),
      await list(w.otherSessionId, alice.accessToken),
      await list("ses_00000000000000000000000000", alice.accessToken),
    ]) {
      expect(res.status).toBe(404);
      expect(errorCode(res)).toBe("not_found");
    }
    expect((await list(session.id, w.member.token)).status).toBe(401);
    expect((await list(session.id, alice.accessToken)).status).toBe(200);
  });
});
