import { env } from "cloudflare:test";
import type {
  AllowedModelList,
  CatalogueModelList,
  EmbedToken,
  OperatorModel,
  OperatorModelList,
  Session,
} from "@parley/shared";
import { describe, expect, it } from "vitest";
import { CATALOGUE_CACHE_MS, forgetCatalogue, loadCatalogue } from "../src/assistants/catalogue.ts";
import { servedLocally } from "../src/assistants/catalogue-model.ts";
import { api, errorCode, profileIn, snapshot, type World, world } from "./helpers.ts";

/**
 * The model catalogue, an org's allowed models and a session's model (issue 29, points 1, 2 and 4;
 * docs/2026-12-06-assistant-profiles.md). Models these tests add or retire have ids of their own:
 * the dev models other suites rely on are never retired here.
 */

const operator = {
  authorization: `Bearer ${(env as { OPERATOR_SECRET?: string }).OPERATOR_SECRET ?? ""}`,
};

const entry = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  provider: { type: "openrouter" },
  displayName: `Test ${id}`,
  contextWindow: 100_000,
  maxOutputTokens: 8_000,
  capabilities: { tools: true, reasoning: false },
  pricing: { prompt: "0.000003", completion: "0.000015" },
  ...extra,
});

const uniqueModel = () => `test/model-${crypto.randomUUID().slice(0, 8)}`;

async function upsert(body: unknown) {
  const res = await api<OperatorModel>("PUT", "/api/operator/models", {
    headers: operator,
    body,
  });
  forgetCatalogue();
  return res;
}

const allowed = (w: World, models: string[] | null, token = w.owner.token) =>
  api<AllowedModelList>("PUT", `/api/orgs/${w.orgId}/models`, { token, body: { models } });

const rowCount = async (sql: string, ...bindings: unknown[]) =>
  (
    await env.DB.prepare(sql)
      .bind(...bindings)
      .first<{ n: number }>()
  )?.n ?? -1;

