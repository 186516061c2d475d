import { env, runInDurableObject } from "cloudflare:test";
import { maxCallCostMicros, type UsageRow } from "@parley/billing";
import { describe, expect, it } from "vitest";
import type { AssistantAgent } from "../src/agents/assistant-agent.ts";
import { loadCatalogue, stepPricesFor } from "../src/assistants/catalogue.ts";
import { billingAccount } from "../src/billing/account.ts";
import { type ChatSocket, mustConnect, settled } from "./chat.ts";
import { endUserToken, mustOpen, openSession } from "./end-users.ts";
import { api, session, type World } from "./helpers.ts";
import { funded, latestCallMaximum, openLeases, settledBalance, usageRowsOf } from "./metering.ts";
import {
  allowModels,
  INSTANT,
  makeProfile,
  pickModel,
  requestsWith,
  useForProject,
} from "./turn-models.ts";

/**
 * Money follows the model (issue 29 point 4): the first call's hold is sized from the chosen
 * model's prices and the turn's reply length, a session that switches models re-sizes its lease
 * and never draws past it, and every limit holds when a session mixes models.
 */

const markupBps = Number(env.MARKUP_BPS);
const agentPath = (sessionId: string) => `/agents/assistant-agent/${sessionId}`;
const agentStub = (sessionId: string) =>
  env.ASSISTANT_AGENT.get(env.ASSISTANT_AGENT.idFromName(sessionId));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A session's latest call as its row says: what it drew, for what prompt, on which model. */
function latestCall(sessionId: string) {
  return runInDurableObject(agentStub(sessionId), (_instance: AssistantAgent, state) => {
    const row = state.storage.sql
      .exec(
        "SELECT draw_micros, prompt_estimate, model FROM parley_steps ORDER BY created_at DESC, rowid DESC LIMIT 1",
      )
      .one();
    return {
      drawMicros: row.draw_micros as number,
      promptEstimate: row.prompt_estimate as number,
      model: row.model as string,
    };
  });
}

/** What a call of `model` with a prompt of `promptTokens` may cost at most: its hold. */
async function maxCost(model: string, promptTokens: number): Promise<number> {
  const entry = (await loadCatalogue(env)).models.get(model);
  if (!entry) throw new Error(`${model} is not in the catalogue`);
  const prices = stepPricesFor(entry, markupBps);
  const maxOutputTokens = Math.min(Number(env.ASSISTANT_MAX_OUTPUT_TOKENS), entry.maxOutputTokens);
  return maxCallCostMicros({ ...prices, promptTokens, maxOutputTokens });
}

/** The session's lease as the agent keeps it. */
function localLease(sessionId: string) {
  return runInDurableObject(agentStub(sessionId), (_instance: AssistantAgent, state) =>
    state.storage.sql.exec("SELECT granted_micros, drawn_micros FROM parley_lease").one(),
  );
}

const spent = (rows: UsageRow[]) => rows.reduce((sum, row) => sum + row.priceMicros, 0);

describe("the first call's hold", () => {
  it("is sized from the chosen model's prices: a pricier model's first hold is bigger, each exactly its maximum", async () => {
    const w = await funded();
    await allowModels(w, ["parley/dev", "parley/dev-large"]);
    const pricey = await session(w.projectId, w.orgId, w.member.id);
    await pickModel(w, "parley/dev-large", pricey);
    const held: Record<string, number> = {};
    for (const [sessionId, model] of [
      [w.sessionId, "parley/dev"],
      [pricey, "parley/dev-large"],
    ] as const) {
      const chat = await mustConnect(agentPath(sessionId), w.member.token);
      const turn = await chat.turn(`The same question ${INSTANT}`);
      expect(turn.metadata).toMatchObject({ finish: "completed", model: { id: model } });
      const call = await latestCall(sessionId);
      expect(call.model).toBe(model);
      expect(call.drawMicros).toBe(await maxCost(model, call.promptEstimate));
      held[model] = call.drawMicros;
      chat.close();
    }
    // Dev Large: $3.75 (its dearest prompt rate, cache writes) and $15 per million, Dev $1 and $2.
    expect(held["parley/dev-large"]).toBeGreaterThan(5 * (held["parley/dev"] ?? 0));
  });
});

