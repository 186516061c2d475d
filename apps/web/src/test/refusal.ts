import { vi } from "vitest";

/** What a refusal needs of a zod schema (the tests take the API's schemas from `@parley/shared`). */
interface Schema {
  safeParse(
    input: unknown,
  ):
    | { success: true }
    | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };
}

/**
 * The API's 400 for `input` refused by `schema`, shaped as the Worker's `invalidRequest`
 * (apps/worker/src/http/errors.ts) shapes it: the first problem in `message` and `field`, every
 * one in `issues` when there are several, zod's own words in each.
 */
export function refusedBody(schema: Schema, input: unknown) {
  const parsed = schema.safeParse(input);
  if (parsed.success) throw new Error("the schema takes this input: nothing to refuse");
  const issues = parsed.error.issues.map((issue) => ({
    field: issue.path.map(String).join("."),
    message: issue.message,
  }));
  const [first] = issues;
  return {
    error: {
      code: "invalid_request",
      message: `${first?.field}: ${first?.message}`,
      field: first?.field,
      ...(issues.length > 1 ? { issues } : {}),
    },
  };
}

/**
 * Every request of the app's API client answered with `body` and `status` (the network edge:
 * the client, its error parsing and the form all run as they do in the browser).
 */
export function answerEvery(status: number, body: unknown) {
  return vi
    .spyOn(globalThis, "fetch")
    .mockImplementation(async () => Response.json(body, { status }));
}

/** The text of what describes a control (its problem, by `aria-describedby`). */
export function describedText(control: HTMLElement): string {
  return (control.getAttribute("aria-describedby") ?? "")
    .split(" ")
    .map((id) => document.getElementById(id)?.textContent ?? "")
    .join(" ")
    .trim();
}
