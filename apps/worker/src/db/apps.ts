import type { App, AppSecretInfo, TokenAlgorithm, TokenVerification } from "@parley/shared";
import { iso } from "./pagination.ts";

/** An `apps` row (migrations/0008_apps.sql). */
export interface AppRow {
  id: string;
  org_id: string;
  name: string;
  token_type: "secret" | "public_key" | "jwks";
  token_alg: "HS256" | TokenAlgorithm;
  token_jwk: string | null;
  token_jwks_url: string | null;
  token_issuer: string;
  token_audience: string;
  max_token_lifetime_seconds: number;
  end_user_daily_limit_micros: number | null;
  end_user_monthly_limit_micros: number | null;
  end_user_weekly_limit_micros: number | null;
  show_cost: number;
  /** The assistant profile of its end users' sessions (2026-12-06). */
  profile_id: string | null;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
}

export interface AppSecretRow {
  kid: string;
  created_at: number;
  expires_at: number | null;
}

/**
 * An app with what the exchange and the API need of it: its origins and projects in the order
 * they were given, and its live secrets (the current one first), read in one query.
 */
export interface AppRecord extends AppRow {
  origins: string[];
  projectIds: string[];
  secrets: AppSecretRow[];
}

/**
 * The columns of an app record for `SELECT ${APP_COLUMNS} FROM apps a`; `?1` must be bound to now
 * (ms): secrets expired by then are not live.
 */
export const APP_COLUMNS = `a.*,
  (SELECT json_group_array(origin) FROM
     (SELECT origin FROM app_origins WHERE app_id = a.id ORDER BY rowid)) AS origins_json,
  (SELECT json_group_array(project_id) FROM
     (SELECT project_id FROM app_projects WHERE app_id = a.id ORDER BY rowid)) AS projects_json,
  (SELECT json_group_array(json_object('kid', kid, 'created_at', created_at, 'expires_at', expires_at))
     FROM (SELECT kid, created_at, expires_at FROM app_secrets
           WHERE app_id = a.id AND (expires_at IS NULL OR expires_at > ?1)
           ORDER BY expires_at IS NULL DESC, created_at DESC)) AS secrets_json`;

export type AppQueryRow = AppRow & {
  origins_json: string;
  projects_json: string;
  secrets_json: string;
};

export function toAppRecord(row: AppQueryRow): AppRecord {
  const { origins_json, projects_json, secrets_json, ...app } = row;
  return {
    ...app,
    origins: JSON.parse(origins_json) as string[],
    projectIds: JSON.parse(projects_json) as string[],
    secrets: JSON.parse(secrets_json) as AppSecretRow[],
  };
}

/**
 * The live (not deleted) app with this id, for the token exchange and the server API: no caller
 * is checked here, the caller proves itself with a token the app verifies (or an org API key).
 */
export async function lookupApp(
  db: D1Database,
  appId: string,
  now = Date.now(),
): Promise<AppRecord | null> {
  const row = await db
    .prepare(`SELECT ${APP_COLUMNS} FROM apps a WHERE a.id = ?2 AND a.deleted_at IS NULL`)
    .bind(now, appId)
    .first<AppQueryRow>();
  return row ? toAppRecord(row) : null;
}

export const toSecretInfo = (row: AppSecretRow): AppSecretInfo => ({
  kid: row.kid,
  createdAt: iso(row.created_at),
  expiresAt: row.expires_at === null ? null : iso(row.expires_at),
});

function verificationOf(app: AppRecord): TokenVerification {
  const rules = {
    issuer: app.token_issuer,
    audience: app.token_audience,
    maxTokenLifetimeSeconds: app.max_token_lifetime_seconds,
  };
  if (app.token_type === "secret") {
    return { type: "secret", alg: "HS256", secrets: app.secrets.map(toSecretInfo), ...rules };
  }
  const alg = app.token_alg as TokenAlgorithm;
  if (app.token_type === "public_key") {
    const jwk = JSON.parse(app.token_jwk ?? "{}") as Record<string, string>;
    return { type: "public_key", alg, jwk, ...rules };
  }
  return { type: "jwks", alg, url: app.token_jwks_url ?? "", ...rules };
}

/** The app as the API shows it: never a secret, only the secrets' kids and expiry. */
export const toApp = (app: AppRecord): App => ({
  id: app.id,
  orgId: app.org_id,
  name: app.name,
  allowedOrigins: app.origins,
  projectIds: app.projectIds,
  verification: verificationOf(app),
  endUserDailyLimitMicros: app.end_user_daily_limit_micros,
  endUserWeeklyLimitMicros: app.end_user_weekly_limit_micros,
  endUserMonthlyLimitMicros: app.end_user_monthly_limit_micros,
  showCost: app.show_cost === 1,
  profileId: app.profile_id,
  createdAt: iso(app.created_at),
  updatedAt: iso(app.updated_at),
});

/** Whether some live app lists `origin`: what a preflight, which names no app, is answered on. */
export async function anyAppListsOrigin(db: D1Database, origin: string): Promise<boolean> {
  const row = await db
    .prepare(
      `SELECT 1 AS ok FROM app_origins o JOIN apps a ON a.id = o.app_id AND a.deleted_at IS NULL
       WHERE o.origin = ? LIMIT 1`,
    )
    .bind(origin)
    .first<{ ok: number }>();
  return row !== null;
}

/** The answer to an end-user preflight from a listed origin (methods and headers the embed uses). */
export function preflightResponse(origin: string): Response {
  return new Response(null, {
    status: 204,
    headers: {
      "access-control-allow-origin": origin,
      "access-control-allow-methods": "GET, POST, PATCH",
      "access-control-allow-headers": "authorization, content-type",
      "access-control-max-age": "600",
      vary: "Origin",
    },
  });
}
