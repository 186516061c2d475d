import { AppError, type NewAppSecret, newId } from "@parley/shared";
import { newAppSecret, sealAppSecret } from "../auth/app-secrets.ts";
import { overwriteSql } from "../erasure/overwrite.ts";
import { type AppRecord, lookupApp } from "./apps.ts";
import { iso } from "./pagination.ts";

/**
 * The statements routes/apps.ts writes an app with (split from it on 2026-12-06): its projects
 * checked, its origin and project lists, its sealed secrets.
 */

const ID_LIST = "(SELECT value FROM json_each(?))";

/** Each id must be a live project of this org; a foreign one reads like a missing one. */
export async function checkProjects(db: D1Database, orgId: string, ids: string[]): Promise<void> {
  const { results } = await db
    .prepare(`SELECT id FROM projects WHERE org_id = ? AND deleted_at IS NULL AND id IN ${ID_LIST}`)
    .bind(orgId, JSON.stringify(ids))
    .all<{ id: string }>();
  const found = new Set(results.map((row) => row.id));
  const index = ids.findIndex((id) => !found.has(id));
  if (index >= 0) {
    throw new AppError(
      "invalid_request",
      `projectIds.${index}: no such project in this organization`,
      { field: `projectIds.${index}` },
    );
  }
}

/** Only while the app is live: a write racing a DELETE adds nothing to a deleted app. */
const LIVE = "WHERE EXISTS (SELECT 1 FROM apps WHERE id = ?1 AND deleted_at IS NULL)";

export function listStatements(
  db: D1Database,
  app: { id: string; orgId: string },
  origins?: string[],
  projectIds?: string[],
) {
  const statements: D1PreparedStatement[] = [];
  if (origins) {
    statements.push(db.prepare("DELETE FROM app_origins WHERE app_id = ?").bind(app.id));
    for (const origin of origins) {
      statements.push(
        db
          .prepare(`INSERT INTO app_origins (app_id, org_id, origin) SELECT ?1, ?2, ?3 ${LIVE}`)
          .bind(app.id, app.orgId, origin),
      );
    }
  }
  if (projectIds) {
    statements.push(db.prepare("DELETE FROM app_projects WHERE app_id = ?").bind(app.id));
    for (const projectId of projectIds) {
      statements.push(
        db
          .prepare(
            `INSERT INTO app_projects (app_id, org_id, project_id) SELECT ?1, ?2, ?3 ${LIVE}`,
          )
          .bind(app.id, app.orgId, projectId),
      );
    }
  }
  return statements;
}

/** A new secret for the app: the statement that stores it sealed, and what the caller is shown. */
export async function newSecret(
  env: Env,
  app: { id: string; orgId: string },
  now: number,
): Promise<{ statement: D1PreparedStatement; shown: NewAppSecret }> {
  const kid = newId("appSecret", now);
  const secret = newAppSecret();
  const sealed = await sealAppSecret(env, app.id, kid, secret);
  const statement = env.DB.prepare(
    `INSERT INTO app_secrets (kid, app_id, org_id, sealed, created_at, expires_at)
     SELECT ?1, ?2, ?3, ?4, ?5, NULL WHERE EXISTS (SELECT 1 FROM apps WHERE id = ?2 AND deleted_at IS NULL)`,
  ).bind(kid, app.id, app.orgId, sealed, now);
  return { statement, shown: { kid, secret, createdAt: iso(now) } };
}

/** Removes the app's secrets the condition picks, zeroing the sealed bytes first. */
export const dropSecrets = (db: D1Database, appId: string, condition = "1") => [
  db.prepare(overwriteSql("app_secrets", ["sealed"], `app_id = ? AND (${condition})`)).bind(appId),
  db.prepare(`DELETE FROM app_secrets WHERE app_id = ? AND (${condition})`).bind(appId),
];

export async function reload(db: D1Database, appId: string): Promise<AppRecord> {
  const app = await lookupApp(db, appId);
  if (!app) throw new AppError("gone", "This app was deleted");
  return app;
}
