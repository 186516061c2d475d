/**
 * What the model provider does that the platform must price or pass on, against the dev model as
 * OpenRouter behaves: a generation record that appears only a while after the generation ended
 * (the dev model's default 500 ms), and a 429 with Retry-After before anything streamed.
 */
import { env } from "cloudflare:test";
import { dollarsToMicrosCeil } from "@parley/billing";
import { describe, expect, it } from "vitest";
import { billingAccount } from "../src/billing/account.ts";
import { mustConnect } from "./chat.ts";
import { api, type World, world } from "./helpers.ts";
import { funded, generation, settledBalance, usageRowsOf } from "./metering.ts";

const assistantPath = (sessionId: string) => `/agents/assistant-agent/${sessionId}`;
const onboardingPath = (projectId: string) => `/agents/onboarding-agent/${projectId}`;

/** What the provider's public lookup answers for a generation right now (the record may lag). */
async function lookupStatus(generationId: string): Promise<number> {
  const response = await fetch(`${env.MODEL_BASE_URL}/generation?id=${generationId}`, {
    headers: { authorization: "Bearer dev" },
  });
  await response.body?.cancel();
  return response.status;
}

/** The generation id of the model call whose prompt carried `marker` (tests share one dev model). */
async function generationIdFor(marker: string): Promise<string> {
  const { requests } = (await (await fetch(`${devModel()}/__dev/requests`)).json()) as {
    requests: { body: unknown; generationId: string | null }[];
  };
  return requests.find((r) => JSON.stringify(r.body).includes(marker))?.generationId ?? "";
}

/** The id of the model call a usage row names. */
const generationIdOf = (row: { generationIds: string } | undefined) =>
  (JSON.parse(row?.generationIds ?? "[]") as string[])[0] ?? "";

describe("a generation record that appears after a delay", () => {
  it("prices an assistant turn cut before its usage chunk from the delayed record, without holding the reply", async () => {
    const w = await funded();
    const chat = await mustConnect(assistantPath(w.sessionId), w.member.token);
    const marker = crypto.randomUUID();
    const turn = await chat.turn(`break please ${marker} [[error-after:3]]`);
    expect(turn.outcome).toBe("error");
    // The failed reply has ended while the provider still answers 404 for its generation: the
    // reply did not wait for the lookup.
    const generationId = await generationIdFor(marker);
    expect(generationId).toMatch(/^gen-/);
    expect(await lookupStatus(generationId)).toBe(404);

    const [step] = await usageRowsOf(
      w.orgId,
      (row) => row.requestId.startsWith(`${turn.turnId}:`),
      1,
    );
    // Priced by what the provider recorded for the cut call, found once the record appeared.
    expect(generationIdOf(step)).toBe(generationId);
    const charged = await generation(generationId);
    expect(step?.costMicros).toBe(dollarsToMicrosCeil(charged?.total_cost ?? -1));
    expect(await lookupStatus(generationId)).toBe(200);
    expect((await settledBalance(w.orgId)).heldMicros).toBe(0);
    chat.close();
  });

  it("prices a preview turn cut before its usage chunk from the delayed record, without holding the reply", async () => {
    const w = await world();
    const chat = await mustConnect(onboardingPath(w.projectId), w.member.token);
    const marker = crypto.randomUUID();
    const turn = await chat.turn(`break please ${marker} [[error-after:2]]`);
    expect(turn.outcome).toBe("error");
    const generationId = await generationIdFor(marker);
    expect(generationId).toMatch(/^gen-/);
    expect(await lookupStatus(generationId)).toBe(404);
    const [row] = await usageRowsOf(w.orgId, (r) => r.requestId === `${turn.turnId}:0`, 1);
    expect(generationIdOf(row)).toBe(generationId);
    expect(row?.costMicros).toBe(
      dollarsToMicrosCeil((await generation(generationId))?.total_cost ?? -1),
    );
    chat.close();
  });
});

