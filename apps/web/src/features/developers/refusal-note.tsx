import { NO_PROJECT, type Refusal } from "./form-check.ts";

/**
 * The form's refusal, announced: under its field when it names one the form shows (the field
 * says why), here in full otherwise (a refusal about the whole request, a conflict).
 */
export function RefusalNote({ refusal }: { refusal: Refusal | null }) {
  if (!refusal) return null;
  return (
    <p
      role="alert"
      className="rounded-md border border-destructive/40 bg-destructive/10 px-3 py-2 text-destructive text-sm"
    >
      {refusal.message === NO_PROJECT
        ? `Not saved: ${NO_PROJECT}.`
        : refusal.field
          ? `Not saved: ${fieldWords(refusal.field)} ${refusal.message}.`.replace(/\.\.$/, ".")
          : refusal.message}
    </p>
  );
}

const WORDS: [RegExp, string][] = [
  [/^name$/, "the name"],
  [/^allowedOrigins\.(\d+)$/, "allowed origin on line $n"],
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

/** The field in words ("allowed origin on line 2"), or the API's name for it. */
export function fieldWords(field: string): string {
  for (const [pattern, words] of WORDS) {
    const match = pattern.exec(field);
    if (match) return words.replace("$n", String(Number(match[1] ?? 0) + 1));
  }
  return field;
}
