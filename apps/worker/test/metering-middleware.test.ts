import { env, runInDurableObject } from "cloudflare:test";
import { applyMarkup, type UsageRow } from "@parley/billing";
import { describe, expect, it } from "vitest";
import type { AssistantAgent } from "../src/agents/assistant-agent.ts";
import type { TurnMetering } from "../src/agents/turn-metering.ts";
import { billingAccount } from "../src/billing/account.ts";
import { type ChatSocket, mustConnect } from "./chat.ts";
import { api, type World } from "./helpers.ts";
import { funded, generation, generationCost, settledBalance, usageRowsOf } from "./metering.ts";

/**
 * The metering middleware (src/agents/metering-middleware.ts) in a real assistant turn: a tool
 * loop's calls each reserved and settled exactly once, by the middleware's own paths, also when the
 * loop is stopped or the object is reset during its second call; the reply's cost is what was
 * settled.
 */

const markup = Number(env.MARKUP_BPS);
const agentPath = (sessionId: string) => `/agents/assistant-agent/${sessionId}`;
const agentStub = (sessionId: string) =>
  env.ASSISTANT_AGENT.get(env.ASSISTANT_AGENT.idFromName(sessionId));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** The first call asks for a tool; the second, after its result, writes slowly. */
const LOOP = "What is my balance? [[tool:get_balance]] [[tps:20]]";

/** The session's call rows, as the middleware left them (`parley_steps`). */
function callsOf(sessionId: string) {
  return runInDurableObject(agentStub(sessionId), (_instance: AssistantAgent, state) =>
    state.storage.sql
      .exec(
        "SELECT hold_id, status, generation_id, model, billable FROM parley_steps ORDER BY hold_id",
      )
      .toArray(),
  );
}

/** What `rows` add up to. */
const sum = (rows: UsageRow[], field: "priceMicros" | "promptTokens" | "completionTokens") =>
  rows.reduce((total, row) => total + row[field], 0);

/**
 * The turn's usage: exactly `<turnId>:0` and `<turnId>:1`, once each (a late second settlement is
 * given the time to land), each charged what the provider reported for its own generation.
 */
async function chargedOnce(w: World, turnId: string): Promise<UsageRow[]> {
  const mine = (row: UsageRow) => row.requestId.startsWith(`${turnId}:`);
  await usageRowsOf(w.orgId, mine, 2);
  await sleep(250);
  const rows = await usageRowsOf(w.orgId, mine, 2);
  expect(rows.map((row) => row.requestId)).toEqual([`${turnId}:0`, `${turnId}:1`]);
  const generations = rows.flatMap((row) => JSON.parse(row.generationIds) as string[]);
  expect(new Set(generations).size).toBe(2);
  for (const row of rows) {
    const cost = await generationCost(row.generationIds);
    expect(row).toMatchObject({ costMicros: cost, priceMicros: applyMarkup(cost, markup) });
  }
  return rows;
}

async function nothingLeft(w: World): Promise<void> {
  expect((await settledBalance(w.orgId)).heldMicros).toBe(0);
  expect((await billingAccount(env, w.orgId).reconcile()).ok).toBe(true);
  await runInDurableObject(agentStub(w.sessionId), (_instance: AssistantAgent, state) => {
    expect(state.storage.sql.exec("SELECT * FROM parley_pending_usage").toArray()).toEqual([]);
  });
}

/** Starts the loop and returns once its second call is streaming text. */
async function inSecondCall(chat: ChatSocket): Promise<string> {
  const id = crypto.randomUUID();
  chat.request(id, LOOP);
  await chat.waitForText(id);
  return id;
}

