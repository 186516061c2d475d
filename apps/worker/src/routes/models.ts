import {
  type AllowedModelList,
  AppError,
  allowedModelListSchema,
  allowedModelsSchema,
  type CatalogueModelList,
  catalogueModelListSchema,
  type OrgPreviewProfile,
  orgPreviewProfileSchema,
  previewProfileSchema,
} from "@parley/shared";
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { allowedModels } from "../assistants/allowed.ts";
import { assignable, checkAssignable } from "../assistants/assign.ts";
import { loadCatalogue, toCatalogueModel } from "../assistants/catalogue.ts";
import { assistantChanged } from "../assistants/push.ts";
import { notFound, orgAccess, requireRole } from "../auth/access.ts";
import { auditStatement } from "../db/audit.ts";
import type { AppEnv } from "../http/context.ts";
import { errors, json } from "../http/openapi.ts";
import { jsonBody } from "../http/validate.ts";

/**
 * The platform's catalogue as members see it (`GET /api/models`): every live model with what the
 * org is charged for it. Which of them an org's members may use is the org's list below.
 */
export const catalogueModels = new Hono<AppEnv>().get(
  "/",
  describeRoute({
    tags: ["Assistants"],
    summary: "The platform's model catalogue, with prices per million tokens",
    responses: { 200: json(catalogueModelListSchema), ...errors(401) },
  }),
  async (c) => {
    const catalogue = await loadCatalogue(c.env);
    return c.json({
      items: catalogue.live.map((model) => toCatalogueModel(c.env, model)),
      defaultModel: catalogue.defaultModel,
    } satisfies CatalogueModelList);
  },
);

async function allowedList(env: Env, orgId: string): Promise<AllowedModelList> {
  const catalogue = await loadCatalogue(env);
  const allowed = await allowedModels(env.DB, catalogue, orgId);
  return {
    orgId,
    items: allowed.models.map((model) => toCatalogueModel(env, model)),
    chosen: allowed.chosen,
  };
}

/**
 * An org's allowed models and its onboarding preview's profile (routes under /api/orgs/:orgId):
 * members read them (the chat's model picker shows each model's price); owners and admins change
 * them.
 */
