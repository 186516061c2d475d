import { AppError } from "@parley/shared";
import { notFound } from "../auth/access.ts";
import { allowedModels, modelProblem } from "./allowed.ts";
import { loadCatalogue } from "./catalogue.ts";
import { checkPreviewModel } from "./profile-rules.ts";
import { PROFILE_SELECT, type ProfileRow } from "./profiles-db.ts";

/**
 * A profile named where it will run (a project's default or preview, an app, the org's preview):
 * it must be a profile of `orgId` (another org's reads as a missing one: 404, in a project or app
 * PATCH too), its model allowed in the org, and for an onboarding preview a free-preview model
 * (400 naming `field` otherwise). The write that follows re-checks that the profile still exists
 * in its own statement (`ASSIGNABLE`), so a profile deleted in between is never pointed at.
 */
export async function checkAssignable(
  env: Env,
  orgId: string,
  profileId: string,
  options: { preview: boolean; field: string },
): Promise<void> {
  const row = await env.DB.prepare(`SELECT ${PROFILE_SELECT} WHERE p.id = ? AND p.org_id = ?`)
    .bind(profileId, orgId)
    .first<ProfileRow>();
  if (!row) throw notFound("Profile");
  const catalogue = await loadCatalogue(env);
  if (options.preview) {
    checkPreviewModel(catalogue, row.model, options.field);
    return;
  }
  const problem = modelProblem(catalogue, await allowedModels(env.DB, catalogue, orgId), row.model);
  if (problem) {
    throw new AppError("invalid_request", `${options.field}: the profile's model ${problem}`, {
      field: options.field,
    });
  }
}

/**
 * SQL: the profile bound at `param` is null or a live profile of the org bound at `org`; the
 * condition of a write that points at it.
 */
export const assignable = (param: string, org: string) =>
  `(${param} IS NULL OR EXISTS (SELECT 1 FROM assistant_profiles WHERE id = ${param} AND org_id = ${org}))`;
