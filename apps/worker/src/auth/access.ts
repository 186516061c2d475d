import { AppError, type Role } from "@parley/shared";
import { APP_COLUMNS, type AppQueryRow, type AppRecord, toAppRecord } from "../db/apps.ts";
import { type BatchedRead, firstRow, runRead } from "../db/batched-read.ts";
import type { OrgAccess } from "../http/context.ts";

/**
 * Authorization in one place. Every route that touches an org's data goes through one of these
 * loaders, which answer `not_found` for a missing object and for another org's object alike (the
 * caller must not learn that it exists), `gone` for an erased one, and `forbidden` when the caller is
 * a member whose role is too low.
 */

const rank: Record<Role, number> = { member: 0, admin: 1, owner: 2 };

export function atLeast(role: Role, needed: Role): boolean {
  return rank[role] >= rank[needed];
}

export function requireRole(access: OrgAccess, needed: Role): void {
  if (!atLeast(access.role, needed)) {
    throw new AppError("forbidden", `This needs the ${needed} role or higher`);
  }
}

export const notFound = (what: string) => new AppError("not_found", `${what} not found`);

/**
 * Erased objects leave a tombstone (an id, nothing else): the Worker answers 410 for them and never
 * addresses their Durable Object again, so nothing recreates it.
 */
async function tombstoned(db: D1Database, userId: string, id: string): Promise<boolean> {
  // Only members of the org it belonged to learn that it was erased; anyone else gets 404.
  const row = await db
    .prepare(
      "SELECT 1 AS t FROM tombstones t JOIN memberships m ON m.org_id = t.org_id AND m.user_id = ? WHERE t.subject_id = ?",
    )
    .bind(userId, id)
    .first<{ t: number }>();
  return row !== null;
}

export async function orgAccess(db: D1Database, userId: string, orgId: string): Promise<OrgAccess> {
  const row = await db
    .prepare("SELECT role FROM memberships WHERE org_id = ? AND user_id = ?")
    .bind(orgId, userId)
    .first<{ role: Role }>();
  if (!row) throw notFound("Organization");
  return { orgId, role: row.role };
}

export interface ProjectRow {
  id: string;
  org_id: string;
  name: string;
  memory: string;
  created_by: string | null;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
  /**
   * Its assistant profiles (2026-12-06): read with `p.*`; loaders that pick the project's
   * columns one by one for a chat leave them out (the resolver reads them per turn).
   */
  default_profile_id?: string | null;
  preview_profile_id?: string | null;
}

/** The project and the caller's role in its org, in one query. */
export async function projectAccess(
  db: D1Database,
  userId: string,
  projectId: string,
): Promise<{ project: ProjectRow; access: OrgAccess }> {
  return runRead(db, projectAccessRead(db, userId, projectId));
}

/** `projectAccess` as a read that can share a `DB.batch` with others (db/batched-read.ts). */
export function projectAccessRead(
  db: D1Database,
  userId: string,
  projectId: string,
): BatchedRead<{ project: ProjectRow; access: OrgAccess }> {
  const statement = db
    .prepare(
      `SELECT p.*, m.role AS role FROM projects p
       JOIN memberships m ON m.org_id = p.org_id AND m.user_id = ?
       WHERE p.id = ?`,
    )
    .bind(userId, projectId);
  return {
    statements: [statement],
    async read([answer]) {
      const row = firstRow<ProjectRow & { role: Role }>(answer);
      if (!row) {
        if (await tombstoned(db, userId, projectId))
          throw new AppError("gone", "This project was erased");
        throw notFound("Project");
      }
      if (row.deleted_at !== null) throw new AppError("gone", "This project was deleted");
      const { role, ...project } = row;
      return { project, access: { orgId: project.org_id, role } };
    },
  };
}

export interface SessionRow {
  id: string;
  project_id: string;
  org_id: string;
  owner_id: string;
  title: string | null;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
  /** The model its owner picked (2026-12-06); null: the profile's. */
  model?: string | null;
}