describe("the model catalogue", () => {
  it("lists the live models with the org's prices per million tokens (provider price plus markup, exact)", async () => {
    const w = await world();
    const res = await api<CatalogueModelList>("GET", "/api/models", { token: w.member.token });
    expect(res.status).toBe(200);
    expect(res.body.defaultModel).toBe("parley/dev");
    const ids = res.body.items.map((m) => m.id);
    expect(ids).toEqual(
      expect.arrayContaining([
        "parley/dev",
        "parley/dev-fast",
        "parley/dev-large",
        "parley/dev-local",
        "openai/gpt-4o-mini",
      ]),
    );
    const large = res.body.items.find((m) => m.id === "parley/dev-large");
    // "0.000003" $/token is 3_000_000 micros/MTok; with MARKUP_BPS 2000 the org pays 3_600_000.
    expect(large).toMatchObject({
      displayName: "Parley Dev Large",
      provider: "openrouter",
      contextWindow: 200_000,
      maxOutputTokens: 64_000,
      capabilities: { tools: true, reasoning: true },
      freePreview: false,
      temperature: { min: 0, max: 1 },
      prices: {
        promptMicrosPerMTok: 3_600_000,
        completionMicrosPerMTok: 18_000_000,
        cacheReadMicrosPerMTok: 360_000,
        cacheWriteMicrosPerMTok: 4_500_000,
        reasoningMicrosPerMTok: null,
        requestMicros: 0,
      },
    });
    const local = res.body.items.find((m) => m.id === "parley/dev-local");
    // Neither its endpoint nor its key's secret is a member's business.
    expect(local?.provider).toBe("openai-compatible");
    expect(JSON.stringify(res.body)).not.toContain("apiKeySecret");
  });

  it("says which models this machine answers: offline, the dev model answers every model without an endpoint of its own", async () => {
    const w = await world();
    const remote = uniqueModel();
    const added = await upsert(
      entry(remote, {
        provider: {
          type: "openai-compatible",
          baseUrl: "https://models.example.com/v1",
          apiKeySecret: null,
        },
      }),
    );
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    const res = await api<CatalogueModelList>("GET", "/api/models", { token: w.member.token });
    const served = (id: string) => res.body.items.find((m) => m.id === id)?.servedLocally;
    // The tests' MODEL_BASE_URL is the dev model on loopback, as under `pnpm dev` offline: an
    // OpenRouter model's name does not make it the real one, and the picker is told so.
    expect(served("openai/gpt-4o-mini")).toBe(true);
    expect(served("parley/dev")).toBe(true);
    expect(served(remote)).toBe(false);
    // The org's list, which the chat's picker reads, says it too.
    const list = await api<AllowedModelList>("GET", `/api/orgs/${w.orgId}/models`, {
      token: w.member.token,
    });
    expect(list.body.items.map((m) => m.servedLocally)).toEqual([true]);
    // Deployed, with OpenRouter's URL, nothing is served locally.
    const catalogue = await loadCatalogue(env);
    const deployed = { ...env, MODEL_BASE_URL: "https://openrouter.ai/api/v1" } as Env;
    const mini = catalogue.models.get("openai/gpt-4o-mini");
    expect(mini && servedLocally(deployed, mini)).toBe(false);
    const remoteModel = catalogue.models.get(remote);
    expect(remoteModel && servedLocally(env, remoteModel)).toBe(false);
  });

  it("the operator adds a model with OpenRouter's published prices, converted exactly", async () => {
    const id = uniqueModel();
    const res = await upsert(
      entry(id, {
        pricing: {
          prompt: "0.00000015",
          completion: "0.0000006",
          request: "0.0005",
          input_cache_read: "0.0000000375",
          input_cache_write: "0.0000001875",
          internal_reasoning: "0.000001",
        },
        freePreview: true,
        topP: { min: 0.1, max: 0.9 },
      }),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      id,
      source: "operator",
      retired: false,
      costs: {
        promptMicrosPerMTok: 150_000,
        completionMicrosPerMTok: 600_000,
        requestMicros: 500,
        cacheReadMicrosPerMTok: 37_500,
        cacheWriteMicrosPerMTok: 187_500,
        reasoningMicrosPerMTok: 1_000_000,
      },
      pricing: { prompt: "0.00000015", completion: "0.0000006" },
    });
    const list = await api<OperatorModelList>("GET", "/api/operator/models", {
      headers: operator,
    });
    expect(list.body.items.find((m) => m.id === id)?.topP).toEqual({ min: 0.1, max: 0.9 });
  });

  it("refuses a price finer than a micro-dollar per million tokens, a malformed one, or a Parley secret as the key's name, changing nothing", async () => {
    const before = await rowCount("SELECT COUNT(*) AS n FROM catalogue_models");
    const id = uniqueModel();
    const cases: [unknown, string][] = [
      [
        entry(id, { pricing: { prompt: "0.0000030000001", completion: "0.000015" } }),
        "pricing.prompt",
      ],
      [entry(id, { pricing: { prompt: "-0.000003", completion: "0.000015" } }), "pricing.prompt"],
      [entry(id, { pricing: { prompt: 0.000003, completion: "0.000015" } }), "pricing.prompt"],
      [entry(id, { pricing: { prompt: "3e-6", completion: "0.000015" } }), "pricing.prompt"],
      [
        entry(id, {
          provider: { type: "openai-compatible", baseUrl: null, apiKeySecret: "JWT_PRIVATE_KEY" },
        }),
        "provider.apiKeySecret",
      ],
      [entry(id, { maxOutputTokens: 200_000 }), "maxOutputTokens"],
      [entry(id, { temperature: { min: 1, max: 0.5 } }), "temperature"],
      [{ ...entry(id), unknown: 1 }, ""],
    ];
    for (const [body, field] of cases) {
      const res = await upsert(body);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(errorCode(res)).toBe("invalid_request");
      if (field) expect(JSON.stringify(res.body)).toContain(field);
    }
    expect(await rowCount("SELECT COUNT(*) AS n FROM catalogue_models")).toBe(before);
    const listed = await api<CatalogueModelList>("GET", "/api/models", {
      token: (await world()).member.token,
    });
    expect(listed.body.items.some((m) => m.id === id)).toBe(false);
  });

  it("retires a model: no longer offered nor choosable anywhere, a profile naming it is refused, the default model cannot be retired", async () => {
    const w = await world();
    const id = uniqueModel();
    expect((await upsert(entry(id))).status).toBe(200);
    expect((await allowed(w, ["parley/dev", id])).status).toBe(200);
    const profileId = await profileIn(w.orgId, w.owner.id, { model: id });
    const retired = await api<OperatorModel>("POST", "/api/operator/models/retire", {
      headers: operator,
      body: { id },
    });
    forgetCatalogue();
    expect(retired.status).toBe(200);
    expect(retired.body).toMatchObject({ id, retired: true, profiles: 1 });
    expect(retired.body.retiredAt).not.toBeNull();
    const models = await api<CatalogueModelList>("GET", "/api/models", { token: w.member.token });
    expect(models.body.items.some((m) => m.id === id)).toBe(false);
    // The org's list drops it; naming it again is refused.
    const list = await api<AllowedModelList>("GET", `/api/orgs/${w.orgId}/models`, {
      token: w.member.token,
    });
    expect(list.body.items.map((m) => m.id)).toEqual(["parley/dev"]);
    const before = await snapshot();
    const again = await allowed(w, ["parley/dev", id]);
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ error: { code: "invalid_request", field: "models.1" } });
    const made = await api("POST", `/api/orgs/${w.orgId}/profiles`, {
      token: w.owner.token,
      body: { name: "Old model", model: id },
    });
    expect(made.status).toBe(400);
    const session = await api("POST", `/api/projects/${w.projectId}/sessions`, {
      token: w.member.token,
      body: { model: id },
    });
    expect(session.status).toBe(400);
    expect(await snapshot()).toEqual(before);
    // The profile that named it still reads (its history is the org's), and is not movable to it.
    const profile = await api("GET", `/api/profiles/${profileId}`, { token: w.member.token });
    expect(profile.status).toBe(200);
    // The platform's default model cannot be retired.
    const defaultRetire = await api("POST", "/api/operator/models/retire", {
      headers: operator,
      body: { id: "parley/dev" },
    });
    expect(defaultRetire.status).toBe(409);
    const unknown = await api("POST", "/api/operator/models/retire", {
      headers: operator,
      body: { id: uniqueModel() },
    });
    expect(unknown.status).toBe(404);
    // Brought back by an upsert with retired: false.
    const back = await upsert({ ...entry(id), retired: false });
    expect(back.body).toMatchObject({ retired: false, retiredAt: null });
  });
});

