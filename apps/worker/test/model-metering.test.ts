import { env, runInDurableObject } from "cloudflare:test";
import { applyMarkup, type UsageRow } from "@parley/billing";
import { describe, expect, it } from "vitest";
import type { AssistantAgent } from "../src/agents/assistant-agent.ts";
import { forgetCatalogue } from "../src/assistants/catalogue.ts";
import { billingAccount } from "../src/billing/account.ts";
import { type ChatSocket, mustConnect } from "./chat.ts";
import { api, type World } from "./helpers.ts";
import { funded, generation, generationCost, settledBalance, usageRowsOf } from "./metering.ts";
import { allowModels, pickModel } from "./turn-models.ts";

/**
 * The metering middleware's exactly-once on a model other than the platform default (issue 29):
 * a tool loop on a session's chosen model stopped, or its object reset, during its second call;
 * each call settled once at that model's figures. And what a restart closes is priced at each
 * call's own model's catalogue prices.
 */

const markup = Number(env.MARKUP_BPS);
const MODEL = "parley/dev-fast";
const agentPath = (sessionId: string) => `/agents/assistant-agent/${sessionId}`;
const agentStub = (sessionId: string) =>
  env.ASSISTANT_AGENT.get(env.ASSISTANT_AGENT.idFromName(sessionId));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** The first call asks for a tool; the second, after its result, writes slowly. */
const LOOP = "What is my balance? [[tool:get_balance]] [[tps:20]]";

function callsOf(sessionId: string) {
  return runInDurableObject(agentStub(sessionId), (_instance: AssistantAgent, state) =>
    state.storage.sql
      .exec("SELECT hold_id, status, model FROM parley_steps ORDER BY hold_id")
      .toArray(),
  );
}

/** The turn's two calls, once each, on the chosen model, each charged its provider's record. */
async function chargedOnce(w: World, turnId: string): Promise<UsageRow[]> {
  const mine = (row: UsageRow) => row.requestId.startsWith(`${turnId}:`);
  await usageRowsOf(w.orgId, mine, 2);
  await sleep(250);
  const rows = await usageRowsOf(w.orgId, mine, 2);
  expect(rows.map((row) => [row.requestId, row.model])).toEqual([
    [`${turnId}:0`, MODEL],
    [`${turnId}:1`, MODEL],
  ]);
  for (const row of rows) {
    const cost = await generationCost(row.generationIds);
    expect(row).toMatchObject({ costMicros: cost, priceMicros: applyMarkup(cost, markup) });
  }
  return rows;
}

async function nothingLeft(w: World): Promise<void> {
  expect((await settledBalance(w.orgId)).heldMicros).toBe(0);
  expect((await billingAccount(env, w.orgId).reconcile()).ok).toBe(true);
}

async function onChosenModel(): Promise<{ w: World; chat: ChatSocket }> {
  const w = await funded();
  await allowModels(w, ["parley/dev", MODEL]);
  await pickModel(w, MODEL);
  return { w, chat: await mustConnect(agentPath(w.sessionId), w.member.token) };
}

/** Starts the loop and returns once its second call is streaming text. */
async function inSecondCall(chat: ChatSocket): Promise<string> {
  const id = crypto.randomUUID();
  chat.request(id, LOOP);
  await chat.waitForText(id);
  return id;
}

describe("the metering middleware on a chosen model", { timeout: 30_000 }, () => {
  it("stopped during its second call: each call settled once, at the chosen model's figures", async () => {
    const { w, chat } = await onChosenModel();
    const id = await inSecondCall(chat);
    chat.send({ type: "cf_agent_chat_request_cancel", id });
    expect((await chat.result(id)).outcome).toBe("aborted");
    const turnId = chat.turnIdOf(id) ?? "";
    const rows = await chargedOnce(w, turnId);
    const [second] = JSON.parse(rows[1]?.generationIds ?? "[]") as string[];
    expect((await generation(second ?? ""))?.cancelled).toBe(true);
    expect((await callsOf(w.sessionId)).map((row) => [row.status, row.model])).toEqual([
      ["settled", MODEL],
      ["settled", MODEL],
    ]);
    await nothingLeft(w);
    chat.close();
  });

  it("its object reset during the second call: the first settled before, the second closed once on restart, at the chosen model's figures", async () => {
    const { w, chat } = await onChosenModel();
    const id = await inSecondCall(chat);
    const turnId = chat.turnIdOf(id) ?? "";
    await runInDurableObject(agentStub(w.sessionId), (_instance, state) =>
      state.abort("test: reset on a chosen model"),
    ).catch(() => undefined);
    await chat.waitFor(() => chat.closed !== null).catch(() => undefined);
    const again = await mustConnect(agentPath(w.sessionId), w.member.token);
    await chargedOnce(w, turnId);
    expect((await callsOf(w.sessionId)).map((row) => [row.status, row.model])).toEqual([
      ["settled", MODEL],
      ["settled", MODEL],
    ]);
    await nothingLeft(w);
    again.close();
  });
});

describe("a call a reset left open, with no provider record to price it", () => {
  it("is closed at its own model's catalogue prices, an operator's model too (not the platform default's)", async () => {
    const w = await funded();
    const model = `test/dear-${crypto.randomUUID().slice(0, 8)}`;
    const operator = { authorization: `Bearer ${env.OPERATOR_SECRET}` };
    // $5 and $10 per million tokens: five times the platform default model's prices.
    const added = await api("PUT", "/api/operator/models", {
      headers: operator,
      body: {
        id: model,
        provider: { type: "openrouter" },
        displayName: "Dear",
        contextWindow: 100_000,
        maxOutputTokens: 4_096,
        capabilities: { tools: true, reasoning: false },
        freePreview: false,
        pricing: { prompt: "0.000005", completion: "0.00001" },
      },
    });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    forgetCatalogue();
    // A first turn opens the session's lease.
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    await chat.turn("warm up");
    chat.close();
    const holdId = `turn-${crypto.randomUUID()}:0`;
    await runInDurableObject(agentStub(w.sessionId), async (instance: AssistantAgent, state) => {
      const { sql } = state.storage;
      const lease = sql.exec("SELECT lease_id FROM parley_lease").one();
      const draw = 50_000;
      // A call of the operator's model that went out without a generation id (an endpoint
      // that keeps no records), cut by a reset after 400 characters of a 1,000-token prompt.
      sql.exec("UPDATE parley_lease SET drawn_micros = drawn_micros + ?", draw);
      sql.exec(
        `INSERT INTO parley_steps (hold_id, org_id, prompt_estimate, status, created_at, generation_id, lease_id, draw_micros, model, streamed_chars)
         VALUES (?, ?, 1000, 'called', ?, NULL, ?, ?, ?, 400)`,
        holdId,
        w.orgId,
        Date.now(),
        lease.lease_id,
        draw,
        model,
      );
      await (instance as unknown as { onStart(): Promise<void> }).onStart();
    });
    const [row] = await usageRowsOf(w.orgId, (r) => r.requestId === holdId, 1);
    // 1,000 prompt tokens at $5 and 100 (400 characters) at $10 per million: 6,000 micros.
    const cost = (1_000 * 5_000_000 + 100 * 10_000_000) / 1_000_000;
    expect(row).toMatchObject({ model, costMicros: cost, priceMicros: applyMarkup(cost, markup) });
    await nothingLeft(w);
    await api("POST", "/api/operator/models/retire", { headers: operator, body: { id: model } });
  });
});
