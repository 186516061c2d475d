import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  microsPerCall,
  microsPerMTok,
  modelPriceFromPricing,
  perTokenDollarsToMicrosPerMTok,
  pricingFromModelPrice,
  unscaleDecimal,
} from "./catalogue-pricing.ts";
import { costFromTokens, maxCallCostMicros, type PriceTable } from "./pricing.ts";
import { priceStep } from "./step-price.ts";

const micros = fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER });

describe("published prices to micro-dollars per million tokens", () => {
  it("converts OpenRouter's strings exactly", () => {
    expect(microsPerMTok("0.000003")).toEqual({ ok: true, micros: 3_000_000 });
    expect(microsPerMTok("0.00000015")).toEqual({ ok: true, micros: 150_000 });
    expect(microsPerMTok("0.0000000375")).toEqual({ ok: true, micros: 37_500 });
    expect(microsPerMTok("0.000000000001")).toEqual({ ok: true, micros: 1 });
    expect(microsPerMTok("0")).toEqual({ ok: true, micros: 0 });
    expect(microsPerMTok("3e-6")).toEqual({ ok: true, micros: 3_000_000 });
    expect(microsPerMTok("0.000003000000000000")).toEqual({ ok: true, micros: 3_000_000 });
    expect(microsPerCall("0.005")).toEqual({ ok: true, micros: 5_000 });
  });

  it("converts OpenRouter per-token dollar strings exactly", () => {
    expect(perTokenDollarsToMicrosPerMTok("0.00000002")).toBe(20_000);
    expect(perTokenDollarsToMicrosPerMTok("0.000003")).toBe(3_000_000);
    expect(perTokenDollarsToMicrosPerMTok("0.0000000375")).toBe(37_500);
    expect(perTokenDollarsToMicrosPerMTok("0")).toBe(0);
    // below a micro per million tokens rounds up
    expect(perTokenDollarsToMicrosPerMTok("0.0000000000001")).toBe(1);
    // ...however far below: past 18 decimals it was rounded half up to zero (2026-12-06).
    expect(perTokenDollarsToMicrosPerMTok("0.0000000000000000001")).toBe(1);
    expect(perTokenDollarsToMicrosPerMTok("1e-20")).toBe(1);
    expect(() => perTokenDollarsToMicrosPerMTok("-0.000001")).toThrow(RangeError);
  });

  it("refuses a price finer than one micro-dollar per million tokens, or rounds it up", () => {
    const fine = microsPerMTok("0.0000030000001");
    expect(fine.ok).toBe(false);
    if (!fine.ok) expect(fine.reason).toMatch(/finer than one micro-dollar per million tokens/);
    expect(microsPerMTok("0.0000030000001", "ceil")).toEqual({ ok: true, micros: 3_000_001 });
    // Past 18 decimals too (atto-dollar parsing rounded this one to zero).
    expect(microsPerMTok("0.0000000000000000001", "ceil")).toEqual({ ok: true, micros: 1 });
    expect(microsPerCall("0.0000001").ok).toBe(false);
  });

  it("refuses what is not a non-negative decimal", () => {
    for (const bad of ["-1", "", " 1", "1.", ".5", "1e", "abc", "0x10", "1,5", "NaN", "Infinity"]) {
      expect(microsPerMTok(bad).ok, bad).toBe(false);
    }
    expect(microsPerMTok("1e100").ok).toBe(false);
    expect(microsPerMTok("10000").ok).toBe(false); // beyond the safe range in micros/MTok
  });

  it("is exact for every integer of micros/MTok written with up to 12 decimals and any trailing zeros (property)", () => {
    fc.assert(
      fc.property(micros, fc.integer({ min: 0, max: 6 }), (n, zeros) => {
        const text = unscaleDecimal(n, 12);
        const padded = text.includes(".") ? text + "0".repeat(zeros) : text;
        expect(microsPerMTok(padded)).toEqual({ ok: true, micros: n });
        expect(microsPerMTok(padded, "ceil")).toEqual({ ok: true, micros: n });
      }),
    );
  });

  it("ceil is the least whole micro/MTok not below the exact value, and exact refuses any remainder (property)", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 9_000n }), // $9,000 a token: within the safe range
        fc.stringMatching(/^[0-9]{0,20}$/),
        (whole, fraction) => {
          const text = fraction === "" ? String(whole) : `${whole}.${fraction}`;
          // The exact value × 1e12, as a fraction over 10^(digits past the twelfth).
          const digits = BigInt(`${whole}${fraction}`);
          const past = fraction.length - 12;
          const [floor, remainder] =
            past <= 0
              ? [digits * 10n ** BigInt(-past), 0n]
              : [digits / 10n ** BigInt(past), digits % 10n ** BigInt(past)];
          const ceil = floor + (remainder > 0n ? 1n : 0n);
          const rounded = microsPerMTok(text, "ceil");
          expect(rounded).toEqual({ ok: true, micros: Number(ceil) });
          const exact = microsPerMTok(text);
          expect(exact.ok).toBe(remainder === 0n);
          if (exact.ok) expect(exact.micros).toBe(Number(floor));
        },
      ),
    );
  });
});