/**
 * The session, if the caller may see it: its owner, or an admin or owner of its org. A member who
 * does not own it gets `not_found`, as for a foreign object: sessions are private to their owner.
 */
export async function sessionAccess(
  db: D1Database,
  userId: string,
  sessionId: string,
): Promise<SessionWithAccess> {
  return runRead(db, sessionAccessRead(db, userId, sessionId));
}

export interface SessionWithAccess {
  session: SessionRow;
  access: OrgAccess;
  project: ProjectRow;
}

type SessionAccessRow = SessionRow & {
  role: Role;
  project_name: string;
  project_memory: string;
  project_created_by: string | null;
  project_created_at: number;
  project_updated_at: number;
  project_deleted_at: number | null;
};

/** `sessionAccess` as a read that can share a `DB.batch` with others (db/batched-read.ts). */
export function sessionAccessRead(
  db: D1Database,
  userId: string,
  sessionId: string,
): BatchedRead<SessionWithAccess> {
  // One query for the session, the caller's role and the project (an agent turn needs all three).
  const statement = db
    .prepare(
      `SELECT s.*, m.role AS role, p.name AS project_name, p.memory AS project_memory,
         p.created_by AS project_created_by, p.created_at AS project_created_at,
         p.updated_at AS project_updated_at, p.deleted_at AS project_deleted_at
       FROM sessions s
       JOIN memberships m ON m.org_id = s.org_id AND m.user_id = ?
       JOIN projects p ON p.id = s.project_id
       WHERE s.id = ?`,
    )
    .bind(userId, sessionId);
  return {
    statements: [statement],
    read: ([answer]) => sessionAccessOf(db, userId, sessionId, firstRow<SessionAccessRow>(answer)),
  };
}

async function sessionAccessOf(
  db: D1Database,
  userId: string,
  sessionId: string,
  row: SessionAccessRow | null,
): Promise<SessionWithAccess> {
  if (!row) {
    if (await tombstoned(db, userId, sessionId))
      throw new AppError("gone", "This session was erased");
    throw notFound("Session");
  }
  const {
    role,
    project_name,
    project_memory,
    project_created_by,
    project_created_at,
    project_updated_at,
    project_deleted_at,
    ...session
  } = row;
  const access = { orgId: session.org_id, role };
  if (session.owner_id !== userId && !atLeast(role, "admin")) throw notFound("Session");
  if (session.deleted_at !== null || project_deleted_at !== null) {
    throw new AppError("gone", "This session was deleted");
  }
  const project: ProjectRow = {
    id: session.project_id,
    org_id: session.org_id,
    name: project_name,
    memory: project_memory,
    created_by: project_created_by,
    created_at: project_created_at,
    updated_at: project_updated_at,
    deleted_at: project_deleted_at,
  };
  return { session, access, project };
}

/**
 * An app of the caller's org, for its owners and admins only (an app holds how the org's end users
 * are trusted): a member gets `forbidden`, anyone else `not_found`, a deleted app `gone`.
 */
export async function appAccess(
  db: D1Database,
  userId: string,
  appId: string,
): Promise<{ app: AppRecord; access: OrgAccess }> {
  const row = await db
    .prepare(
      `SELECT ${APP_COLUMNS}, m.role AS role FROM apps a
       JOIN memberships m ON m.org_id = a.org_id AND m.user_id = ?2
       WHERE a.id = ?3`,
    )
    .bind(Date.now(), userId, appId)
    .first<AppQueryRow & { role: Role }>();
  if (!row) throw notFound("App");
  const { role, ...app } = row;
  const access = { orgId: app.org_id, role };
  requireRole(access, "admin");
  if (app.deleted_at !== null) throw new AppError("gone", "This app was deleted");
  return { app: toAppRecord(app), access };
}
