import {
  AppError,
  assistantProfilePageSchema,
  assistantProfileSchema,
  createProfileSchema,
  newId,
  pageQuerySchema,
  updateProfileSchema,
} from "@parley/shared";
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { loadCatalogue } from "../assistants/catalogue.ts";
import { checkProfileContent } from "../assistants/profile-rules.ts";
import {
  contentOf,
  createStatements,
  isPreview,
  nextVersionStatements,
  PROFILE_SELECT,
  type ProfileContent,
  type ProfileRow,
  profileAccess,
  profileUses,
  sameContent,
  toProfile,
  UNUSED,
  useOf,
} from "../assistants/profiles-db.ts";
import { assistantChanged } from "../assistants/push.ts";
import { builtInToolNames } from "../assistants/tools.ts";
import { orgAccess, requireRole } from "../auth/access.ts";
import { resolveLabels } from "../billing/labels.ts";
import { auditStatement } from "../db/audit.ts";
import { idPage } from "../db/pagination.ts";
import type { AppEnv } from "../http/context.ts";
import { empty, errors, json } from "../http/openapi.ts";
import { jsonBody, query } from "../http/validate.ts";

/**
 * Assistant profiles, an org resource (docs/2026-12-06-assistant-profiles.md): any member reads
 * them (the chat shows a profile's welcome and suggestions); owners and admins create, change,
 * roll back and delete them. Every change is a new immutable version; a profile another org owns
 * reads as a missing one (404) everywhere.
 */

/** One profile as the API shows it, read again after a write. */
export async function shownProfile(db: D1Database, profileId: string) {
  const row = await db
    .prepare(`SELECT ${PROFILE_SELECT} WHERE p.id = ?`)
    .bind(profileId)
    .first<ProfileRow>();
  if (!row) throw new AppError("not_found", "Profile not found");
  const [uses, labels] = await Promise.all([
    profileUses(db, [row.profile_id]),
    resolveLabels(db, row.org_id, { members: [row.author_id] }),
  ]);
  return toProfile(row, useOf(uses, row.profile_id), labels);
}

/** Profiles of an org (routes under /api/orgs/:orgId). */
export const orgProfiles = new Hono<AppEnv>()
  .get(
    "/:orgId/profiles",
    describeRoute({
      tags: ["Assistants"],
      summary: "The org's assistant profiles",
      responses: { 200: json(assistantProfilePageSchema), ...errors(401, 404) },
    }),
    query(pageQuerySchema),
    async (c) => {
      const db = c.env.DB;
      const access = await orgAccess(db, c.get("caller").userId, c.req.param("orgId"));
      // The key is the profile's id (`profile_id` of its version): selected again as `id`.
      const page = await idPage<ProfileRow & { id: string }>(
        db,
        {
          select: `SELECT p.id, ${PROFILE_SELECT}`,
          where: "p.org_id = ?",
          binds: [access.orgId],
          id: "p.id",
        },
        c.req.valid("query"),
      );
      const [uses, labels] = await Promise.all([
        profileUses(
          db,
          page.items.map((row) => row.profile_id),
        ),
        resolveLabels(db, access.orgId, { members: page.items.map((row) => row.author_id) }),
      ]);
      return c.json({
        ...page,
        items: page.items.map((row) => toProfile(row, useOf(uses, row.profile_id), labels)),
      });
    },
  )

  .post(
    "/:orgId/profiles",
    describeRoute({
      tags: ["Assistants"],
      summary: "Create an assistant profile (version 1)",
      responses: { 201: json(assistantProfileSchema), ...errors(400, 401, 403, 404) },
    }),
    jsonBody(createProfileSchema),
    async (c) => {
      const { userId } = c.get("caller");
      const db = c.env.DB;
      const access = await orgAccess(db, userId, c.req.param("orgId"));
      requireRole(access, "admin");
      const input = c.req.valid("json");
      const catalogue = await loadCatalogue(c.env);
      const content: ProfileContent = {
        name: input.name,
        instructions: input.instructions ?? "",
        model: input.model ?? catalogue.defaultModel,
        temperature: input.temperature ?? null,
        topP: input.topP ?? null,
        maxOutputTokens: input.maxOutputTokens ?? null,
        welcome: input.welcome ?? null,
        suggestions: input.suggestions ?? [],
        tools: input.tools ?? builtInToolNames(),
        knowledgeRetrieval: input.knowledgeRetrieval ?? false,
      };
      await checkProfileContent(db, catalogue, access.orgId, content, { preview: false });
      const now = Date.now();
      const id = newId("profile", now);
      await db.batch([
        ...createStatements(db, { id, orgId: access.orgId, authorId: userId, now, content }),
        auditStatement(
          db,
          {
            orgId: access.orgId,
            actorId: userId,
            action: "profile.created",
            subjectType: "profile",
            subjectId: id,
            data: { version: 1, model: content.model },
          },
          { now },
        ),
      ]);
      return c.json(await shownProfile(db, id), 201);
    },
  );

/** Which fields a change touched: the audit row names them, never their text. */
const changedFields = (before: ProfileContent, after: ProfileContent) =>
  (Object.keys(after) as (keyof ProfileContent)[]).filter(
    (key) => JSON.stringify(before[key]) !== JSON.stringify(after[key]),
  );

/**
 * Writes `content` as the next version of a profile, if `base` is still its current version (a
 * concurrent change answers 409 and writes nothing). Shared by a change and a rollback.
 */
