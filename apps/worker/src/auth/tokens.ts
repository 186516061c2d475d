import { AppError } from "@parley/shared";
import {
  type CryptoKey,
  exportJWK,
  importJWK,
  type JWK,
  type JWTPayload,
  jwtVerify,
  SignJWT,
} from "jose";
import type { Config } from "../env.ts";

/** The only algorithm we sign or accept. Pinned on verify so `none`, HS256 and friends are refused. */
export const ACCESS_TOKEN_ALG = "ES256";

interface SigningKeys {
  kid: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  publicJwk: JWK;
}

const keyCache = new Map<string, Promise<SigningKeys>>();

/** Imports the signing key from the `JWT_PRIVATE_KEY` secret (a private EC P-256 JWK with `kid`). */
function signingKeys(config: Config): Promise<SigningKeys> {
  let keys = keyCache.get(config.jwtPrivateKey);
  if (!keys) {
    keys = importSigningKeys(config.jwtPrivateKey);
    keyCache.set(config.jwtPrivateKey, keys);
    keys.catch(() => keyCache.delete(config.jwtPrivateKey));
  }
  return keys;
}

async function importSigningKeys(secret: string): Promise<SigningKeys> {
  const jwk = JSON.parse(secret) as JWK;
  if (jwk.kty !== "EC" || jwk.crv !== "P-256" || !jwk.d || !jwk.kid) {
    throw new Error("JWT_PRIVATE_KEY must be a private EC P-256 JWK with a kid");
  }
  const { d: _private, ...publicPart } = jwk;
  const privateKey = (await importJWK(
    { ...jwk, alg: ACCESS_TOKEN_ALG },
    ACCESS_TOKEN_ALG,
  )) as CryptoKey;
  const publicKey = (await importJWK(
    { ...publicPart, alg: ACCESS_TOKEN_ALG },
    ACCESS_TOKEN_ALG,
  )) as CryptoKey;
  const publicJwk = {
    ...(await exportJWK(publicKey)),
    kid: jwk.kid,
    alg: ACCESS_TOKEN_ALG,
    use: "sig",
  };
  return { kid: jwk.kid, privateKey, publicKey, publicJwk };
}

export interface AccessToken {
  token: string;
  expiresIn: number;
}

/**
 * Whom a token is for and what can revoke it: the sign-in session (the refresh-token family) it
 * belongs to, which logout revokes, and the user's token version, which a role change bumps.
 */
export interface AccessSubject {
  userId: string;
  familyId: string;
  version: number;
}

export async function signAccessToken(
  config: Config,
  subject: AccessSubject,
): Promise<AccessToken> {
  const keys = await signingKeys(config);
  const token = await new SignJWT({ sid: subject.familyId, ver: subject.version })
    .setProtectedHeader({ alg: ACCESS_TOKEN_ALG, kid: keys.kid, typ: "JWT" })
    .setSubject(subject.userId)
    .setIssuer(config.issuer)
    .setAudience(config.audience)
    .setIssuedAt()
    .setExpirationTime(`${config.accessTokenTtlSeconds}s`)
    .setJti(crypto.randomUUID())
    .sign(keys.privateKey);
  return { token, expiresIn: config.accessTokenTtlSeconds };
}

export interface VerifiedAccessToken extends AccessSubject {
  tokenId: string;
  /** When the token expires, in ms since the epoch: a socket it opened is closed then. */
  expiresAt: number;
}

/**
 * Verifies an access token: signature by our key (by `kid`), algorithm, issuer, audience, `exp`,
 * `nbf`, and the presence of `iat`, `jti`, `sub`, `sid` and `ver`. Any failure is the same
 * `unauthorized`; the reason is not logged with the token. Whether the token was revoked since
 * (logout, a role change) is `requireLiveUser`'s question, asked of D1.
 */
export async function verifyAccessToken(
  config: Config,
  token: string,
): Promise<VerifiedAccessToken> {
  const keys = await signingKeys(config);
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(
      token,
      async (header) => {
        if (header.kid !== keys.kid) throw new Error("unknown kid");
        return keys.publicKey;
      },
      {
        algorithms: [ACCESS_TOKEN_ALG],
        issuer: config.issuer,
        audience: config.audience,
        requiredClaims: ["exp", "iat", "jti", "sub", "sid", "ver"],
        maxTokenAge: `${config.accessTokenTtlSeconds + 60}s`,
      },
    ));
  } catch (cause) {
    throw new AppError("unauthorized", "Invalid or expired access token", { cause });
  }
  const { sub, jti, sid, ver, exp } = payload;
  if (
    typeof sub !== "string" ||
    typeof jti !== "string" ||
    typeof sid !== "string" ||
    sid.length === 0 ||
    !Number.isSafeInteger(ver) ||
    typeof exp !== "number"
  ) {
    throw new AppError("unauthorized", "Invalid or expired access token");
  }
  return {
    userId: sub,
    tokenId: jti,
    familyId: sid,
    version: ver as number,
    expiresAt: exp * 1000,
  };
}

/** The public half of the signing key, as served at `/.well-known/jwks.json`. */
export async function jwks(config: Config): Promise<{ keys: JWK[] }> {
  const keys = await signingKeys(config);
  return { keys: [keys.publicJwk] };
}
