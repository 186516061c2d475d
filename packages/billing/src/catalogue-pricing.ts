/**
 * A model's prices as OpenRouter publishes them (`GET /api/v1/models`, `pricing`: decimal strings
 * of US dollars per token, `request` per call) turned into the integer micro-dollars of a
 * {@link ModelPrice}, and back. Decimal-string arithmetic in BigInt only: a float never stands
 * between the published text and the integer (`0.1 + 0.2` is not `0.3`, and a price is money).
 *
 * Unit: micro-dollars per million tokens. One micro-dollar is 1e-6 USD and a million tokens is
 * 1e6 tokens, so `n` micros/MTok is exactly `n × 1e-12` USD per token: `"0.000003"` is 3_000_000.
 * A per-token price with a non-zero digit past the twelfth decimal is finer than the unit:
 * `exact` refuses it (the catalogue: what is stored is what the operator typed), `ceil` rounds it
 * up to the next micro-dollar per million tokens (never under-charges).
 */

import type { ModelPrice } from "./pricing.ts";

/** The pricing object of one model in OpenRouter's `/api/v1/models` (fields Parley prices). */
export interface OpenRouterPricing {
  /** USD per prompt (input) token. */
  prompt: string;
  /** USD per completion (output) token. */
  completion: string;
  /** USD per call, whatever its tokens. */
  request?: string | undefined;
  /** USD per reasoning token; absent: reasoning is priced as completion. */
  internal_reasoning?: string | undefined;
  /** USD per prompt token read from the provider's cache; absent: the prompt rate. */
  input_cache_read?: string | undefined;
  /** USD per prompt token written to the provider's cache; absent: the prompt rate. */
  input_cache_write?: string | undefined;
}

/** How a price finer than the unit is treated. */
export type PriceRounding = "exact" | "ceil";

/** The result of converting one published price. */
export type PriceConversion = { ok: true; micros: number } | { ok: false; reason: string };

/** Decimal places of USD in one micro-dollar per million tokens (1e-12 USD per token). */
const PER_MTOK_DECIMALS = 12;
/** Decimal places of USD in one micro-dollar (a per-call price). */
const PER_CALL_DECIMALS = 6;

const DECIMAL = /^(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d{1,4}))?$/;

/**
 * `text × 10^decimals` as an integer, exactly or rounded up: `text` is a non-negative decimal
 * (`"0.000003"`, `"3e-6"`, `"12"`); a sign, spaces, an empty string, a fraction without digits
 * (`"1."`) or anything else is refused with a reason.
 */
export function scaleDecimal(
  text: string,
  decimals: number,
  rounding: PriceRounding,
): PriceConversion {
  const match = DECIMAL.exec(text);
  if (match === null) {
    return {
      ok: false,
      reason: `must be a non-negative decimal string, got ${JSON.stringify(text)}`,
    };
  }
  const whole = match[1] ?? "0";
  const fraction = match[2] ?? "";
  const exponent = Number(match[3] ?? "0");
  const digits = BigInt(whole + fraction);
  // value = digits × 10^(exponent − fraction.length); scaled = value × 10^decimals.
  const shift = exponent - fraction.length + decimals;
  let scaled: bigint;
  if (shift >= 0) {
    if (shift > 30) return { ok: false, reason: "is too large" };
    scaled = digits * 10n ** BigInt(shift);
  } else {
    const divisor = 10n ** BigInt(-shift);
    scaled = digits / divisor;
    if (digits % divisor !== 0n) {
      if (rounding === "exact") {
        return {
          ok: false,
          reason:
            decimals === PER_MTOK_DECIMALS
              ? "is finer than one micro-dollar per million tokens (at most 12 decimals of a dollar per token)"
              : "is finer than one micro-dollar (at most 6 decimals of a dollar)",
        };
      }
      scaled += 1n;
    }
  }
  if (scaled > BigInt(Number.MAX_SAFE_INTEGER)) return { ok: false, reason: "is too large" };
  return { ok: true, micros: Number(scaled) };
}

/** USD per token (`"0.000003"`) to micro-dollars per million tokens (3_000_000). */
export const microsPerMTok = (dollarsPerToken: string, rounding: PriceRounding = "exact") =>
  scaleDecimal(dollarsPerToken, PER_MTOK_DECIMALS, rounding);

/** USD per call (`"0.005"`) to micro-dollars per call (5_000). */
export const microsPerCall = (dollarsPerCall: string, rounding: PriceRounding = "exact") =>
  scaleDecimal(dollarsPerCall, PER_CALL_DECIMALS, rounding);

