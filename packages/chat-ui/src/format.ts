/**
 * Money display and input, shared by the chat and the web app (which re-exports it from
 * `@parley/chat-ui/format`). Amounts are integer micro-dollars everywhere.
 */
/** Micro-dollars per dollar. Amounts stay integers; dollars exist only in display strings. */
export const MICROS_PER_DOLLAR = 1_000_000;

const cents = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" });
const grouped = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

/** Significant digits an amount under a dollar keeps. */
const SIGNIFICANT = 4;

/** `$<whole>.<fraction>` of a non-negative amount: every micro-dollar it has, at least cents. */
function exactDollars(abs: number): string {
  const whole = Math.trunc(abs / MICROS_PER_DOLLAR);
  const fraction = String(abs % MICROS_PER_DOLLAR)
    .padStart(6, "0")
    .replace(/0+$/, "")
    .padEnd(2, "0");
  return `$${grouped.format(whole)}.${fraction}`;
}

/**
 * Formats integer micro-dollars as dollars: THE money display of the web app and the embed (a
 * reply's cost, a session's spend, a tool call's price, a limit, a balance). One rule, so an
 * amount never changes its precision as it grows past some threshold (a session's spend read
 * `$0.007546`, then `$0.02` for $0.0154: a third off):
 *
 * - under a dollar, four significant digits (`$0.007546`, `$0.01543`, `$0.1235`), never fewer
 *   than cents (`$0.50`): rounded at most 0.05%, so no small amount reads as another figure;
 * - from a dollar on, cents (`$12.35`, `$1,234.57`);
 * - `precise` keeps every micro-dollar at any size (`$4.998765`, `$5.00` for whole cents): for
 *   ledgers and running balances, where rounding made rows read the same;
 * - `floor` rounds down instead of to the nearest, at the same places: for a balance, which must
 *   never read more than there is (`$4.997065` is `$4.99`; an overdraft rounds away from zero).
 */
export function formatMicros(
  micros: number,
  { precise = false, floor = false }: { precise?: boolean; floor?: boolean } = {},
): string {
  if (!Number.isSafeInteger(micros)) return "—";
  if (precise) return `${micros < 0 ? "-" : ""}${exactDollars(Math.abs(micros))}`;
  // The step the amount is rounded to: a cent from a dollar on, else its 4th significant digit.
  const digits = String(Math.abs(micros)).length;
  const step =
    Math.abs(micros) >= MICROS_PER_DOLLAR ? 10_000 : 10 ** Math.max(0, digits - SIGNIFICANT);
  // Half away from zero, or down (towards minus infinity) for `floor`; integers throughout.
  const steps = floor
    ? Math.floor(micros / step)
    : Math.sign(micros) * Math.round(Math.abs(micros) / step);
  const rounded = steps * step;
  if (Math.abs(rounded) >= MICROS_PER_DOLLAR) {
    // Whole cents are exact in a double; $0.99996 rounds up into this branch as $1.00.
    return `${rounded < 0 ? "-" : ""}${cents.format(Math.abs(rounded) / MICROS_PER_DOLLAR)}`;
  }
  return `${rounded < 0 ? "-" : ""}${exactDollars(Math.abs(rounded))}`;
}

/**
 * An amount as a person types it in a form's field, exactly (parseDollars reads it back to the
 * same micro-dollars): no `$` or grouping, whole dollars bare (`20`), whole cents with both
 * digits (`12.50`), otherwise every micro-dollar (`0.005`, `1.2345`); "" for none.
 */
export function dollarsInput(micros: number | null): string {
  if (micros === null || !Number.isSafeInteger(micros)) return "";
  const sign = micros < 0 ? "-" : "";
  const abs = Math.abs(micros);
  const whole = Math.trunc(abs / MICROS_PER_DOLLAR);
  const fraction = abs % MICROS_PER_DOLLAR;
  if (fraction === 0) return `${sign}${whole}`;
  const digits = String(fraction).padStart(6, "0");
  return `${sign}${whole}.${fraction % 10_000 === 0 ? digits.slice(0, 2) : digits.replace(/0+$/, "")}`;
}

/** What was wrong with a typed dollar amount. */
export type DollarsError = "empty" | "format" | "precision";

export type ParsedDollars = { ok: true; micros: number } | { ok: false; error: DollarsError };

/**
 * Parses a dollar amount typed by a user ("20", "20.5", "$1,250.50", "0.005") into integer
 * micros. Up to six decimals are taken, which is the micro-dollar the API counts in; a seventh
 * would be a fraction of what can be stored, so it is refused ("precision") rather than rounded.
 */
export function parseDollars(text: string): ParsedDollars {
  const trimmed = text.trim();
  if (trimmed === "") return { ok: false, error: "empty" };
  const match = /^\$?\s*(\d{1,3}(?:,\d{3})+|\d{1,9})(?:\.(\d+))?$/.exec(trimmed);
  if (!match) return { ok: false, error: "format" };
  const fraction = match[2] ?? "";
  if (fraction.length > 6) return { ok: false, error: "precision" };
  const whole = Number((match[1] ?? "").replaceAll(",", ""));
  const micros = whole * MICROS_PER_DOLLAR + Number(fraction.padEnd(6, "0"));
  if (!Number.isSafeInteger(micros)) return { ok: false, error: "format" };
  return { ok: true, micros };
}

/** `parseDollars` for callers that only need the amount: null when it is not one. */
export function parseDollarsToMicros(text: string): number | null {
  const parsed = parseDollars(text);
  return parsed.ok ? parsed.micros : null;
}
