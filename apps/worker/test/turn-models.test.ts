import { env } from "cloudflare:test";
import { applyMarkup, dollarsToMicrosCeil } from "@parley/billing";
import { describe, expect, it } from "vitest";
import { loadCatalogue } from "../src/assistants/catalogue.ts";
import { mustConnect, settled } from "./chat.ts";
import { api } from "./helpers.ts";
import { funded, generation, usageRowsOf } from "./metering.ts";
import {
  allowModels,
  DEV_MODELS,
  INSTANT,
  makeProfile,
  pickModel,
  requestsWith,
  systemOf,
  toolsOf,
  useForProject,
} from "./turn-models.ts";

/**
 * A turn runs with the profile version and the model it resolves to (issue 29, wired): each dev
 * model called and priced exactly, the profile's instructions, parameters and tools in the next
 * call, a rollback followed, and the reply's metadata naming what it ran with.
 */

const markup = Number(env.MARKUP_BPS);
const agentPath = (sessionId: string) => `/agents/assistant-agent/${sessionId}`;

describe("a turn on each model of the catalogue", () => {
  it("is called on that model and charged exactly its reported cost plus markup, or its tokens at the catalogue's prices when it reports none", async () => {
    const w = await funded();
    const allowed = await allowModels(w, DEV_MODELS);
    const nameOf = (id: string) => allowed.find((model) => model.id === id)?.displayName;
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    await settled(agentPath(w.sessionId));
    const turnOn = async (model: string, extra = "") => {
      await pickModel(w, model);
      const marker = crypto.randomUUID();
      const turn = await chat.turn(`price me ${marker} ${extra} ${INSTANT}`);
      expect(turn.error).toBeNull();
      expect(turn.metadata).toMatchObject({
        finish: "completed",
        steps: 1,
        profile: { id: null, version: 0 },
        model: { id: model, name: nameOf(model) },
      });
      const [request] = await requestsWith(marker);
      expect(request?.model).toBe(model);
      const [row] = await usageRowsOf(w.orgId, (r) => r.requestId === `${turn.turnId}:0`, 1);
      expect(row?.model).toBe(model);
      // The reply's cost is exactly what was settled for it.
      expect(turn.metadata.priceMicros).toBe(row?.priceMicros);
      expect(row?.priceMicros).toBe(applyMarkup(row?.costMicros ?? -1, markup));
      return { turn, request, row };
    };

    // Models that report their cost: charged what the provider recorded, to the micro-dollar.
    for (const model of ["parley/dev", "parley/dev-fast", "parley/dev-large"]) {
      const { request, row } = await turnOn(model);
      const recorded = await generation(request?.generationId ?? "");
      expect(row?.costMicros).toBe(dollarsToMicrosCeil(recorded?.total_cost ?? -1));
    }
    // A prompt read from the cache is charged at the cache rate, as the provider reports it.
    await turnOn("parley/dev-fast", "[[cache]]");
    const cached = await turnOn("parley/dev-fast", "[[cache]]");
    expect(cached.row?.cachedPromptTokens).toBeGreaterThan(0);
    const record = await generation(cached.request?.generationId ?? "");
    expect(cached.row?.costMicros).toBe(dollarsToMicrosCeil(record?.total_cost ?? -1));

    // The OpenAI-compatible model reports no cost and keeps no generation record: its usage,
    // asked for in the stream, is priced at the catalogue's prices.
    const local = await turnOn("parley/dev-local");
    expect(local.request?.body.stream_options?.include_usage).toBe(true);
    expect(local.row?.generationIds).toBe("[]");
    // Its usage was reported, not estimated: one completion token per word of the reply.
    expect(local.row?.completionTokens).toBe(local.turn.text.trim().split(/\s+/).length);
    const price = (await loadCatalogue(env)).models.get("parley/dev-local")?.price;
    const prompt = BigInt(local.row?.promptTokens ?? 0);
    const completion = BigInt(local.row?.completionTokens ?? 0);
    const microTokens =
      prompt * BigInt(price?.promptMicrosPerMTok ?? 0) +
      completion * BigInt(price?.completionMicrosPerMTok ?? 0);
    // Rounded up to the micro-dollar.
    const cost = Number((microTokens + 999_999n) / 1_000_000n);
    expect(cost).toBeGreaterThan(0);
    expect(local.row?.costMicros).toBe(cost);
    chat.close();
  }, 30_000);

  it("carries Dev Large's encrypted reasoning back with the tool result, so the loop's second step is answered and both are charged", async () => {
    const w = await funded();
    await allowModels(w, ["parley/dev", "parley/dev-large"]);
    await pickModel(w, "parley/dev-large");
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    const marker = crypto.randomUUID();
    // Dev Large reasons when asked and seals its reasoning on a tool call: a next step without
    // it is refused (400 invalid_prompt).
    const turn = await chat.turn(
      `Read ours ${marker} [[tool:read_project_memory]] [[reasoning]] ${INSTANT}`,
    );
    expect(turn.error).toBeNull();
    expect(turn.metadata).toMatchObject({
      finish: "completed",
      steps: 2,
      model: { id: "parley/dev-large" },
    });
    expect(turn.text).toMatch(/^Dev model got tool result from read_project_memory: /);
    const [first, second] = await requestsWith(marker);
    expect([first?.model, second?.model]).toEqual(["parley/dev-large", "parley/dev-large"]);
    const carried = second?.body.messages
      .filter((message) => message.role === "assistant")
      .flatMap((message) => message.reasoning_details ?? [])
      .filter((detail) => detail.type === "reasoning.encrypted");
    expect(carried).toHaveLength(1);
    const rows = await usageRowsOf(w.orgId, (r) => r.requestId.startsWith(`${turn.turnId}:`), 2);
    for (const row of rows) {
      const [id] = JSON.parse(row.generationIds) as string[];
      expect(row.costMicros).toBe(
        dollarsToMicrosCeil((await generation(id ?? ""))?.total_cost ?? -1),
      );
    }
    expect(turn.metadata.priceMicros).toBe(rows.reduce((sum, row) => sum + row.priceMicros, 0));
    chat.close();
  });
});

