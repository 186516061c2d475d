/**
 * Price table and markup. Prices are integer micro-dollars per million tokens, so any price quoted
 * to six decimals of a dollar per million tokens ($0.02/M = 20_000) is exact, even for the cheapest
 * models. Products are taken in BigInt and rounded up once per operation.
 */

import { assertMicros, assertNonNegativeMicros, divCeil } from "./money.ts";

/** Prices of one model, in micro-dollars per million tokens. */
export interface ModelPrice {
  promptMicrosPerMTok: number;
  completionMicrosPerMTok: number;
  /** Cache-read prompt tokens; `null` prices them as ordinary prompt tokens. */
  cachedPromptMicrosPerMTok: number | null;
  /** Reasoning tokens; `null` prices them as ordinary completion tokens. */
  reasoningMicrosPerMTok: number | null;
  /**
   * Prompt tokens written to the provider's cache; absent or `null` prices them as ordinary
   * prompt tokens. (Added 2026-12-06 with the model catalogue: optional, so tables written before
   * still type-check.)
   */
  cacheWriteMicrosPerMTok?: number | null | undefined;
  /** A fixed price per call, whatever its tokens (OpenRouter's `request`); absent: none. */
  requestMicros?: number | undefined;
}

/** Prices per model id (as the provider names it, e.g. `openai/gpt-4o-mini`), and a fallback. */
export interface PriceTable {
  models: Readonly<Record<string, ModelPrice>>;
  /** Used for any model not listed (a local llama.cpp or Ollama model, a new model). */
  default: ModelPrice;
}

/**
 * Token counts of one call, in the OpenAI/OpenRouter convention: `promptTokens` includes
 * `cachedPromptTokens`, and `completionTokens` includes `reasoningTokens`.
 */
export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  cachedPromptTokens: number;
  reasoningTokens: number;
}

/** Basis points in 100%. */
export const BPS_DENOMINATOR = 10_000;

const TOKENS_PER_PRICE_UNIT = 1_000_000n;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function toSafeNumber(value: bigint, label: string): number {
  if (value > MAX_SAFE || value < -MAX_SAFE)
    throw new RangeError(`${label} exceeds the safe range`);
  return Number(value);
}

