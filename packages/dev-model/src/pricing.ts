/**
 * What the dev model charges, in dollars per token (OpenRouter's unit), read from the models'
 * listed decimal prices. Pure module: safe to import from workerd tests.
 */
import { DEV_MODEL_ID, listedModels, modelSpec, type OpenRouterPricing } from "./models.ts";

export { DEV_MODEL_ID };

export type ModelPrice = {
  /** Display name in `GET /api/v1/models`. */
  readonly name: string;
  /** Dollars per prompt token not read from or written to the prompt cache. */
  readonly prompt: number;
  /** Dollars per completion token (reasoning tokens included, as OpenRouter bills them). */
  readonly completion: number;
  /** Dollars per prompt token read from the prompt cache. */
  readonly cacheRead: number;
  /** Dollars per prompt token written to the prompt cache. */
  readonly cacheWrite: number;
  readonly contextLength: number;
};

/** Prompt tokens read from and written to the prompt cache, out of a request's prompt tokens. */
export type CacheTokens = { readonly readTokens: number; readonly writeTokens: number };

export const NO_CACHE: CacheTokens = Object.freeze({ readTokens: 0, writeTokens: 0 });

function priceOf(name: string, pricing: OpenRouterPricing, contextLength: number): ModelPrice {
  return Object.freeze({
    name,
    prompt: Number(pricing.prompt),
    completion: Number(pricing.completion),
    cacheRead: Number(pricing.input_cache_read),
    cacheWrite: Number(pricing.input_cache_write),
    contextLength,
  });
}

/** Every listed model's price, by id. */
export const PRICES: Readonly<Record<string, ModelPrice>> = Object.freeze(
  Object.fromEntries(
    listedModels().map((m) => [m.id, priceOf(m.name, m.pricing, m.context_length)]),
  ),
);

/** Charged for any model id the dev model does not list. */
export const DEFAULT_PRICE: ModelPrice = (() => {
  const unlisted = modelSpec("").listing;
  return priceOf("Unlisted model (dev price)", unlisted.pricing, unlisted.context_length);
})();

export function priceFor(model: string): ModelPrice {
  return Object.hasOwn(PRICES, model) ? (PRICES[model] ?? DEFAULT_PRICE) : DEFAULT_PRICE;
}

/**
 * The two halves of a cost, as `usage.cost_details` reports them. The prompt half prices cache
 * reads and writes at the model's cache rates and the rest of the prompt at its prompt rate.
 */
export function costParts(
  model: string,
  promptTokens: number,
  completionTokens: number,
  cache: CacheTokens = NO_CACHE,
): { promptCost: number; completionCost: number } {
  const price = priceFor(model);
  const uncached = promptTokens - cache.readTokens - cache.writeTokens;
  return {
    promptCost:
      uncached * price.prompt +
      cache.readTokens * price.cacheRead +
      cache.writeTokens * price.cacheWrite,
    completionCost: completionTokens * price.completion,
  };
}

/**
 * The cost in dollars (a float, as OpenRouter reports `usage.cost` and `total_cost`):
 * `(prompt - cacheRead - cacheWrite) * price.prompt + cacheRead * price.cacheRead
 *  + cacheWrite * price.cacheWrite + completion * price.completion`.
 * The server computes the wire figure with this very function, so equality is exact, not approximate.
 */
export function computeCost(
  model: string,
  promptTokens: number,
  completionTokens: number,
  cache: CacheTokens = NO_CACHE,
): number {
  const { promptCost, completionCost } = costParts(model, promptTokens, completionTokens, cache);
  return promptCost + completionCost;
}

/**
 * What caching saved (positive) or cost extra (negative, a cache write dearer than the prompt
 * rate), as the generation record's `cache_discount`; null when the cache was not used.
 */
export function cacheDiscount(model: string, cache: CacheTokens): number | null {
  if (cache.readTokens === 0 && cache.writeTokens === 0) return null;
  const price = priceFor(model);
  return (
    cache.readTokens * (price.prompt - price.cacheRead) +
    cache.writeTokens * (price.prompt - price.cacheWrite)
  );
}

/**
 * A price as OpenRouter's `/models` spells it: a decimal string of dollars per token ("0.00000015"),
 * never exponent notation.
 */
export function formatPrice(dollarsPerToken: number): string {
  if (dollarsPerToken === 0) return "0";
  const fixed = dollarsPerToken.toFixed(12);
  return fixed.replace(/\.?0+$/, "");
}
