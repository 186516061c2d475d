import { env, runInDurableObject } from "cloudflare:test";
import type { ToolSource } from "@parley/shared";
import type { ToolSet } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { billingAccount } from "../src/billing/account.ts";
import { isToolCallError } from "../src/tools/call-error.ts";
import { sourceClient } from "../src/tools/source-client.ts";
import type { ToolCallMeter } from "../src/tools/tool-meter.ts";
import { sourceTools } from "../src/tools/turn-tools.ts";
import { type ChatSocket, mustConnect } from "./chat.ts";
import { api, type World } from "./helpers.ts";
import { funded, settledBalance } from "./metering.ts";
import { actions, down, flaky, labSource, register, seen, setFlaky, shareJwks } from "./tools.ts";
import { INSTANT, makeProfile, useForProject } from "./turn-models.ts";

/**
 * What a tool call is charged, and what a reply says it cost (docs/2026-12-06-tools.md, "Which
 * failed calls are charged", "A reply's cost"): a call whose request never reached the tenant's
 * server gives its hold back and is recorded at price 0; a reply's `priceMicros` is every model
 * call and every tool call of it, a tool approval's continuation included, exactly what billing's
 * activity lists.
 */

beforeAll(shareJwks);
afterAll(() => setFlaky(true));

const agent = (sessionId: string) =>
  env.ASSISTANT_AGENT.get(env.ASSISTANT_AGENT.idFromName(sessionId));
const ref = (source: ToolSource, tool: string) => `source:${source.id}:${tool}`;
type Execute = (args: unknown, options: Record<string, unknown>) => Promise<unknown>;

/** Calls `name` of the turn's source tools inside the session's chat object, as a turn would. */
async function callTool(
  w: World,
  profileTools: string[],
  name: string,
  args: unknown,
  during?: () => Promise<void>,
): Promise<unknown> {
  return runInDurableObject(agent(w.sessionId), async (instance) => {
    const meter = (instance as unknown as { toolCalls: ToolCallMeter }).toolCalls;
    const tools: ToolSet = await sourceTools(env, {
      orgId: w.orgId,
      projectId: w.projectId,
      sessionId: w.sessionId,
      caller: { kind: "member", userId: w.member.id, appId: null },
      profileTools,
      meter,
    });
    const execute = tools[name]?.execute as unknown as Execute;
    const running = execute(args, { toolCallId: crypto.randomUUID(), messages: [] }).then(
      () => null,
      (error: unknown) => error,
    );
    await during?.();
    const error = await running;
    await Promise.allSettled([...meter.inFlight]);
    await meter.settleClosed();
    return error;
  });
}

interface CallRow {
  toolName: string;
  status: string;
  errorCode: string | null;
  priceMicros: number;
}

async function callsOf(w: World): Promise<CallRow[]> {
  const res = await api<{ items: CallRow[] }>("GET", `/api/sessions/${w.sessionId}/tool-calls`, {
    token: w.member.token,
  });
  return res.body.items;
}

/** What the org spent and holds, its leases given back first. */
async function spent(w: World, start: number) {
  const balance = await settledBalance(w.orgId);
  return { spent: start - balance.availableMicros, held: balance.heldMicros };
}

const codeOf = (error: unknown) => (isToolCallError(error) ? error.code : String(error));

