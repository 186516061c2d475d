import { AppError, type TokenAlgorithm, textProblem } from "@parley/shared";
import {
  type CryptoKey,
  decodeProtectedHeader,
  importJWK,
  type JWK,
  type JWTPayload,
  jwtVerify,
} from "jose";
import type { AppRecord } from "../db/apps.ts";
import { openAppSecret } from "./app-secrets.ts";
import { REFETCH_COOLDOWN_MS, tenantJwks } from "./tenant-jwks.ts";

/**
 * Verifies a token a tenant's backend signed for one of its users, as the app's configuration says
 * (docs/2026-12-02-apps-and-end-users.md). The algorithm is the app's, never the token's: HS256 for
 * a secret, the configured one for a public key or JWKS, so `none`, HS256 against a public key or
 * any other `alg` is refused before a key is looked at. `iss` and `aud` must be the app's, `exp`,
 * `iat` and `sub` must be there, `exp - iat` at most the app's maximum lifetime, `iat` and `nbf` no
 * later than CLOCK_SKEW_SECONDS ahead of our clock, and the token must not have expired.
 *
 * Every refusal is the same `unauthorized` with one message: the caller does not learn which check
 * failed (the log does not either: tokens and reasons stay out of it; the cause is on the error).
 */

/** How far ahead of ours a tenant's clock may be (`iat`, `nbf`). */
export const CLOCK_SKEW_SECONDS = 30;
/** Keys tried for one token at most (secrets in their overlap, JWKS keys without a `kid`). */
const MAX_CANDIDATES = 5;

export const refusedToken = (cause?: unknown) =>
  new AppError("unauthorized", "Invalid end-user token", cause ? { cause } : undefined);

export interface TenantClaims {
  /**
   * The tenant's own id for the user, as the token carries it: not yet checked against the
   * external-id rule (`externalIdProblem`), which the exchange applies after verification so that
   * a verified token with an unusable `sub` is a 400 naming the field, as everywhere else.
   */
  sub: unknown;
  /** The optional `name` claim, when it is one line of visible text (else null). */
  name: string | null;
  /** The token's `exp`, in ms: the end-user token Parley issues ends no later. */
  expiresAt: number;
}

type Key = CryptoKey | Uint8Array;

const kidOf = (token: string): string | undefined => {
  const { kid } = decodeProtectedHeader(token);
  return typeof kid === "string" ? kid : undefined;
};

async function secretKeys(env: Env, app: AppRecord, kid: string | undefined): Promise<Key[]> {
  const now = Date.now();
  const live = app.secrets.filter(
    (s) => (s.expires_at === null || s.expires_at > now) && (kid === undefined || s.kid === kid),
  );
  if (live.length === 0) return [];
  const { results } = await env.DB.prepare(
    `SELECT kid, sealed FROM app_secrets WHERE app_id = ? AND kid IN (SELECT value FROM json_each(?))
     AND (expires_at IS NULL OR expires_at > ?)`,
  )
    .bind(app.id, JSON.stringify(live.map((s) => s.kid)), now)
    .all<{ kid: string; sealed: string }>();
  const keys: Key[] = [];
  for (const row of results) {
    const key = await openAppSecret(env, app.id, row.kid, row.sealed);
    if (key) keys.push(key);
  }
  return keys;
}

const KEY_SHAPE: Record<TokenAlgorithm, { kty: string; crv?: string }> = {
  RS256: { kty: "RSA" },
  ES256: { kty: "EC", crv: "P-256" },
  EdDSA: { kty: "OKP", crv: "Ed25519" },
};

/** The keys of a set that may verify `alg` under `kid`: a public key of the right type only. */
function usable(keys: JWK[], alg: TokenAlgorithm, kid: string | undefined): JWK[] {
  const shape = KEY_SHAPE[alg];
  return keys.filter(
    (k) =>
      k.kty === shape.kty &&
      (shape.crv === undefined || k.crv === shape.crv) &&
      (k.alg === undefined || k.alg === alg) &&
      (k.use === undefined || k.use === "sig") &&
      k.d === undefined &&
      (kid === undefined || k.kid === kid),
  );
}

async function importAll(jwks: JWK[], alg: TokenAlgorithm): Promise<Key[]> {
  const keys: Key[] = [];
  for (const jwk of jwks.slice(0, MAX_CANDIDATES)) {
    try {
      keys.push((await importJWK({ ...jwk, alg }, alg)) as CryptoKey);
    } catch {
      // A malformed key in the tenant's set is skipped, not fatal to the others.
    }
  }
  return keys;
}

async function candidateKeys(
  env: Env,
  app: AppRecord,
  kid: string | undefined,
): Promise<{ alg: string; keys: Key[] }> {
  if (app.token_type === "secret") return { alg: "HS256", keys: await secretKeys(env, app, kid) };
  const alg = app.token_alg as TokenAlgorithm;
  if (app.token_type === "public_key") {
    return { alg, keys: await importAll([JSON.parse(app.token_jwk ?? "{}") as JWK], alg) };
  }
  const url = app.token_jwks_url ?? "";
  let set = await tenantJwks(env, url);
  let matching = usable(set.keys, alg, kid);
  if (matching.length === 0 && Date.now() - set.fetchedAt >= REFETCH_COOLDOWN_MS) {
    set = await tenantJwks(env, url, { refresh: true });
    matching = usable(set.keys, alg, kid);
  }
  return { alg, keys: await importAll(matching, alg) };
}

function claimsOf(app: AppRecord, payload: JWTPayload): TenantClaims {
  const { sub, iat, exp, name } = payload;
  if (typeof iat !== "number" || typeof exp !== "number") throw new Error("exp or iat missing");
  if (exp - iat > app.max_token_lifetime_seconds) throw new Error("lifetime over the maximum");
  if (exp * 1000 <= Date.now()) throw new Error("expired");
  const cleanName =
    typeof name === "string" && textProblem(name) === null && name.trim() !== ""
      ? [...name.normalize("NFC").trim()].slice(0, 100).join("")
      : null;
  return { sub, name: cleanName, expiresAt: exp * 1000 };
}

/** The token's claims, if the app verifies it; otherwise `unauthorized` (`refusedToken`). */
export async function verifyTenantToken(
  env: Env,
  app: AppRecord,
  token: string,
): Promise<TenantClaims> {
  let lastError: unknown = new Error("no key to verify with");
  try {
    const { alg, keys } = await candidateKeys(env, app, kidOf(token));
    for (const key of keys.slice(0, MAX_CANDIDATES)) {
      try {
        const { payload } = await jwtVerify(token, key, {
          algorithms: [alg],
          issuer: app.token_issuer,
          audience: app.token_audience,
          requiredClaims: ["exp", "iat", "sub"],
          maxTokenAge: app.max_token_lifetime_seconds,
          clockTolerance: CLOCK_SKEW_SECONDS,
        });
        return claimsOf(app, payload);
      } catch (error) {
        lastError = error;
      }
    }
  } catch (error) {
    lastError = error;
  }
  throw refusedToken(lastError);
}
