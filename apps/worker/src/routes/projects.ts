import {
  AppError,
  createProjectSchema,
  createSessionSchema,
  MAX_MEMORY_BYTES,
  type Memory,
  memoryBytes,
  newId,
  type Project,
  pageQuerySchema,
  projectPageSchema,
  projectSchema,
  sessionPageSchema,
  sessionSchema,
  updateProjectSchema,
} from "@parley/shared";
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { revokeConnections } from "../agents/revocation.ts";
import { assignable, checkAssignable } from "../assistants/assign.ts";
import { checkChosenModel } from "../assistants/models.ts";
import {
  atLeast,
  notFound,
  orgAccess,
  type ProjectRow,
  projectAccess,
  requireRole,
} from "../auth/access.ts";
import { auditStatement } from "../db/audit.ts";
import { idPage, iso } from "../db/pagination.ts";
import { fileErasure } from "../erasure/file.ts";
import type { AppEnv } from "../http/context.ts";
import { empty, errors, json } from "../http/openapi.ts";
import { jsonBody, query } from "../http/validate.ts";
import { type SessionRowOut, sessionListPage, sessionPage } from "./sessions.ts";

export const toProject = (row: ProjectRow): Project => ({
  id: row.id,
  orgId: row.org_id,
  name: row.name,
  memory: JSON.parse(row.memory) as Memory,
  createdBy: row.created_by,
  createdAt: iso(row.created_at),
  updatedAt: iso(row.updated_at),
  defaultProfileId: row.default_profile_id ?? null,
  previewProfileId: row.preview_profile_id ?? null,
});

function checkMemorySize(memory: Memory | undefined): void {
  if (memory !== undefined && memoryBytes(memory) > MAX_MEMORY_BYTES) {
    throw new AppError(
      "payload_too_large",
      `memory: must be at most ${MAX_MEMORY_BYTES} bytes of JSON`,
      { field: "memory" },
    );
  }
}

