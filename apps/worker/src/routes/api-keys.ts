import {
  API_KEY_SCOPES,
  type ApiKey,
  type ApiKeyScope,
  AppError,
  apiKeyPageSchema,
  type CreatedApiKey,
  createApiKeySchema,
  createdApiKeySchema,
  newId,
  pageQuerySchema,
} from "@parley/shared";
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { notFound, orgAccess, requireRole } from "../auth/access.ts";
import { issueApiKey } from "../auth/api-keys.ts";
import { auditStatement } from "../db/audit.ts";
import { idPage, iso } from "../db/pagination.ts";
import type { AppEnv } from "../http/context.ts";
import { empty, errors, json } from "../http/openapi.ts";
import { jsonBody, query } from "../http/validate.ts";

/**
 * Keys an org may hold at once (not revoked, not expired). A tenant needs one per server or
 * environment; the bound keeps a compromised admin session from minting thousands to hide among.
 */
export const MAX_ACTIVE_API_KEYS = 50;

interface ApiKeyRow {
  id: string;
  name: string;
  prefix: string;
  scopes: string;
  created_by: string | null;
  created_at: number;
  last_used_at: number | null;
  expires_at: number | null;
  revoked_at: number | null;
}

/** Never the secret nor its hash: neither column is selected by this file's reads. */
const COLUMNS =
  "id, name, prefix, scopes, created_by, created_at, last_used_at, expires_at, revoked_at";

const toApiKey = (row: ApiKeyRow): ApiKey => ({
  id: row.id,
  name: row.name,
  prefix: row.prefix,
  scopes: JSON.parse(row.scopes) as ApiKeyScope[],
  createdBy: row.created_by,
  createdAt: iso(row.created_at),
  lastUsedAt: row.last_used_at === null ? null : iso(row.last_used_at),
  expiresAt: row.expires_at === null ? null : iso(row.expires_at),
  revokedAt: row.revoked_at === null ? null : iso(row.revoked_at),
});

/**
 * An org's server API keys (routes under /api/orgs): owners and admins list, create and revoke
 * them; members get 403. Managing keys takes a member's access token: a key cannot list, mint or
 * revoke keys (app.ts refuses it with 401 before these run).
 */
export const orgApiKeys = new Hono<AppEnv>()

  .get(
    "/:orgId/api-keys",
    describeRoute({
      tags: ["API keys"],
      summary: "The org's API keys",
      responses: { 200: json(apiKeyPageSchema), ...errors(401, 403, 404) },
    }),
    query(pageQuerySchema),
    async (c) => {
      const access = await orgAccess(c.env.DB, c.get("caller").userId, c.req.param("orgId"));
      requireRole(access, "admin");
      const page = await idPage(
        c.env.DB,
        { select: `SELECT ${COLUMNS} FROM api_keys`, where: "org_id = ?", binds: [access.orgId] },
        c.req.valid("query"),
        toApiKey,
      );
      return c.json(page);
    },
  )

  /** A new key, with its secret in this answer only. */
  .post(
    "/:orgId/api-keys",
    describeRoute({
      tags: ["API keys"],
      summary: "Create an API key (its secret shown once)",
      responses: { 201: json(createdApiKeySchema), ...errors(401, 403, 404, 409) },
    }),
    jsonBody(createApiKeySchema),
    async (c) => {
      const { userId } = c.get("caller");
      const db = c.env.DB;
      const access = await orgAccess(db, userId, c.req.param("orgId"));
      requireRole(access, "admin");
      const input = c.req.valid("json");
      const now = Date.now();
      if (input.expiresAt != null && input.expiresAt <= now) {
        throw new AppError("invalid_request", "expiresAt: must be in the future", {
          field: "expiresAt",
        });
      }
      // In the constant's order, whatever order they were asked in.
      const scopes = API_KEY_SCOPES.filter((scope) => input.scopes.includes(scope));
      const issued = await issueApiKey();
      const row: ApiKeyRow = {
        id: newId("apiKey", now),
        name: input.name,
        prefix: issued.prefix,
        scopes: JSON.stringify(scopes),
        created_by: userId,
        created_at: now,
        last_used_at: null,
        expires_at: input.expiresAt ?? null,
        revoked_at: null,
      };
      const [insert] = await db.batch([
        // The bound and the insert in one statement: two creations at once cannot both pass it.
        db
          .prepare(
            `INSERT INTO api_keys (id, org_id, name, prefix, secret_hash, scopes, created_by, created_at, expires_at)
           SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9
           WHERE (SELECT COUNT(*) FROM api_keys WHERE org_id = ?2 AND revoked_at IS NULL
                    AND (expires_at IS NULL OR expires_at > ?8)) < ?10`,
          )
          .bind(
            row.id,
            access.orgId,
            row.name,
            row.prefix,
            issued.hash,
            row.scopes,
            userId,
            now,
            row.expires_at,
            MAX_ACTIVE_API_KEYS,
          ),
        // The key's name is typed text: the audit row has its scopes and whether it expires.
        auditStatement(
          db,
          {
            orgId: access.orgId,
            actorId: userId,
            action: "api_key.created",
            subjectType: "api_key",
            subjectId: row.id,
            data: { scopes: scopes.join(" "), expires: row.expires_at !== null },
          },
          { now, afterChange: true },
        ),
      ]);
      if (insert?.meta.changes !== 1) {
        throw new AppError(
          "conflict",
          `An organization has at most ${MAX_ACTIVE_API_KEYS} active API keys: revoke one first`,
        );
      }
      return c.json({ ...toApiKey(row), secret: issued.key } satisfies CreatedApiKey, 201);
    },
  )

  /**
   * Revokes a key: refused from the next request on (every request reads the key's row). Again
   * is a no-op (204, no second audit row); another org's key is 404 like a missing one.
   */
  .delete(
    "/:orgId/api-keys/:keyId",
    describeRoute({
      tags: ["API keys"],
      summary: "Revoke an API key",
      responses: { 204: empty(), ...errors(401, 403, 404) },
    }),
    async (c) => {
      const { userId } = c.get("caller");
      const db = c.env.DB;
      const access = await orgAccess(db, userId, c.req.param("orgId"));
      requireRole(access, "admin");
      const key = await db
        .prepare("SELECT id FROM api_keys WHERE id = ? AND org_id = ?")
        .bind(c.req.param("keyId"), access.orgId)
        .first<{ id: string }>();
      if (!key) throw notFound("API key");
      const now = Date.now();
      await db.batch([
        db
          .prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL")
          .bind(now, key.id),
        auditStatement(
          db,
          {
            orgId: access.orgId,
            actorId: userId,
            action: "api_key.revoked",
            subjectType: "api_key",
            subjectId: key.id,
          },
          { now, afterChange: true },
        ),
      ]);
      return c.body(null, 204);
    },
  );