describe("encrypted reasoning across the assistant's tool loop", () => {
  it("goes back to the model with the tool result, so the loop's next step is answered", async () => {
    const w = await funded();
    const chat = await mustConnect(assistantPath(w.sessionId), w.member.token);
    const marker = crypto.randomUUID();
    // The dev model refuses (400) a step whose tool call lost the encrypted reasoning it came with.
    const turn = await chat.turn(
      `Read ours ${marker} [[tool:read_project_memory]] [[reasoning:encrypted]]`,
    );
    expect(turn.error).toBeNull();
    expect(turn.metadata).toMatchObject({ finish: "completed", steps: 2 });
    expect(turn.text).toMatch(/^Dev model got tool result from read_project_memory: /);
    const { requests } = (await (await fetch(`${devModel()}/__dev/requests`)).json()) as {
      requests: {
        body: { messages: { role: string; reasoning_details?: { type: string }[] }[] };
      }[];
    };
    const [first, second] = requests.filter((r) => JSON.stringify(r.body).includes(marker));
    expect(first?.body.messages.some((m) => m.role === "tool")).toBe(false);
    const carried = second?.body.messages
      .filter((m) => m.role === "assistant")
      .flatMap((m) => m.reasoning_details ?? [])
      .filter((d) => d.type === "reasoning.encrypted");
    expect(carried).toHaveLength(1);
    chat.close();
  });
});

describe("a 429 with Retry-After before the model streamed", () => {
  const stored = async (path: string, w: World) =>
    (await api<{ role: string }[]>("GET", `${path}/get-messages`, { token: w.member.token })).body;

  it("reaches the member as rate_limited with the wait, charges nothing, and the next turn works", async () => {
    const w = await funded();
    const before = await settledBalance(w.orgId);
    const chat = await mustConnect(assistantPath(w.sessionId), w.member.token);
    const turn = await chat.turn("one more [[http-error:429]] [[retry-after:30]]");
    expect(turn.outcome).toBe("error");
    expect(turn.parleyError).toEqual({
      code: "rate_limited",
      message:
        "The model provider is limiting requests right now. Please try again in 30 seconds; nothing was charged for this message.",
    });
    expect(turn.error).toBe(turn.parleyError?.message);
    expect(turn.text).toBe("");
    // Nothing charged or held: the call made nothing, and the step's hold went back.
    const after = await settledBalance(w.orgId);
    expect(after.availableMicros).toBe(before.availableMicros);
    expect(after.heldMicros).toBe(0);
    expect(await usageRowsOf(w.orgId, () => true, 0)).toEqual([]);
    expect((await billingAccount(env, w.orgId).reconcile()).ok).toBe(true);
    expect((await stored(assistantPath(w.sessionId), w)).map((m) => m.role)).toEqual(["user"]);

    const next = await chat.turn("and now?");
    expect(next.metadata).toMatchObject({ finish: "completed" });
    chat.close();
  });

  it("tells a preview member the same, in the seconds Retry-After asks for", async () => {
    const w = await world();
    const chat = await mustConnect(onboardingPath(w.projectId), w.member.token);
    const timed = await chat.turn("hello [[http-error:429]] [[retry-after:1]]");
    expect(timed.parleyError).toEqual({
      code: "rate_limited",
      message:
        "The model provider is limiting requests right now. Please try again in 1 second; nothing was charged for this message.",
    });
    expect(await usageRowsOf(w.orgId, () => true, 0)).toEqual([]);
    chat.close();
  });

  it("keeps other HTTP errors generic and untyped for the member", async () => {
    const w = await funded();
    const chat = await mustConnect(assistantPath(w.sessionId), w.member.token);
    const turn = await chat.turn("hello [[http-error:503]]");
    expect(turn.outcome).toBe("error");
    expect(turn.parleyError).toBeNull();
    expect(turn.error).toMatch(/model failed to answer/);
    chat.close();
  });
});

function devModel(): string {
  return env.MODEL_BASE_URL.replace(/\/api\/v1$/, "");
}