/** Projects of an org: any member reads and creates them (routes under /api/orgs/:orgId). */
export const orgProjects = new Hono<AppEnv>()

  .get(
    "/:orgId/projects",
    describeRoute({
      tags: ["Projects"],
      summary: "The org's projects",
      responses: { 200: json(projectPageSchema), ...errors(401, 404) },
    }),
    query(pageQuerySchema),
    async (c) => {
      const access = await orgAccess(c.env.DB, c.get("caller").userId, c.req.param("orgId"));
      const page = await idPage(
        c.env.DB,
        {
          select: "SELECT * FROM projects",
          where: "org_id = ? AND deleted_at IS NULL",
          binds: [access.orgId],
        },
        c.req.valid("query"),
        toProject,
      );
      return c.json(page);
    },
  )

  .post(
    "/:orgId/projects",
    describeRoute({
      tags: ["Projects"],
      summary: "Create a project",
      responses: { 201: json(projectSchema), ...errors(401, 403, 404, 413) },
    }),
    jsonBody(createProjectSchema),
    async (c) => {
      const { userId } = c.get("caller");
      const db = c.env.DB;
      const access = await orgAccess(db, userId, c.req.param("orgId"));
      const input = c.req.valid("json");
      checkMemorySize(input.memory);
      const now = Date.now();
      const row: ProjectRow = {
        id: newId("project", now),
        org_id: access.orgId,
        name: input.name,
        memory: JSON.stringify(input.memory ?? {}),
        created_by: userId,
        created_at: now,
        updated_at: now,
        deleted_at: null,
        default_profile_id: null,
        preview_profile_id: null,
      };
      await db.batch([
        db
          .prepare(
            `INSERT INTO projects (id, org_id, name, memory, created_by, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
          )
          .bind(row.id, row.org_id, row.name, row.memory, userId, now, now),
        auditStatement(
          db,
          {
            orgId: access.orgId,
            actorId: userId,
            action: "project.created",
            subjectType: "project",
            subjectId: row.id,
          },
          { now },
        ),
      ]);
      return c.json(toProject(row), 201);
    },
  );

/** One project and its sessions (routes under /api/projects). */
export const projects = new Hono<AppEnv>()

  .get(
    "/:projectId",
    describeRoute({
      tags: ["Projects"],
      summary: "One project",
      responses: { 200: json(projectSchema), ...errors(401, 404) },
    }),
    async (c) => {
      const { project } = await projectAccess(
        c.env.DB,
        c.get("caller").userId,
        c.req.param("projectId"),
      );
      return c.json(toProject(project));
    },
  )

  /**
   * Any member edits the name and the shared memory (the whole memory object is replaced); owners
   * and admins also choose its assistant: `defaultProfileId` (its sessions) and `previewProfileId`
   * (its onboarding preview, a free-preview model only), each a profile of the org or null.
   */
  .patch(
    "/:projectId",
    describeRoute({
      tags: ["Projects"],
      summary: "Rename a project, replace its memory, or choose its assistant profiles",
      responses: { 200: json(projectSchema), ...errors(400, 401, 403, 404, 410, 413) },
    }),
    jsonBody(updateProjectSchema),
    async (c) => {
      const { userId } = c.get("caller");
      const db = c.env.DB;
      const { project, access } = await projectAccess(db, userId, c.req.param("projectId"));
      const input = c.req.valid("json");
      checkMemorySize(input.memory);
      const profiles = input.defaultProfileId !== undefined || input.previewProfileId !== undefined;
      if (profiles) requireRole(access, "admin");
      if (input.defaultProfileId) {
        await checkAssignable(c.env, project.org_id, input.defaultProfileId, {
          preview: false,
          field: "defaultProfileId",
        });
      }
      if (input.previewProfileId) {
        await checkAssignable(c.env, project.org_id, input.previewProfileId, {
          preview: true,
          field: "previewProfileId",
        });
      }
      const now = Date.now();
      const setsDefault = input.defaultProfileId !== undefined;
      const setsPreview = input.previewProfileId !== undefined;
      const [update] = await db.batch([
        db
          .prepare(
            // Only the fields sent are written: a rename racing a memory edit (or a profile
            // choice) used to write back what it had read of the other field, undoing it.
            `UPDATE projects SET name = COALESCE(?1, name), memory = COALESCE(?2, memory),
               updated_at = ?3,
               default_profile_id = CASE WHEN ?8 THEN ?5 ELSE default_profile_id END,
               preview_profile_id = CASE WHEN ?9 THEN ?6 ELSE preview_profile_id END
             WHERE id = ?4 AND deleted_at IS NULL AND (NOT ?8 OR ${assignable("?5", "?7")})
               AND (NOT ?9 OR ${assignable("?6", "?7")})
             RETURNING *`,
          )
          .bind(
            input.name ?? null,
            input.memory === undefined ? null : JSON.stringify(input.memory),
            now,
            project.id,
            input.defaultProfileId ?? null,
            input.previewProfileId ?? null,
            project.org_id,
            setsDefault ? 1 : 0,
            setsPreview ? 1 : 0,
          ),
        auditStatement(
          db,
          {
            orgId: project.org_id,
            actorId: userId,
            action: "project.updated",
            subjectType: "project",
            subjectId: project.id,
            data: {
              name: input.name !== undefined,
              memory: input.memory !== undefined,
              ...(input.defaultProfileId === undefined
                ? {}
                : { defaultProfileId: input.defaultProfileId }),
              ...(input.previewProfileId === undefined
                ? {}
                : { previewProfileId: input.previewProfileId }),
            },
          },
          { now, afterChange: true },
        ),
      ]);
      const updated = update?.results[0] as ProjectRow | undefined;
      if (update?.meta.changes !== 1 || !updated) {
        // Deleted meanwhile, or the profile named was (the check above saw it live).
        if (profiles) await projectAccess(db, userId, project.id);
        if (profiles) throw notFound("Profile");
        throw new AppError("gone", "This project was deleted");
      }
      // Its chats keep the memory their system prompt shows, and what their turns resolve to:
      // they read both again now.
      await revokeConnections(c.env, { projectId: project.id });
      return c.json(toProject(updated));
    },
  )

  /**
   * Deleting a project is for admins and owners, and goes through the erasure path: the tombstone
   * makes the Worker answer 410 at once; the job wipes its chats, sessions and memory.
   */
  .delete(
    "/:projectId",
    describeRoute({
      tags: ["Projects"],
      summary: "Delete (erase) a project",
      responses: { 204: empty(), ...errors(401, 403, 404) },
    }),
    async (c) => {
      const { userId } = c.get("caller");
      const db = c.env.DB;
      const { project, access } = await projectAccess(db, userId, c.req.param("projectId"));
      requireRole(access, "admin");
      const { results } = await db
        .prepare("SELECT id FROM sessions WHERE project_id = ?")
        .bind(project.id)
        .all<{ id: string }>();
      await fileErasure(c.env, {
        requestedBy: userId,
        orgId: project.org_id,
        subject: { type: "project", id: project.id },
        reason: "project deleted",
        plan: {
          userId: null,
          orgIds: [],
          projectIds: [project.id],
          sessionIds: results.map((row) => row.id),
          deleteOrgIds: [],
          membershipOrgId: null,
        },
      });
      return c.body(null, 204);
    },
  )

  /** Members see their own sessions; admins and owners see everyone's. */
  .get(
    "/:projectId/sessions",
    describeRoute({
      tags: ["Sessions"],
      summary: "A project's sessions",
      responses: { 200: json(sessionPageSchema), ...errors(401, 404) },
    }),
    query(pageQuerySchema),
    async (c) => {
      const { userId } = c.get("caller");
      const { project, access } = await projectAccess(c.env.DB, userId, c.req.param("projectId"));
      const everyone = atLeast(access.role, "admin");
      const page = await idPage<SessionRowOut>(
        c.env.DB,
        {
          select: "SELECT * FROM sessions",
          where: "project_id = ? AND deleted_at IS NULL AND (? OR owner_id = ?)",
          binds: [project.id, everyone ? 1 : 0, userId],
        },
        c.req.valid("query"),
      );
      return c.json(await sessionListPage(c.env, project.org_id, page));
    },
  )

  .post(
    "/:projectId/sessions",
    describeRoute({
      tags: ["Sessions"],
      summary: "Start a session (optionally with a model the org allows)",
      responses: { 201: json(sessionSchema), ...errors(400, 401, 404) },
    }),
    jsonBody(createSessionSchema),
    async (c) => {
      const { userId } = c.get("caller");
      const { project } = await projectAccess(c.env.DB, userId, c.req.param("projectId"));
      const { title, model } = c.req.valid("json");
      if (model !== undefined) await checkChosenModel(c.env, project.org_id, model);
      const now = Date.now();
      const row: SessionRowOut = {
        id: newId("session", now),
        project_id: project.id,
        org_id: project.org_id,
        owner_id: userId,
        title: title ?? null,
        created_at: now,
        updated_at: now,
        model: model ?? null,
      };
      await c.env.DB.prepare(
        `INSERT INTO sessions (id, project_id, org_id, owner_id, title, created_at, updated_at, model)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
        .bind(row.id, row.project_id, row.org_id, userId, row.title, now, now, row.model)
        .run();
      const [created] = await sessionPage(c.env, project.org_id, [row]);
      return c.json(created, 201);
    },
  );
