import { env } from "cloudflare:test";
import { applyMarkup } from "@parley/billing";
import { devReply } from "@parley/dev-model/reply";
import { describe, expect, it } from "vitest";
import type { AssistantAgent } from "../src/agents/assistant-agent.ts";
import { billingAccount } from "../src/billing/account.ts";
import { connect, mustConnect, settled } from "./chat.ts";
import { api, type World, world } from "./helpers.ts";
import {
  forgetAccess,
  funded,
  generationCost,
  latestCallMaximum,
  modelRequests,
  settledBalance,
  usageRowsOf,
} from "./metering.ts";

const agentPath = (sessionId: string) => `/agents/assistant-agent/${sessionId}`;
const markup = Number(env.MARKUP_BPS);
const devModel = env.MODEL_BASE_URL.replace(/\/api\/v1$/, "");

/**
 * The org's usage rows of one turn (one per model step), once metering has landed. Usage is keyed by
 * the server's turn id (from the reply's metadata), never by the client's request id.
 */
const stepsOf = (w: World, turnId: string | null, expected: number) => {
  expect(turnId).toMatch(/^turn-/);
  return usageRowsOf(w.orgId, (row) => row.requestId.startsWith(`${turnId}:`), expected);
};
const costOf = generationCost;

type Stored = { role: string; metadata?: Record<string, unknown> }[];

/**
 * The session's stored transcript once its last message satisfies `ready` (a stopped or failed
 * reply is stored at once and gets its settled cost a moment later), or as it is after 3 s.
 */
