import { env, runInDurableObject } from "cloudflare:test";
import type { ToolSource } from "@parley/shared";
import type { ToolSet } from "ai";
import { beforeAll, describe, expect, it } from "vitest";
import { turnTools } from "../src/assistants/resolve.ts";
import { isToolCallError } from "../src/tools/call-error.ts";
import { writeListedTools } from "../src/tools/sources-db.ts";
import type { ToolCallMeter } from "../src/tools/tool-meter.ts";
import { sourceTools, type ToolCaller } from "../src/tools/turn-tools.ts";
import { api, errorCode, snapshot, world } from "./helpers.ts";
import { funded } from "./metering.ts";
import { actions, httpSource, lab, labSource, seen, shareJwks } from "./tools.ts";

/**
 * The probe of 2026-12-06 on tool sources (docs/2026-12-06-tools.md): a credential never follows
 * its source to another host, action paths stay under the source's URL, a server's hint makes a
 * tool stricter but never looser, and no tool runs under a built-in's or another source's name.
 */

beforeAll(shareJwks);

const ref = (source: ToolSource, tool: string) => `source:${source.id}:${tool}`;

type Execute = (args: unknown, options: Record<string, unknown>) => Promise<unknown>;

/** Builds a turn's source tools inside the session's chat object and hands them to `fn`. */
function withTools<T>(
  w: { orgId: string; projectId: string; sessionId: string; member: { id: string } },
  profileTools: string[],
  fn: (tools: ToolSet, meter: ToolCallMeter) => Promise<T>,
): Promise<T> {
  const stub = env.ASSISTANT_AGENT.get(env.ASSISTANT_AGENT.idFromName(w.sessionId));
  return runInDurableObject(stub, async (instance) => {
    const meter = (instance as unknown as { toolCalls: ToolCallMeter }).toolCalls;
    const caller: ToolCaller = { kind: "member", userId: w.member.id, appId: null };
    const tools = await sourceTools(env, {
      orgId: w.orgId,
      projectId: w.projectId,
      sessionId: w.sessionId,
      caller,
      profileTools,
      meter,
    });
    const result = await fn(tools, meter);
    await Promise.allSettled([...meter.inFlight]);
    return result;
  });
}

/** Calls a built tool as the AI SDK does; the error it throws, or null. */
async function run(tools: ToolSet, name: string, args: unknown): Promise<unknown> {
  const execute = tools[name]?.execute as unknown as Execute | undefined;
  if (!execute) throw new Error(`no tool ${name}`);
  try {
    await execute(args, { toolCallId: crypto.randomUUID(), messages: [] });
    return null;
  } catch (error) {
    return error;
  }
}

const sealedOf = async (id: string) =>
  (await env.DB.prepare("SELECT credential_sealed, url, version FROM tool_sources WHERE id = ?")
    .bind(id)
    .first<{ credential_sealed: string | null; url: string; version: number }>()) ?? null;

