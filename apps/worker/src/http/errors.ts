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

/** Turns a zod failure into `invalid_request` naming the first offending field. */
export function invalidRequest(error: z.ZodError, prefix?: string): AppError {
  const issue = error.issues[0];
  const path = [prefix, ...(issue?.path ?? []).map(String)].filter(Boolean).join(".");
  const detail =
    issue?.code === "unrecognized_keys" ? `unknown field ${issue.keys.join(", ")}` : issue?.message;
  const field =
    issue?.code === "unrecognized_keys" ? [path, issue.keys[0]].filter(Boolean).join(".") : path;
  return new AppError(
    "invalid_request",
    field ? `${field}: ${detail}` : (detail ?? "Invalid request"),
    {
      field: field || undefined,
    },
  );
}
