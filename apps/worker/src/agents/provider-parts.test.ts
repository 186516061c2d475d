import type { LanguageModelV4Usage } from "@ai-sdk/provider";
import { applyMarkup, type PriceTable, priceStep, type StepPrices } from "@parley/billing";
import { describe, expect, it } from "vitest";
import { stepUsage } from "./provider-parts.ts";

/**
 * A call's usage as the providers hand it to the metering middleware, priced from the table (an
 * endpoint that reports no cost): cache reads and writes each at their own rate, whichever
 * provider package read them off the wire.
 */

// $3 prompt, $15 completion, $0.30 cache read, $3.75 cache write per million tokens (Dev Large).
const table: PriceTable = {
  models: {},
  default: {
    promptMicrosPerMTok: 3_000_000,
    completionMicrosPerMTok: 15_000_000,
    cachedPromptMicrosPerMTok: 300_000,
    reasoningMicrosPerMTok: null,
    cacheWriteMicrosPerMTok: 3_750_000,
  },
};
const prices: StepPrices = { table, model: "test/cached", markupBps: 2_000 };

// 10,000 prompt tokens: 4,000 read from the cache, 2,000 written to it, 4,000 plain; 1,000 out.
const expectedCost =
  (4_000 * 3_000_000 + 4_000 * 300_000 + 2_000 * 3_750_000 + 1_000 * 15_000_000) / 1_000_000;

describe("a call's usage, priced from the table", () => {
  it("prices the cache writes OpenRouter's provider reports at the write rate", () => {
    const usage: LanguageModelV4Usage = {
      inputTokens: { total: 10_000, noCache: 6_000, cacheRead: 4_000, cacheWrite: 2_000 },
      outputTokens: { total: 1_000, text: 1_000, reasoning: 0 },
    };
    const priced = priceStep(stepUsage(usage), undefined, prices);
    expect(priced).toMatchObject({
      costMicros: expectedCost,
      priceMicros: applyMarkup(expectedCost, 2_000),
      source: "table",
      tokens: { promptTokens: 10_000, cachedPromptTokens: 4_000, completionTokens: 1_000 },
    });
  });

  it("reads the cache writes an OpenAI-compatible endpoint reports only in its raw usage", () => {
    // `@ai-sdk/openai-compatible` maps `cached_tokens` and leaves `cacheWrite` undefined.
    const usage: LanguageModelV4Usage = {
      inputTokens: { total: 10_000, noCache: 6_000, cacheRead: 4_000, cacheWrite: undefined },
      outputTokens: { total: 1_000, text: 1_000, reasoning: 0 },
      raw: {
        prompt_tokens: 10_000,
        completion_tokens: 1_000,
        prompt_tokens_details: { cached_tokens: 4_000, cache_write_tokens: 2_000 },
      },
    };
    expect(priceStep(stepUsage(usage), undefined, prices).costMicros).toBe(expectedCost);
  });

  it("prices a plain OpenAI-compatible usage (no cache fields) at the prompt and completion rates", () => {
    const usage: LanguageModelV4Usage = {
      inputTokens: { total: 1_000, noCache: 1_000, cacheRead: 0, cacheWrite: undefined },
      outputTokens: { total: 100, text: 100, reasoning: 0 },
      raw: { prompt_tokens: 1_000, completion_tokens: 100, total_tokens: 1_100 },
    };
    expect(priceStep(stepUsage(usage), undefined, prices).costMicros).toBe(3_000 + 1_500);
  });
});
