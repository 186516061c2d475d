/**
 * Prices of the dev model server, in dollars per token, the unit OpenRouter's `/models` uses.
 *
 * The figures copy public OpenRouter list prices for a few models so that costs look realistic;
 * any other model id is charged `DEFAULT_PRICE`. Pure module: safe to import from workerd tests.
 */
export type ModelPrice = {
  /** Display name in `GET /api/v1/models`. */
  readonly name: string;
  /** Dollars per prompt token. */
  readonly prompt: number;
  /** Dollars per completion token (reasoning tokens included, as OpenRouter bills them). */
  readonly completion: number;
  readonly contextLength: number;
};

export const DEV_MODEL_ID = "parley/dev";

export const PRICES: Readonly<Record<string, ModelPrice>> = Object.freeze({
  [DEV_MODEL_ID]: {
    name: "Parley Dev Model",
    prompt: 0.000001,
    completion: 0.000002,
    contextLength: 128_000,
  },
  "openai/gpt-4o-mini": {
    name: "OpenAI: GPT-4o-mini",
    prompt: 0.00000015,
    completion: 0.0000006,
    contextLength: 128_000,
  },
  "openai/gpt-4.1": {
    name: "OpenAI: GPT-4.1",
    prompt: 0.000002,
    completion: 0.000008,
    contextLength: 1_047_576,
  },
  "anthropic/claude-sonnet-4.5": {
    name: "Anthropic: Claude Sonnet 4.5",
    prompt: 0.000003,
    completion: 0.000015,
    contextLength: 1_000_000,
  },
  "google/gemini-2.5-flash": {
    name: "Google: Gemini 2.5 Flash",
    prompt: 0.0000003,
    completion: 0.0000025,
    contextLength: 1_048_576,
  },
});

/** Charged for any model id missing from `PRICES`. */
export const DEFAULT_PRICE: ModelPrice = Object.freeze({
  name: "Unlisted model (dev price)",
  prompt: 0.000001,
  completion: 0.000002,
  contextLength: 128_000,
});

export function priceFor(model: string): ModelPrice {
  return Object.hasOwn(PRICES, model) ? (PRICES[model] ?? DEFAULT_PRICE) : DEFAULT_PRICE;
}

/** The two halves of a cost, as `usage.cost_details` reports them. */
export function costParts(
  model: string,
  promptTokens: number,
  completionTokens: number,
): { promptCost: number; completionCost: number } {
  const price = priceFor(model);
  return {
    promptCost: promptTokens * price.prompt,
    completionCost: completionTokens * price.completion,
  };
}

/**
 * The cost in dollars (a float, as OpenRouter reports `usage.cost` and `total_cost`):
 * `promptTokens * price.prompt + completionTokens * price.completion`.
 * The server computes the wire figure with this very function, so equality is exact, not approximate.
 */
export function computeCost(model: string, promptTokens: number, completionTokens: number): number {
  const { promptCost, completionCost } = costParts(model, promptTokens, completionTokens);
  return promptCost + completionCost;
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
