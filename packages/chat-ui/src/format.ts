/**
 * Money display for the chat (copied from apps/web/src/lib/money.ts, which a package cannot import;
 * the app may import it from here instead). Amounts are integer micro-dollars everywhere.
 */
/** Micro-dollars per dollar. Amounts stay integers; dollars exist only in display strings. */
export const MICROS_PER_DOLLAR = 1_000_000;

const cents = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" });

/**
 * Formats integer micro-dollars as dollars. Amounts under a cent (a single reply often costs a
 * fraction of one) keep up to six decimals so they do not read as "$0.00".
 */
export function formatMicros(micros: number): string {
  if (!Number.isSafeInteger(micros)) return "—";
  const negative = micros < 0;
  const abs = Math.abs(micros);
  if (abs !== 0 && abs < 10_000) {
    const fraction = String(abs).padStart(6, "0").replace(/0+$/, "");
    return `${negative ? "-" : ""}$0.${fraction.length < 2 ? fraction.padEnd(2, "0") : fraction}`;
  }
  // Whole cents are exact in a double; only the display is rounded (half away from zero).
  const roundedCents = Math.round(abs / 10_000);
  return `${negative ? "-" : ""}${cents.format(roundedCents / 100)}`;
}

/** Parses a dollar amount typed by a user ("20", "20.5", "$20.50") into micros, or null. */
export function parseDollarsToMicros(text: string): number | null {
  const match = /^\s*\$?\s*(\d{1,7})(?:\.(\d{1,2}))?\s*$/.exec(text);
  if (!match) return null;
  const whole = Number(match[1]);
  const fraction = Number((match[2] ?? "").padEnd(2, "0"));
  return whole * MICROS_PER_DOLLAR + fraction * 10_000;
}