export async function writeVersion(
  env: Env,
  input: {
    profile: ProfileRow;
    userId: string;
    content: ProfileContent;
    restoredFrom: number | null;
  },
): Promise<void> {
  const { profile, content, userId } = input;
  const db = env.DB;
  const uses = useOf(await profileUses(db, [profile.profile_id]), profile.profile_id);
  const catalogue = await loadCatalogue(env);
  await checkProfileContent(db, catalogue, profile.org_id, content, { preview: isPreview(uses) });
  const now = Date.now();
  const [insert] = await db.batch([
    ...nextVersionStatements(db, {
      profileId: profile.profile_id,
      base: profile.version,
      authorId: userId,
      now,
      content,
      restoredFrom: input.restoredFrom,
    }),
    auditStatement(
      db,
      {
        orgId: profile.org_id,
        actorId: userId,
        action: input.restoredFrom === null ? "profile.updated" : "profile.rolled_back",
        subjectType: "profile",
        subjectId: profile.profile_id,
        data: {
          version: profile.version + 1,
          ...(input.restoredFrom === null
            ? { fields: changedFields(contentOf(profile), content).join(",") }
            : { restoredFrom: input.restoredFrom }),
        },
      },
      { now, afterChange: true },
    ),
  ]);
  if (insert?.meta.changes !== 1) {
    throw new AppError(
      "conflict",
      "This profile was changed meanwhile: reload it and make your change again",
    );
  }
  // The chats running it resolve their turns again: its next version is what they run.
  await assistantChanged(env, { orgId: profile.org_id });
}

/** One profile (routes under /api/profiles). */
export const profiles = new Hono<AppEnv>()
  .get(
    "/:profileId",
    describeRoute({
      tags: ["Assistants"],
      summary: "One assistant profile (its current version)",
      responses: { 200: json(assistantProfileSchema), ...errors(401, 404) },
    }),
    async (c) => {
      const { profile } = await profileAccess(
        c.env.DB,
        c.get("caller").userId,
        c.req.param("profileId"),
      );
      return c.json(await shownProfile(c.env.DB, profile.profile_id));
    },
  )

  /**
   * A change makes a new version (who, when): fields left out keep their value; a change that
   * changes nothing makes none. `baseVersion`, when sent, must be the current version (409).
   */
  .patch(
    "/:profileId",
    describeRoute({
      tags: ["Assistants"],
      summary: "Change an assistant profile (a new version)",
      responses: { 200: json(assistantProfileSchema), ...errors(400, 401, 403, 404, 409) },
    }),
    jsonBody(updateProfileSchema),
    async (c) => {
      const { userId } = c.get("caller");
      const { profile } = await profileAccess(c.env.DB, userId, c.req.param("profileId"), "admin");
      const { baseVersion, ...input } = c.req.valid("json");
      if (baseVersion !== undefined && baseVersion !== profile.version) {
        throw new AppError(
          "conflict",
          `baseVersion: the profile is at version ${profile.version}; reload it and make your change again`,
          { field: "baseVersion" },
        );
      }
      const before = contentOf(profile);
      const content: ProfileContent = {
        name: input.name ?? before.name,
        instructions: input.instructions ?? before.instructions,
        model: input.model ?? before.model,
        temperature: input.temperature === undefined ? before.temperature : input.temperature,
        topP: input.topP === undefined ? before.topP : input.topP,
        maxOutputTokens:
          input.maxOutputTokens === undefined ? before.maxOutputTokens : input.maxOutputTokens,
        welcome: input.welcome === undefined ? before.welcome : input.welcome,
        suggestions: input.suggestions ?? before.suggestions,
        tools: input.tools ?? before.tools,
        knowledgeRetrieval: input.knowledgeRetrieval ?? before.knowledgeRetrieval,
      };
      if (!sameContent(before, content)) {
        await writeVersion(c.env, { profile, userId, content, restoredFrom: null });
      }
      return c.json(await shownProfile(c.env.DB, profile.profile_id));
    },
  )

  /**
   * Deletes a profile and its versions, only while it runs nowhere: a profile that is a project's,
   * an app's or a preview's is refused with 409 naming where (point those elsewhere first), so
   * no chat ever loses its assistant to a delete. Checked in the delete's own statements.
   */
  .delete(
    "/:profileId",
    describeRoute({
      tags: ["Assistants"],
      summary: "Delete an assistant profile that runs nowhere",
      responses: { 204: empty(), ...errors(401, 403, 404, 409) },
    }),
    async (c) => {
      const { userId } = c.get("caller");
      const db = c.env.DB;
      const { profile } = await profileAccess(db, userId, c.req.param("profileId"), "admin");
      const ids = JSON.stringify([profile.profile_id]);
      const now = Date.now();
      const [, deleted] = await db.batch([
        db
          .prepare(`DELETE FROM assistant_profile_versions WHERE profile_id = ?2 AND ${UNUSED}`)
          .bind(ids, profile.profile_id),
        db
          .prepare(`DELETE FROM assistant_profiles WHERE id = ?2 AND ${UNUSED}`)
          .bind(ids, profile.profile_id),
        auditStatement(
          db,
          {
            orgId: profile.org_id,
            actorId: userId,
            action: "profile.deleted",
            subjectType: "profile",
            subjectId: profile.profile_id,
            data: { version: profile.version },
          },
          { now, afterChange: true },
        ),
      ]);
      if (deleted?.meta.changes !== 1) {
        const use = useOf(await profileUses(db, [profile.profile_id]), profile.profile_id);
        const where = [
          ...use.projects.map((id) => `project ${id}`),
          ...use.previewProjects.map((id) => `the preview of project ${id}`),
          ...use.apps.map((id) => `app ${id}`),
          ...(use.orgPreview ? ["the organization's preview"] : []),
        ];
        throw new AppError(
          "conflict",
          `This profile runs in ${where.join(", ") || "a chat"}: choose another profile there first`,
        );
      }
      return c.body(null, 204);
    },
  );