describe("a call whose request never reached the tenant's server is not charged", () => {
  it("an HTTP action whose server refuses the connection: unreachable, hold given back, price 0", async () => {
    const w = await funded(1_000_000);
    const source = await register(w.orgId, w.admin.token, {
      kind: "http",
      name: "Down",
      url: `${down()}/api`,
      priceMicros: 1_000,
      actions: [
        { name: "ping", description: "Ping", method: "POST", path: "/ping", access: "read" },
      ],
    });
    const error = await callTool(w, [ref(source, "ping")], "ping", {});
    expect(codeOf(error)).toBe("unreachable");
    expect(await spent(w, 1_000_000)).toEqual({ spent: 0, held: 0 });
    expect(await callsOf(w)).toEqual([
      expect.objectContaining({ status: "failed", errorCode: "unreachable", priceMicros: 0 }),
    ]);
  });

  it("Cloudflare's edge saying the origin was not reached (521, 530) is not charged; 520 and 524 are", async () => {
    const w = await funded(1_000_000);
    const source = await register(w.orgId, w.admin.token, {
      kind: "http",
      name: "Edge",
      url: `${actions()}/api`,
      priceMicros: 1_000,
      actions: ["521", "530", "520", "524"].map((code) => ({
        name: `status_${code}`,
        description: `Answers ${code}`,
        method: "GET",
        path: `/status/${code}`,
        access: "read",
      })),
    });
    const codes: Record<string, string> = {};
    for (const status of ["521", "530", "520", "524"]) {
      codes[status] = codeOf(
        await callTool(w, [ref(source, `status_${status}`)], `status_${status}`, {}),
      );
    }
    expect(codes).toEqual({
      "521": "unreachable",
      "530": "unreachable",
      "520": "http_status",
      "524": "http_status",
    });
    // The two the origin may have read are charged; the two it never got are not.
    expect(await spent(w, 1_000_000)).toEqual({ spent: 2_000, held: 0 });
    const byTool = Object.fromEntries((await callsOf(w)).map((c) => [c.toolName, c.priceMicros]));
    expect(byTool).toEqual({ status_521: 0, status_530: 0, status_520: 1_000, status_524: 1_000 });
  });

  it("an MCP server that stopped: its calls, on the live connection or a new one, are not charged", async () => {
    const w = await funded(1_000_000);
    await setFlaky(true);
    const url = `${flaky()}/mcp`;
    const connected = await labSource(w.orgId, w.admin.token, { url, priceMicros: 1_000 });
    const fresh = await labSource(w.orgId, w.admin.token, { url, priceMicros: 1_000 });
    // One call while it runs: the source's client object keeps its connection, charged once.
    expect(await callTool(w, [ref(connected, "whoami")], "whoami", {})).toBeNull();
    await setFlaky(false);
    try {
      // The connection's `tools/call` is refused, and a new connection's `initialize` is.
      expect(codeOf(await callTool(w, [ref(connected, "whoami")], "whoami", {}))).toBe(
        "unreachable",
      );
      expect(codeOf(await callTool(w, [ref(fresh, "whoami")], "whoami", {}))).toBe("unreachable");
    } finally {
      await setFlaky(true);
    }
    expect(await spent(w, 1_000_000)).toEqual({ spent: 1_000, held: 0 });
    const calls = await callsOf(w);
    expect(calls.map((c) => [c.status, c.errorCode, c.priceMicros]).sort()).toEqual([
      ["failed", "unreachable", 0],
      ["failed", "unreachable", 0],
      ["ok", null, 1_000],
    ]);
  });

  it("an MCP server that refuses Parley's token at `initialize`: the tool was never called, not charged", async () => {
    const w = await funded(1_000_000);
    const source = await labSource(w.orgId, w.admin.token, { priceMicros: 1_000 });
    // The token's audience is the source's URL: with a query the lab does not take it (401).
    await env.DB.prepare("UPDATE tool_sources SET url = ? WHERE id = ?")
      .bind(`${source.url}?tenant=other`, source.id)
      .run();
    const error = await callTool(w, [ref(source, "whoami")], "whoami", {});
    expect(codeOf(error)).toBe("unauthorized");
    // The lab refused the connection's requests; no `tools/call` of this source reached it.
    const log = await seen();
    expect(log.some((s) => s.server === "lab" && s.refused !== null)).toBe(true);
    expect(log.some((s) => s.claims?.src === source.id && s.rpc === "tools/call")).toBe(false);
    expect(await spent(w, 1_000_000)).toEqual({ spent: 0, held: 0 });
    expect(await callsOf(w)).toEqual([
      expect.objectContaining({ status: "failed", errorCode: "unauthorized", priceMicros: 0 }),
    ]);
  });

  it("a call whose source's client object fails mid-call is closed at once, charged as it may have gone out", async () => {
    const w = await funded(1_000_000);
    const source = await labSource(w.orgId, w.admin.token, { priceMicros: 1_000 });
    const error = await callTool(w, [ref(source, "slow")], "slow", { ms: 800 }, async () => {
      await new Promise((r) => setTimeout(r, 300));
      await runInDurableObject(sourceClient(env, source.id), (_instance, state) =>
        state.abort("test: the source's client object reset mid-call"),
      ).catch(() => undefined);
    });
    expect(codeOf(error)).toBe("unreachable");
    // Not left open until the chat object restarts: settled and recorded now.
    expect(await spent(w, 1_000_000)).toEqual({ spent: 1_000, held: 0 });
    expect(await callsOf(w)).toEqual([
      expect.objectContaining({ status: "failed", errorCode: "unreachable", priceMicros: 1_000 }),
    ]);
  });
});

type Chunk = Record<string, unknown>;
interface Figures {
  priceMicros: number;
  toolPriceMicros: number;
  steps: number;
  tokens: { promptTokens: number; completionTokens: number };
}