describe("a profile followed by the next reply", () => {
  it("runs the project's profile (instructions inside Parley's scaffolding, parameters, tools, model), follows an edit and a rollback at once, and names the version in each reply", async () => {
    const w = await funded();
    const allowed = await allowModels(w, ["parley/dev", "parley/dev-fast"]);
    const captain = `Answer as Captain ${crypto.randomUUID()}.`;
    const admiral = `Answer as Admiral ${crypto.randomUUID()}.`;
    const profileId = await makeProfile(w, {
      instructions: captain,
      model: "parley/dev-fast",
      temperature: 0.3,
      topP: 0.9,
      maxOutputTokens: 300,
      tools: ["get_balance"],
    });
    await useForProject(w, profileId);
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    await settled(agentPath(w.sessionId));
    const ask = async () => {
      const marker = crypto.randomUUID();
      const turn = await chat.turn(`Who are you? ${marker} ${INSTANT}`);
      expect(turn.error).toBeNull();
      const [request] = await requestsWith(marker);
      return { turn, request, system: systemOf(request) };
    };

    const first = await ask();
    expect(first.request?.model).toBe("parley/dev-fast");
    expect(first.request?.body).toMatchObject({ temperature: 0.3, top_p: 0.9, max_tokens: 300 });
    expect(toolsOf(first.request)).toEqual(["get_balance"]);
    // The tenant's instructions sit inside Parley's frame, and Parley's rules come after them.
    expect(first.system).toContain(
      `<organization_instructions>\n${captain}\n</organization_instructions>`,
    );
    expect(first.system.indexOf("Rules that always hold")).toBeGreaterThan(
      first.system.indexOf(captain),
    );
    expect(first.system).toContain("<project_memory>");
    expect(first.turn.metadata).toMatchObject({
      // Named as the profile's version is, so the reply's footer can say which profile it followed.
      profile: { id: profileId, version: 1, name: "Profile" },
      model: {
        id: "parley/dev-fast",
        name: allowed.find((model) => model.id === "parley/dev-fast")?.displayName,
      },
    });

    // An admin edits the instructions: the very next reply follows version 2.
    const edited = await api("PATCH", `/api/profiles/${profileId}`, {
      token: w.admin.token,
      body: { instructions: admiral },
    });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    const second = await ask();
    expect(second.system).toContain(admiral);
    expect(second.system).not.toContain(captain);
    expect(second.turn.metadata).toMatchObject({ profile: { id: profileId, version: 2 } });

    // Rolled back to version 1: a version 3 equal to it, followed at once.
    const rolledBack = await api("POST", `/api/profiles/${profileId}/rollback`, {
      token: w.admin.token,
      body: { version: 1 },
    });
    expect(rolledBack.status, JSON.stringify(rolledBack.body)).toBe(200);
    const third = await ask();
    expect(third.system).toContain(captain);
    expect(third.system).not.toContain(admiral);
    expect(third.turn.metadata).toMatchObject({ profile: { id: profileId, version: 3 } });

    // The stored replies keep what each ran with.
    const stored = await api<{ role: string; metadata?: { profile?: { version: number } } }[]>(
      "GET",
      `${agentPath(w.sessionId)}/get-messages`,
      { token: w.member.token },
    );
    expect(
      stored.body.filter((m) => m.role === "assistant").map((m) => m.metadata?.profile?.version),
    ).toEqual([1, 2, 3]);
    chat.close();
  }, 30_000);
});
