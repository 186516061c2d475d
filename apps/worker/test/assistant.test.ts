import { env } from "cloudflare:test";
import { applyMarkup, dollarsToMicrosCeil } from "@parley/billing";
import { devReply } from "@parley/dev-model/reply";
import { describe, expect, it } from "vitest";
import { billingAccount } from "../src/billing/account.ts";
import { connect, mustConnect } from "./chat.ts";
import { api, type World, world } from "./helpers.ts";

const agentPath = (sessionId: string) => `/agents/assistant-agent/${sessionId}`;
const devModel = env.MODEL_BASE_URL.replace(/\/api\/v1$/, "");
const markup = Number(env.MARKUP_BPS);

async function generations(): Promise<{ id: string; total_cost: number; cancelled: boolean }[]> {
  return ((await (await fetch(`${devModel}/__dev/generations`)).json()) as { data: never[] }).data;
}

async function modelRequests(): Promise<number> {
  return ((await (await fetch(`${devModel}/__dev/requests`)).json()) as { count: number }).count;
}

async function funded(grantMicros = 10_000_000): Promise<World> {
  const w = await world();
  await billingAccount(env, w.orgId).open({ orgId: w.orgId, grantMicros });
  return w;
}

/** The org's usage rows of one turn (one per model step), once metering has landed. */
async function stepsOf(w: World, requestId: string, expected: number) {
  for (let i = 0; i < 100; i++) {
    const rows = (
      await billingAccount(env, w.orgId).usageRows({ from: 0, to: Date.now() + 1, limit: 1000 })
    ).filter((r) => r.requestId.startsWith(`${requestId}:`));
    if (rows.length >= expected) return rows.sort((a, b) => a.requestId.localeCompare(b.requestId));
    await new Promise((r) => setTimeout(r, 20));
  }
  return [];
}

const costOf = async (generationIds: string) => {
  const [id] = JSON.parse(generationIds) as string[];
  const generation = (await generations()).find((g) => g.id === id);
  return dollarsToMicrosCeil(generation?.total_cost ?? -1);
};

describe("AssistantAgent", () => {
  it("charges a turn exactly the provider's reported cost plus markup, and says so in the reply", async () => {
    const w = await funded();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    const id = crypto.randomUUID();
    const turn = await chat.turn("Draft a launch plan", { id });
    expect(turn.text).toBe(devReply("Draft a launch plan"));
    const [step] = await stepsOf(w, id, 1);
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
    const balance = await billingAccount(env, w.orgId).balance();
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
