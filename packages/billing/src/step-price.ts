/**
 * The one way a model call is priced, for every agent and every path (a step that finished, a call
 * cut off before its usage arrived, a call found open after a reset): tokens counted the same way,
 * the provider's own cost when it reported one, else the price table, then the markup.
 */
import { dollarsToMicrosCeil } from "./money.ts";
import { applyMarkup, costFromTokens, type PriceTable, type TokenUsage } from "./pricing.ts";

/** A step's usage as the AI SDK reports it (`LanguageModelUsage`); any field may be missing. */
export interface StepUsage {
  inputTokens?: number | undefined;
  outputTokens?: number | undefined;
  inputTokenDetails?:
    | { cacheReadTokens?: number | undefined; cacheWriteTokens?: number | undefined }
    | undefined;
  outputTokenDetails?: { reasoningTokens?: number | undefined } | undefined;
}

/** What prices a call: the model's row of the table and the org's markup. */
export interface StepPrices {
  table: PriceTable;
  model: string;
  /** Basis points over the provider's cost (250 = 2.5%). */
  markupBps: number;
}

/** A priced call: its tokens, what the provider charged and what the org is charged. */
export interface PricedStep {
  tokens: TokenUsage;
  costMicros: number;
  priceMicros: number;
  /** Where the cost came from: the provider's report or lookup, or the price table. */
  source: "provider" | "table";
}

/** A count as the ledger takes it: a finite, non-negative integer (anything else counts 0). */
const count = (value: number | undefined): number =>
  typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.round(value) : 0;

/** A step's token counts, each a non-negative integer. */
export function stepTokens(usage: StepUsage): TokenUsage {
  return {
    promptTokens: count(usage.inputTokens),
    completionTokens: count(usage.outputTokens),
    cachedPromptTokens: count(usage.inputTokenDetails?.cacheReadTokens),
    reasoningTokens: count(usage.outputTokenDetails?.reasoningTokens),
  };
}

/** A cost in dollars as a provider reports it, when it is a usable one (finite, not negative). */
export function usableDollars(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : null;
}

/** `usage.cost` (dollars) as OpenRouter reports it in a step's provider metadata, or null. */
export function reportedCostDollars(providerMetadata: unknown): number | null {
  return usableDollars(
    (providerMetadata as { openrouter?: { usage?: { cost?: unknown } } } | null | undefined)
      ?.openrouter?.usage?.cost,
  );
}

function priced(
  tokens: TokenUsage,
  providerDollars: number | null,
  prices: StepPrices,
  cacheWriteTokens = 0,
): PricedStep {
  const costMicros =
    providerDollars === null
      ? costFromTokens(prices.table, prices.model, tokens, cacheWriteTokens)
      : dollarsToMicrosCeil(providerDollars);
  return {
    tokens,
    costMicros,
    priceMicros: applyMarkup(costMicros, prices.markupBps),
    source: providerDollars === null ? "table" : "provider",
  };
}

/**
 * A step that finished: its usage, priced by the provider's reported cost or else the table (cache
 * reads and writes at the model's cache rates; the write count is part of the prompt's and is not
 * kept in the step's tokens).
 */
export function priceStep(
  usage: StepUsage,
  providerMetadata: unknown,
  prices: StepPrices,
): PricedStep {
  return priced(
    stepTokens(usage),
    reportedCostDollars(providerMetadata),
    prices,
    count(usage.inputTokenDetails?.cacheWriteTokens),
  );
}

/**
 * A call cut off before its usage arrived (a stop, an error, a reset): what the provider's
 * generation record says it cost when it could be looked up, else an estimate from the table with
 * the prompt as sized before the call and the text streamed so far (four characters a token).
 */
export function priceCutCall(
  {
    promptEstimate,
    streamedChars,
    lookedUpDollars,
  }: {
    promptEstimate: number;
    streamedChars: number;
    lookedUpDollars: number | null;
  },
  prices: StepPrices,
): PricedStep {
  const tokens: TokenUsage = {
    promptTokens: count(promptEstimate),
    completionTokens: Math.ceil(count(streamedChars) / 4),
    cachedPromptTokens: 0,
    reasoningTokens: 0,
  };
  return priced(tokens, usableDollars(lookedUpDollars), prices);
}

/** Adds `b`'s token counts to `a`'s. */
export function addTokens(a: TokenUsage, b: TokenUsage): TokenUsage {
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    cachedPromptTokens: a.cachedPromptTokens + b.cachedPromptTokens,
    reasoningTokens: a.reasoningTokens + b.reasoningTokens,
  };
}

export const noTokens = (): TokenUsage => ({
  promptTokens: 0,
  completionTokens: 0,
  cachedPromptTokens: 0,
  reasoningTokens: 0,
});