export const orgModels = new Hono<AppEnv>()
  .get(
    "/:orgId/models",
    describeRoute({
      tags: ["Assistants"],
      summary: "The models the org's members may use, with prices per million tokens",
      responses: { 200: json(allowedModelListSchema), ...errors(401, 404) },
    }),
    async (c) => {
      const access = await orgAccess(c.env.DB, c.get("caller").userId, c.req.param("orgId"));
      return c.json(await allowedList(c.env, access.orgId));
    },
  )

  /**
   * Replaces the list (`null`: back to the platform's default set). Each model must be live in
   * the catalogue (400 naming it). The model of a profile a project or an app runs cannot be left
   * out (409 naming it): no chat loses its model to this change (a preview needs a free-preview
   * model, not an allowed one). A
   * session whose member picked a model no longer listed is refused its next turn, clearly, and
   * the member picks another.
   */
  .put(
    "/:orgId/models",
    describeRoute({
      tags: ["Assistants"],
      summary: "Choose the models the org's members may use",
      responses: { 200: json(allowedModelListSchema), ...errors(400, 401, 403, 404, 409) },
    }),
    jsonBody(allowedModelsSchema),
    async (c) => {
      const { userId } = c.get("caller");
      const db = c.env.DB;
      const access = await orgAccess(db, userId, c.req.param("orgId"));
      requireRole(access, "admin");
      const { models } = c.req.valid("json");
      const catalogue = await loadCatalogue(c.env);
      const next = models ?? [catalogue.defaultModel];
      const bad = next.findIndex(
        (id) => !catalogue.models.get(id) || catalogue.models.get(id)?.retired,
      );
      if (bad >= 0) {
        const id = next[bad] ?? "";
        const known = catalogue.models.get(id);
        throw new AppError(
          "invalid_request",
          `models.${bad}: ${known ? `${id} is retired` : `${id} is not a model of the catalogue`}`,
          { field: `models.${bad}` },
        );
      }
      // The models the org's running profiles use (projects', apps', previews').
      const { results } = await db
        .prepare(
          `SELECT DISTINCT v.model FROM assistant_profiles p
           JOIN assistant_profile_versions v ON v.profile_id = p.id AND v.version = p.current_version
           WHERE p.org_id = ?1 AND (
             p.id IN (SELECT default_profile_id FROM projects WHERE org_id = ?1 AND deleted_at IS NULL)
             OR p.id IN (SELECT profile_id FROM apps WHERE org_id = ?1 AND deleted_at IS NULL))`,
        )
        .bind(access.orgId)
        .all<{ model: string }>();
      const dropped = results.map((row) => row.model).filter((model) => !next.includes(model));
      if (dropped.length > 0) {
        throw new AppError(
          "conflict",
          `models: ${dropped.join(", ")} ${dropped.length === 1 ? "is" : "are"} the model of a profile a project or app runs: choose another model there first`,
          { field: "models" },
        );
      }
      const now = Date.now();
      await db.batch([
        db.prepare("DELETE FROM org_models WHERE org_id = ?").bind(access.orgId),
        ...(models ?? []).map((id, position) =>
          db
            .prepare("INSERT INTO org_models (org_id, model_id, position) VALUES (?, ?, ?)")
            .bind(access.orgId, id, position),
        ),
        auditStatement(
          db,
          {
            orgId: access.orgId,
            actorId: userId,
            action: "org.models_set",
            subjectType: "org",
            subjectId: access.orgId,
            data: { models: models === null ? null : models.join(",") },
          },
          { now },
        ),
      ]);
      await assistantChanged(c.env, { orgId: access.orgId });
      return c.json(await allowedList(c.env, access.orgId));
    },
  )

  .get(
    "/:orgId/preview-profile",
    describeRoute({
      tags: ["Assistants"],
      summary: "The profile of the org's onboarding previews",
      responses: { 200: json(orgPreviewProfileSchema), ...errors(401, 404) },
    }),
    async (c) => {
      const access = await orgAccess(c.env.DB, c.get("caller").userId, c.req.param("orgId"));
      const row = await c.env.DB.prepare(
        "SELECT preview_profile_id FROM organizations WHERE id = ?",
      )
        .bind(access.orgId)
        .first<{ preview_profile_id: string | null }>();
      return c.json({
        orgId: access.orgId,
        profileId: row?.preview_profile_id ?? null,
      } satisfies OrgPreviewProfile);
    },
  )

  /**
   * The profile every project's onboarding preview runs unless the project names its own: a
   * profile of the org with a free-preview model (the platform pays for the preview), or null for
   * Parley's own preview.
   */
  .put(
    "/:orgId/preview-profile",
    describeRoute({
      tags: ["Assistants"],
      summary: "Choose the profile of the org's onboarding previews",
      responses: { 200: json(orgPreviewProfileSchema), ...errors(400, 401, 403, 404) },
    }),
    jsonBody(previewProfileSchema),
    async (c) => {
      const { userId } = c.get("caller");
      const db = c.env.DB;
      const access = await orgAccess(db, userId, c.req.param("orgId"));
      requireRole(access, "admin");
      const { profileId } = c.req.valid("json");
      if (profileId) {
        await checkAssignable(c.env, access.orgId, profileId, {
          preview: true,
          field: "profileId",
        });
      }
      const [update] = await db.batch([
        db
          .prepare(
            `UPDATE organizations SET preview_profile_id = ?1 WHERE id = ?2 AND ${assignable("?1", "?2")}`,
          )
          .bind(profileId, access.orgId),
        auditStatement(
          db,
          {
            orgId: access.orgId,
            actorId: userId,
            action: "org.preview_profile_set",
            subjectType: "org",
            subjectId: access.orgId,
            data: { profileId },
          },
          { afterChange: true },
        ),
      ]);
      // The profile named was deleted between the check and the write.
      if (update?.meta.changes !== 1) throw notFound("Profile");
      await assistantChanged(c.env, { orgId: access.orgId });
      return c.json({ orgId: access.orgId, profileId } satisfies OrgPreviewProfile);
    },
  );
