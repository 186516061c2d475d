import { env } from "cloudflare:test";
import { maxCallCostMicros, priceStep } from "@parley/billing";
import { BUILT_IN_TOOLS } from "@parley/shared";
import { describe, expect, it } from "vitest";
import type { AgentCaller } from "../src/agents/caller.ts";
import { assistantTools } from "../src/agents/tools/project-tools.ts";
import { forgetCatalogue } from "../src/assistants/catalogue.ts";
import { assistantChanged } from "../src/assistants/push.ts";
import {
  type Resolution,
  type ResolvedTurn,
  resolveTurn,
  type TurnContext,
  TurnResolver,
} from "../src/assistants/resolve.ts";
import { mustConnect, settled } from "./chat.ts";
import { api, profileIn, type World, world } from "./helpers.ts";

/**
 * The resolver the agents call every turn (issue 29 point 5, and point 6's money): which profile
 * version and model a turn runs with, its prices, and the typed refusals.
 */

const member = (w: World, extra: Partial<TurnContext> = {}): TurnContext => ({
  orgId: w.orgId,
  projectId: w.projectId,
  sessionId: w.sessionId,
  callerKind: "member",
  appId: null,
  audience: "assistant",
  ...extra,
});

const endUser = (w: World, extra: Partial<TurnContext> = {}): TurnContext =>
  member(w, { callerKind: "end_user", appId: w.appId, sessionId: null, ...extra });

function turn(resolution: Resolution): ResolvedTurn {
  if (!resolution.ok) throw new Error(`refused: ${JSON.stringify(resolution.refusal)}`);
  return resolution.turn;
}

const allow = async (w: World, models: string[]) => {
  await env.DB.batch([
    env.DB.prepare("DELETE FROM org_models WHERE org_id = ?").bind(w.orgId),
    ...models.map((id, i) =>
      env.DB.prepare("INSERT INTO org_models (org_id, model_id, position) VALUES (?, ?, ?)").bind(
        w.orgId,
        id,
        i,
      ),
    ),
  ]);
};

const setDefault = (w: World, profileId: string | null) =>
  env.DB.prepare("UPDATE projects SET default_profile_id = ? WHERE id = ?")
    .bind(profileId, w.projectId)
    .run();

