import { describe, expect, it } from "vitest";
import { DEFAULT_PRICES } from "./billing/prices.ts";
import { agentSettings } from "./env.ts";

const env = (vars: Record<string, string>) =>
  ({ MODEL_ID: "parley/dev", ...vars }) as unknown as Env;

describe("agentSettings", () => {
  it("takes the defaults for unset or empty vars", () => {
    const settings = agentSettings(env({ MARKUP_BPS: "", STREAM_COALESCE_MS: "" }));
    expect(settings).toEqual({
      prices: { table: DEFAULT_PRICES, model: "parley/dev", markupBps: 0 },
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

  it("reads every var once per env object, with MODEL_PRICES over the defaults", () => {
    const vars = env({
      MARKUP_BPS: "2000",
      ASSISTANT_MAX_STEPS: "3",
      PREVIEW_TURNS: "0",
      MODEL_PRICES: JSON.stringify({
        "parley/dev": {
          promptMicrosPerMTok: 5,
          completionMicrosPerMTok: 7,
          cachedPromptMicrosPerMTok: null,
          reasoningMicrosPerMTok: null,
        },
      }),
    });
    const settings = agentSettings(vars);
    expect(settings.prices.markupBps).toBe(2000);
    expect(settings.assistant.maxSteps).toBe(3);
    expect(settings.preview.turns).toBe(0);
    expect(settings.prices.table.models["parley/dev"]?.promptMicrosPerMTok).toBe(5);
    expect(agentSettings(vars)).toBe(settings);
  });

  it("fails loudly on a malformed value instead of guessing", () => {
    expect(() => agentSettings(env({ MARKUP_BPS: "-5" }))).toThrow();
    expect(() => agentSettings(env({ ASSISTANT_MAX_STEPS: "0" }))).toThrow();
    expect(() => agentSettings(env({ MODEL_STALL_TIMEOUT_MS: "soon" }))).toThrow();
    expect(() => agentSettings(env({ LEASE_TTL_MS: "1000" }))).toThrow();
    expect(() => agentSettings({} as Env)).toThrow();
  });
});
