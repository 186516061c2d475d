import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  applyMarkup,
  assertPriceTable,
  costFromTokens,
  maxCallCostMicros,
  type PriceTable,
  priceForModel,
} from "./pricing.ts";

const table: PriceTable = {
  models: {
    // $3/M prompt, $15/M completion, $0.30/M cache reads, reasoning at completion rate
    "anthropic/claude-sonnet": {
      promptMicrosPerMTok: 3_000_000,
      completionMicrosPerMTok: 15_000_000,
      cachedPromptMicrosPerMTok: 300_000,
      reasoningMicrosPerMTok: null,
    },
    // $0.02/M in and out: a cheap model, still exact
    "tiny/model": {
      promptMicrosPerMTok: 20_000,
      completionMicrosPerMTok: 20_000,
      cachedPromptMicrosPerMTok: null,
      reasoningMicrosPerMTok: 60_000,
    },
  },
  default: {
    promptMicrosPerMTok: 1_000_000,
    completionMicrosPerMTok: 2_000_000,
    cachedPromptMicrosPerMTok: null,
    reasoningMicrosPerMTok: null,
  },
};

const noTokens = {
  promptTokens: 0,
  completionTokens: 0,
  cachedPromptTokens: 0,
  reasoningTokens: 0,
};

describe("price table", () => {
  it("finds a listed model or falls back to the default", () => {
    expect(priceForModel(table, "tiny/model").listed).toBe(true);
    expect(priceForModel(table, "llama.cpp/local")).toEqual({
      price: table.default,
      listed: false,
    });
    // Not fooled by Object.prototype keys.
    expect(priceForModel(table, "constructor").listed).toBe(false);
  });

  it("validates prices", () => {
    expect(assertPriceTable(table)).toBe(table);
    const bad = { ...table, default: { ...table.default, promptMicrosPerMTok: 0.5 } };
    expect(() => assertPriceTable(bad)).toThrow(/default.promptMicrosPerMTok/);
  });
});

