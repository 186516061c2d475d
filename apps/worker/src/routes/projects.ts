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
import { atLeast, orgAccess, type ProjectRow, projectAccess, requireRole } from "../auth/access.ts";
import { auditStatement } from "../db/audit.ts";
import { cursorBound, iso, toPage } from "../db/pagination.ts";
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
      const { cursor, limit } = c.req.valid("query");
      const { results } = await c.env.DB.prepare(
        `SELECT * FROM projects WHERE org_id = ? AND deleted_at IS NULL AND id < ?
       ORDER BY id DESC LIMIT ?`,
      )
        .bind(access.orgId, cursorBound(cursor), limit + 1)
        .all<ProjectRow>();
      return c.json(toPage(results, limit, (row) => row.id, toProject));
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

  /** Any member edits the name and the shared memory; the whole memory object is replaced. */
  .patch(
    "/:projectId",
    describeRoute({
      tags: ["Projects"],
      summary: "Rename a project or replace its memory",
      responses: { 200: json(projectSchema), ...errors(401, 403, 404, 413) },
    }),
    jsonBody(updateProjectSchema),
    async (c) => {
      const { userId } = c.get("caller");
      const db = c.env.DB;
      const { project } = await projectAccess(db, userId, c.req.param("projectId"));
      const input = c.req.valid("json");
      checkMemorySize(input.memory);
      const updated: ProjectRow = {
        ...project,
        name: input.name ?? project.name,
        memory: input.memory === undefined ? project.memory : JSON.stringify(input.memory),
        updated_at: Date.now(),
      };
      const [update] = await db.batch([
        db
          .prepare(
            "UPDATE projects SET name = ?, memory = ?, updated_at = ? WHERE id = ? AND deleted_at IS NULL",
          )
          .bind(updated.name, updated.memory, updated.updated_at, project.id),
        auditStatement(
          db,
          {
            orgId: project.org_id,
            actorId: userId,
            action: "project.updated",
            subjectType: "project",
            subjectId: project.id,
            data: { name: input.name !== undefined, memory: input.memory !== undefined },
          },
          { now: updated.updated_at, afterChange: true },
        ),
      ]);
      if (update?.meta.changes !== 1) throw new AppError("gone", "This project was deleted");
      // Its chats keep the memory their system prompt shows: they read it again now.
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
      const { cursor, limit } = c.req.valid("query");
      const everyone = atLeast(access.role, "admin");
      const { results } = await c.env.DB.prepare(
        `SELECT * FROM sessions WHERE project_id = ?1 AND deleted_at IS NULL AND id < ?2
       AND (?3 OR owner_id = ?4) ORDER BY id DESC LIMIT ?5`,
      )
        .bind(project.id, cursorBound(cursor), everyone ? 1 : 0, userId, limit + 1)
        .all<SessionRowOut>();
      return c.json(await sessionListPage(c.env, project.org_id, results, limit));
    },
  )

  .post(
    "/:projectId/sessions",
    describeRoute({
      tags: ["Sessions"],
      summary: "Start a session",
      responses: { 201: json(sessionSchema), ...errors(401, 404) },
    }),
    jsonBody(createSessionSchema),
    async (c) => {
      const { userId } = c.get("caller");
      const { project } = await projectAccess(c.env.DB, userId, c.req.param("projectId"));
      const { title } = c.req.valid("json");
      const now = Date.now();
      const row: SessionRowOut = {
        id: newId("session", now),
        project_id: project.id,
        org_id: project.org_id,
        owner_id: userId,
        title: title ?? null,
        created_at: now,
        updated_at: now,
      };
      await c.env.DB.prepare(
        `INSERT INTO sessions (id, project_id, org_id, owner_id, title, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
      )
        .bind(row.id, row.project_id, row.org_id, userId, row.title, now, now)
        .run();
      const [created] = await sessionPage(c.env, project.org_id, [row]);
      return c.json(created, 201);
    },
  );
