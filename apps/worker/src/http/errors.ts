import { AppError } from "@parley/shared";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { z } from "zod";

/**
 * The single place where an error becomes an HTTP response. Users get the code and a message; the
 * log gets the code and the cause's name and message (never a token or a request body).
 */
export function errorResponse(err: unknown, c: Context): Response {
  const appError = toAppError(err);
  if (appError.code === "internal") {
    const cause = appError.cause ?? err;
    console.error(
      JSON.stringify({
        level: "error",
        route: c.req.routePath,
        method: c.req.method,
        error: cause instanceof Error ? `${cause.name}: ${cause.message}` : "non-error thrown",
      }),
    );
  }
  return c.json(appError.toBody(), appError.status);
}

function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof HTTPException) {
    // Hono's own validator and body parser throw these for malformed input.
    if (err.status === 413) return new AppError("payload_too_large", "Request body is too large");
    if (err.status === 400) return new AppError("invalid_request", err.message, { cause: err });
  }
  return new AppError("internal", "Something went wrong on our side", { cause: err });
}

/**
 * Why a background job (indexing, a data export) stopped, in words stored for the people who read
 * its state: an `AppError`'s message, which is written for them, or `fallback`. Any other error's
 * text (a binding's, SQLite's, a fetch's) can name internals: it goes to the log, never here.
 */
export const shownReason = (cause: unknown, fallback: string): string =>
  cause instanceof AppError ? cause.message : fallback;

/** One zod issue as the API names it: the dotted path (an unknown key's own) and why. */
function describeIssue(issue: z.core.$ZodIssue, prefix: string | undefined) {
  const path = [prefix, ...issue.path.map(String)].filter(Boolean).join(".");
  if (issue.code === "unrecognized_keys") {
    return {
      field: [path, issue.keys[0]].filter(Boolean).join("."),
      detail: `unknown field ${issue.keys.join(", ")}`,
    };
  }
  return { field: path, detail: issue.message };
}

/**
 * Turns a zod failure into `invalid_request` naming the first offending field, and, when there
 * are more, every one in `issues` (a form shows them all at once: the outside probe's "New app"
 * showed one refusal per attempt). A problem without a field (the body's own rule) is left to the
 * message; the ones with a field are still listed when there are several problems.
 */
export function invalidRequest(error: z.ZodError, prefix?: string): AppError {
  const described = error.issues.map((issue) => describeIssue(issue, prefix));
  const first = described[0];
  const field = first?.field ?? "";
  const issues = described
    .filter((issue) => issue.field !== "")
    .map((issue) => ({ field: issue.field, message: issue.detail }));
  return new AppError(
    "invalid_request",
    field ? `${field}: ${first?.detail}` : (first?.detail ?? "Invalid request"),
    {
      field: field || undefined,
      // Several problems: every one with a field is listed, even one alone when the first (the
      // message's) has none, or a form would never hear of it.
      ...(described.length > 1 && issues.length > 0 ? { issues } : {}),
    },
  );
}