describe("the resolver", () => {
  it("with no profile chosen: Parley's assistant on the platform default model, its catalogue prices and the markup", async () => {
    const w = await world();
    const t = turn(await resolveTurn(env, member(w)));
    expect(t.profile).toEqual({
      id: null,
      version: 0,
      name: "Parley assistant",
      instructions: "",
      temperature: null,
      topP: null,
      maxOutputTokens: 1024,
      welcome: null,
      suggestions: [],
      tools: BUILT_IN_TOOLS.map((tool) => tool.name),
      knowledgeRetrieval: false,
    });
    expect(t.model.id).toBe("parley/dev");
    expect(t.modelSource).toBe("profile");
    expect(t.prices.model).toBe("parley/dev");
    expect(t.prices.markupBps).toBe(2000);
    expect(t.prices.table.models["parley/dev"]).toMatchObject({
      promptMicrosPerMTok: 1_000_000,
      completionMicrosPerMTok: 2_000_000,
    });
    // An end user gets no tools; the preview runs its own built-in, shorter and toolless.
    expect(turn(await resolveTurn(env, endUser(w))).profile.tools).toEqual([]);
    const preview = turn(
      await resolveTurn(env, member(w, { audience: "preview", sessionId: null })),
    );
    expect(preview.profile).toMatchObject({
      id: null,
      name: "Parley onboarding preview",
      tools: [],
      maxOutputTokens: 512,
    });
  });

  it("a member's session runs the project's default profile; an end user's runs their app's, else the project's", async () => {
    const w = await world();
    await allow(w, ["parley/dev", "parley/dev-large", "parley/dev-fast"]);
    const projectProfile = await profileIn(w.orgId, w.owner.id, {
      name: "Team",
      instructions: "Team voice.",
      model: "parley/dev-large",
      versions: 3,
      tools: ["read_project_memory"],
    });
    const appProfile = await profileIn(w.orgId, w.owner.id, {
      name: "Customers",
      instructions: "Customer voice.",
      model: "parley/dev-fast",
      tools: ["get_balance"],
    });
    await setDefault(w, projectProfile);
    const team = turn(await resolveTurn(env, member(w)));
    expect(team.profile).toMatchObject({
      id: projectProfile,
      version: 3,
      name: "Team v3",
      instructions: "Team voice.",
      tools: ["read_project_memory"],
    });
    expect(team.model.id).toBe("parley/dev-large");
    // The app has none yet: its end users run the project's, without tools.
    const before = turn(await resolveTurn(env, endUser(w)));
    expect(before.profile).toMatchObject({ id: projectProfile, tools: [] });
    await env.DB.prepare("UPDATE apps SET profile_id = ? WHERE id = ?")
      .bind(appProfile, w.appId)
      .run();
    const customer = turn(await resolveTurn(env, endUser(w)));
    expect(customer.profile).toMatchObject({
      id: appProfile,
      version: 1,
      instructions: "Customer voice.",
    });
    expect(customer.model.id).toBe("parley/dev-fast");
    // Members are not moved by the app's choice.
    expect(turn(await resolveTurn(env, member(w))).profile.id).toBe(projectProfile);
  });

  it("the model: the chat body's, else the session's, else the profile's; each must be allowed, or the turn is refused", async () => {
    const w = await world();
    await allow(w, ["parley/dev", "parley/dev-fast"]);
    expect(turn(await resolveTurn(env, member(w))).modelSource).toBe("profile");
    await env.DB.prepare("UPDATE sessions SET model = 'parley/dev-fast' WHERE id = ?")
      .bind(w.sessionId)
      .run();
    const session = turn(await resolveTurn(env, member(w)));
    expect([session.model.id, session.modelSource]).toEqual(["parley/dev-fast", "session"]);
    const asked = turn(await resolveTurn(env, member(w, { requestedModel: "parley/dev" })));
    expect([asked.model.id, asked.modelSource]).toEqual(["parley/dev", "request"]);
    const refusals: [Partial<TurnContext>, string][] = [
      [{ requestedModel: "parley/dev-large" }, "model_not_allowed"],
      [{ requestedModel: "nobody/model" }, "model_unknown"],
    ];
    for (const [extra, reason] of refusals) {
      const refused = await resolveTurn(env, member(w, extra));
      expect(refused).toMatchObject({ ok: false, refusal: { code: "invalid_request", reason } });
    }
    // End users never pick, and the preview runs its own model.
    expect(await resolveTurn(env, endUser(w, { requestedModel: "parley/dev" }))).toMatchObject({
      ok: false,
      refusal: { code: "invalid_request", reason: "end_user_model" },
    });
    expect(
      await resolveTurn(
        env,
        member(w, { audience: "preview", sessionId: null, requestedModel: "parley/dev" }),
      ),
    ).toMatchObject({ ok: false, refusal: { reason: "preview_model" } });
    // A session's pick the org no longer allows is refused, never swapped for another model.
    await allow(w, ["parley/dev"]);
    const stale = await resolveTurn(env, member(w));
    expect(stale).toMatchObject({
      ok: false,
      refusal: { code: "invalid_request", reason: "model_not_allowed", model: "parley/dev-fast" },
    });
    if (!stale.ok) expect(stale.refusal.message).toContain("Pick another model");
  });

  it("a profile whose model was retired or disallowed is refused with who can fix it; a preview needs a free-preview model", async () => {
    const w = await world();
    const id = `test/resolver-${crypto.randomUUID().slice(0, 8)}`;
    const operator = {
      authorization: `Bearer ${(env as { OPERATOR_SECRET?: string }).OPERATOR_SECRET ?? ""}`,
    };
    const added = await api("PUT", "/api/operator/models", {
      headers: operator,
      body: {
        id,
        provider: { type: "openrouter" },
        displayName: "Soon retired",
        contextWindow: 1000,
        maxOutputTokens: 100,
        capabilities: { tools: false, reasoning: false },
        freePreview: true,
        pricing: { prompt: "0.000001", completion: "0.000001" },
      },
    });
    expect(added.status).toBe(200);
    forgetCatalogue();
    await allow(w, ["parley/dev", id]);
    const profile = await profileIn(w.orgId, w.owner.id, { model: id, tools: ["get_balance"] });
    await setDefault(w, profile);
    await env.DB.prepare("UPDATE projects SET preview_profile_id = ? WHERE id = ?")
      .bind(profile, w.projectId)
      .run();
    // A model without tool calling offers no tools, whatever the profile lists.
    expect(turn(await resolveTurn(env, member(w))).profile.tools).toEqual([]);
    expect(turn(await resolveTurn(env, member(w, { audience: "preview" }))).model.id).toBe(id);
    await api("POST", "/api/operator/models/retire", { headers: operator, body: { id } });
    forgetCatalogue();
    const retired = await resolveTurn(env, member(w));
    expect(retired).toMatchObject({ ok: false, refusal: { reason: "model_retired", model: id } });
    if (!retired.ok) expect(retired.refusal.message).toContain("owner or admin");
    expect(await resolveTurn(env, member(w, { audience: "preview" }))).toMatchObject({
      ok: false,
      refusal: { reason: "not_free_preview" },
    });
    // The org's preview profile stands in when the project names none.
    const fast = await profileIn(w.orgId, w.owner.id, { model: "parley/dev-fast" });
    await env.DB.batch([
      env.DB.prepare("UPDATE projects SET preview_profile_id = NULL WHERE id = ?").bind(
        w.projectId,
      ),
      env.DB.prepare("UPDATE organizations SET preview_profile_id = ? WHERE id = ?").bind(
        fast,
        w.orgId,
      ),
    ]);
    const orgPreview = turn(await resolveTurn(env, member(w, { audience: "preview" })));
    expect([orgPreview.profile.id, orgPreview.model.id]).toEqual([fast, "parley/dev-fast"]);
  });

  it("keeps within the model: parameters clamped to its range, the reply length to its maximum", async () => {
    const w = await world();
    await allow(w, ["parley/dev", "parley/dev-large", "parley/dev-local"]);
    const profile = await profileIn(w.orgId, w.owner.id, { model: "parley/dev" });
    await env.DB.prepare(
      "UPDATE assistant_profile_versions SET temperature = 1.7, max_output_tokens = 10000 WHERE profile_id = ?",
    )
      .bind(profile)
      .run();
    await setDefault(w, profile);
    const own = turn(await resolveTurn(env, member(w)));
    expect([own.profile.temperature, own.profile.maxOutputTokens]).toEqual([1.7, 10_000]);
    // Dev Large takes temperatures to 1; Dev Local writes at most 4096 tokens.
    const large = turn(await resolveTurn(env, member(w, { requestedModel: "parley/dev-large" })));
    expect(large.profile.temperature).toBe(1);
    const local = turn(await resolveTurn(env, member(w, { requestedModel: "parley/dev-local" })));
    expect(local.profile.maxOutputTokens).toBe(4_096);
  });

  it("a refusal for a project that is gone", async () => {
    const w = await world();
    expect(await resolveTurn(env, member(w, { projectId: w.otherProjectId }))).toMatchObject({
      ok: false,
      refusal: { code: "not_found", reason: "not_found" },
    });
  });
});

