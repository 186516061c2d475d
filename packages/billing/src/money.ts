/**
 * Integer micro-dollar money. Every amount in this package is a JavaScript number holding a safe
 * integer count of micro-dollars (`1 USD = 1_000_000`); a float never reaches a balance. Helpers here
 * throw a `RangeError` on anything else, because a non-integer amount is a programming error, not an
 * expected outcome.
 */

/** Micro-dollars in one US dollar. */
export const MICROS_PER_DOLLAR = 1_000_000;

/** Micro-dollars in one US cent (Stripe's minor unit for USD). */
export const MICROS_PER_CENT = 10_000;

/** Returns `value` if it is a safe integer, otherwise throws a `RangeError` naming `label`. */
export function assertMicros(value: number, label = "amount"): number {
  if (!Number.isSafeInteger(value)) {
    throw new RangeError(`${label} must be a safe integer of micro-dollars, got ${String(value)}`);
  }
  return value;
}

/** Like {@link assertMicros}, and also refuses negative values. */
export function assertNonNegativeMicros(value: number, label = "amount"): number {
  assertMicros(value, label);
  if (value < 0) throw new RangeError(`${label} must not be negative, got ${value}`);
  return value;
}

/** Like {@link assertMicros}, and also refuses zero and negative values. */
export function assertPositiveMicros(value: number, label = "amount"): number {
  assertMicros(value, label);
  if (value <= 0) throw new RangeError(`${label} must be positive, got ${value}`);
  return value;
}

/** Sum of safe integers; throws if any operand or the result leaves the safe-integer range. */
export function addMicros(...values: readonly number[]): number {
  let total = 0;
  for (const value of values) {
    total += assertMicros(value);
    // Operands and the running total are safe integers, so an unsafe total is exact overflow.
    assertMicros(total, "sum");
  }
  return total;
}

/** `a - b`, checked like {@link addMicros}. */
export function subtractMicros(a: number, b: number): number {
  return assertMicros(assertMicros(a) - assertMicros(b), "difference");
}

/** Converts a whole number of US cents (Stripe's `amount` fields for USD) to micro-dollars. */
export function centsToMicros(cents: number): number {
  if (!Number.isSafeInteger(cents)) {
    throw new RangeError(`cents must be a safe integer, got ${String(cents)}`);
  }
  return assertMicros(cents * MICROS_PER_CENT, "cents in micro-dollars");
}

/**
 * Converts micro-dollars to whole cents (for a Stripe `unit_amount`). Returns `null` when the amount
 * is not a whole number of cents, so a checkout route can refuse it instead of silently rounding.
 */
export function microsToCents(micros: number): number | null {
  assertMicros(micros);
  return micros % MICROS_PER_CENT === 0 ? micros / MICROS_PER_CENT : null;
}

/** Formats micro-dollars as an exact decimal dollar string with six decimals: `1234567` → `"1.234567"`. */
export function formatMicros(micros: number): string {
  assertMicros(micros);
  const sign = micros < 0 ? "-" : "";
  const abs = Math.abs(micros);
  const whole = Math.floor(abs / MICROS_PER_DOLLAR);
  const fraction = abs % MICROS_PER_DOLLAR;
  return `${sign}${whole}.${String(fraction).padStart(6, "0")}`;
}

// ---------------------------------------------------------------------------------------------
// Provider float costs → integer micros
// ---------------------------------------------------------------------------------------------

/** Working precision for parsing: atto-dollars (1e-18 USD). */
const ATTO_DECIMALS = 18;
/** Float noise is absorbed by rounding to nano-dollars (1e-9 USD = 1/1000 micro) before the ceiling. */
const NANO_DECIMALS = 9;
const ATTOS_PER_NANO = 10n ** BigInt(ATTO_DECIMALS - NANO_DECIMALS);
const NANOS_PER_MICRO = 1000n;

