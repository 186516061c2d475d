import { z } from "zod";
import { modelIdSchema } from "./assistants.ts";
import { pageQuerySchema } from "./pagination.ts";
import { humanText } from "./schemas.ts";

/**
 * What the session routes take (split from schemas.ts on 2026-12-06, when a session gained its
 * model): a member's new session, a rename or model pick, an end user's rename, the org's list.
 */

/** A model id as a session names it: whether the org allows it is the route's to check. */
const sessionModel = modelIdSchema;

/**
 * A member's new session: an optional title, and an optional model of the org's allowed list
 * (2026-12-06; absent: the project's profile decides).
 */
export const createSessionSchema = z.strictObject({
  title: humanText({ min: 1, max: 200 }).optional(),
  model: sessionModel.optional(),
});
export type CreateSession = z.infer<typeof createSessionSchema>;

/**
 * The session's owner renames it (the rules of a title given at creation) or picks its model
 * (2026-12-06; null: back to the profile's).
 */
export const updateSessionSchema = z
  .strictObject({
    title: humanText({ min: 1, max: 200 }).optional(),
    model: sessionModel.nullable().optional(),
  })
  .refine((value) => value.title !== undefined || value.model !== undefined, {
    message: "at least one of title or model is required",
  });
export type UpdateSession = z.infer<typeof updateSessionSchema>;

/** An end user renames one of their sessions; they never pick a model (their app's profile does). */
export const updateEndUserSessionSchema = z.strictObject({
  title: humanText({ min: 1, max: 200 }),
});

/**
 * Query of the org's session list (the sidebar across projects, the erasure picker): the usual
 * paging and optional filters by project and by owner (`member`).
 */
export const orgSessionsQuerySchema = z.strictObject({
  ...pageQuerySchema.shape,
  project: z.string().min(1).max(100).optional(),
  member: z.string().min(1).max(100).optional(),
});
export type OrgSessionsQuery = z.infer<typeof orgSessionsQuerySchema>;