describe("money follows the model", () => {
  it("sizes the first hold from the chosen model's prices, and prices a table-priced call at its rates, cache included", async () => {
    const w = await world();
    await allow(w, ["parley/dev", "parley/dev-large", "parley/dev-fast", "parley/dev-local"]);
    const large = turn(await resolveTurn(env, member(w, { requestedModel: "parley/dev-large" })));
    // 1000 prompt tokens at the dearest prompt rate (cache writes, $3.75/M) + 1024 output at
    // $15/M = 3750 + 15360 = 19110 micros; with the 20% markup, rounded up: 22932.
    expect(
      maxCallCostMicros({
        table: large.prices.table,
        model: large.prices.model,
        promptTokens: 1_000,
        maxOutputTokens: large.profile.maxOutputTokens,
        markupBps: large.prices.markupBps,
      }),
    ).toBe(22_932);
    const dev = turn(await resolveTurn(env, member(w)));
    expect(
      maxCallCostMicros({
        table: dev.prices.table,
        model: dev.prices.model,
        promptTokens: 1_000,
        maxOutputTokens: dev.profile.maxOutputTokens,
        markupBps: dev.prices.markupBps,
      }),
    ).toBe(Math.ceil((1_000 + 2_048) * 1.2));
    // Dev Local reports no cost: the catalogue prices it ($0.2/M in, $0.6/M out).
    const local = turn(await resolveTurn(env, member(w, { requestedModel: "parley/dev-local" })));
    expect(
      priceStep({ inputTokens: 1_000, outputTokens: 500 }, undefined, local.prices),
    ).toMatchObject({
      costMicros: 500,
      priceMicros: 600,
      source: "table",
    });
    // Dev Fast's cache reads and writes at its cache rates: 4000 × 0.1 + 4000 × 0.025 +
    // 2000 × 0.125 + 100 × 0.4 = 400 + 100 + 250 + 40.
    const fast = turn(await resolveTurn(env, member(w, { requestedModel: "parley/dev-fast" })));
    const cached = priceStep(
      {
        inputTokens: 10_000,
        outputTokens: 100,
        inputTokenDetails: { cacheReadTokens: 4_000, cacheWriteTokens: 2_000 },
      },
      undefined,
      fast.prices,
    );
    expect(cached.costMicros).toBe(790);
    // A reported cost wins over the table.
    const reported = priceStep(
      { inputTokens: 10_000, outputTokens: 100 },
      { openrouter: { usage: { cost: 0.000123 } } },
      fast.prices,
    );
    expect([reported.costMicros, reported.source]).toEqual([123, "provider"]);
  });
});

