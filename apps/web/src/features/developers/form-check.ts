import { isApiError } from "../../lib/api.ts";

/** A zod issue, as much of it as the wording needs. */
interface Issue {
  code: string;
  path: PropertyKey[];
  message: string;
  keys?: string[];
  origin?: string;
  minimum?: number | bigint;
  maximum?: number | bigint;
  input?: unknown;
}

/**
 * zod's own messages for lengths and types read like type errors ("Too small: expected string to
 * have >=1 characters"); these say the same in words. The schemas' own messages (an origin's form,
 * a JWK's member) are kept as written.
 */
function wording(issue: Issue): string {
  if (issue.path[0] === "projectIds" && issue.code === "too_small") return NO_PROJECT;
  // A schema's own message (`min(1, "must name at least one project")`) is kept.
  if (!/^(Too small|Too big|Invalid input)/.test(issue.message)) return issue.message;
  const what = issue.origin === "array" ? "item" : issue.origin === "string" ? "character" : "";
  const count = (n: number | bigint | undefined) =>
    what ? `${n} ${what}${Number(n) === 1 ? "" : "s"}` : String(n);
  if (issue.code === "too_small") {
    if (issue.origin === "string" && Number(issue.minimum) === 1) return "is required";
    return `must be at least ${count(issue.minimum)}`;
  }
  if (issue.code === "too_big") return `must be at most ${count(issue.maximum)}`;
  if (issue.code === "invalid_type") {
    return issue.input === undefined || issue.input === "" ? "is required" : "has the wrong form";
  }
  return issue.message;
}

/**
 * The API's "must name at least one project" in the words of the form (the outside probe read
 * "Not saved: the projects must name at least one project." as odd): what to do, and why.
 */
export const NO_PROJECT =
  "check at least one project: your end users' chats are kept, and billed, in a project";

/** What this needs of a zod schema (the web app takes zod's schemas from `@parley/shared`). */
interface Schema {
  safeParse(input: unknown):
    | { success: true }
    | {
        success: false;
        error: {
          issues: { code: string; path: PropertyKey[]; message: string; keys?: string[] }[];
        };
      };
}

/** One problem of a form: the API's dotted field (null: the whole request) and why. */
export interface Problem {
  field: string | null;
  message: string;
}

/**
 * A refusal of a form, by field: every problem the API's own zod schema (from `@parley/shared`,
 * run in the browser before sending) finds, or the API's answer when it still refuses (a project
 * of another org, a JWKS URL on a private host, 409s), which names each problem too
 * (`error.issues`). `field` and `message` are the first; `problems`, when there are several, all
 * of them, so the form shows each under its control at once (the outside probe's "New app"
 * showed one per attempt). `field` is the API's dotted path (`allowedOrigins.1`,
 * `verification.jwk.crv`), so a form shows either under the control that holds that field.
 */
export interface Refusal extends Problem {
  problems?: Problem[];
}

/** Every problem of a refusal (one without `problems` is its own). */
export const problemsOf = (refusal: Refusal | null): Problem[] =>
  refusal === null ? [] : (refusal.problems ?? [refusal]);

/** One refusal of several problems (null: none). */
export function refusalOfProblems(problems: readonly Problem[]): Refusal | null {
  const [first] = problems;
  if (!first) return null;
  return problems.length > 1 ? { ...first, problems: [...problems] } : first;
}

/** Every problem `schema` finds in `input`, named as the Worker names them (http/errors.ts). */
export function checkWith(schema: Schema, input: unknown): Refusal | null {
  const result = schema.safeParse(input);
  if (result.success) return null;
  const problems = result.error.issues.map((issue): Problem => {
    const path = issue.path.map(String).join(".");
    if (issue.code === "unrecognized_keys") {
      return {
        field: [path, issue.keys?.[0]].filter(Boolean).join(".") || null,
        message: "is unknown",
      };
    }
    return { field: path || null, message: wording(issue) };
  });
  // One problem per field: a field's first is what to fix first.
  const seen = new Set<string | null>();
  return (
    refusalOfProblems(
      problems.filter((problem) => !seen.has(problem.field) && seen.add(problem.field)),
    ) ?? { field: null, message: "Check the form" }
  );
}

/** A problem without the field name its message starts with (the form shows where). */
const bare = (field: string | null, message: string): Problem => ({
  field,
  message: field && message.startsWith(`${field}: `) ? message.slice(field.length + 2) : message,
});

/** What the API's refusal says: each problem it names, without the field name it starts with. */
export function refusalOf(error: unknown): Refusal {
  if (!isApiError(error))
    return { field: null, message: "Something went wrong. Please try again." };
  const first = bare(error.field ?? null, error.message);
  const rest = error.issues
    .filter((issue) => issue.field !== first.field)
    .map((issue) => bare(issue.field, issue.message));
  return refusalOfProblems([first, ...rest]) ?? first;
}

/** The refusal's problem about `field` or something inside it (`allowedOrigins` covers `.1`). */
export function refusalAt(refusal: Refusal | null, field: string): string | null {
  const problem = problemsOf(refusal).find(
    (p) => p.field !== null && (p.field === field || p.field.startsWith(`${field}.`)),
  );
  return problem?.message ?? null;
}
