import {
  AppError,
  assistantProfileSchema,
  type PromptPreview,
  pageQuerySchema,
  profileVersionPageSchema,
  profileVersionSchema,
  promptPreviewQuerySchema,
  promptPreviewSchema,
  rollbackProfileSchema,
} from "@parley/shared";
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { estimateTokens } from "../agents/context.ts";
import { loadCatalogue } from "../assistants/catalogue.ts";
import {
  contentOf,
  profileAccess,
  toProfileVersion,
  VERSION_COLUMNS,
  type VersionRow,
  versionRow,
} from "../assistants/profiles-db.ts";
import { buildSystemPrompt } from "../assistants/prompt.ts";
import { turnTools } from "../assistants/resolve.ts";
import { notFound, type ProjectRow } from "../auth/access.ts";
import { resolveLabels } from "../billing/labels.ts";
import type { AppEnv } from "../http/context.ts";
import { errors, json } from "../http/openapi.ts";
import { jsonBody, query } from "../http/validate.ts";
import { shownProfile, writeVersion } from "./profiles.ts";

/** A version number from a path or a cursor: a positive integer, or a 400 / 404. */
const VERSION = /^[1-9]\d{0,8}$/;

/**
 * A profile's history (routes under /api/profiles/:profileId): every version, newest first, any
 * one of them, a rollback (a new version equal to an old one), and the whole system prompt a
 * version gives the model in a project (the editor's preview).
 */
export const profileVersions = new Hono<AppEnv>()
  .get(
    "/:profileId/versions",
    describeRoute({
      tags: ["Assistants"],
      summary: "A profile's versions, newest first",
      responses: { 200: json(profileVersionPageSchema), ...errors(400, 401, 404) },
    }),
    query(pageQuerySchema),
    async (c) => {
      const db = c.env.DB;
      const { profile } = await profileAccess(db, c.get("caller").userId, c.req.param("profileId"));
      const { cursor, limit } = c.req.valid("query");
      if (cursor !== undefined && !VERSION.test(cursor)) {
        throw new AppError("invalid_request", "query.cursor: not a cursor from this list", {
          field: "query.cursor",
        });
      }
      const { results } = await db
        .prepare(
          `SELECT ${VERSION_COLUMNS} FROM assistant_profile_versions v
           WHERE v.profile_id = ? AND v.version < ? ORDER BY v.version DESC LIMIT ?`,
        )
        .bind(profile.profile_id, cursor === undefined ? 2 ** 31 : Number(cursor), limit + 1)
        .all<VersionRow>();
      const page = results.slice(0, limit);
      const labels = await resolveLabels(db, profile.org_id, {
        members: page.map((row) => row.author_id),
      });
      const last = page.at(-1);
      return c.json({
        items: page.map((row) => toProfileVersion(row, labels)),
        nextCursor: results.length > limit && last ? String(last.version) : null,
      });
    },
  )

  .get(
    "/:profileId/versions/:version",
    describeRoute({
      tags: ["Assistants"],
      summary: "One version of a profile",
      responses: { 200: json(profileVersionSchema), ...errors(401, 404) },
    }),
    async (c) => {
      const db = c.env.DB;
      const { profile } = await profileAccess(db, c.get("caller").userId, c.req.param("profileId"));
      const version = c.req.param("version");
      if (!VERSION.test(version)) throw new AppError("not_found", "Profile version not found");
      const row = await versionRow(db, profile.profile_id, Number(version));
      const labels = await resolveLabels(db, profile.org_id, { members: [row.author_id] });
      return c.json(toProfileVersion(row, labels));
    },
  )

  /**
   * Makes an earlier version current again, as a new version equal to it (the history only grows).
   * The old version must still keep today's rules (its model allowed and live): 400 otherwise.
   */
  .post(
    "/:profileId/rollback",
    describeRoute({
      tags: ["Assistants"],
      summary: "Roll a profile back to an earlier version (a new version equal to it)",
      responses: { 200: json(assistantProfileSchema), ...errors(400, 401, 403, 404, 409) },
    }),
    jsonBody(rollbackProfileSchema),
    async (c) => {
      const { userId } = c.get("caller");
      const db = c.env.DB;
      const { profile } = await profileAccess(db, userId, c.req.param("profileId"), "admin");
      const { version } = c.req.valid("json");
      if (version >= profile.version) {
        throw new AppError(
          "invalid_request",
          `version: must be an earlier version than the current one (${profile.version})`,
          { field: "version" },
        );
      }
      const old = await versionRow(db, profile.profile_id, version);
      await writeVersion(c.env, {
        profile,
        userId,
        content: contentOf(old),
        restoredFrom: version,
      });
      return c.json(await shownProfile(db, profile.profile_id));
    },
  )

  /**
   * The whole system prompt the model would see for this profile (its current version, or
   * `version`) in a project of its org, as a member's session (`audience=member`), an end user's,
   * or the onboarding preview: Parley's scaffolding around the instructions, the project's memory
   * as data. Exactly what the agents build (assistants/prompt.ts), with no earlier messages left
   * out.
   */
  .get(
    "/:profileId/prompt-preview",
    describeRoute({
      tags: ["Assistants"],
      summary: "The whole system prompt a profile gives the model in a project",
      responses: { 200: json(promptPreviewSchema), ...errors(400, 401, 404) },
    }),
    query(promptPreviewQuerySchema),
    async (c) => {
      const db = c.env.DB;
      const { profile } = await profileAccess(db, c.get("caller").userId, c.req.param("profileId"));
      const q = c.req.valid("query");
      const row =
        q.version === undefined ? profile : await versionRow(db, profile.profile_id, q.version);
      // A project of the profile's org: another org's, or a missing one, is 404 alike.
      const project = await db
        .prepare("SELECT * FROM projects WHERE id = ? AND org_id = ? AND deleted_at IS NULL")
        .bind(q.projectId, profile.org_id)
        .first<ProjectRow>();
      if (!project) throw notFound("Project");
      const content = contentOf(row);
      const audience = q.audience === "preview" ? "preview" : "assistant";
      const callerKind = q.audience === "end_user" ? "end_user" : "member";
      const model = (await loadCatalogue(c.env)).models.get(content.model);
      const system = buildSystemPrompt({
        audience,
        callerKind,
        project: { name: project.name, memory: project.memory },
        instructions: content.instructions,
        tools: turnTools({ audience, callerKind, model, tools: content.tools }),
        omitted: 0,
      });
      return c.json({
        profileId: profile.profile_id,
        version: row.version,
        projectId: project.id,
        audience: q.audience,
        model: content.model,
        system,
        tokens: estimateTokens(system),
      } satisfies PromptPreview);
    },
  );
