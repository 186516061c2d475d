import { describe, expect, it } from "vitest";
import { missingDevSecrets, requiredSecrets } from "../../../scripts/lib/dev-secrets.mjs";
import { priceTable } from "./billing/prices.ts";
import { agentSettings, config, REQUIRED_SECRETS } from "./env.ts";

const env = (vars: Record<string, string>) =>
  ({ MODEL_ID: "parley/dev", ...vars }) as unknown as Env;

describe("agentSettings", () => {
  it("takes the defaults for unset or empty vars", () => {
    const settings = agentSettings(env({ MARKUP_BPS: "", STREAM_COALESCE_MS: "" }));
    expect(settings).toEqual({
      prices: { table: priceTable({ MODEL_ID: "parley/dev" }), model: "parley/dev", markupBps: 0 },
      assistant: { maxOutputTokens: 1024, maxSteps: 6, contextTokens: 12_000 },
      preview: { turns: 20, orgDailyCap: 200, contextTokens: 4_000, maxOutputTokens: 512 },
      maxUserMessageBytes: 16 * 1024,
      modelStallTimeoutMs: 30_000,
      streamCoalesceMs: 40,
      lease: {
        policy: { steps: 16, ttlMs: 20 * 60_000, callMs: 10 * 60_000 },
        flushMs: 300_000,
        idleMs: 60_000,
      },
      authzCacheMs: 60_000,
    });
  });

  it("reads every var once per env object, with MODEL_CATALOGUE over the configured catalogue", () => {
    const vars = env({
      MARKUP_BPS: "2000",
      ASSISTANT_MAX_STEPS: "3",
      PREVIEW_TURNS: "0",
      CATALOGUE_DEV_MODELS: "true",
      MODEL_CATALOGUE: JSON.stringify([
        {
          id: "parley/dev",
          provider: { type: "openrouter" },
          displayName: "Dev, repriced",
          contextWindow: 1000,
          maxOutputTokens: 100,
          capabilities: { tools: true, reasoning: false },
          pricing: { prompt: "0.000000000005", completion: "0.000000000007" },
        },
      ]),
    });
    const settings = agentSettings(vars);
    expect(settings.prices.markupBps).toBe(2000);
    expect(settings.assistant.maxSteps).toBe(3);
    expect(settings.preview.turns).toBe(0);
    expect(settings.prices.table.models["parley/dev"]?.promptMicrosPerMTok).toBe(5);
    expect(settings.prices.table.models["parley/dev-large"]?.completionMicrosPerMTok).toBe(
      15_000_000,
    );
    expect(agentSettings(vars)).toBe(settings);
  });

  it("keeps the old price table's figures, and prices an unlisted default model as before", () => {
    const table = priceTable({ MODEL_ID: "openai/gpt-4o-mini" });
    expect(table.models["openai/gpt-4o-mini"]).toMatchObject({
      promptMicrosPerMTok: 150_000,
      completionMicrosPerMTok: 600_000,
    });
    expect(table.models["anthropic/claude-sonnet-4.5"]).toMatchObject({
      promptMicrosPerMTok: 3_000_000,
      completionMicrosPerMTok: 15_000_000,
    });
    // The dev model's ids only where the platform talks to it.
    expect(table.models["parley/dev-fast"]).toBeUndefined();
    const unlisted = priceTable({ MODEL_ID: "local/llama" });
    expect(unlisted.default).toMatchObject({
      promptMicrosPerMTok: 1_000_000,
      completionMicrosPerMTok: 2_000_000,
    });
  });

  it("fails loudly on a malformed value instead of guessing", () => {
    expect(() => agentSettings(env({ MARKUP_BPS: "-5" }))).toThrow();
    expect(() => agentSettings(env({ ASSISTANT_MAX_STEPS: "0" }))).toThrow();
    expect(() => agentSettings(env({ MODEL_STALL_TIMEOUT_MS: "soon" }))).toThrow();
    expect(() => agentSettings(env({ LEASE_TTL_MS: "1000" }))).toThrow();
    expect(() => agentSettings({} as Env)).toThrow();
    // A catalogue price finer than a micro-dollar per million tokens is refused, not rounded.
    const fine = JSON.stringify([
      {
        id: "x/fine",
        provider: { type: "openrouter" },
        displayName: "Fine",
        contextWindow: 10,
        maxOutputTokens: 10,
        capabilities: { tools: false, reasoning: false },
        pricing: { prompt: "0.0000000000001", completion: "0" },
      },
    ]);
    expect(() => agentSettings(env({ MODEL_CATALOGUE: fine }))).toThrow(/finer than one micro/);
  });
});

/** An env as a deployment would have it: every var of wrangler.jsonc and every secret, made for dev. */
async function deployedEnv(overrides: Record<string, string> = {}): Promise<Env> {
  const { readWranglerConfig } = await import("../../../scripts/lib/dev-secrets.mjs");
  return {
    ...readWranglerConfig().vars,
    MODEL_BASE_URL: "http://127.0.0.1:8789/api/v1",
    ...(await missingDevSecrets({})),
    ...overrides,
  } as unknown as Env;
}

describe("config: required secrets (issue 28.6)", () => {
  it("names exactly the secrets wrangler.jsonc requires", () => {
    expect([...REQUIRED_SECRETS].sort()).toEqual([...requiredSecrets()].sort());
  });

  it("starts with every secret `pnpm dev` makes", async () => {
    expect(config(await deployedEnv()).operatorSecret.length).toBeGreaterThanOrEqual(32);
  });

  it("refuses to start without any one of them, naming it and no value", async () => {
    expect(() => config({} as Env)).toThrow(/Missing required secrets: JWT_PRIVATE_KEY, /);
    for (const name of REQUIRED_SECRETS) {
      const env = await deployedEnv({ [name]: "" });
      // Empty is refused too, except the model's key for a model on this machine (below).
      if (name !== "OPENROUTER_API_KEY") {
        expect(() => config(env), name).toThrow(new RegExp(`Missing required secrets: ${name}\\.`));
      }
      const { [name]: _gone, ...without } = env as unknown as Record<string, string>;
      expect(() => config(without as unknown as Env), name).toThrow(
        new RegExp(`Missing required secrets: ${name}\\.`),
      );
    }
    const hosted = await deployedEnv({
      MODEL_BASE_URL: "https://openrouter.ai/api/v1",
      OPENROUTER_API_KEY: "",
    });
    expect(() => config(hosted)).toThrow(/Missing required secrets: OPENROUTER_API_KEY\./);
    expect(() =>
      config({ ...(hosted as unknown as object), OPENROUTER_API_KEY: "sk-or-x" } as Env),
    ).not.toThrow();
  });
});