describe("the metering middleware in a tool loop", { timeout: 30_000 }, () => {
  it("reserves and settles each call once, from its reported cost; the reply's cost is their sum", async () => {
    const w = await funded();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    const id = crypto.randomUUID();
    const turn = await chat.turn("How much is left? [[tool:get_balance]]", { id });
    const turnId = chat.turnIdOf(id) ?? "";
    const rows = await chargedOnce(w, turnId);
    expect(turn.metadata).toMatchObject({
      finish: "completed",
      steps: 2,
      priceMicros: sum(rows, "priceMicros"),
      tokens: {
        promptTokens: sum(rows, "promptTokens"),
        completionTokens: sum(rows, "completionTokens"),
      },
    });
    // Each call's row went reserved → called (its generation id from the response headers) →
    // settled, under the model it ran with.
    expect(await callsOf(w.sessionId)).toEqual([
      expect.objectContaining({
        hold_id: `${turnId}:0`,
        status: "settled",
        model: env.MODEL_ID,
        billable: 1,
      }),
      expect.objectContaining({
        hold_id: `${turnId}:1`,
        status: "settled",
        model: env.MODEL_ID,
        billable: 1,
      }),
    ]);
    const ids = (await callsOf(w.sessionId)).map((row) => row.generation_id);
    expect(ids.every((generationId) => typeof generationId === "string")).toBe(true);
    await nothingLeft(w);
    chat.close();
  });

  it("stopped during its second call: the first is settled from its usage, the second from the provider's record, each once", async () => {
    const w = await funded();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    const id = await inSecondCall(chat);
    chat.send({ type: "cf_agent_chat_request_cancel", id });
    expect((await chat.result(id)).outcome).toBe("aborted");
    const turnId = chat.turnIdOf(id) ?? "";
    const rows = await chargedOnce(w, turnId);
    // The second generation was cut by the stop: what it cost is the provider's record of it.
    const [second] = JSON.parse(rows[1]?.generationIds ?? "[]") as string[];
    expect((await generation(second ?? ""))?.cancelled).toBe(true);
    // The stored reply says it was stopped, and what was settled for it: both calls.
    let stored: { metadata?: Record<string, unknown> }[] = [];
    for (let i = 0; i < 100; i++) {
      stored = (
        await api<{ metadata?: Record<string, unknown> }[]>(
          "GET",
          `${agentPath(w.sessionId)}/get-messages`,
          { token: w.member.token },
        )
      ).body;
      if (stored.at(-1)?.metadata?.priceMicros !== undefined) break;
      await sleep(20);
    }
    expect(stored.at(-1)?.metadata).toMatchObject({
      turnId,
      finish: "stopped",
      steps: 2,
      priceMicros: sum(rows, "priceMicros"),
    });
    await nothingLeft(w);
    chat.close();
  });

  it("the object reset during its second call: the first settled before, the second closed once on restart", async () => {
    const w = await funded();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    const id = await inSecondCall(chat);
    const turnId = chat.turnIdOf(id) ?? "";
    await runInDurableObject(agentStub(w.sessionId), (_instance, state) =>
      state.abort("test: reset in a tool loop"),
    ).catch(() => undefined);
    await chat.waitFor(() => chat.closed !== null).catch(() => undefined);
    // Reconnecting wakes the object; its start closes the call the reset cut.
    const again = await mustConnect(agentPath(w.sessionId), w.member.token);
    await chargedOnce(w, turnId);
    expect((await callsOf(w.sessionId)).map((row) => row.status)).toEqual(["settled", "settled"]);
    await nothingLeft(w);
    again.close();
  });
});

describe("closing what a turn left open", () => {
  it("gives a call's draw back once when two closings of its turn race (an abort and the turn's end)", async () => {
    const w = await funded();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    // A first turn opens the session's lease; its call's generation is one the provider knows.
    const id = crypto.randomUUID();
    await chat.turn("warm up", { id });
    chat.close();
    const [row] = await callsOf(w.sessionId);
    await runInDurableObject(agentStub(w.sessionId), async (instance: AssistantAgent, state) => {
      const { sql } = state.storage;
      const meter = (instance as unknown as { meter: TurnMetering }).meter;
      const lease = sql.exec("SELECT lease_id, drawn_micros FROM parley_lease").one();
      const draw = 1_000;
      // A turn with a call that went out (its lookup takes a moment) and one that never did,
      // drawn on the lease: what a stop between the two calls leaves.
      sql.exec("UPDATE parley_lease SET drawn_micros = drawn_micros + ?", 3 * draw);
      sql.exec(
        `INSERT INTO parley_steps (hold_id, org_id, prompt_estimate, status, created_at, generation_id, lease_id, draw_micros, model)
         VALUES ('turn-race:0', ?, 10, 'called', 1, ?, ?, ?, ?), ('turn-race:1', ?, 10, 'reserved', 2, NULL, ?, ?, ?)`,
        w.orgId,
        row?.generation_id,
        lease.lease_id,
        draw,
        env.MODEL_ID,
        w.orgId,
        lease.lease_id,
        draw,
        env.MODEL_ID,
      );
      const before = sql.exec("SELECT drawn_micros FROM parley_lease").one().drawn_micros as number;
      const prices = {
        table: {
          models: {},
          default: {
            promptMicrosPerMTok: 1,
            completionMicrosPerMTok: 1,
            cachedPromptMicrosPerMTok: null,
            reasoningMicrosPerMTok: null,
          },
        },
        model: env.MODEL_ID,
        markupBps: markup,
      };
      const [first, second] = await Promise.all([
        meter.closeOpen(prices, "turn-race"),
        meter.closeOpen(prices, "turn-race"),
      ]);
      // The call that went out is settled once, by one of them; the other draw comes back once.
      expect([...(first ?? []), ...(second ?? [])]).toHaveLength(1);
      const after = sql.exec("SELECT drawn_micros FROM parley_lease").one().drawn_micros as number;
      const settledPrice = [...(first ?? []), ...(second ?? [])][0]?.priceMicros ?? 0;
      expect(after).toBe(before - draw - draw + settledPrice);
      expect(
        sql
          .exec(
            "SELECT hold_id, status FROM parley_steps WHERE hold_id LIKE 'turn-race:%' ORDER BY hold_id",
          )
          .toArray(),
      ).toEqual([
        { hold_id: "turn-race:0", status: "settled" },
        { hold_id: "turn-race:1", status: "released" },
      ]);
    });
  });
});