async function storedOnce(w: World, ready: (last: Stored[number]) => boolean): Promise<Stored> {
  let body: Stored = [];
  for (let i = 0; i < 150; i++) {
    body = (
      await api<Stored>("GET", `${agentPath(w.sessionId)}/get-messages`, { token: w.member.token })
    ).body;
    const last = body.at(-1);
    if (last && ready(last)) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  return body;
}

describe("AssistantAgent", () => {
  it("charges a turn exactly the provider's reported cost plus markup, and says so in the reply", async () => {
    const w = await funded();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    const id = crypto.randomUUID();
    const turn = await chat.turn("Draft a launch plan", { id });
    expect(turn.text).toBe(devReply("Draft a launch plan"));
    const [step] = await stepsOf(w, chat.turnIdOf(id), 1);
    const cost = await costOf(step?.generationIds ?? "[]");
    expect(step).toMatchObject({
      billable: 1,
      costMicros: cost,
      priceMicros: applyMarkup(cost, markup),
      memberId: w.member.id,
      sessionId: w.sessionId,
    });
    expect(turn.metadata).toMatchObject({ priceMicros: applyMarkup(cost, markup), steps: 1 });
    const stored = await api<{ role: string; metadata?: Record<string, unknown> }[]>(
      "GET",
      `${agentPath(w.sessionId)}/get-messages`,
      {
        token: w.member.token,
      },
    );
    expect(stored.body.at(-1)?.metadata).toMatchObject({
      priceMicros: applyMarkup(cost, markup),
      steps: 1,
    });
    const balance = await settledBalance(w.orgId);
    expect(balance).toMatchObject({
      postedMicros: 10_000_000 - applyMarkup(cost, markup),
      heldMicros: 0,
    });
    chat.close();
  });

  it("only the session's owner reaches it", async () => {
    const w = await funded();
    for (const token of [w.otherMember.token, w.admin.token, w.outsider.token]) {
      const upgrade = await connect(agentPath(w.sessionId), token);
      expect(upgrade.status).toBe(404);
    }
  });
});

describe("tools", () => {
  it("a multi-step tool turn is charged the sum of its steps", async () => {
    const w = await funded();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    const id = crypto.randomUUID();
    const turn = await chat.turn("How much is left? [[tool:get_balance]]", { id });
    const steps = await stepsOf(w, chat.turnIdOf(id), 2);
    const turnId = chat.turnIdOf(id);
    expect(steps.map((s) => s.requestId)).toEqual([`${turnId}:0`, `${turnId}:1`]);
    let price = 0;
    for (const step of steps) {
      const cost = await costOf(step.generationIds);
      expect(step.costMicros).toBe(cost);
      expect(step.priceMicros).toBe(applyMarkup(cost, markup));
      price += step.priceMicros;
    }
    expect(turn.metadata).toMatchObject({ steps: 2, priceMicros: price });
    expect(turn.text).toMatch(/Dev model got tool result from get_balance/);
    expect(turn.chunks.some((c) => c.type === "tool-output-available")).toBe(true);
    chat.close();
  });

  it("cannot be aimed at another org's project: tools take no ids, extra arguments are refused", async () => {
    const w = await funded();
    await env.DB.prepare("UPDATE projects SET memory = ? WHERE id = ?")
      .bind(JSON.stringify({ secret: "other-org-plans" }), w.otherProjectId)
      .run();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    const turn = await chat.turn(
      `Read it [[tool:read_project_memory {"projectId":"${w.otherProjectId}"}]]`,
    );
    expect(JSON.stringify(turn.chunks)).not.toContain("other-org-plans");
    const plain = await chat.turn("Read ours [[tool:read_project_memory]]");
    expect(JSON.stringify(plain.chunks)).toContain("ship");
    chat.close();
  });

  it("writes the project memory only after the member approves, and not at all after a refusal", async () => {
    const w = await funded();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    const memory = async () =>
      JSON.parse(
        (
          await env.DB.prepare("SELECT memory FROM projects WHERE id = ?")
            .bind(w.projectId)
            .first<{ memory: string }>()
        )?.memory ?? "{}",
      );

    const ask = async (text: string) => {
      const turn = await chat.turn(text);
      const request = turn.chunks.find((c) => c.type === "tool-approval-request") as
        | { toolCallId?: string }
        | undefined;
      expect(request?.toolCallId).toBeTruthy();
      return request?.toolCallId as string;
    };
    const answer = async (toolCallId: string, approved: boolean) => {
      const start = chat.frames.length;
      chat.send({ type: "cf_agent_tool_approval", toolCallId, approved, autoContinue: true });
      const done = await chat.waitFor(
        (f) => f.type === "cf_agent_use_chat_response" && f.done === true,
        15_000,
        start,
      );
      return done;
    };

    const refused = await ask(
      'Please note the tone [[tool:update_project_memory {"set":{"tone":"dry"}}]]',
    );
    expect(await memory()).toEqual({ goal: "ship" });
    await answer(refused, false);
    expect(await memory()).toEqual({ goal: "ship" });

    const approved = await ask(
      'Note the tone again [[tool:update_project_memory {"set":{"tone":"dry"}}]]',
    );
    expect(await memory()).toEqual({ goal: "ship" });
    await answer(approved, true);
    expect(await memory()).toEqual({ goal: "ship", tone: "dry" });
    chat.close();
  });
});

describe("the credit gate", () => {
  it("refuses a message the org cannot afford before storing it: no reply, no provider call, however often it is sent", async () => {
    const w = await funded(1);
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    const calls = await modelRequests();
    for (let attempt = 0; attempt < 3; attempt++) {
      const turn = await chat.turn("Anything?");
      expect(turn.parleyError).toMatchObject({ code: "insufficient_credits" });
      expect(turn.parleyError?.message).toMatch(/out of credits/);
      expect(turn.text).toBe("");
      expect(turn.outcome).toBe("error");
    }
    expect(await modelRequests()).toBe(calls);
    // Nothing piles up: the refused messages and no refusal replies are in the transcript.
    const stored = await api<{ role: string; metadata?: unknown }[]>(
      "GET",
      `${agentPath(w.sessionId)}/get-messages`,
      {
        token: w.member.token,
      },
    );
    expect(stored.body).toEqual([]);
    chat.close();
  });

  it("refuses with spend_limit naming the member's daily limit and its reset, storing nothing", async () => {
    const w = await funded();
    await billingAccount(env, w.orgId).updateSettings(w.orgId, { memberDailyLimitMicros: 10 });
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    const turn = await chat.turn("Anything?");
    const tomorrow = new Date();
    tomorrow.setUTCHours(24, 0, 0, 0);
    expect(turn.parleyError).toEqual({
      code: "spend_limit",
      message: expect.stringMatching(/daily spending limit/),
      details: { limit: "member_daily", period: "day", resetsAt: tomorrow.toISOString() },
    });
    expect(turn.text).toBe("");
    const stored = await api<unknown[]>("GET", `${agentPath(w.sessionId)}/get-messages`, {
      token: w.member.token,
    });
    expect(stored.body).toEqual([]);
    // Under the limit again (an admin raised it), the next message is answered.
    await billingAccount(env, w.orgId).updateSettings(w.orgId, { memberDailyLimitMicros: null });
    const answered = await chat.turn("Now?");
    expect(answered.text).toMatch(/^Dev model reply/);
    chat.close();
  });

  it("two sessions racing for the last credits: exactly the affordable calls run, the refused one calls no provider", async () => {
    const w = await world();
    const { session } = await import("./helpers.ts");
    const second = await session(w.projectId, w.orgId, w.member.id);
    // Measure the hold one such call takes (its maximum cost: prompt estimate + max output tokens,
    // with markup) on an identical probe session while its reply streams.
    const probe = await funded(1_000_000_000);
    const chatProbe = await mustConnect(agentPath(probe.sessionId), probe.member.token);
    const probeId = crypto.randomUUID();
    chatProbe.request(probeId, "race [[tps:50]]");
    await chatProbe.waitForText(probeId);
    const hold = await latestCallMaximum(probe.sessionId);
    expect(hold).toBeGreaterThan(0);
    await chatProbe.result(probeId);
    chatProbe.close();
    // Credits for one hold and a half: exactly one of two racing calls can be reserved.
    await billingAccount(env, w.orgId).open({
      orgId: w.orgId,
      grantMicros: Math.floor(hold * 1.5),
    });

    const a = await mustConnect(agentPath(w.sessionId), w.member.token);
    const b = await mustConnect(agentPath(second), w.member.token);
    const calls = await modelRequests();
    const [ta, tb] = await Promise.all([a.turn("race [[tps:50]]"), b.turn("race [[tps:50]]")]);
    const refused = [ta, tb].filter((t) => t.parleyError?.code === "insufficient_credits");
    const answered = [ta, tb].filter((t) => t.text.startsWith("Dev model reply"));
    expect(refused).toHaveLength(1);
    expect(answered).toHaveLength(1);
    expect(await modelRequests()).toBe(calls + 1);
    const balance = await settledBalance(w.orgId);
    expect(balance.availableMicros).toBeGreaterThanOrEqual(0);
    expect((await billingAccount(env, w.orgId).reconcile()).ok).toBe(true);
    a.close();
    b.close();
  });
});

describe("faults and concurrency", () => {
  it("a stopped reply is settled once, to what the provider reported for the cut generation", async () => {
    const w = await funded();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    const id = crypto.randomUUID();
    chat.request(id, "go on [[hang-after:4]]");
    await chat.waitForText(id);
    await new Promise((r) => setTimeout(r, 100));
    chat.send({ type: "cf_agent_chat_request_cancel", id });
    const result = await chat.result(id);
    expect(result.outcome).toBe("aborted");
    const steps = await stepsOf(w, chat.turnIdOf(id), 1);
    expect(steps).toHaveLength(1);
    const cost = await costOf(steps[0]?.generationIds ?? "[]");
    expect(steps[0]).toMatchObject({ costMicros: cost, priceMicros: applyMarkup(cost, markup) });
    const balance = await settledBalance(w.orgId);
    expect(balance.heldMicros).toBe(0);
    chat.close();
  });

  it("a stopped reply's stored metadata says it was stopped and what was settled for it", async () => {
    const w = await funded();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    const id = crypto.randomUUID();
    chat.request(id, "go on [[hang-after:4]]");
    await chat.waitForText(id);
    await new Promise((r) => setTimeout(r, 100));
    chat.send({ type: "cf_agent_chat_request_cancel", id });
    expect((await chat.result(id)).outcome).toBe("aborted");
    const [step] = await stepsOf(w, chat.turnIdOf(id), 1);
    const stored = {
      body: await storedOnce(w, (last) => last.metadata?.priceMicros !== undefined),
    };
    expect(stored.body.at(-1)?.role).toBe("assistant");
    expect(stored.body.at(-1)?.metadata).toMatchObject({
      turnId: chat.turnIdOf(id),
      finish: "stopped",
      priceMicros: step?.priceMicros,
      steps: 1,
      tokens: { promptTokens: step?.promptTokens, completionTokens: step?.completionTokens },
    });
    expect(stored.body.at(-1)?.metadata).not.toHaveProperty("code");
    expect(step?.priceMicros).toBeGreaterThan(0);
    chat.close();
  });

  it("a reply the model failed mid-stream is stored as failed, with its code and its settled cost", async () => {
    const w = await funded();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    const id = crypto.randomUUID();
    const turn = await chat.turn("break please [[error-after:3]]", { id });
    expect(turn.error).toMatch(/model failed to answer/);
    const [step] = await stepsOf(w, chat.turnIdOf(id), 1);
    const stored = {
      body: await storedOnce(w, (last) => last.metadata?.priceMicros !== undefined),
    };
    expect(stored.body.at(-1)?.metadata).toMatchObject({
      turnId: chat.turnIdOf(id),
      finish: "failed",
      code: "model_error",
      priceMicros: step?.priceMicros,
      steps: 1,
    });
    // A completed reply says so, with its cost, on the wire and in the transcript.
    const next = await chat.turn("and now?");
    expect(next.metadata).toMatchObject({ finish: "completed", steps: 1 });
    const after = await api<{ metadata?: Record<string, unknown> }[]>(
      "GET",
      `${agentPath(w.sessionId)}/get-messages`,
      { token: w.member.token },
    );
    expect(after.body.at(-1)?.metadata).toMatchObject({ finish: "completed", steps: 1 });
    expect(after.body.at(-3)?.metadata).toMatchObject({ finish: "failed", code: "model_error" });
    chat.close();
  });

  it("refuses a second message while a reply is being written, storing and charging nothing for it", async () => {
    const w = await funded();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    const first = crypto.randomUUID();
    chat.request(first, "slowly [[tps:40]]");
    await chat.waitForText(first);
    const second = await chat.turn("me too");
    expect(second.parleyError?.code).toBe("conflict");
    await chat.result(first);
    const stored = await api<{ role: string }[]>("GET", `${agentPath(w.sessionId)}/get-messages`, {
      token: w.member.token,
    });
    expect(stored.body.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(await stepsOf(w, chat.turnIdOf(first), 1)).toHaveLength(1);
    // After the reply, the next message goes through.
    expect((await chat.turn("now me")).text).toBe(devReply("now me"));
    chat.close();
  });

  it("answers every socket of a session that sends at once: one turn runs, the others hear conflict (outside probe)", async () => {
    const w = await funded();
    const chats = await Promise.all(
      Array.from({ length: 5 }, () => mustConnect(agentPath(w.sessionId), w.member.token)),
    );
    const results = await Promise.all(
      chats.map((chat, i) => chat.turn(`all at once ${i} [[tps:40]]`)),
    );
    const ran = results.filter((result) => result.parleyError === null);
    const refused = results.filter((result) => result.parleyError?.code === "conflict");
    expect(ran).toHaveLength(1);
    expect(refused).toHaveLength(chats.length - 1);
    const stored = await api<{ role: string }[]>("GET", `${agentPath(w.sessionId)}/get-messages`, {
      token: w.member.token,
    });
    expect(stored.body.map((m) => m.role)).toEqual(["user", "assistant"]);
    for (const chat of chats) chat.close();
  });

  it("refuses a removed member on the next turn, once the access it kept has lapsed", async () => {
    const w = await funded();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    await settled(agentPath(w.sessionId));
    // Removed behind the API's back: no push closes the socket, but the access the agent kept
    // lapses (AUTHZ_CACHE_MS) and the next turn reads D1 again.
    await env.DB.prepare("DELETE FROM memberships WHERE org_id = ? AND user_id = ?")
      .bind(w.orgId, w.member.id)
      .run();
    await forgetAccess(w.sessionId);
    const calls = await modelRequests();
    const refused = await chat.turn("still here?");
    expect(refused.parleyError?.code).toBe("not_found");
    expect(await modelRequests()).toBe(calls);
  });

  it("shows the model a bounded window of a long history while the whole transcript stays stored", async () => {
    const w = await funded();
    const { runInDurableObject } = await import("cloudflare:test");
    const stub = env.ASSISTANT_AGENT.get(env.ASSISTANT_AGENT.idFromName(w.sessionId));
    await runInDurableObject(stub, async (instance: AssistantAgent) => {
      await instance.persistMessages(
        Array.from({ length: 2000 }, (_, i) => ({
          id: `h-${i}`,
          role: i % 2 === 0 ? ("user" as const) : ("assistant" as const),
          parts: [{ type: "text" as const, text: `history message number ${i} `.repeat(4) }],
        })),
      );
    });
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    await fetch(`${devModel}/__dev/reset`, { method: "POST" });
    await chat.turn("and now?");
    const requests = (
      (await (await fetch(`${devModel}/__dev/requests`)).json()) as {
        requests: { body: { messages: unknown[] } }[];
      }
    ).requests;
    const sent = requests.at(-1)?.body.messages.length ?? 0;
    expect(sent).toBeGreaterThan(2);
    expect(sent).toBeLessThan(400);
    const stored = await api<unknown[]>("GET", `${agentPath(w.sessionId)}/get-messages`, {
      token: w.member.token,
    });
    expect(stored.body).toHaveLength(2002);
    chat.close();
  });
});

describe("sessions", () => {
  it("list their title from the first exchange, last activity and spend; deleting one erases its chat", async () => {
    const w = await funded();
    const created = await api<{ id: string; title: string | null }>(
      "POST",
      `/api/projects/${w.projectId}/sessions`,
      {
        token: w.member.token,
        body: {},
      },
    );
    expect(created.body.title).toBeNull();
    const chat = await mustConnect(agentPath(created.body.id), w.member.token);
    const id = crypto.randomUUID();
    await chat.turn("Plan the beta launch for March", { id });
    await chat.turn("And the pricing page");
    const steps = await stepsOf(w, chat.turnIdOf(id), 1);
    expect(steps.length).toBe(1);
    chat.close();

    const spent = (await billingAccount(env, w.orgId).sessionSpend(created.body.id)).priceMicros;
    expect(spent).toBeGreaterThan(0);
    const list = await api<{
      items: {
        id: string;
        title: string;
        spendMicros: number;
        lastActivityAt: string;
        createdAt: string;
      }[];
    }>("GET", `/api/projects/${w.projectId}/sessions`, { token: w.member.token });
    const listed = list.body.items.find((s) => s.id === created.body.id);
    expect(listed).toMatchObject({ title: "Plan the beta launch for March", spendMicros: spent });
    // The session itself says the same (it said 0 while the list had the real figure).
    const one = await api<{ spendMicros: number }>("GET", `/api/sessions/${created.body.id}`, {
      token: w.member.token,
    });
    expect(one.body.spendMicros).toBe(spent);
    expect(Date.parse(listed?.lastActivityAt ?? "")).toBeGreaterThan(
      Date.parse(listed?.createdAt ?? ""),
    );

    expect(
      (await api("DELETE", `/api/sessions/${created.body.id}`, { token: w.member.token })).status,
    ).toBe(204);
    const upgrade = await connect(agentPath(created.body.id), w.member.token);
    expect(upgrade.status).toBe(410);
    const { runInDurableObject } = await import("cloudflare:test");
    const stub = env.ASSISTANT_AGENT.get(env.ASSISTANT_AGENT.idFromName(created.body.id));
    await runInDurableObject(stub, (instance: AssistantAgent) => {
      expect(instance.messages).toEqual([]);
    });
    // The financial record stays: the ledger still holds what the session cost.
    expect((await billingAccount(env, w.orgId).sessionSpend(created.body.id)).priceMicros).toBe(
      spent,
    );
  });
});

describe("a loop that runs out of credits", () => {
  it("stops cleanly at the step it cannot afford: no call for it, the reply says why", async () => {
    const text = "What is my balance? [[tool:get_balance]]";
    // The first step's hold, measured on an identical session while it streams.
    const probe = await funded(1_000_000_000);
    const chatProbe = await mustConnect(agentPath(probe.sessionId), probe.member.token);
    const probeId = crypto.randomUUID();
    chatProbe.request(probeId, `${text} [[tps:50]]`);
    await chatProbe.waitFor(
      (f) => f.id === probeId && typeof f.body === "string" && f.body.includes("tool-input"),
    );
    const firstHold = await latestCallMaximum(probe.sessionId);
    await chatProbe.result(probeId);
    chatProbe.close();

    // Exactly the first hold: the first call runs; the second, with a longer prompt, cannot be held.
    const w = await funded(firstHold);
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    const calls = await modelRequests();
    const id = crypto.randomUUID();
    const turn = await chat.turn(`${text} [[tps:50]]`, { id });
    expect(await modelRequests()).toBe(calls + 1);
    expect(turn.metadata).toMatchObject({ code: "insufficient_credits", steps: 1 });
    expect(turn.chunks.some((c) => c.type === "tool-output-available")).toBe(true);
    expect(await stepsOf(w, chat.turnIdOf(id), 1)).toHaveLength(1);
    const balance = await settledBalance(w.orgId);
    expect(balance.heldMicros).toBe(0);
    expect(balance.availableMicros).toBeGreaterThanOrEqual(0);
    chat.close();
  });

  it("a tool that fails reports back to the model and the turn still completes", async () => {
    const w = await funded();
    // Memory just under its limit: the tool's write would go over it and fails.
    await env.DB.prepare("UPDATE projects SET memory = ? WHERE id = ?")
      .bind(JSON.stringify({ goal: "ship", notes: "n".repeat(15 * 1024) }), w.projectId)
      .run();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    const more = JSON.stringify({ set: { more: "m".repeat(2 * 1024) } });
    const asked = await chat.turn(`Save my notes [[tool:update_project_memory ${more}]]`);
    const request = asked.chunks.find((c) => c.type === "tool-approval-request") as
      | { toolCallId: string }
      | undefined;
    const start = chat.frames.length;
    chat.send({
      type: "cf_agent_tool_approval",
      toolCallId: request?.toolCallId,
      approved: true,
      autoContinue: true,
    });
    await chat.waitFor(
      (f) => f.type === "cf_agent_use_chat_response" && f.done === true,
      15_000,
      start,
    );
    const continued = chat.frames
      .slice(start)
      .filter(
        (f) => f.type === "cf_agent_use_chat_response" && typeof f.body === "string" && f.body,
      )
      .map(
        (f) => JSON.parse(f.body as string) as { type: string; errorText?: string; delta?: string },
      );
    expect(
      continued.some((c) => c.type === "tool-output-error" && /exceed/.test(c.errorText ?? "")),
    ).toBe(true);
    expect(
      continued
        .filter((c) => c.type === "text-delta")
        .map((c) => c.delta)
        .join(""),
    ).toMatch(/Dev model got tool result from update_project_memory/);
    const memory = await env.DB.prepare("SELECT memory FROM projects WHERE id = ?")
      .bind(w.projectId)
      .first<{ memory: string }>();
    expect(Object.keys(JSON.parse(memory?.memory ?? "{}"))).toEqual(["goal", "notes"]);
    chat.close();
  });
});
