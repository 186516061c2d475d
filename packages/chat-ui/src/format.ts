/**
 * Money display and input, shared by the chat and the web app (which re-exports it from
 * `@parley/chat-ui/format`). Amounts are integer micro-dollars everywhere.
 */
/** Micro-dollars per dollar. Amounts stay integers; dollars exist only in display strings. */
export const MICROS_PER_DOLLAR = 1_000_000;

const cents = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" });
const grouped = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

/**
 * Formats integer micro-dollars as dollars. Amounts under a cent (a single reply often costs a
 * fraction of one) keep up to six decimals so they do not read as "$0.00".
 *
 * `precise` keeps every micro-dollar above a cent too (`$4.998765`, still `$5.00` for whole cents):
 * for running balances, where rounding to cents made dozens of ledger rows read the same.
 *
 * `floor` rounds down to the cent instead of to the nearest: for a balance shown in cents, which
 * must never read more than there is (`$4.997065` is `$4.99`, not `$5.00`; an overdraft of
 * `-$0.004` below a cent still shows exactly).
 */
export function formatMicros(
  micros: number,
  { precise = false, floor = false }: { precise?: boolean; floor?: boolean } = {},
): string {
  if (!Number.isSafeInteger(micros)) return "—";
  const sign = micros < 0 ? "-" : "";
  const abs = Math.abs(micros);
  if (precise || (abs !== 0 && abs < 10_000)) {
    const whole = Math.trunc(abs / MICROS_PER_DOLLAR);
    const fraction = String(abs % MICROS_PER_DOLLAR)
      .padStart(6, "0")
      .replace(/0+$/, "")
      .padEnd(2, "0");
    return `${sign}$${grouped.format(whole)}.${fraction}`;
  }
  // Whole cents are exact in a double; only the display is rounded (half away from zero, or down).
  if (floor) {
    const flooredCents = Math.floor(micros / 10_000);
    return cents.format(flooredCents / 100);
  }
  const roundedCents = Math.round(abs / 10_000);
  return `${sign}${cents.format(roundedCents / 100)}`;
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
