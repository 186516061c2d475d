import type { ModelPrice, PriceTable } from "@parley/billing";

const price = (prompt: number, completion: number): ModelPrice => ({
  promptMicrosPerMTok: prompt,
  completionMicrosPerMTok: completion,
  cachedPromptMicrosPerMTok: null,
  reasoningMicrosPerMTok: null,
});

/**
 * Prices per million tokens, in micro-dollars, for endpoints that report no cost (a local llama.cpp,
 * Ollama or vLLM server) and for sizing reservations before a call. OpenRouter's reported
 * `usage.cost` wins whenever it is there. `MODEL_PRICES` (JSON of the same shape) overrides entries.
 */
export const DEFAULT_PRICES: PriceTable = {
  models: {
    "parley/dev": price(1_000_000, 2_000_000),
    "openai/gpt-4o-mini": price(150_000, 600_000),
    "openai/gpt-4.1": price(2_000_000, 8_000_000),
    "anthropic/claude-sonnet-4.5": price(3_000_000, 15_000_000),
    "google/gemini-2.5-flash": price(300_000, 2_500_000),
  },
  default: price(1_000_000, 2_000_000),
};

const tables = new Map<string, PriceTable>();

export function priceTable(overrides: string | undefined): PriceTable {
  if (!overrides) return DEFAULT_PRICES;
  let table = tables.get(overrides);
  if (!table) {
    const models = JSON.parse(overrides) as Record<string, ModelPrice>;
    table = { ...DEFAULT_PRICES, models: { ...DEFAULT_PRICES.models, ...models } };
    tables.set(overrides, table);
  }
  return table;
}