describe("a session that switches models", () => {
  it("re-sizes its lease for the new model's calls, and no call draws past what the lease has left", async () => {
    const w = await funded();
    await allowModels(w, ["parley/dev", "parley/dev-large"]);
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    await settled(agentPath(w.sessionId));
    const withinLease = async () => {
      const lease = await localLease(w.sessionId);
      expect(lease.drawn_micros as number).toBeLessThanOrEqual(lease.granted_micros as number);
    };
    for (const text of ["one", "two", "three"]) {
      expect((await chat.turn(`${text} ${INSTANT}`)).error).toBeNull();
      await withinLease();
    }
    const cheapMax = await latestCallMaximum(w.sessionId);
    await pickModel(w, "parley/dev-large");
    expect((await chat.turn(`dearer ${INSTANT}`)).metadata).toMatchObject({
      model: { id: "parley/dev-large" },
    });
    await withinLease();
    const dearMax = await latestCallMaximum(w.sessionId);
    expect(dearMax).toBeGreaterThan(5 * cheapMax);
    // The lease is asked for again at the dearer call's size (the cheaper model's average says
    // nothing of it): it grows to hold several of its calls, where one sized on the old average
    // held barely one.
    let granted = 0;
    for (let i = 0; i < 100 && granted < 3 * dearMax; i++) {
      granted = Math.max(0, ...(await openLeases(w.orgId)).map((l) => l.amount_micros as number));
      await sleep(20);
    }
    expect(granted).toBeGreaterThanOrEqual(3 * dearMax);
    for (const text of ["four", "five"]) {
      expect((await chat.turn(`${text} ${INSTANT}`)).error).toBeNull();
      await withinLease();
    }
    // Every call was charged at most what it drew, and the ledger adds up.
    const rows = await usageRowsOf(w.orgId, () => true, 6);
    expect(rows).toHaveLength(6);
    const draws = await runInDurableObject(agentStub(w.sessionId), (_i: AssistantAgent, state) =>
      state.storage.sql.exec("SELECT hold_id, draw_micros FROM parley_steps").toArray(),
    );
    for (const row of rows) {
      const draw = draws.find((d) => d.hold_id === row.requestId)?.draw_micros as number;
      expect(row.priceMicros).toBeLessThanOrEqual(draw);
    }
    expect((await settledBalance(w.orgId)).heldMicros).toBe(0);
    expect((await billingAccount(env, w.orgId).reconcile()).ok).toBe(true);
    chat.close();
  }, 30_000);
});

/**
 * A limit crossed by mixing models: cheap turns, then a limit with room for a few more of them
 * but not for one dearer call. The dearer model is refused (no model call), the cheaper one runs
 * again, and nothing is spent past the limit.
 */