describe("the resolver an agent keeps", () => {
  it("reads D1 once while fresh, and again after forget() or maxAgeMs", async () => {
    const w = await world();
    const first = await profileIn(w.orgId, w.owner.id, { name: "First" });
    const second = await profileIn(w.orgId, w.owner.id, { name: "Second" });
    await setDefault(w, first);
    const kept = new TurnResolver(env, { maxAgeMs: 60_000 });
    expect(turn(await kept.resolve(member(w))).profile.id).toBe(first);
    await setDefault(w, second);
    expect(turn(await kept.resolve(member(w))).profile.id).toBe(first);
    kept.forget();
    expect(turn(await kept.resolve(member(w))).profile.id).toBe(second);
    const fresh = new TurnResolver(env, { maxAgeMs: 0 });
    await setDefault(w, first);
    expect(turn(await fresh.resolve(member(w))).profile.id).toBe(first);
    // A new version is new content (versions are keyed by number; the old one is never reused).
    await env.DB.batch([
      env.DB.prepare(
        `INSERT INTO assistant_profile_versions (profile_id, version, org_id, name, instructions,
           model, suggestions, tools, author_id, created_at)
         VALUES (?, 2, ?, 'First v2', 'Newer.', 'parley/dev', '[]', '[]', ?, ?)`,
      ).bind(first, w.orgId, w.owner.id, Date.now()),
      env.DB.prepare("UPDATE assistant_profiles SET current_version = 2 WHERE id = ?").bind(first),
    ]);
    const newer = turn(await fresh.resolve(member(w)));
    expect([newer.profile.version, newer.profile.instructions]).toEqual([2, "Newer."]);
  });

  it("a change pushes the org's open chats to re-check what they kept (a removed member's socket closes at once)", async () => {
    const w = await world();
    const path = `/agents/assistant-agent/${w.sessionId}`;
    const chat = await mustConnect(path, w.member.token);
    await settled(path);
    // Removed behind the API's back: only a push makes the agent look again.
    await env.DB.prepare("DELETE FROM memberships WHERE org_id = ? AND user_id = ?")
      .bind(w.orgId, w.member.id)
      .run();
    await assistantChanged(env, { orgId: w.orgId });
    for (let i = 0; i < 50 && !chat.closed; i++) await new Promise((r) => setTimeout(r, 20));
    expect(chat.closed?.code).toBe(4403);
  });
});

describe("the tool registry", () => {
  it("lists exactly the assistant's built-in tools", () => {
    const caller: AgentCaller = {
      kind: "member",
      appId: null,
      userId: "usr_x",
      orgId: "org_x",
      projectId: "prj_x",
      sessionId: "ses_x",
      role: "member",
      familyId: "f",
      tokenVersion: 0,
      expiresAt: Date.now() + 60_000,
    };
    const tools = assistantTools(env, caller, { memoryChanged: async () => undefined });
    expect(Object.keys(tools).sort()).toEqual(BUILT_IN_TOOLS.map((tool) => tool.name).sort());
  });
});