/** `env` whose D1 counts the reads of the operator's catalogue rows. */
function countingCatalogueReads() {
  const counted = { reads: 0 };
  const db = new Proxy(env.DB, {
    get(target, prop) {
      if (prop === "prepare") {
        return (sql: string) => {
          if (sql.includes("FROM catalogue_models")) counted.reads++;
          return target.prepare(sql);
        };
      }
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { counted, env: { ...env, DB: db } as typeof env };
}

describe("the catalogue's per-isolate copy", () => {
  it("is read again once when it goes stale, however many turns find it stale together", async () => {
    const { counted, env: countingEnv } = countingCatalogueReads();
    forgetCatalogue();
    await loadCatalogue(countingEnv);
    expect(counted.reads).toBe(1);
    const later = Date.now() + CATALOGUE_CACHE_MS;
    const catalogues = await Promise.all(
      Array.from({ length: 20 }, () => loadCatalogue(countingEnv, later)),
    );
    // One of them reads; the others keep the stale copy meanwhile.
    expect(counted.reads).toBe(2);
    for (const catalogue of catalogues) expect(catalogue.models.size).toBeGreaterThan(0);
    await loadCatalogue(countingEnv, later + 1);
    expect(counted.reads).toBe(2);
    forgetCatalogue();
  });

  it("does not keep a read begun before the operator's write made it stale", async () => {
    const { counted, env: countingEnv } = countingCatalogueReads();
    forgetCatalogue();
    await loadCatalogue(countingEnv);
    const later = Date.now() + CATALOGUE_CACHE_MS;
    const refreshing = loadCatalogue(countingEnv, later);
    // The operator's write forgets the copy while that read is under way: what it brings back
    // may predate the write, so the next caller reads again rather than keep it for 30 s.
    forgetCatalogue();
    await refreshing;
    await loadCatalogue(countingEnv, later);
    expect(counted.reads).toBe(3);
    forgetCatalogue();
  });
});

describe("an org's allowed models", () => {
  it("defaults to the platform default model; owners and admins choose a list, members read it with prices", async () => {
    const w = await world();
    const first = await api<AllowedModelList>("GET", `/api/orgs/${w.orgId}/models`, {
      token: w.member.token,
    });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ orgId: w.orgId, chosen: false });
    expect(first.body.items.map((m) => m.id)).toEqual(["parley/dev"]);
    expect(first.body.items[0]?.prices.promptMicrosPerMTok).toBe(1_200_000);
    const set = await allowed(w, ["parley/dev-large", "parley/dev"], w.admin.token);
    expect(set.status).toBe(200);
    expect(set.body.chosen).toBe(true);
    expect(set.body.items.map((m) => [m.id, m.displayName])).toEqual([
      ["parley/dev-large", "Parley Dev Large"],
      ["parley/dev", "Parley Dev Model"],
    ]);
    const byMember = await allowed(w, ["parley/dev"], w.member.token);
    expect(byMember.status).toBe(403);
    const reset = await allowed(w, null);
    expect(reset.body).toMatchObject({ chosen: false });
    expect(reset.body.items.map((m) => m.id)).toEqual(["parley/dev"]);
  });

  it("refuses an unknown or repeated model, or an empty list, changing nothing", async () => {
    const w = await world();
    await allowed(w, ["parley/dev", "parley/dev-fast"]);
    const before = await snapshot();
    for (const models of [["parley/dev", "nobody/model"], ["parley/dev", "parley/dev"], []]) {
      const res = await allowed(w, models);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(errorCode(res)).toBe("invalid_request");
    }
    expect(await snapshot()).toEqual(before);
    const list = await api<AllowedModelList>("GET", `/api/orgs/${w.orgId}/models`, {
      token: w.owner.token,
    });
    expect(list.body.items.map((m) => m.id)).toEqual(["parley/dev", "parley/dev-fast"]);
  });

  it("will not drop the model a running profile uses (409), and says which", async () => {
    const w = await world();
    await allowed(w, ["parley/dev", "parley/dev-fast"]);
    const profileId = await profileIn(w.orgId, w.owner.id, { model: "parley/dev-fast" });
    await env.DB.prepare("UPDATE projects SET default_profile_id = ? WHERE id = ?")
      .bind(profileId, w.projectId)
      .run();
    const before = await snapshot();
    const res = await allowed(w, ["parley/dev"]);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ error: { code: "conflict" } });
    expect(JSON.stringify(res.body)).toContain("parley/dev-fast");
    expect(await snapshot()).toEqual(before);
  });

  it("another org's list is 404, like a missing org", async () => {
    const w = await world();
    const foreign = await api("GET", `/api/orgs/${w.otherOrgId}/models`, { token: w.owner.token });
    const missing = await api("GET", "/api/orgs/org_00000000000000000000000000/models", {
      token: w.owner.token,
    });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(missing.body);
    const put = await api("PUT", `/api/orgs/${w.otherOrgId}/models`, {
      token: w.owner.token,
      body: { models: ["parley/dev"] },
    });
    expect(put.status).toBe(404);
  });
});

