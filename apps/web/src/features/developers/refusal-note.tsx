import { NO_PROJECT, type Problem, problemsOf, type Refusal } from "./form-check.ts";

/**
 * The form's refusal, announced: each problem in one alert (a form shows them under their
 * fields too; a problem about the whole request, or a conflict, only here), so a person fixes
 * everything in one go rather than one refusal per attempt.
 */
export function RefusalNote({ refusal }: { refusal: Refusal | null }) {
  const problems = problemsOf(refusal);
  if (problems.length === 0) return null;
  const sentences = problems.map(sentence);
  return (
    <div
      role="alert"
      className="rounded-md border border-destructive/40 bg-destructive/10 px-3 py-2 text-destructive text-sm"
    >
      {sentences.length === 1 ? (
        <p>{sentences[0]}</p>
      ) : (
        <>
          <p>Not saved: {sentences.length} things to fix.</p>
          <ul className="mt-1 list-disc pl-5">
            {sentences.map((text) => (
              <li key={text}>{text.replace(/^Not saved: /, "")}</li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}

/** One problem as a sentence ("Not saved: the name is required."). */
function sentence(problem: Problem): string {
  if (problem.message === NO_PROJECT) return `Not saved: ${NO_PROJECT}.`;
  if (!problem.field) return problem.message;
  return `Not saved: ${fieldWords(problem.field)} ${problem.message}.`.replace(/\.\.$/, ".");
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