describe("costFromTokens", () => {
  it("prices cached and reasoning tokens at their own rates", () => {
    const usage = {
      promptTokens: 10_000,
      cachedPromptTokens: 8_000,
      completionTokens: 1_000,
      reasoningTokens: 0,
    };
    // 2000 × 3 + 8000 × 0.3 + 1000 × 15 = 6000 + 2400 + 15000 = 23400 micros
    expect(costFromTokens(table, "anthropic/claude-sonnet", usage)).toBe(23_400);
    // reasoning falls back to the completion rate
    expect(
      costFromTokens(table, "anthropic/claude-sonnet", {
        ...noTokens,
        completionTokens: 100,
        reasoningTokens: 60,
      }),
    ).toBe(1_500);
    // tiny: 40 plain completion × 0.02 + 60 reasoning × 0.06 = 0.8 + 3.6 = 4.4 → 5
    expect(
      costFromTokens(table, "tiny/model", {
        ...noTokens,
        completionTokens: 100,
        reasoningTokens: 60,
      }),
    ).toBe(5);
  });

  it("rounds up once, keeping cheap models exact", () => {
    expect(costFromTokens(table, "tiny/model", { ...noTokens, promptTokens: 50 })).toBe(1);
    expect(costFromTokens(table, "tiny/model", { ...noTokens, promptTokens: 50_000 })).toBe(1_000);
    expect(costFromTokens(table, "tiny/model", { ...noTokens, promptTokens: 50_001 })).toBe(1_001);
    expect(costFromTokens(table, "tiny/model", noTokens)).toBe(0);
  });

  it("never charges negative token counts", () => {
    // more cached than prompt tokens: cached as reported, no negative uncached part
    expect(
      costFromTokens(table, "anthropic/claude-sonnet", {
        ...noTokens,
        promptTokens: 10,
        cachedPromptTokens: 1_000_000,
      }),
    ).toBe(300_000);
    expect(() => costFromTokens(table, "tiny/model", { ...noTokens, promptTokens: -1 })).toThrow(
      RangeError,
    );
  });

  it("is at most one micro above the exact cost", () => {
    fc.assert(
      fc.property(
        fc.record({
          promptTokens: fc.integer({ min: 0, max: 5_000_000 }),
          completionTokens: fc.integer({ min: 0, max: 5_000_000 }),
          cachedPromptTokens: fc.integer({ min: 0, max: 5_000_000 }),
          reasoningTokens: fc.integer({ min: 0, max: 5_000_000 }),
        }),
        fc.constantFrom("anthropic/claude-sonnet", "tiny/model", "other"),
        (usage, model) => {
          const { price } = priceForModel(table, model);
          const uncached = BigInt(Math.max(0, usage.promptTokens - usage.cachedPromptTokens));
          const plain = BigInt(Math.max(0, usage.completionTokens - usage.reasoningTokens));
          const exactTimesMillion =
            uncached * BigInt(price.promptMicrosPerMTok) +
            BigInt(usage.cachedPromptTokens) *
              BigInt(price.cachedPromptMicrosPerMTok ?? price.promptMicrosPerMTok) +
            plain * BigInt(price.completionMicrosPerMTok) +
            BigInt(usage.reasoningTokens) *
              BigInt(price.reasoningMicrosPerMTok ?? price.completionMicrosPerMTok);
          const cost = BigInt(costFromTokens(table, model, usage));
          expect(cost * 1_000_000n >= exactTimesMillion).toBe(true);
          expect((cost - 1n) * 1_000_000n < exactTimesMillion).toBe(true);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe("applyMarkup", () => {
  it("rounds up", () => {
    expect(applyMarkup(1_000, 0)).toBe(1_000);
    expect(applyMarkup(1_000, 2_500)).toBe(1_250);
    expect(applyMarkup(1, 2_500)).toBe(2); // 1.25 → 2
    expect(applyMarkup(3, 3_333)).toBe(4); // 3.9999 → 4
    expect(applyMarkup(10_000, 1)).toBe(10_001);
    expect(applyMarkup(9_999, 1)).toBe(10_000); // 9999.9999 → 10000
    expect(applyMarkup(0, 5_000)).toBe(0);
  });

  it("refuses bad inputs and overflow", () => {
    expect(() => applyMarkup(-1, 0)).toThrow(RangeError);
    expect(() => applyMarkup(1.5, 0)).toThrow(RangeError);
    expect(() => applyMarkup(1, -1)).toThrow(RangeError);
    expect(() => applyMarkup(1, 0.5)).toThrow(RangeError);
    expect(() => applyMarkup(Number.MAX_SAFE_INTEGER, 10_000)).toThrow(RangeError);
    // the product exceeds 2^53 but the result does not: BigInt keeps it exact
    expect(applyMarkup(2 ** 50, 5_000)).toBe(1.5 * 2 ** 50);
  });

  it("is never below and never a whole micro above the exact price", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 48 }),
        fc.integer({ min: 0, max: 100_000 }),
        (cost, bps) => {
          const exactTimes10k = BigInt(cost) * BigInt(10_000 + bps);
          const price = BigInt(applyMarkup(cost, bps));
          expect(price * 10_000n >= exactTimes10k).toBe(true);
          expect((price - 1n) * 10_000n < exactTimes10k).toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe("maxCallCostMicros", () => {
  it("prices the prompt estimate and the full output budget with markup", () => {
    // 10000 × 3 + 4000 × 15 = 30000 + 60000 = 90000, +10% = 99000
    expect(
      maxCallCostMicros({
        table,
        model: "anthropic/claude-sonnet",
        promptTokens: 10_000,
        maxOutputTokens: 4_000,
        markupBps: 1_000,
      }),
    ).toBe(99_000);
    // output at the higher reasoning rate: 1000 × 0.02 + 1000 × 0.06 = 80, +0% = 80
    expect(
      maxCallCostMicros({
        table,
        model: "tiny/model",
        promptTokens: 1_000,
        maxOutputTokens: 1_000,
        markupBps: 0,
      }),
    ).toBe(80);
  });

  it("bounds the settled price of any call within the estimate", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 200_000 }),
        fc.integer({ min: 0, max: 200_000 }),
        fc.integer({ min: 0, max: 1 }),
        fc.integer({ min: 0, max: 1 }),
        fc.integer({ min: 0, max: 5_000 }),
        fc.constantFrom("anthropic/claude-sonnet", "tiny/model", "other"),
        (prompt, maxOut, cachedShare, reasoningShare, bps, model) => {
          const hold = maxCallCostMicros({
            table,
            model,
            promptTokens: prompt,
            maxOutputTokens: maxOut,
            markupBps: bps,
          });
          const usage = {
            promptTokens: prompt,
            cachedPromptTokens: prompt * cachedShare,
            completionTokens: maxOut,
            reasoningTokens: maxOut * reasoningShare,
          };
          expect(applyMarkup(costFromTokens(table, model, usage), bps)).toBeLessThanOrEqual(hold);
        },
      ),
      { numRuns: 500 },
    );
  });
});
