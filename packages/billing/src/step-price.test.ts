import { describe, expect, it } from "vitest";
import type { PriceTable } from "./pricing.ts";
import { addTokens, noTokens, priceCutCall, priceStep, stepTokens } from "./step-price.ts";

const table: PriceTable = {
  models: {
    m: {
      promptMicrosPerMTok: 1_000_000,
      completionMicrosPerMTok: 2_000_000,
      cachedPromptMicrosPerMTok: null,
      reasoningMicrosPerMTok: null,
    },
  },
  default: {
    promptMicrosPerMTok: 1_000_000,
    completionMicrosPerMTok: 2_000_000,
    cachedPromptMicrosPerMTok: null,
    reasoningMicrosPerMTok: null,
  },
};
const prices = { table, model: "m", markupBps: 2_500 };

describe("priceStep", () => {
  it("prices by the provider's reported cost when there is one, rounded up, then marks it up", () => {
    const step = priceStep(
      { inputTokens: 100, outputTokens: 50 },
      { openrouter: { usage: { cost: 0.0000123 } } },
      prices,
    );
    expect(step).toEqual({
      tokens: {
        promptTokens: 100,
        completionTokens: 50,
        cachedPromptTokens: 0,
        reasoningTokens: 0,
      },
      costMicros: 13,
      priceMicros: 17, // 13 × 1.25 = 16.25, up
      source: "provider",
    });
  });

  it("falls back to the table for a missing, negative or non-finite report", () => {
    for (const cost of [undefined, -1, Number.NaN, Number.POSITIVE_INFINITY, "0.1"]) {
      const step = priceStep(
        { inputTokens: 1_000, outputTokens: 500 },
        { openrouter: { usage: { cost } } },
        prices,
      );
      expect(step.source).toBe("table");
      expect(step.costMicros).toBe(2_000); // 1000 × $1/M + 500 × $2/M
      expect(step.priceMicros).toBe(2_500);
    }
  });

  it("counts tokens the same way everywhere: missing, negative or fractional counts are whole and not below 0", () => {
    expect(
      stepTokens({
        inputTokens: -3,
        outputTokens: 2.6,
        inputTokenDetails: { cacheReadTokens: Number.NaN },
        outputTokenDetails: {},
      }),
    ).toEqual({ promptTokens: 0, completionTokens: 3, cachedPromptTokens: 0, reasoningTokens: 0 });
    expect(stepTokens({})).toEqual(noTokens());
  });
});

describe("priceCutCall", () => {
  it("takes the provider's looked-up cost, else estimates from the prompt and the text streamed", () => {
    const looked = priceCutCall(
      { promptEstimate: 1_000, streamedChars: 10, lookedUpDollars: 0.000004 },
      prices,
    );
    expect(looked).toMatchObject({ costMicros: 4, priceMicros: 5, source: "provider" });
    const estimated = priceCutCall(
      { promptEstimate: 1_000, streamedChars: 10, lookedUpDollars: null },
      prices,
    );
    // 1000 prompt tokens and ceil(10 / 4) = 3 completion tokens: 1000 + 6 micros.
    expect(estimated).toMatchObject({ costMicros: 1_006, priceMicros: 1_258, source: "table" });
    expect(estimated.tokens.completionTokens).toBe(3);
  });
});

describe("addTokens", () => {
  it("adds each count", () => {
    const one = { promptTokens: 1, completionTokens: 2, cachedPromptTokens: 3, reasoningTokens: 4 };
    expect(addTokens(one, one)).toEqual({
      promptTokens: 2,
      completionTokens: 4,
      cachedPromptTokens: 6,
      reasoningTokens: 8,
    });
  });
});
