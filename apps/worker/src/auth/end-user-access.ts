import type { EndUserLimits } from "@parley/billing";
import { AppError } from "@parley/shared";
import { type BatchedRead, firstRow, runRead } from "../db/batched-read.ts";
import type { ProjectRow, SessionRow } from "./access.ts";

/**
 * What an end user may reach (docs/2026-12-02-apps-and-end-users.md): their own sessions, opened
 * through their own app, in a live project the app still lists, of a live app. Anything else,
 * another end user's session, a member's, another app's, is `not_found`, like a missing one.
 */

/** An end user as the Worker verified them (token checked, end user and app live). */
export interface EndUserPrincipal {
  endUserId: string;
  appId: string;
  orgId: string;
}

/** An app's per-end-user limits, as the ledger takes them. */
export const endUserLimitsOf = (row: {
  end_user_daily_limit_micros: number | null;
  end_user_monthly_limit_micros: number | null;
  end_user_weekly_limit_micros: number | null;
}): EndUserLimits => ({
  dailyMicros: row.end_user_daily_limit_micros,
  weeklyMicros: row.end_user_weekly_limit_micros,
  monthlyMicros: row.end_user_monthly_limit_micros,
});

export interface EndUserSessionAccess {
  session: SessionRow & { app_id: string };
  project: ProjectRow;
  limits: EndUserLimits;
  showCost: boolean;
}

const notFound = () => new AppError("not_found", "Session not found");

/** The end user's session with its project and the app's limits, in one query. */
export async function endUserSessionAccess(
  db: D1Database,
  who: EndUserPrincipal,
  sessionId: string,
): Promise<EndUserSessionAccess> {
  return runRead(db, endUserSessionAccessRead(db, who, sessionId));
}

type EndUserSessionRow = SessionRow & {
  app_id: string;
  project_name: string;
  project_memory: string;
  project_created_by: string | null;
  project_created_at: number;
  project_updated_at: number;
  end_user_daily_limit_micros: number | null;
  end_user_monthly_limit_micros: number | null;
  end_user_weekly_limit_micros: number | null;
  show_cost: number;
};

/**
 * `endUserSessionAccess` as a read that can share a `DB.batch` (db/batched-read.ts). An `orgId` of
 * null stands for the end user's own org, read in the same statement: the connect path checks
 * their standing and their session in one round trip, before it knows the org.
 */
export function endUserSessionAccessRead(
  db: D1Database,
  who: Omit<EndUserPrincipal, "orgId"> & { orgId: string | null },
  sessionId: string,
): BatchedRead<EndUserSessionAccess> {
  const statement = db
    .prepare(
      `SELECT s.*, p.name AS project_name, p.memory AS project_memory,
         p.created_by AS project_created_by, p.created_at AS project_created_at,
         p.updated_at AS project_updated_at,
         a.end_user_daily_limit_micros, a.end_user_weekly_limit_micros, a.end_user_monthly_limit_micros, a.show_cost
       FROM sessions s
       JOIN apps a ON a.id = s.app_id AND a.deleted_at IS NULL
       JOIN app_projects ap ON ap.app_id = a.id AND ap.project_id = s.project_id
       JOIN projects p ON p.id = s.project_id AND p.deleted_at IS NULL
       WHERE s.id = ?1 AND s.owner_id = ?2 AND s.app_id = ?3
         AND s.org_id = COALESCE(?4, (SELECT e.org_id FROM end_users e WHERE e.id = ?2))
         AND s.deleted_at IS NULL
         AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.subject_id IN (s.id, ?2))`,
    )
    .bind(sessionId, who.endUserId, who.appId, who.orgId);
  return {
    statements: [statement],
    read: ([answer]) => endUserSessionAccessOf(firstRow<EndUserSessionRow>(answer)),
  };
}

function endUserSessionAccessOf(row: EndUserSessionRow | null): EndUserSessionAccess {
  if (!row) throw notFound();
  const project: ProjectRow = {
    id: row.project_id,
    org_id: row.org_id,
    name: row.project_name,
    memory: row.project_memory,
    created_by: row.project_created_by,
    created_at: row.project_created_at,
    updated_at: row.project_updated_at,
    deleted_at: null,
  };
  const session = {
    id: row.id,
    project_id: row.project_id,
    org_id: row.org_id,
    owner_id: row.owner_id,
    app_id: row.app_id,
    title: row.title,
    created_at: row.created_at,
    updated_at: row.updated_at,
    deleted_at: row.deleted_at,
  };
  return { session, project, limits: endUserLimitsOf(row), showCost: row.show_cost === 1 };
}
