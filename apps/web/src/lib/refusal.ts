import { isApiError } from "./api.ts";

/**
 * What a form shows when the API, or the form's own check, refuses it: every problem at once,
 * each by the field it concerns (docs/2026-12-06-form-refusals.md). The API's 400 names its
 * first problem in `error.field` and all of them in `error.issues` (`lib/api.ts` reads both);
 * a form puts each under the control that holds its field and the rest in its alert
 * (`components/refusal.tsx`), so a person fixes everything in one go, not one refusal per try.
 */

/** One problem: the API's dotted field (null: the whole request) and why, as a clause. */
export interface Problem {
  field: string | null;
  message: string;
}

/**
 * A refusal of a form. `field` and `message` are the first problem; `problems`, when there are
 * several, all of them (the first included). `field` is the API's dotted path
 * (`allowedOrigins.1`, `verification.jwk.crv`, `subject.id`), so a form finds each problem's
 * control by the API's own names.
 */
export interface Refusal extends Problem {
  problems?: Problem[];
}

const SOMETHING_WRONG = "Something went wrong. Please try again.";

/** Every problem of a refusal (one without `problems` is its own). */
export const problemsOf = (refusal: Refusal | null): Problem[] =>
  refusal === null ? [] : (refusal.problems ?? [refusal]);

/** One refusal of several problems (null: none). */
export function refusalOfProblems(problems: readonly Problem[]): Refusal | null {
  const [first] = problems;
  if (!first) return null;
  return problems.length > 1 ? { ...first, problems: [...problems] } : first;
}

const SIZE_UNITS: Record<string, string> = {
  string: "character",
  array: "item",
  set: "item",
  map: "entry",
  file: "byte",
};

const FORMATS: Record<string, string> = {
  "email address": "a valid email address",
  URL: "a valid URL",
  "ISO datetime": "a valid date and time",
  "ISO date": "a valid date",
  "ISO time": "a valid time",
  UUID: "a valid UUID",
};

const TYPES: Record<string, string> = {
  number: "must be a number",
  int: "must be a whole number",
  string: "must be text",
  boolean: "must be yes or no",
  array: "must be a list",
  object: "must be an object",
};

/** Counting an amount in a unit: "1 character", "100 characters", "3 entries". */
function count(amount: number, unit: string | undefined): string {
  if (!unit) return String(amount);
  if (amount === 1) return `1 ${unit}`;
  return `${amount} ${unit === "entry" ? "entries" : `${unit}s`}`;
}

/**
 * A problem's message in words a person acts on. zod's own English reads like a type error
 * ("Too small: expected string to have >=1 characters") and reaches the form as the API wrote it
 * (its issues carry zod's message, not its code); a schema's own words ("must be a valid email
 * address") and the Worker's sentences ("An account with this email already exists") are kept.
 */
export function problemWords(message: string): string {
  const sized = /^Too (small|big): expected (\w+) to have (>=|>|<=|<|exactly )(\d+) \w+$/.exec(
    message,
  );
  if (sized) {
    const [, side, origin = "", bound, digits] = sized;
    const unit = SIZE_UNITS[origin];
    let amount = Number(digits);
    if (bound === ">") amount += 1;
    if (bound === "<") amount -= 1;
    if (side === "small" && origin === "string" && amount === 1) return "is required";
    // "The name must be at most 100 characters", "The scopes must have at least 1 item".
    const verb = origin === "string" ? "be" : "have";
    const how = bound === "exactly " ? "exactly" : side === "small" ? "at least" : "at most";
    return `must ${verb} ${how} ${count(amount, unit)}`;
  }
  const ranged = /^Too (small|big): expected \w+ to be (>=|>|<=|<)(\S+)$/.exec(message);
  if (ranged) {
    const [, , bound, value] = ranged;
    const words = { ">=": "at least", ">": "more than", "<=": "at most", "<": "less than" };
    return `must be ${words[bound as keyof typeof words]} ${value}`;
  }
  const typed = /^Invalid input: expected (\w+), received (\w+)$/.exec(message);
  if (typed) {
    const [, expected = "", received] = typed;
    if (received === "undefined") return "is required";
    return TYPES[expected] ?? "has the wrong form";
  }
  const option = /^Invalid option: expected one of (.+)$/.exec(message);
  if (option) {
    const values = (option[1] ?? "").split("|").map((value) => value.replace(/^"|"$/g, ""));
    const last = values.pop();
    return `must be ${values.length > 0 ? `${values.join(", ")} or ${last}` : last}`;
  }
  const literal = /^Invalid input: expected (.+)$/.exec(message);
  if (literal) return `must be ${(literal[1] ?? "").replace(/^"|"$/g, "")}`;
  const format = /^Invalid (.+)$/.exec(message)?.[1];
  if (format && FORMATS[format]) return `must be ${FORMATS[format]}`;
  const rule = /^Invalid (?:string|number): (must .+)$/.exec(message);
  if (rule) return rule[1] ?? message;
  if (message === "Invalid input") return "is not valid";
  if (/^Unrecognized keys?: /.test(message)) return "is unknown";
  return message;
}

