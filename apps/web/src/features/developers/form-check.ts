import {
  onePerField,
  type Problem,
  problemWords,
  type Refusal,
  refusalOfProblems,
} from "../../lib/refusal.ts";

/**
 * The developers' forms check what they send with the API's own zod schema (from
 * `@parley/shared`) before sending, and say every problem found the way the API would
 * (lib/refusal.ts: the same `Refusal`, shown by components/refusal.tsx).
 */

/** A zod issue, as much of it as the wording needs. */
interface Issue {
  code: string;
  path: PropertyKey[];
  message: string;
  keys?: string[];
}

/** An issue in words (`problemWords`, as the API's: zod's English reads like a type error). */
function wording(issue: Issue): string {
  if (issue.path[0] === "projectIds" && issue.code === "too_small") return NO_PROJECT;
  return problemWords(issue.message);
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
  return refusalOfProblems(onePerField(problems)) ?? { field: null, message: "Check the form" };
}
