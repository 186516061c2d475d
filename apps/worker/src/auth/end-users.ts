import {
  AppError,
  type EmbedToken,
  externalIdProblem,
  newId,
  tenantExternalIdProblem,
} from "@parley/shared";
import type { AppRecord } from "../db/apps.ts";
import { type BatchedRead, firstRow, runRead } from "../db/batched-read.ts";
import { config } from "../env.ts";
import {
  END_USER_TOKEN_TTL_SECONDS,
  signEndUserAccessToken,
  type VerifiedEndUserToken,
  verifyEndUserAccessToken,
} from "./tokens.ts";

/**
 * End users: a tenant's own users as principals of its org (never Parley accounts), one per (app,
 * the tenant's id for them). See docs/2026-12-02-apps-and-end-users.md.
 */

export interface EndUserClaims {
  /**
   * The tenant's own id for the user: an external id a tenant may give (`tenantExternalIdProblem`:
   * none of Parley's reserved prefixes) or a 400. Parley's own (`parley: true`) is the preview's.
   */
  sub: unknown;
  /** The id is Parley's own (the preview's, `previewExternalId`), never a tenant's. */
  parley?: boolean;
  /** A display name; null or absent keeps the one stored. */
  name?: string | null;
  /** When the tenant's proof ends (ms): the token issued ends no later. Absent: the full 15 min. */
  notAfter?: number;
}

/**
 * Maps `sub` to the app's end user (created on first sight; `last_seen_at` and the name kept up to
 * date) and issues an end-user access token for them, signed by the platform's key with the end
 * user's own `typ` and audience: no member route accepts it. It lives `END_USER_TOKEN_TTL_SECONDS`
 * or until `notAfter`, whichever is sooner. The caller has already proven the right to speak for
 * `sub` (a tenant token the app verified: POST /api/embed/token; or, later, an org API key with the
 * `end_users:token` scope); `app` must be live and the caller's: this function checks neither.
 * The upsert is conditional on the app still being live, so a DELETE racing an exchange wins.
 */
export async function mintEndUserToken(
  env: Env,
  app: AppRecord,
  claims: EndUserClaims,
): Promise<EmbedToken> {
  const { sub } = claims;
  // The one rule for external ids (packages/shared external-ids.ts): what is stored here, the
  // erasure can name (docs/2026-12-06-end-user-ids.md). A tenant's id may not take Parley's
  // reserved namespace (the preview's end users): the probe of 2026-12-06, finding 3.
  const problem = claims.parley === true ? externalIdProblem(sub) : tenantExternalIdProblem(sub);
  if (problem !== null || typeof sub !== "string") {
    throw new AppError("invalid_request", `sub: ${problem}`, { field: "sub" });
  }
  const now = Date.now();
  const remaining =
    claims.notAfter === undefined
      ? END_USER_TOKEN_TTL_SECONDS
      : Math.floor((claims.notAfter - now) / 1000);
  const lifetime = Math.min(END_USER_TOKEN_TTL_SECONDS, remaining);
  if (lifetime < 1) throw new AppError("unauthorized", "Invalid end-user token");
  const row = await env.DB.prepare(
    `INSERT INTO end_users (id, org_id, app_id, external_id, name, created_at, last_seen_at)
     SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?6
     WHERE EXISTS (SELECT 1 FROM apps WHERE id = ?3 AND org_id = ?2 AND deleted_at IS NULL)
     ON CONFLICT (app_id, external_id) DO UPDATE SET
       last_seen_at = excluded.last_seen_at, name = COALESCE(excluded.name, end_users.name)
     RETURNING id`,
  )
    .bind(newId("endUser", now), app.org_id, app.id, sub, claims.name ?? null, now)
    .first<{ id: string }>();
  if (!row) throw new AppError("unauthorized", "Invalid end-user token");
  const accessToken = await signEndUserAccessToken(
    config(env),
    { endUserId: row.id, appId: app.id, orgId: app.org_id },
    lifetime,
  );
  return { accessToken, expiresIn: lifetime, endUser: { id: row.id, externalId: sub } };
}

/**
 * Refuses an end-user access token whose end user or app is gone: a deleted app's tokens stop at
 * once, as do an erased org's. For the surfaces that will take end-user tokens (sessions, the
 * agent); like `requireLiveUser`, one D1 read.
 */
export async function requireLiveEndUser(
  db: D1Database,
  token: Pick<VerifiedEndUserToken, "endUserId" | "appId" | "orgId">,
): Promise<void> {
  await runRead(db, liveEndUserRead(db, token));
}

/** `requireLiveEndUser` as a read that can share a `DB.batch` (db/batched-read.ts). */
export function liveEndUserRead(
  db: D1Database,
  token: Pick<VerifiedEndUserToken, "endUserId" | "appId" | "orgId">,
): BatchedRead<void> {
  return {
    statements: [
      db
        .prepare(
          `SELECT 1 AS ok FROM end_users e JOIN apps a ON a.id = e.app_id AND a.deleted_at IS NULL
       WHERE e.id = ?1 AND e.app_id = ?2 AND e.org_id = ?3
         AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.subject_id IN (?1, ?3))`,
        )
        .bind(token.endUserId, token.appId, token.orgId),
    ],
    read([answer]) {
      if (!firstRow(answer)) throw new AppError("unauthorized", "Invalid or expired access token");
    },
  };
}

/** Verifies an end-user access token and checks that its end user and app still exist. */
export async function verifyEndUser(env: Env, token: string): Promise<VerifiedEndUserToken> {
  const verified = await verifyEndUserAccessToken(config(env), token);
  await requireLiveEndUser(env.DB, verified);
  return verified;
}
