import { env } from "cloudflare:test";
import type { AppWithSecret, EmbedToken } from "@parley/shared";
import { type CryptoKey, exportJWK, type JWK, SignJWT } from "jose";
import { type ApiResponse, api, randomClientAddress, type World } from "./helpers.ts";

/** Shared by the apps and end-user token suites: apps made through the API, tenant tokens. */

export const ISSUER = "https://shop.example.com";
export const AUDIENCE = "parley";
export const ORIGIN = "https://shop.example.com";

export const nowSeconds = () => Math.floor(Date.now() / 1000);

export const secretAppBody = (w: World, extra: Record<string, unknown> = {}) => ({
  name: "Shop",
  allowedOrigins: [ORIGIN],
  projectIds: [w.projectId],
  verification: { type: "secret", issuer: ISSUER, audience: AUDIENCE },
  ...extra,
});

export async function createApp(
  w: World,
  body: Record<string, unknown>,
  token = w.owner.token,
): Promise<ApiResponse<AppWithSecret>> {
  return api<AppWithSecret>("POST", `/api/orgs/${w.orgId}/apps`, { token, body });
}

/** A secret-verified app and its first secret. */
export async function secretApp(
  w: World,
  extra: Record<string, unknown> = {},
): Promise<{ id: string; secret: string; kid: string }> {
  const res = await createApp(w, secretAppBody(w, extra));
  if (res.status !== 201 || !res.body.secret) {
    throw new Error(`app creation answered ${res.status}: ${JSON.stringify(res.body)}`);
  }
  return { id: res.body.id, secret: res.body.secret.secret, kid: res.body.secret.kid };
}

export interface TokenParts {
  claims?: Record<string, unknown>;
  header?: Record<string, unknown>;
}

/** Claims a tenant would sign: `sub`, `iss`, `aud`, `iat` now, `exp` in 5 minutes, then changes. */
const tenantClaims = (claims: Record<string, unknown> = {}) => ({
  sub: "user-1",
  iss: ISSUER,
  aud: AUDIENCE,
  iat: nowSeconds(),
  exp: nowSeconds() + 300,
  ...claims,
});

/** A tenant token signed HS256 with `secret` (an app's signing secret). */
export function hs256Token(secret: string, parts: TokenParts = {}): Promise<string> {
  return new SignJWT(tenantClaims(parts.claims))
    .setProtectedHeader({ alg: "HS256", typ: "JWT", ...parts.header })
    .sign(new TextEncoder().encode(secret));
}

/** A tenant token signed with a private key (RS256, ES256, EdDSA). */
export function signedToken(
  alg: string,
  privateKey: CryptoKey,
  parts: TokenParts = {},
): Promise<string> {
  return new SignJWT(tenantClaims(parts.claims))
    .setProtectedHeader({ alg, typ: "JWT", ...parts.header })
    .sign(privateKey);
}

const ALGORITHMS = {
  ES256: { name: "ECDSA", namedCurve: "P-256" },
  RS256: {
    name: "RSASSA-PKCS1-v1_5",
    modulusLength: 2048,
    publicExponent: new Uint8Array([1, 0, 1]),
    hash: "SHA-256",
  },
  EdDSA: { name: "Ed25519" },
} as const;

/** A tenant's key pair, made here, with the public half as a JWK. */
export async function keyPair(
  alg: keyof typeof ALGORITHMS,
  kid?: string,
): Promise<{ privateKey: CryptoKey; jwk: JWK }> {
  const pair = (await crypto.subtle.generateKey(ALGORITHMS[alg], true, [
    "sign",
    "verify",
  ])) as CryptoKeyPair;
  const jwk = await exportJWK(pair.publicKey);
  return { privateKey: pair.privateKey, jwk: kid ? { ...jwk, kid } : jwk };
}

/** Serves `keys` as the JWKS at `<TEST_JWKS_URL>/keys/<name>` and returns that URL. */
export async function serveJwks(name: string, keys: JWK[]): Promise<string> {
  const url = `${env.TEST_JWKS_URL}/keys/${name}`;
  await fetch(url, { method: "PUT", body: JSON.stringify({ keys }) });
  return url;
}

export async function jwksHits(name: string): Promise<number> {
  const res = await fetch(`${env.TEST_JWKS_URL}/hits/${name}`);
  return ((await res.json()) as { hits: number }).hits;
}

/**
 * `POST /api/embed/token`, from a client address of its own unless told (the exchange is
 * rate-limited per app and client address).
 */
export function exchange(
  appId: string,
  token: string,
  headers: Record<string, string> = {},
): Promise<ApiResponse<EmbedToken>> {
  return api<EmbedToken>("POST", "/api/embed/token", {
    body: { appId, token },
    headers: { "cf-connecting-ip": randomClientAddress(), ...headers },
  });
}