async function mixModelsUnder(
  w: World,
  chat: ChatSocket,
  sessionId: string,
  token: string,
  setLimit: (amountMicros: number) => Promise<void>,
  dearer: () => Promise<void>,
  cheaper: () => Promise<void>,
): Promise<void> {
  for (const text of ["one", "two"])
    expect((await chat.turn(`${text} ${INSTANT}`)).error).toBeNull();
  const mine = (row: UsageRow) => row.sessionId === sessionId;
  const before = spent(await usageRowsOf(w.orgId, mine, 2));
  const cheapMax = await latestCallMaximum(sessionId);
  const limit = before + 3 * cheapMax;
  await setLimit(limit);
  await dearer();
  const marker = crypto.randomUUID();
  const refused = await chat.turn(`Too dear ${marker} ${INSTANT}`);
  // Refused at admission, before the message is stored (no reply is written for it).
  expect(refused.parleyError).toMatchObject({ code: "spend_limit" });
  expect(refused.text).toBe("");
  expect(await requestsWith(marker)).toEqual([]);
  const stored = await api<{ id: string }[]>(
    "GET",
    `/agents/assistant-agent/${sessionId}/get-messages`,
    {
      token,
    },
  );
  expect(JSON.stringify(stored.body)).not.toContain(marker);
  await cheaper();
  const again = await chat.turn(`Cheap again ${INSTANT}`);
  expect(again.error).toBeNull();
  expect(again.metadata).toMatchObject({ finish: "completed", model: { id: "parley/dev" } });
  expect(again.metadata.code).toBeUndefined();
  const rows = await usageRowsOf(w.orgId, mine, 3);
  expect(rows).toHaveLength(3);
  expect(spent(rows)).toBeLessThanOrEqual(limit);
  expect((await settledBalance(w.orgId)).heldMicros).toBe(0);
  expect((await billingAccount(env, w.orgId).reconcile()).ok).toBe(true);
}

describe("every limit across models", () => {
  const limits: [string, (w: World, amountMicros: number) => Promise<unknown>][] = [
    [
      "the member's own daily limit",
      (w, amountMicros) =>
        api("PUT", `/api/orgs/${w.orgId}/billing/limits/me`, {
          token: w.member.token,
          body: { period: "day", amountMicros },
        }),
    ],
    [
      "a member's monthly limit set by an admin",
      (w, amountMicros) =>
        api("PUT", `/api/orgs/${w.orgId}/billing/limits/members/${w.member.id}`, {
          token: w.admin.token,
          body: { period: "month", amountMicros },
        }),
    ],
    [
      "a project's weekly limit",
      (w, amountMicros) =>
        api("PUT", `/api/orgs/${w.orgId}/billing/limits/projects/${w.projectId}`, {
          token: w.admin.token,
          body: { period: "week", amountMicros },
        }),
    ],
    [
      "the org's monthly limit",
      (w, amountMicros) =>
        api("PATCH", `/api/orgs/${w.orgId}/billing/settings`, {
          token: w.owner.token,
          body: { orgMonthlyLimitMicros: amountMicros },
        }),
    ],
  ];
  for (const [name, set] of limits) {
    it(`${name} holds when a member's session mixes models`, async () => {
      const w = await funded();
      await allowModels(w, ["parley/dev", "parley/dev-large"]);
      const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
      await settled(agentPath(w.sessionId));
      await mixModelsUnder(
        w,
        chat,
        w.sessionId,
        w.member.token,
        async (amount) => {
          const res = (await set(w, amount)) as { status: number; body: unknown };
          expect(res.status, JSON.stringify(res.body)).toBe(200);
        },
        () => pickModel(w, "parley/dev-large"),
        () => pickModel(w, null),
      );
      chat.close();
    }, 30_000);
  }

  it("an end user's daily limit holds when their app's profile moves to a dearer model", async () => {
    const w = await funded();
    await allowModels(w, ["parley/dev", "parley/dev-large"]);
    const profileId = await makeProfile(w, { model: "parley/dev" });
    await useForProject(w, profileId);
    const { accessToken } = await endUserToken(w, "mixer");
    const opened = await openSession(accessToken);
    const chat = await mustOpen(opened.id, accessToken);
    await settled(agentPath(opened.id));
    const setModel = (model: string) => async () => {
      const res = await api("PATCH", `/api/profiles/${profileId}`, {
        token: w.admin.token,
        body: { model },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    };
    await mixModelsUnder(
      w,
      chat,
      opened.id,
      accessToken,
      async (amount) => {
        const res = await api("PATCH", `/api/apps/${w.appId}`, {
          token: w.admin.token,
          body: { endUserDailyLimitMicros: amount },
        });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
      },
      setModel("parley/dev-large"),
      setModel("parley/dev"),
    );
    chat.close();
  }, 30_000);
});
