import { z } from "zod";
import { isId } from "./ids.ts";
import { textProblem } from "./schemas.ts";

/**
 * The tenant's own id for one of its users (an end user's `sub`, docs/2026-12-06-end-user-ids.md).
 * One rule for every place that takes one: the token exchange (`POST /api/embed/token`, the
 * verified token's `sub`), the API-key mint (`POST /api/apps/:appId/end-user-tokens`) and the
 * erasure (`POST /api/apps/:appId/end-users/erase`). Whatever the exchange accepts, the erasure
 * can name; whatever one refuses, the other refuses with the same 400 `invalid_request`.
 *
 * Accepted: 1 to {@link MAX_EXTERNAL_ID_CHARS} UTF-16 code units of one line of visible text, with
 * no whitespace at either end. Anything else is the tenant's business and is kept exactly as sent
 * (no trimming, no case folding, no Unicode normalization: `Ada` and `ada` are two users, and so
 * are a composed and a decomposed `é`): dots, slashes, `%`, `?`, `#`, spaces inside, `.` and `..`,
 * emails, emoji. Refused: the empty string, longer ids, control characters (tabs and line breaks
 * included), unpaired surrogates, U+FFFD, bidirectional controls, nothing visible, a leading
 * combining mark, whitespace at either end. Refused rather than cleaned, so the id a tenant sends
 * is the id Parley stores, lists, exports and erases.
 */
export const MAX_EXTERNAL_ID_CHARS = 128;

/** The message every refusal of an external id carries. */
export const EXTERNAL_ID_RULE = `must be 1 to ${MAX_EXTERNAL_ID_CHARS} characters of one line of visible text, with no spaces at either end`;

/**
 * The prefixes of the external ids Parley makes for its own end users (the developers' area's
 * preview, {@link previewExternalId}), compared case-insensitively. A tenant's id may not start
 * with one (the exchange and the API-key mint answer 400 `invalid_request`): before 2026-12-06 a
 * tenant's end user with `sub` "parley-preview:<member id>" was the same row as that member's
 * preview end user (the security probe of 2026-12-06, finding 3). `parley-preview:` is the form
 * the preview used until then; `parley:` is the namespace of every id Parley makes from now on.
 */
export const RESERVED_EXTERNAL_ID_PREFIXES = ["parley:", "parley-preview:"] as const;

/**
 * The external id of the end user an owner or admin chats as in the developers' area's preview
 * (`POST /api/apps/:appId/preview-token`): one per member, so their preview chats are their own,
 * and recognizable in the end-user list and usage. Its form, `parley:preview:<user id>`, is new
 * on 2026-12-06 and reserved at once, so no row a tenant made (under any earlier rule) has it; the
 * earlier form (`parley-preview:<user id>`) is never used again, since a tenant could have made it.
 */
export const previewExternalId = (userId: string): string => `parley:preview:${userId}`;

/** Whether `value` is an id in Parley's own namespace (a preview end user's). */
export const isReservedExternalId = (value: string): boolean => {
  const lower = value.toLowerCase();
  return RESERVED_EXTERNAL_ID_PREFIXES.some((prefix) => lower.startsWith(prefix));
};

/** The message the refusal of a reserved external id carries. */
export const RESERVED_EXTERNAL_ID_RULE = `must not start with ${RESERVED_EXTERNAL_ID_PREFIXES.map((p) => `"${p}"`).join(" or ")}: Parley keeps those for its own end users (the app's preview)`;

/**
 * Why `value` is not an id a tenant may give one of its users, or null when it is one: the
 * external-id rule plus the reserved prefixes. For every route that takes a tenant's id to make or
 * find an end user by (the exchange, the API-key mint); the erasure keeps the plain rule, so a
 * row made before the reservation can still be named and erased.
 */
export function tenantExternalIdProblem(value: unknown): string | null {
  const problem = externalIdProblem(value);
  if (problem !== null) return problem;
  return isReservedExternalId(value as string) ? RESERVED_EXTERNAL_ID_RULE : null;
}

/** A tenant-supplied external id in a request body, as {@link tenantExternalIdProblem} says. */
export const tenantExternalIdSchema = z.string().superRefine((value, ctx) => {
  const problem = tenantExternalIdProblem(value);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

/** Why `value` is not an external id, or null when it is one. */
export function externalIdProblem(value: unknown): string | null {
  if (typeof value !== "string") return "must be a string";
  if (value.length === 0 || value.length > MAX_EXTERNAL_ID_CHARS) return EXTERNAL_ID_RULE;
  const problem = textProblem(value);
  if (problem !== null) return problem;
  // Whitespace-only text passes textProblem (which trims what people type); an id is not trimmed.
  if (value.trim() !== value) return "must not start or end with whitespace";
  return null;
}

/** An external id in a request body, validated as {@link externalIdProblem} says. */
export const externalIdSchema = z.string().superRefine((value, ctx) => {
  const problem = externalIdProblem(value);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

/**
 * Which end user `POST /api/apps/:appId/end-users/erase` erases: the tenant's id for them, or the
 * Parley id (`eu_...`) the exchange returned as `endUser.id`. Exactly one. In the body, never in
 * the path: request logs and traces keep paths, and a tenant's id is often an email.
 */
export const eraseEndUserSchema = z.union([
  z.strictObject({ externalId: externalIdSchema }),
  z.strictObject({
    endUserId: z
      .string()
      .refine((value) => isId("endUser", value), { message: "must be an end user's id (eu_...)" }),
  }),
]);
export type EraseEndUser = z.infer<typeof eraseEndUserSchema>;
