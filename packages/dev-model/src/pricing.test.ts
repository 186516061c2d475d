import { describe, expect, it } from "vitest";
import {
  cacheDiscount,
  computeCost,
  DEFAULT_PRICE,
  formatPrice,
  NO_CACHE,
  PRICES,
  priceFor,
} from "./pricing.ts";

describe("computeCost", () => {
  it("multiplies tokens by the model's per-token prices", () => {
    expect(computeCost("openai/gpt-4o-mini", 1000, 500)).toBe(1000 * 0.00000015 + 500 * 0.0000006);
    expect(computeCost("anthropic/claude-sonnet-4.5", 10, 0)).toBe(0.00003);
  });

  it("charges unknown models the default price", () => {
    expect(priceFor("someone/unknown-model")).toBe(DEFAULT_PRICE);
    expect(priceFor("constructor")).toBe(DEFAULT_PRICE);
    expect(computeCost("someone/unknown-model", 3, 4)).toBe(3 * 0.000001 + 4 * 0.000002);
  });
});

describe("computeCost with a prompt cache", () => {
  it("prices cache reads and writes at the model's cache rates, the rest at its prompt rate", () => {
    const cache = { readTokens: 300, writeTokens: 100 };
    expect(computeCost("parley/dev-large", 1000, 50, cache)).toBe(
      600 * 0.000003 + 300 * 0.0000003 + 100 * 0.00000375 + 50 * 0.000015,
    );
    expect(cacheDiscount("parley/dev-large", cache)).toBe(
      300 * (0.000003 - 0.0000003) + 100 * (0.000003 - 0.00000375),
    );
    expect(cacheDiscount("parley/dev-large", NO_CACHE)).toBeNull();
    // Without cache tokens the figure is the plain one, bit for bit.
    expect(computeCost("parley/dev", 7, 24, NO_CACHE)).toBe(7 * 0.000001 + 24 * 0.000002);
  });
});

describe("formatPrice", () => {
  it("writes dollars per token as plain decimals", () => {
    expect(formatPrice(0.00000015)).toBe("0.00000015");
    expect(formatPrice(0.000015)).toBe("0.000015");
    expect(formatPrice(0)).toBe("0");
    for (const price of Object.values(PRICES)) {
      expect(Number(formatPrice(price.prompt))).toBe(price.prompt);
      expect(Number(formatPrice(price.completion))).toBe(price.completion);
    }
  });
});