/** The session's replies' figures as its chat object stored them. */
function storedFigures(sessionId: string): Promise<Figures[]> {
  return runInDurableObject(agent(sessionId), async (instance) =>
    (instance as unknown as { messages: { role: string; metadata?: Figures }[] }).messages
      .filter((m) => m.role === "assistant")
      .map((m) => structuredClone(m.metadata as Figures)),
  );
}

/** Everything billing's usage lists for the session: model calls and tool calls. */
async function sessionUsage(w: World) {
  await settledBalance(w.orgId);
  const rows = (
    await billingAccount(env, w.orgId).usageRows({ from: 0, to: Date.now() + 1, limit: 100 })
  ).filter((row) => row.sessionId === w.sessionId);
  const models = rows.filter((row) => !row.model.startsWith("tool:"));
  return {
    priceMicros: rows.reduce((sum, row) => sum + row.priceMicros, 0),
    toolPriceMicros: rows
      .filter((row) => row.model.startsWith("tool:"))
      .reduce((sum, row) => sum + row.priceMicros, 0),
    steps: models.length,
    tokens: models.reduce((sum, row) => sum + row.promptTokens + row.completionTokens, 0),
  };
}

const sumTokens = (f: Figures) => f.tokens.promptTokens + f.tokens.completionTokens;

async function answer(chat: ChatSocket, toolCallId: string, approved: boolean): Promise<void> {
  const start = chat.frames.length;
  chat.send({ type: "cf_agent_tool_approval", toolCallId, approved, autoContinue: true });
  await chat.waitFor(
    (f) =>
      (f.type === "cf_agent_use_chat_response" && f.done === true) || f.type === "parley_error",
    15_000,
    start,
  );
}

describe("a reply's cost is everything it used", () => {
  it("a read tool's charge is in the reply's price, which adds up with billing's activity and the session's spend", async () => {
    const w = await funded(1_000_000);
    const source = await labSource(w.orgId, w.admin.token, { priceMicros: 1_000 });
    await useForProject(w, await makeProfile(w, { tools: [ref(source, "whoami")] }));
    const chat = await mustConnect(`/agents/assistant-agent/${w.sessionId}`, w.member.token);
    const turn = await chat.turn(`Who am I? ${INSTANT} [[tool:whoami]]`);
    expect(turn.error).toBeNull();
    chat.close();
    const [reply] = await storedFigures(w.sessionId);
    const usage = await sessionUsage(w);
    expect(usage.toolPriceMicros).toBe(1_000);
    expect(reply).toMatchObject({
      priceMicros: usage.priceMicros,
      toolPriceMicros: 1_000,
      steps: 2,
    });
    expect(sumTokens(reply as Figures)).toBe(usage.tokens);
    // The live reply said the same as the stored one.
    const live = turn.chunks.filter((c: Chunk) => c.type === "message-metadata").at(-1) as
      | { messageMetadata: Figures }
      | undefined;
    expect(live?.messageMetadata.priceMicros).toBe(usage.priceMicros);
    const session = await api<{ spendMicros: number }>("GET", `/api/sessions/${w.sessionId}`, {
      token: w.member.token,
    });
    expect(session.body.spendMicros).toBe(usage.priceMicros);
  });

  it("after an approval the reply keeps the steps before it and adds the continuation's and the write's charge", async () => {
    const w = await funded(1_000_000);
    const source = await labSource(w.orgId, w.admin.token, { priceMicros: 1_000 });
    await useForProject(w, await makeProfile(w, { tools: [ref(source, "note")] }));
    const chat = await mustConnect(`/agents/assistant-agent/${w.sessionId}`, w.member.token);
    const asked = await chat.turn(`Note it ${INSTANT} [[tool:note {"text":"hi"}]]`);
    const request = asked.chunks.find((c: Chunk) => c.type === "tool-approval-request") as
      | { toolCallId: string }
      | undefined;
    expect(request?.toolCallId).toBeTruthy();
    const [before] = await storedFigures(w.sessionId);
    expect(before).toMatchObject({ steps: 1, toolPriceMicros: 0 });
    await answer(chat, request?.toolCallId as string, true);
    chat.close();
    const replies = await storedFigures(w.sessionId);
    expect(replies).toHaveLength(1);
    const usage = await sessionUsage(w);
    expect(usage).toMatchObject({ toolPriceMicros: 1_000, steps: 2 });
    expect(replies[0]).toMatchObject({
      priceMicros: usage.priceMicros,
      toolPriceMicros: 1_000,
      steps: 2,
    });
    expect(sumTokens(replies[0] as Figures)).toBe(usage.tokens);
    expect(sumTokens(replies[0] as Figures)).toBeGreaterThan(sumTokens(before as Figures));
  });
});