describe("a whole pricing object", () => {
  it("maps OpenRouter's fields and their fallbacks", () => {
    expect(
      modelPriceFromPricing({
        prompt: "0.000003",
        completion: "0.000015",
        request: "0",
        input_cache_read: "0.0000003",
        input_cache_write: "0.00000375",
      }),
    ).toEqual({
      ok: true,
      price: {
        promptMicrosPerMTok: 3_000_000,
        completionMicrosPerMTok: 15_000_000,
        cachedPromptMicrosPerMTok: 300_000,
        reasoningMicrosPerMTok: null,
        cacheWriteMicrosPerMTok: 3_750_000,
        requestMicros: 0,
      },
    });
  });

  it("reads a zero optional rate as not listed: never free reasoning or cache reads", () => {
    const published = {
      prompt: "0.000001",
      completion: "0.000002",
      request: "0",
      internal_reasoning: "0",
      input_cache_read: "0",
      input_cache_write: "0",
    };
    expect(modelPriceFromPricing(published)).toEqual({
      ok: true,
      price: {
        promptMicrosPerMTok: 1_000_000,
        completionMicrosPerMTok: 2_000_000,
        cachedPromptMicrosPerMTok: null,
        reasoningMicrosPerMTok: null,
        cacheWriteMicrosPerMTok: null,
        requestMicros: 0,
      },
    });
  });

  it("names the field that failed", () => {
    expect(
      modelPriceFromPricing({
        prompt: "0.000001",
        completion: "0.000002",
        input_cache_write: "-1",
      }),
    ).toMatchObject({ ok: false, field: "input_cache_write" });
  });

  it("round-trips every exact price (property)", () => {
    // A listed optional rate is at least 1 (zero reads as not listed, above).
    const rate = fc.option(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), { nil: null });
    fc.assert(
      fc.property(
        micros,
        micros,
        rate,
        rate,
        rate,
        fc.integer({ min: 0, max: 10 ** 9 }),
        (p, c, r, cr, cw, req) => {
          const price = {
            promptMicrosPerMTok: p,
            completionMicrosPerMTok: c,
            reasoningMicrosPerMTok: r,
            cachedPromptMicrosPerMTok: cr,
            cacheWriteMicrosPerMTok: cw,
            requestMicros: req,
          };
          expect(modelPriceFromPricing(pricingFromModelPrice(price))).toEqual({ ok: true, price });
        },
      ),
    );
  });
});

describe("cache reads and writes at the catalogue's cache rates", () => {
  const price = {
    promptMicrosPerMTok: 3_000_000,
    completionMicrosPerMTok: 15_000_000,
    cachedPromptMicrosPerMTok: 300_000,
    reasoningMicrosPerMTok: null,
    cacheWriteMicrosPerMTok: 3_750_000,
    requestMicros: 1_000,
  };
  const table: PriceTable = { models: { m: price }, default: price };

  it("prices a table-priced step: plain prompt, cache reads, cache writes, completion, per call", () => {
    const step = priceStep(
      {
        inputTokens: 10_000,
        outputTokens: 1_000,
        inputTokenDetails: { cacheReadTokens: 6_000, cacheWriteTokens: 2_000 },
      },
      undefined,
      { table, model: "m", markupBps: 0 },
    );
    // 2000 × 3 + 6000 × 0.3 + 2000 × 3.75 + 1000 × 15 + 1000 per call
    // = 6000 + 1800 + 7500 + 15000 + 1000 = 31300
    expect(step.costMicros).toBe(31_300);
    expect(step.source).toBe("table");
    // The step's tokens stay the four the ledger keeps (writes are part of the prompt's).
    expect(step.tokens).toEqual({
      promptTokens: 10_000,
      completionTokens: 1_000,
      cachedPromptTokens: 6_000,
      reasoningTokens: 0,
    });
  });

  it("holds enough for the dearest prompt rate and the per-call price", () => {
    expect(
      maxCallCostMicros({
        table,
        model: "m",
        promptTokens: 1_000,
        maxOutputTokens: 100,
        markupBps: 0,
      }),
    ).toBe(3_750 + 1_500 + 1_000);
  });

  it("tables without the new rates price as before", () => {
    const old: PriceTable = {
      models: {},
      default: {
        promptMicrosPerMTok: 1_000_000,
        completionMicrosPerMTok: 2_000_000,
        cachedPromptMicrosPerMTok: null,
        reasoningMicrosPerMTok: null,
      },
    };
    const usage = {
      promptTokens: 1_000,
      completionTokens: 500,
      cachedPromptTokens: 0,
      reasoningTokens: 0,
    };
    expect(costFromTokens(old, "x", usage)).toBe(2_000);
    expect(costFromTokens(old, "x", usage, 400)).toBe(2_000);
  });
});