/** A problem without the field name its message starts with ("name: …"; the form shows where). */
function bare(field: string | null, message: string): Problem {
  const named = field === "" ? null : field;
  const text =
    named && message.startsWith(`${named}: `) ? message.slice(named.length + 2) : message;
  return { field: named, message: problemWords(text) };
}

/**
 * One problem per field, the first of each (what to fix first); problems of the whole request
 * are all kept, once each.
 */
export function onePerField(problems: readonly Problem[]): Problem[] {
  const seen = new Set<string>();
  return problems.filter((problem) => {
    const key = problem.field === null ? `\u0000${problem.message}` : problem.field;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** What a thrown value says as a refusal: every problem the API named, in words. */
export function refusalOf(error: unknown): Refusal {
  if (!isApiError(error)) return { field: null, message: SOMETHING_WRONG };
  const first = bare(error.field ?? null, error.message);
  const rest = error.issues.map((issue) => bare(issue.field, issue.message));
  return refusalOfProblems(onePerField([first, ...rest])) ?? first;
}

/** Whether `field` is `control` or inside it (`allowedOrigins` holds `allowedOrigins.1`). */
export const fieldIn = (field: string | null, control: string): boolean =>
  field !== null && (field === control || field.startsWith(`${control}.`));

/** The refusal's problem about `field` or something inside it, or null. */
export function refusalAt(refusal: Refusal | null, field: string): string | null {
  return problemsOf(refusal).find((problem) => fieldIn(problem.field, field))?.message ?? null;
}

/** The problems of a refusal no control of the form shows (`shown`: the fields it has). */
export const problemsBeside = (refusal: Refusal | null, shown: readonly string[]): Problem[] =>
  problemsOf(refusal).filter(
    (problem) => !shown.some((control) => fieldIn(problem.field, control)),
  );

/**
 * A clause as a sentence: a capital first letter and a full stop, unless it ends in its own
 * punctuation already (no ".."). The same rule as `sentence` of `@parley/chat-ui`, whose index
 * the shell's first chunk (which shows these) must not import.
 */
export function asSentence(text: string): string {
  const trimmed = text.trim();
  const capital = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return capital === "" || /[.!?…]["'”’)]?$/u.test(capital) ? capital : `${capital}.`;
}

/** A field of the API in words, when a form has no words of its own: `orgName` is "the org name". */
export function defaultFieldWords(field: string): string {
  const last = field.split(".").findLast((part) => !/^\d+$/.test(part)) ?? field;
  return `the ${last.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase()}`;
}

/**
 * A problem as a sentence of its own, for the form's alert: its field named in words
 * ("The invitation is required."), unless the message is a sentence already: it starts with a
 * capital ("An account with this email already exists.") or names the field itself ("from must
 * be before to").
 */
export function problemSentence(
  problem: Problem,
  words: (field: string) => string = defaultFieldWords,
): string {
  const { field, message } = problem;
  const last = field?.split(".").at(-1)?.toLowerCase();
  const named = last !== undefined && message.toLowerCase().startsWith(`${last} `);
  if (field === null || named || /^[A-Z]/.test(message)) return asSentence(message);
  return asSentence(`${words(field)} ${message}`);
}

/** Every problem of a thrown value as sentences, for a toast or a form without fields. */
export const refusalSentences = (error: unknown, words?: (field: string) => string): string[] =>
  problemsOf(refusalOf(error)).map((problem) => problemSentence(problem, words));

/** Every problem of a thrown value in one text, sentence after sentence (a toast). */
export const refusalText = (error: unknown, words?: (field: string) => string): string =>
  refusalSentences(error, words).join(" ");