describe("a credential does not follow its source to another host (probe 2)", () => {
  it("a URL on another origin needs the credential again or its removal, else 400 and nothing changes", async () => {
    const w = await world();
    const source = await httpSource(w.orgId, w.admin.token, {
      credential: { header: "X-Api-Key", value: "owner-secret-1" },
    });
    const before = await sealedOf(source.id);
    // The lab is another origin (another port) the allow list also lets through.
    const elsewhere = `${lab()}/api`;
    const refused = await api("PATCH", `/api/tool-sources/${source.id}`, {
      token: w.admin.token,
      body: { url: elsewhere },
    });
    expect(refused.status).toBe(400);
    expect(errorCode(refused)).toBe("invalid_request");
    expect(refused.body).toMatchObject({
      error: {
        field: "credential",
        message: expect.stringMatching(/credential must be entered again for a new host/),
      },
    });
    expect(await sealedOf(source.id)).toEqual(before);

    // The same origin, another path: the same server keeps its credential.
    const samePlace = await api<ToolSource>("PATCH", `/api/tool-sources/${source.id}`, {
      token: w.admin.token,
      body: { url: `${actions()}/api/v2` },
    });
    expect(samePlace.status).toBe(200);
    expect(samePlace.body.credential).toEqual({ header: "X-Api-Key" });
    expect((await sealedOf(source.id))?.credential_sealed).toBe(before?.credential_sealed);

    // Removed explicitly with the move: the new host gets none.
    const removed = await api<ToolSource>("PATCH", `/api/tool-sources/${source.id}`, {
      token: w.admin.token,
      body: { url: elsewhere, credential: null },
    });
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ url: elsewhere, credential: null });
    expect((await sealedOf(source.id))?.credential_sealed).toBeNull();
  });

  it("a new credential entered with the move is the one the new host gets", async () => {
    const w = await funded();
    const source = await labSource(w.orgId, w.admin.token, {
      url: `${actions()}/mcp-not-here`,
      credential: { header: "X-Api-Key", value: "old-secret" },
    });
    const moved = await api<ToolSource>("PATCH", `/api/tool-sources/${source.id}`, {
      token: w.admin.token,
      body: { url: `${lab()}/mcp`, credential: { header: "X-Api-Key", value: "new-secret" } },
    });
    expect(moved.status).toBe(200);
    expect(moved.body.credential).toEqual({ header: "X-Api-Key" });
    // The re-listing at the new URL carried only the new value.
    const atLab = (await seen()).filter((s) => s.server === "lab" && s.claims?.src === source.id);
    expect(atLab.length).toBeGreaterThan(0);
    expect(atLab.every((s) => s.apiKey === "new-secret")).toBe(true);
  });
});

describe("action paths stay under the source's URL (probe 5)", () => {
  it("refuses percent-encoded dots, slashes, backslashes and %25 at registration and import", async () => {
    const w = await world();
    const before = await snapshot();
    const paths = [
      "/%2e%2e/%2e%2e/admin/{id}",
      "/%2E%2E/admin",
      "/%2e%2E/admin",
      "/.%2e/admin",
      "/%252e%252e/admin",
      "/a%2fb",
      "/a%5c..%5cadmin",
      "/a\\..\\admin",
    ];
    for (const path of paths) {
      const res = await api("POST", `/api/orgs/${w.orgId}/tool-sources`, {
        token: w.admin.token,
        body: {
          kind: "http",
          name: "Escape",
          url: `${actions()}/base/`,
          actions: [{ name: "a", description: "d", method: "GET", path }],
        },
      });
      expect(res.status, path).toBe(400);
      expect(errorCode(res), path).toBe("invalid_request");
    }
    expect(await snapshot()).toEqual(before);

    const source = await httpSource(w.orgId, w.admin.token, { actions: [] });
    const imported = await api<{ imported: number; skipped: { path: string; reason: string }[] }>(
      "POST",
      `/api/tool-sources/${source.id}/import-openapi`,
      {
        token: w.admin.token,
        body: {
          document: {
            openapi: "3.1.0",
            info: { title: "x", version: "1" },
            paths: {
              "/%2e%2e/c": { get: { operationId: "up" } },
              "/ok": { get: { operationId: "fine" } },
            },
          },
        },
      },
    );
    expect(imported.status).toBe(200);
    expect(imported.body.imported).toBe(1);
    expect(imported.body.skipped).toEqual([
      { method: "GET", path: "/%2e%2e/c", reason: expect.stringMatching(/percent-encode/) },
    ]);
  });

  it("at call time the final URL must stay under the base path; arguments cannot climb out; no request is sent", async () => {
    const w = await funded();
    const source = await httpSource(w.orgId, w.admin.token, {
      actions: [
        {
          name: "nested",
          description: "Two path arguments",
          method: "GET",
          path: "/orders/{a}/{b}",
          access: "read",
        },
      ],
    });
    // A path stored before the rule (or anything the rule missed), written straight to D1.
    const stored = JSON.parse(
      (
        await env.DB.prepare("SELECT tools FROM tool_sources WHERE id = ?")
          .bind(source.id)
          .first<{ tools: string }>()
      )?.tools ?? "[]",
    ) as Record<string, unknown>[];
    stored.push({
      name: "escape",
      description: "The probe's path",
      inputSchema: { type: "object", properties: { id: { type: "string" } } },
      access: "read",
      method: "GET",
      path: "/%2e%2e/%2e%2e/admin/{id}",
      usable: true,
    });
    await env.DB.prepare("UPDATE tool_sources SET tools = ? WHERE id = ?")
      .bind(JSON.stringify(stored), source.id)
      .run();
    await withTools(w, [ref(source, "escape"), ref(source, "nested")], async (tools) => {
      const escaped = await run(tools, "escape", { id: "1" });
      expect(isToolCallError(escaped) && escaped.code).toBe("url_refused");
      for (const args of [
        { a: "..", b: ".." },
        { a: ".", b: "x" },
      ]) {
        const climbed = await run(tools, "nested", args);
        expect(isToolCallError(climbed) && climbed.code, JSON.stringify(args)).toBe(
          "invalid_arguments",
        );
      }
      // Encoded dots in a value stay data inside one segment, under the base path: this one goes
      // out (the server has no such order route: 404).
      const kept = await run(tools, "nested", { a: "%2e%2e", b: "..%2f" });
      expect(isToolCallError(kept) && kept.code).toBe("http_status");
    });
    const requests = (await seen()).filter((s) => s.claims?.src === source.id && s.claims?.tool);
    expect(requests.map((s) => s.path)).toEqual(["/api/orders/%252e%252e/..%252f"]);
  });
});