const DECIMAL_PATTERN = /^(\d+)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/** Divides a non-negative bigint by a positive one, rounding half up. */
function divRoundHalfUp(numerator: bigint, denominator: bigint): bigint {
  return (numerator * 2n + denominator) / (denominator * 2n);
}

/** Divides a non-negative bigint by a positive one, rounding up. */
export function divCeil(numerator: bigint, denominator: bigint): bigint {
  if (numerator < 0n || denominator <= 0n) {
    throw new RangeError("divCeil expects a non-negative numerator and a positive denominator");
  }
  return (numerator + denominator - 1n) / denominator;
}

/**
 * Parses a non-negative decimal string (`"0.000123"`, `"1.23e-7"`) into atto-dollars, rounding half
 * up past 18 decimals. Exact for every decimal with at most 18 fractional digits.
 */
export function decimalToAttos(text: string): bigint {
  const match = DECIMAL_PATTERN.exec(text.trim());
  if (match === null) throw new RangeError(`not a non-negative decimal: ${JSON.stringify(text)}`);
  const intPart = match[1] ?? "0";
  const fracPart = match[2] ?? "";
  const exponent = Number(match[3] ?? "0");
  const digits = BigInt(intPart + fracPart);
  // value = digits × 10^(exponent − fracPart.length); we want value × 10^18.
  const shift = exponent - fracPart.length + ATTO_DECIMALS;
  if (shift >= 0) {
    if (shift > 400) throw new RangeError(`decimal too large: ${text}`);
    return digits * 10n ** BigInt(shift);
  }
  if (-shift > 400) return 0n;
  return divRoundHalfUp(digits, 10n ** BigInt(-shift));
}

function dollarsToAttos(costDollars: number): bigint {
  if (typeof costDollars !== "number" || !Number.isFinite(costDollars) || costDollars < 0) {
    throw new RangeError(`cost must be a finite non-negative number, got ${String(costDollars)}`);
  }
  // `String(x)` is the shortest decimal that round-trips to the same double (ECMAScript
  // Number::toString), i.e. exactly the text a provider wrote in its JSON (`0.000123`), not the
  // binary expansion 0.000122999999999999995... that `x * 1e6` would carry into the ceiling.
  return decimalToAttos(String(costDollars));
}

function attosToMicrosCeil(attos: bigint): number {
  // Round to nano-dollars first so residue from float sums upstream (0.1 + 0.2 =
  // 0.30000000000000004) does not bump the ceiling by a whole micro-dollar. The tolerance is half a
  // nano-dollar (0.0005 micros): at most that much real cost per conversion is not charged.
  const nanos = divRoundHalfUp(attos, ATTOS_PER_NANO);
  const micros = divCeil(nanos, NANOS_PER_MICRO);
  if (micros > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError("cost too large");
  return Number(micros);
}

/**
 * Converts a provider's float dollar cost (OpenRouter `usage.cost`) to integer micro-dollars,
 * rounding up.
 *
 * Method: take the shortest round-trip decimal of the double (what the provider wrote), parse it
 * exactly with BigInt, round to nano-dollars (absorbing float noise below half a nano-dollar), then
 * take the ceiling in micro-dollars. `0.000123` → 123 (where `Math.ceil(0.000123 * 1e6)` gives 124),
 * `0.1 + 0.2` → 300000, `1e-7` → 1. The result is never more than one micro-dollar above the cost.
 * Throws a `RangeError` on NaN, infinities, negative costs and costs beyond the safe-integer range.
 */
export function dollarsToMicrosCeil(costDollars: number): number {
  return attosToMicrosCeil(dollarsToAttos(costDollars));
}

/**
 * Sums several float dollar costs (one per model step of a turn) exactly in decimal and converts the
 * total once, so a turn is rounded up once rather than once per step.
 */
export function sumDollarsToMicrosCeil(costsDollars: readonly number[]): number {
  let total = 0n;
  for (const cost of costsDollars) total += dollarsToAttos(cost);
  return attosToMicrosCeil(total);
}
