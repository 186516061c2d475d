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

export async function signAccessToken(config: Config, userId: string): Promise<AccessToken> {
  const keys = await signingKeys(config);
  const token = await new SignJWT({})
    .setProtectedHeader({ alg: ACCESS_TOKEN_ALG, kid: keys.kid, typ: "JWT" })
    .setSubject(userId)
    .setIssuer(config.issuer)
    .setAudience(config.audience)
    .setIssuedAt()
    .setExpirationTime(`${config.accessTokenTtlSeconds}s`)
    .setJti(crypto.randomUUID())
    .sign(keys.privateKey);
  return { token, expiresIn: config.accessTokenTtlSeconds };
}

export interface VerifiedAccessToken {
  userId: string;
  tokenId: string;
}

/**
 * Verifies an access token: signature by our key (by `kid`), algorithm, issuer, audience, `exp`,
 * `nbf`, and the presence of `iat`, `jti` and `sub`. Any failure is the same `unauthorized`; the
 * reason is not logged with the token.
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
        requiredClaims: ["exp", "iat", "jti", "sub"],
        maxTokenAge: `${config.accessTokenTtlSeconds + 60}s`,
      },
    ));
  } catch (cause) {
    throw new AppError("unauthorized", "Invalid or expired access token", { cause });
  }
  if (typeof payload.sub !== "string" || typeof payload.jti !== "string") {
    throw new AppError("unauthorized", "Invalid or expired access token");
  }
  return { userId: payload.sub, tokenId: payload.jti };
}

/** The public half of the signing key, as served at `/.well-known/jwks.json`. */
export async function jwks(config: Config): Promise<{ keys: JWK[] }> {
  const keys = await signingKeys(config);
  return { keys: [keys.publicJwk] };
}