/**
 * Converts a per-token dollar price as OpenRouter's model list writes it (`"0.00000002"`) to
 * micro-dollars per million tokens (20_000), exactly, rounding up anything below one micro-dollar
 * per million tokens (`microsPerMTok` with `ceil`; the catalogue itself refuses such prices
 * instead). Throws a `RangeError` for anything but a non-negative decimal.
 */
export function perTokenDollarsToMicrosPerMTok(perTokenDollars: string): number {
  // Through the digits, not atto-dollars: a price past 18 decimals was rounded half up to zero
  // there ("0.0000000000000000001" gave 0, not the 1 this function promises).
  const converted = microsPerMTok(perTokenDollars.trim(), "ceil");
  if (!converted.ok) throw new RangeError(`price ${converted.reason}`);
  return converted.micros;
}

/** `micros × 10^-decimals` as the shortest plain decimal string (`3_000_000`, 12 → `"0.000003"`). */
export function unscaleDecimal(micros: number, decimals: number): string {
  if (!Number.isSafeInteger(micros) || micros < 0) {
    throw new RangeError(`must be a non-negative safe integer, got ${String(micros)}`);
  }
  const digits = String(micros).padStart(decimals + 1, "0");
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, "");
  return fraction === "" ? whole : `${whole}.${fraction}`;
}

/** The result of converting a whole pricing object: the first field that failed is named. */
export type PricingConversion =
  | { ok: true; price: ModelPrice }
  | { ok: false; field: keyof OpenRouterPricing; reason: string };

/**
 * A model's published prices as a {@link ModelPrice}. Optional rates that are absent or zero fall
 * back as the published shape means them: cache reads and writes at the prompt rate, reasoning at
 * the completion rate (OpenRouter writes "0" for a rate it does not list separately, and reading
 * that as free would give reasoning or cache reads away on an endpoint priced from the table;
 * the fallback can only over-charge a genuinely free cache, never under-charge). An absent
 * per-call price is none.
 */
export function modelPriceFromPricing(
  pricing: OpenRouterPricing,
  rounding: PriceRounding = "exact",
): PricingConversion {
  const fields = [
    ["prompt", microsPerMTok],
    ["completion", microsPerMTok],
    ["request", microsPerCall],
    ["internal_reasoning", microsPerMTok],
    ["input_cache_read", microsPerMTok],
    ["input_cache_write", microsPerMTok],
  ] as const;
  const out: Partial<Record<keyof OpenRouterPricing, number | null>> = {};
  for (const [field, convert] of fields) {
    const text = pricing[field];
    if (text === undefined) {
      out[field] = null;
      continue;
    }
    const converted = convert(text, rounding);
    if (!converted.ok) return { ok: false, field, reason: converted.reason };
    const fallsBack = field !== "prompt" && field !== "completion" && field !== "request";
    out[field] = fallsBack && converted.micros === 0 ? null : converted.micros;
  }
  return {
    ok: true,
    price: {
      promptMicrosPerMTok: out.prompt ?? 0,
      completionMicrosPerMTok: out.completion ?? 0,
      cachedPromptMicrosPerMTok: out.input_cache_read ?? null,
      reasoningMicrosPerMTok: out.internal_reasoning ?? null,
      cacheWriteMicrosPerMTok: out.input_cache_write ?? null,
      requestMicros: out.request ?? 0,
    },
  };
}

/**
 * The published shape of a {@link ModelPrice}, exactly (the inverse of
 * {@link modelPriceFromPricing} for every exact price): rates that fall back are left out.
 */
export function pricingFromModelPrice(price: ModelPrice): OpenRouterPricing {
  const perToken = (micros: number) => unscaleDecimal(micros, PER_MTOK_DECIMALS);
  const pricing: OpenRouterPricing = {
    prompt: perToken(price.promptMicrosPerMTok),
    completion: perToken(price.completionMicrosPerMTok),
  };
  if (price.requestMicros) pricing.request = unscaleDecimal(price.requestMicros, PER_CALL_DECIMALS);
  if (price.reasoningMicrosPerMTok !== null) {
    pricing.internal_reasoning = perToken(price.reasoningMicrosPerMTok);
  }
  if (price.cachedPromptMicrosPerMTok !== null) {
    pricing.input_cache_read = perToken(price.cachedPromptMicrosPerMTok);
  }
  if (price.cacheWriteMicrosPerMTok !== undefined && price.cacheWriteMicrosPerMTok !== null) {
    pricing.input_cache_write = perToken(price.cacheWriteMicrosPerMTok);
  }
  return pricing;
}