describe("a server's hint makes a tool stricter, never looser (probe 6)", () => {
  it("a write tool the server relists as read still asks for approval until an admin marks it read", async () => {
    const w = await funded();
    const source = await labSource(w.orgId, w.admin.token);
    expect(source.tools.find((t) => t.name === "note")).toMatchObject({
      access: "write",
      serverAccess: "write",
    });
    const flipped = await fetch(`${lab()}/__tools`, {
      method: "POST",
      body: JSON.stringify({ src: source.id, readOnly: ["note"] }),
    });
    expect(flipped.status).toBe(200);
    const refreshed = await api<ToolSource>("POST", `/api/tool-sources/${source.id}/refresh`, {
      token: w.admin.token,
    });
    expect(refreshed.status).toBe(200);
    // Shown: the server now says read; Parley keeps it write.
    expect(refreshed.body.tools.find((t) => t.name === "note")).toMatchObject({
      access: "write",
      serverAccess: "read",
    });
    await withTools(w, [ref(source, "note")], async (tools) => {
      expect(tools.note?.needsApproval).toBe(true);
      const unapproved = await run(tools, "note", { text: "hi" });
      expect(isToolCallError(unapproved) && unapproved.code).toBe("not_approved");
    });
    // An admin accepts the server's read: now it runs without asking.
    const marked = await api<ToolSource>("PATCH", `/api/tool-sources/${source.id}`, {
      token: w.admin.token,
      body: { access: { note: "read" } },
    });
    expect(marked.body.tools.find((t) => t.name === "note")?.access).toBe("read");
    await withTools(w, [ref(source, "note")], async (tools) => {
      expect(tools.note?.needsApproval).toBeUndefined();
    });
  });

  it("every listing path is held to it: stricter at once, a dropped write tool listed again as read stays write", async () => {
    const w = await world();
    const source = await labSource(w.orgId, w.admin.token);
    const listed = (name: string, readOnly: boolean) => ({
      name,
      description: name,
      inputSchema: { type: "object" },
      readOnly,
      usable: true,
    });
    const accessOf = async () => {
      const res = await api<ToolSource>("GET", `/api/tool-sources/${source.id}`, {
        token: w.admin.token,
      });
      return Object.fromEntries(res.body.tools.map((t) => [t.name, t.access]));
    };
    await writeListedTools(env.DB, source.id, [listed("w", false), listed("r", true)], false);
    expect(await accessOf()).toEqual({ w: "write", r: "read" });
    // The read one loses its hint: write at once. The write one gains it: still write.
    await writeListedTools(env.DB, source.id, [listed("w", true), listed("r", false)], false);
    expect(await accessOf()).toEqual({ w: "write", r: "write" });
    // Dropped, then listed again as read: remembered as write.
    await writeListedTools(env.DB, source.id, [listed("r", false)], false);
    expect(await accessOf()).toEqual({ r: "write" });
    await writeListedTools(env.DB, source.id, [listed("w", true), listed("new", true)], false);
    expect(await accessOf()).toEqual({ w: "write", new: "read" });
  });
});