function assertTokens(value: number, label: string): bigint {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${label} must be a non-negative safe integer, got ${String(value)}`);
  }
  return BigInt(value);
}

function assertModelPrice(price: ModelPrice, label: string): void {
  assertNonNegativeMicros(price.promptMicrosPerMTok, `${label}.promptMicrosPerMTok`);
  assertNonNegativeMicros(price.completionMicrosPerMTok, `${label}.completionMicrosPerMTok`);
  if (price.cachedPromptMicrosPerMTok !== null) {
    assertNonNegativeMicros(price.cachedPromptMicrosPerMTok, `${label}.cachedPromptMicrosPerMTok`);
  }
  if (price.reasoningMicrosPerMTok !== null) {
    assertNonNegativeMicros(price.reasoningMicrosPerMTok, `${label}.reasoningMicrosPerMTok`);
  }
  if (price.cacheWriteMicrosPerMTok !== undefined && price.cacheWriteMicrosPerMTok !== null) {
    assertNonNegativeMicros(price.cacheWriteMicrosPerMTok, `${label}.cacheWriteMicrosPerMTok`);
  }
  if (price.requestMicros !== undefined) {
    assertNonNegativeMicros(price.requestMicros, `${label}.requestMicros`);
  }
}

/**
 * Checks every price is a non-negative safe integer; throws a `RangeError` naming the first bad
 * field. Call once when the table is loaded from configuration.
 */
export function assertPriceTable(table: PriceTable): PriceTable {
  assertModelPrice(table.default, "default");
  for (const [model, price] of Object.entries(table.models)) assertModelPrice(price, model);
  return table;
}

/** The price of `model`, or the table's default; `listed` says which. */
export function priceForModel(
  table: PriceTable,
  model: string,
): { price: ModelPrice; listed: boolean } {
  const price = Object.hasOwn(table.models, model) ? table.models[model] : undefined;
  return price === undefined ? { price: table.default, listed: false } : { price, listed: true };
}

/**
 * Cost in micro-dollars of a call priced from the table (for endpoints that report no cost),
 * rounded up once: never more than one micro-dollar above the exact cost. Cache-read prompt tokens
 * are priced at the cached rate, cache-write prompt tokens (`cacheWriteTokens`, part of
 * `promptTokens` like cache reads) at the cache-write rate, and the rest of the prompt at the
 * prompt rate; reasoning tokens at the reasoning rate and the rest of the completion at the
 * completion rate; plus the model's per-call price. Counts that exceed their total (more cached
 * than prompt tokens) are charged as reported, never as a negative.
 */
export function costFromTokens(
  table: PriceTable,
  model: string,
  usage: TokenUsage,
  cacheWriteTokens = 0,
): number {
  const { price } = priceForModel(table, model);
  const prompt = assertTokens(usage.promptTokens, "promptTokens");
  const completion = assertTokens(usage.completionTokens, "completionTokens");
  const cached = assertTokens(usage.cachedPromptTokens, "cachedPromptTokens");
  const written = assertTokens(cacheWriteTokens, "cacheWriteTokens");
  const reasoning = assertTokens(usage.reasoningTokens, "reasoningTokens");
  const uncachedPrompt = prompt > cached + written ? prompt - cached - written : 0n;
  const plainCompletion = completion > reasoning ? completion - reasoning : 0n;
  const cachedRate = price.cachedPromptMicrosPerMTok ?? price.promptMicrosPerMTok;
  const writeRate = price.cacheWriteMicrosPerMTok ?? price.promptMicrosPerMTok;
  const reasoningRate = price.reasoningMicrosPerMTok ?? price.completionMicrosPerMTok;
  const microTokens =
    uncachedPrompt * BigInt(price.promptMicrosPerMTok) +
    cached * BigInt(cachedRate) +
    written * BigInt(writeRate) +
    plainCompletion * BigInt(price.completionMicrosPerMTok) +
    reasoning * BigInt(reasoningRate) +
    BigInt(price.requestMicros ?? 0) * TOKENS_PER_PRICE_UNIT;
  return toSafeNumber(divCeil(microTokens, TOKENS_PER_PRICE_UNIT), "cost");
}

/**
 * The price charged for a cost: `costMicros × (1 + markupBps / 10_000)`, rounded up, so never more
 * than one micro-dollar above the exact value. `markupBps` is a non-negative integer (250 = 2.5%).
 */
export function applyMarkup(costMicros: number, markupBps: number): number {
  assertNonNegativeMicros(costMicros, "costMicros");
  if (!Number.isSafeInteger(markupBps) || markupBps < 0) {
    throw new RangeError(`markupBps must be a non-negative integer, got ${String(markupBps)}`);
  }
  const denominator = BigInt(BPS_DENOMINATOR);
  const scaled = BigInt(costMicros) * (denominator + BigInt(markupBps));
  return toSafeNumber(divCeil(scaled, denominator), "price");
}

/** Inputs to {@link maxCallCostMicros}. */
export interface MaxCallCostInput {
  table: PriceTable;
  model: string;
  /** An upper estimate of the prompt's tokens (the whole context sent with this step). */
  promptTokens: number;
  /** The `maxOutputTokens` the call is made with: the most it can generate. */
  maxOutputTokens: number;
  markupBps: number;
}

/**
 * The most one model call can be charged, with markup: the prompt at the highest of the prompt,
 * cache-read and cache-write rates, plus `maxOutputTokens` at the higher of the completion and
 * reasoning rates, plus the per-call price. Size a
 * reservation with it. The bound is only as good as the table: a provider-reported cost above the
 * table's prices, or a prompt above the estimate, settles above the hold (see the ledger's
 * overdraft bound).
 */
export function maxCallCostMicros(input: MaxCallCostInput): number {
  const { price } = priceForModel(input.table, input.model);
  const prompt = assertTokens(input.promptTokens, "promptTokens");
  const output = assertTokens(input.maxOutputTokens, "maxOutputTokens");
  const promptRate = BigInt(
    Math.max(
      price.promptMicrosPerMTok,
      price.cachedPromptMicrosPerMTok ?? 0,
      price.cacheWriteMicrosPerMTok ?? 0,
    ),
  );
  const outputRate = BigInt(
    Math.max(price.completionMicrosPerMTok, price.reasoningMicrosPerMTok ?? 0),
  );
  const perCall = BigInt(price.requestMicros ?? 0) * TOKENS_PER_PRICE_UNIT;
  const cost = divCeil(prompt * promptRate + output * outputRate + perCall, TOKENS_PER_PRICE_UNIT);
  return applyMarkup(assertMicros(toSafeNumber(cost, "cost")), input.markupBps);
}
