import { type ApiKeyScope, AppError } from "@parley/shared";
import type { Context, MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import { matchedRoutes, routePath } from "hono/route";
import { auditStatement } from "../db/audit.ts";
import type { AppEnv, OrgAccess } from "../http/context.ts";
import { notFound, orgAccess } from "./access.ts";
import { constantTimeEqual, fromBase64Url, sha256Base64Url, toBase64Url } from "./encoding.ts";
import { bearerToken, requireAuth } from "./middleware.ts";

/**
 * Server API keys (issue 15, docs/2026-12-02-api-keys.md): org-scoped credentials a tenant's own
 * servers send as `Authorization: Bearer prly_sk_<public id>_<secret>`.
 *
 * A key is a credential only on the routes that declare it with `acceptApiKey(scope)` or
 * `requireApiKey(scope)`; everywhere else (the admin surface: members, roles, projects, billing
 * settings and checkout, erasure, the API keys themselves, connect tickets, the agents) it is
 * refused with 401 before it is even looked up, by `authenticate`, the one middleware app.ts puts
 * in front of every non-public /api route.
 */

/** Every key starts with this; a bearer that does is never read as an access token. */
export const API_KEY_PREFIX = "prly_sk_";

/** `last_used_at` moves at most this often per key: a use is not a write of the key's row. */
export const LAST_USED_EVERY_MS = 60_000;

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";
const PUBLIC_ID_LENGTH = 12;
const SECRET_BYTES = 32;
/** `prly_sk_`, 12 characters of public id, `_`, 43 characters of base64url secret (256 bits). */
const KEY_SHAPE = /^prly_sk_([0-9a-hjkmnp-tv-z]{12})_([A-Za-z0-9_-]{43})$/;

/** The verified key a request carries, as routes see it. */
export interface ApiKeyPrincipal {
  /** The key's id (`key_...`): what lists, `DELETE .../api-keys/:keyId` and the audit log use. */
  keyId: string;
  orgId: string;
  scopes: readonly ApiKeyScope[];
}

export interface IssuedApiKey {
  /** The whole key, shown to its creator once. */
  key: string;
  /** `prly_sk_<public id>`: stored and shown in lists, the part a request is looked up by. */
  prefix: string;
  /** What is stored instead of the secret. */
  hash: string;
}

/**
 * A new key. The secret is 32 random bytes, so the stored hash is a plain SHA-256 of the whole
 * key: a slow hash (PBKDF2, as for passwords) protects guessable secrets, and nothing guesses 256
 * random bits, while it would cost every request the time it costs a sign-in. Nor is it keyed
 * with a server secret (an HMAC under `ERASURE_HASH_KEY`): a leaked table is no more useful
 * without the key, and rotating that key would silently invalidate every tenant's keys.
 */
export async function issueApiKey(): Promise<IssuedApiKey> {
  const random = crypto.getRandomValues(new Uint8Array(PUBLIC_ID_LENGTH));
  const publicId = [...random].map((byte) => ALPHABET[byte % 32]).join("");
  const secret = toBase64Url(crypto.getRandomValues(new Uint8Array(SECRET_BYTES)));
  const prefix = `${API_KEY_PREFIX}${publicId}`;
  const key = `${prefix}_${secret}`;
  return { key, prefix, hash: await sha256Base64Url(key) };
}

interface ApiKeyRow {
  id: string;
  org_id: string;
  secret_hash: string;
  scopes: string;
  last_used_at: number | null;
  expires_at: number | null;
  revoked_at: number | null;
}

const invalidKey = () => new AppError("unauthorized", "Invalid API key");

/**
 * The key row `bearer` proves possession of, or a 401: malformed, unknown, a wrong secret for a
 * real public id (compared in constant time), revoked or expired. One D1 read, nothing written, so
 * a revocation is refused from the next request on. Only a caller who showed the secret learns
 * that the key was revoked or has expired; everyone else reads "Invalid API key".
 */
async function verifyApiKey(db: D1Database, bearer: string, now: number): Promise<ApiKeyRow> {
  const shape = KEY_SHAPE.exec(bearer);
  if (!shape) throw invalidKey();
  const presented = fromBase64Url(await sha256Base64Url(bearer));
  const row = await db
    .prepare(
      `SELECT id, org_id, secret_hash, scopes, last_used_at, expires_at, revoked_at
       FROM api_keys WHERE prefix = ?`,
    )
    .bind(`${API_KEY_PREFIX}${shape[1]}`)
    .first<ApiKeyRow>();
  if (!row || !constantTimeEqual(presented, fromBase64Url(row.secret_hash))) throw invalidKey();
  if (row.revoked_at !== null) throw new AppError("unauthorized", "This API key was revoked");
  if (row.expires_at !== null && row.expires_at <= now) {
    throw new AppError("unauthorized", "This API key has expired");
  }
  return row;
}

/** The routes that take keys, by the handler `acceptApiKey`/`requireApiKey` made for them. */
const keyRoutes = new WeakSet<object>();

/** Whether the route this request is going to declared that it takes a key. */
const routeTakesKeys = (c: Context<AppEnv>) =>
  matchedRoutes(c).some((route) => keyRoutes.has(route.handler));

/**
 * Authenticates every API route that is not public (app.ts): a member's access token as before
 * (`requireAuth`, which sets `caller`), or, on a route that declared it takes keys, an API key
 * (sets `apiKey`; `caller` stays unset). On any other route a key is 401 before any lookup.
 *
 * For a key: verified (401), then counted against its own rate limit (429, keyed by its id, so one
 * tenant's busy server does not slow another's), then the route runs. A route that answered
 * 2xx/3xx is one use: an `api_key.used` audit row (the key, the method, the route's pattern, the
 * status: no secret, no ids from the path) and, when the last one is a minute old, `last_used_at`,
 * in one batch. A refused request writes nothing, as every refusal of the API.
 * (Sub-apps are mounted without their own `onError`, so `matchedRoutes` sees the marked handlers;
 * one that set its own would hide them, and keys would be refused there: it fails closed.)
 */
export const authenticate = createMiddleware<AppEnv>(async (c, next) => {
  const bearer = bearerToken(c.req.header("authorization"));
  if (!bearer?.startsWith(API_KEY_PREFIX)) return requireAuth(c, next);
  if (!routeTakesKeys(c)) {
    throw new AppError(
      "unauthorized",
      "API keys are not accepted here: this route needs a member's access token",
    );
  }
  const db = c.env.DB;
  const row = await verifyApiKey(db, bearer, Date.now());
  const { success } = await c.env.API_KEY_RATE_LIMITER.limit({ key: row.id });
  if (!success) {
    throw new AppError("rate_limited", "Too many requests with this API key; try again shortly");
  }
  c.set("apiKey", {
    keyId: row.id,
    orgId: row.org_id,
    scopes: JSON.parse(row.scopes) as ApiKeyScope[],
  });
  await next();
  if (c.res.status >= 400) return;
  const now = Date.now();
  const statements = [
    auditStatement(
      db,
      {
        orgId: row.org_id,
        actorId: row.id,
        action: "api_key.used",
        subjectType: "api_key",
        subjectId: row.id,
        data: { method: c.req.method, route: routePath(c, -1), status: c.res.status },
      },
      { now },
    ),
  ];
  if (row.last_used_at === null || now - row.last_used_at >= LAST_USED_EVERY_MS) {
    // Conditional too: of concurrent first uses in a minute, one moves it.
    statements.push(
      db
        .prepare(
          "UPDATE api_keys SET last_used_at = ?1 WHERE id = ?2 AND (last_used_at IS NULL OR last_used_at <= ?1 - ?3)",
        )
        .bind(now, row.id, LAST_USED_EVERY_MS),
    );
  }
  await db.batch(statements);
});

/**
 * Checks a key against the route: on a route with an `:orgId` parameter, a key of another org is
 * `not_found` (exactly like a missing org), before its scopes are looked at; then a key without
 * `scope` is `forbidden`.
 */
function checkKey(c: Context<AppEnv>, key: ApiKeyPrincipal, scope: ApiKeyScope): void {
  const orgId = c.req.param("orgId");
  if (orgId !== undefined && orgId !== key.orgId) throw notFound("Organization");
  if (!key.scopes.includes(scope)) throw missingScope(scope);
}

const missingScope = (scope: ApiKeyScope) =>
  new AppError("forbidden", `This API key does not have the ${scope} scope`);

function keyRoute(handler: MiddlewareHandler<AppEnv>): MiddlewareHandler<AppEnv> {
  keyRoutes.add(handler);
  return handler;
}

/**
 * Route middleware: this route takes an API key with `scope` as well as a member's access token
 * (`.get(path, acceptApiKey("usage:read"), ...)`). The handler then finds who is calling with
 * `orgCaller` (or `apiKeyPrincipal`), never with `c.get("caller")` alone, which a key leaves unset.
 */
export function acceptApiKey(scope: ApiKeyScope): MiddlewareHandler<AppEnv> {
  return keyRoute(
    createMiddleware<AppEnv>(async (c, next) => {
      const key = c.get("apiKey");
      if (key) checkKey(c, key, scope);
      await next();
    }),
  );
}

/**
 * Route middleware: this route takes only an API key with `scope` (a tenant's server minting an
 * end-user token, say); a member's access token is 401 there, as a key is on a member's route.
 * The handler reads the key with `requestApiKey(c)` or `apiKeyPrincipal(c, orgId)`.
 */
export function requireApiKey(scope: ApiKeyScope): MiddlewareHandler<AppEnv> {
  return keyRoute(
    createMiddleware<AppEnv>(async (c, next) => {
      const key = c.get("apiKey");
      if (!key) throw new AppError("unauthorized", "This route needs an API key");
      checkKey(c, key, scope);
      await next();
    }),
  );
}

/**
 * The verified API key of this request, whatever org it is of (a route that finds the org from
 * another object, `/api/apps/:appId`, loads that object within `key.orgId`); null when the caller
 * is a member with an access token. Its scope was checked by the route's middleware.
 */
export function requestApiKey(c: Context<AppEnv>): ApiKeyPrincipal | null {
  return c.get("apiKey") ?? null;
}

/**
 * "This request carries an API key of org `orgId` (with `scope`)": the key; `not_found` for a key
 * of another org (exactly like a missing org), then `forbidden` for one without `scope` when one is
 * named; null when the caller is a member with an access token. The route's
 * `acceptApiKey`/`requireApiKey` already checked the scope it declared (and is what lets a key
 * reach the route at all); `scope` here is for a route that finds out late which one it needs.
 */
export function apiKeyPrincipal(
  c: Context<AppEnv>,
  orgId: string,
  scope?: ApiKeyScope,
): ApiKeyPrincipal | null {
  const key = requestApiKey(c);
  if (!key) return null;
  if (key.orgId !== orgId) throw notFound("Organization");
  if (scope !== undefined && !key.scopes.includes(scope)) throw missingScope(scope);
  return key;
}

/** Who is calling on an org, on a route that takes keys. */
export type OrgCaller =
  | { kind: "member"; orgId: string; userId: string; access: OrgAccess }
  | { kind: "apiKey"; orgId: string; key: ApiKeyPrincipal };

/**
 * Who is calling on `orgId`: a member (their role, from D1, `not_found` when they are not one) or
 * an API key of that org (`not_found` for another org's). A key reads what its scope allows as an
 * owner or admin would: it is the org's, not a member's.
 */
export async function orgCaller(c: Context<AppEnv>, orgId: string): Promise<OrgCaller> {
  const key = apiKeyPrincipal(c, orgId);
  if (key) return { kind: "apiKey", orgId, key };
  const { userId } = c.get("caller");
  const access = await orgAccess(c.env.DB, userId, orgId);
  return { kind: "member", orgId: access.orgId, userId, access };
}