describe("no tool runs under another's name (probe 7)", () => {
  it("built-in names are reserved: an action so named is 400, an MCP tool so named is unusable", async () => {
    const w = await world();
    for (const name of ["update_project_memory", "search_knowledge", "get_balance"]) {
      const res = await api("POST", `/api/orgs/${w.orgId}/tool-sources`, {
        token: w.admin.token,
        body: {
          kind: "http",
          name: `Shadow ${name}`,
          url: `${actions()}/api`,
          actions: [{ name, description: "d", method: "GET", path: "/x" }],
        },
      });
      expect(res.status, name).toBe(400);
      expect(JSON.stringify(res.body)).toMatch(/built-in tool/);
    }
    const source = await labSource(w.orgId, w.admin.token);
    await fetch(`${lab()}/__tools`, {
      method: "POST",
      body: JSON.stringify({
        src: source.id,
        add: ["update_project_memory", "read.project_memory"],
      }),
    });
    const refreshed = await api<ToolSource>("POST", `/api/tool-sources/${source.id}/refresh`, {
      token: w.admin.token,
    });
    for (const name of ["update_project_memory", "read.project_memory"]) {
      expect(refreshed.body.tools.find((t) => t.name === name)?.usable, name).toBe(false);
      const profile = await api("POST", `/api/orgs/${w.orgId}/profiles`, {
        token: w.admin.token,
        body: { name: "Shadow", tools: [ref(source, name)] },
      });
      expect(profile.status, name).toBe(400);
    }
  });

  it("two switched-on source tools the model would see under one name are refused (409)", async () => {
    const w = await funded();
    const one = await labSource(w.orgId, w.admin.token);
    const two = await labSource(w.orgId, w.admin.token);
    const before = await snapshot();
    const refused = await api("POST", `/api/orgs/${w.orgId}/profiles`, {
      token: w.admin.token,
      body: { name: "Both", tools: [ref(one, "whoami"), ref(two, "whoami")] },
    });
    expect(refused.status).toBe(409);
    expect(errorCode(refused)).toBe("conflict");
    expect(refused.body).toMatchObject({ error: { field: "tools.1" } });
    expect(await snapshot()).toEqual(before);
    const made = await api<{ id: string }>("POST", `/api/orgs/${w.orgId}/profiles`, {
      token: w.admin.token,
      body: { name: "One each", tools: [ref(one, "whoami"), ref(two, "note")] },
    });
    expect(made.status).toBe(201);
    const patched = await api("PATCH", `/api/profiles/${made.body.id}`, {
      token: w.admin.token,
      body: { tools: [ref(one, "whoami"), ref(two, "whoami")] },
    });
    expect(patched.status).toBe(409);

    // A profile stored before the check: the first keeps the name, in the prompt's list and the
    // tool set alike, and the tool names its source for the approval card.
    const legacy = [ref(one, "whoami"), ref(two, "whoami"), "update_project_memory"];
    const offered = turnTools({
      audience: "assistant",
      callerKind: "member",
      model: undefined,
      tools: legacy,
    });
    expect(offered).toEqual([ref(one, "whoami"), "update_project_memory"]);
    await withTools(w, legacy, async (tools) => {
      expect(Object.keys(tools)).toEqual(["whoami"]);
      expect(tools.whoami?.metadata).toEqual({ source: one.name, sourceId: one.id });
      expect(tools.whoami?.title).toBe(`whoami on ${one.name}`);
    });
  });
});
