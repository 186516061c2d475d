import { defaultFieldWords } from "../../lib/refusal.ts";

/**
 * The developers' fields in words, for the form's alert when a problem has no control of its own
 * ("the allowed origin on line 2"); else the API's name in words.
 */
const WORDS: [RegExp, string][] = [
  [/^name$/, "the name"],
  [/^allowedOrigins\.(\d+)$/, "the allowed origin on line $n"],
  [/^allowedOrigins$/, "the allowed origins"],
  [/^projectIds/, "the projects"],
  [/^profileId$/, "the profile"],
  [/^endUserDailyLimitMicros$/, "the daily limit"],
  [/^endUserWeeklyLimitMicros$/, "the weekly limit"],
  [/^endUserMonthlyLimitMicros$/, "the monthly limit"],
  [/^verification\.jwk/, "the public key"],
  [/^verification\.url$/, "the JWKS URL"],
  [/^verification\.issuer$/, "the issuer"],
  [/^verification\.audience$/, "the audience"],
  [/^verification\.maxTokenLifetimeSeconds$/, "the token life"],
  [/^verification/, "the verification"],
  [/^scopes/, "the scopes"],
  [/^expiresAt$/, "the expiry"],
  [/^overlapSeconds$/, "the overlap"],
];

/** The field in words ("the allowed origin on line 2"), or the API's name in words. */
export function fieldWords(field: string): string {
  for (const [pattern, words] of WORDS) {
    const match = pattern.exec(field);
    if (match) return words.replace("$n", String(Number(match[1] ?? 0) + 1));
  }
  return defaultFieldWords(field);
}