describe("a session's model", () => {
  it("a member picks one of the org's models at creation or later; one it does not allow is refused (400), changing nothing", async () => {
    const w = await world();
    await allowed(w, ["parley/dev", "parley/dev-fast"]);
    const before = await snapshot();
    for (const model of ["parley/dev-large", "nobody/model", "bad model id"]) {
      const res = await api("POST", `/api/projects/${w.projectId}/sessions`, {
        token: w.member.token,
        body: { model },
      });
      expect(res.status, model).toBe(400);
      expect(errorCode(res)).toBe("invalid_request");
    }
    expect(await snapshot()).toEqual(before);
    const made = await api<Session>("POST", `/api/projects/${w.projectId}/sessions`, {
      token: w.member.token,
      body: { title: "Fast", model: "parley/dev-fast" },
    });
    expect(made.status).toBe(201);
    expect(made.body.model).toBe("parley/dev-fast");
    const refused = await api("PATCH", `/api/sessions/${made.body.id}`, {
      token: w.member.token,
      body: { model: "parley/dev-large" },
    });
    expect(refused.status).toBe(400);
    const stored = await env.DB.prepare("SELECT model FROM sessions WHERE id = ?")
      .bind(made.body.id)
      .first<{ model: string }>();
    expect(stored?.model).toBe("parley/dev-fast");
    const picked = await api<Session>("PATCH", `/api/sessions/${made.body.id}`, {
      token: w.member.token,
      body: { model: "parley/dev" },
    });
    expect(picked.body).toMatchObject({ model: "parley/dev", title: "Fast" });
    const cleared = await api<Session>("PATCH", `/api/sessions/${made.body.id}`, {
      token: w.member.token,
      body: { model: null },
    });
    expect(cleared.body.model).toBeNull();
    // Only the owner picks: an admin who may read the session may not.
    const byAdmin = await api("PATCH", `/api/sessions/${made.body.id}`, {
      token: w.admin.token,
      body: { model: "parley/dev" },
    });
    expect(byAdmin.status).toBe(403);
  });

  it("an end user never picks a model: a model field is refused wherever they could send one", async () => {
    const w = await world();
    const minted = await api<EmbedToken>("POST", `/api/apps/${w.appId}/end-user-tokens`, {
      token: w.apiKey.secret,
      body: { sub: "cust-model" },
    });
    expect(minted.status).toBe(201);
    const headers = { origin: "https://shop.example" };
    const token = minted.body.accessToken;
    const before = await snapshot();
    const create = await api("POST", "/api/embed/sessions", {
      token,
      headers,
      body: { model: "parley/dev" },
    });
    expect(create.status).toBe(400);
    expect(await snapshot()).toEqual(before);
    const session = await api<Session>("POST", "/api/embed/sessions", { token, headers, body: {} });
    expect(session.status).toBe(201);
    expect(session.body.model).toBeNull();
    const patch = await api("PATCH", `/api/embed/sessions/${session.body.id}`, {
      token,
      headers,
      body: { title: "Mine", model: "parley/dev" },
    });
    expect(patch.status).toBe(400);
    expect(errorCode(patch)).toBe("invalid_request");
    const row = await env.DB.prepare("SELECT model, title FROM sessions WHERE id = ?")
      .bind(session.body.id)
      .first<{ model: string | null; title: string | null }>();
    expect(row).toEqual({ model: null, title: null });
  });
});
