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

/** The `typ` header of a member's access token. */
const MEMBER_TOKEN_TYPE = "JWT";
/**
 * The `typ` header of an end-user access token (docs/2026-12-02-apps-and-end-users.md). Every
 * verifier pins its own: a member's token is never an end user's, nor the other way round.
 */
export const END_USER_TOKEN_TYPE = "parley-end-user+jwt";
/** The longest an end-user access token lives (less when the tenant's token ends sooner). */
export const END_USER_TOKEN_TTL_SECONDS = 900;

/** End-user tokens are for another audience than members' tokens, derived from it. */
export const endUserAudience = (config: Config): string => `${config.audience}:end-user`;

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
    .setProtectedHeader({ alg: ACCESS_TOKEN_ALG, kid: keys.kid, typ: MEMBER_TOKEN_TYPE })
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
        // A member's token says so: an end-user token (another `typ`, another audience, no `sid`)
        // signed by the same key is refused here three times over.
        typ: MEMBER_TOKEN_TYPE,
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

/** An end user of an app, as an end-user access token names them. */
export interface EndUserSubject {
  endUserId: string;
  appId: string;
  orgId: string;
}

/**
 * Signs an end-user access token: the platform's key, but `typ` END_USER_TOKEN_TYPE, the
 * end-user audience and claims `app` and `org` instead of `sid` and `ver`, so that no member
 * verifier (`verifyAccessToken`, the agents route, connect tickets) accepts it.
 */
export async function signEndUserAccessToken(
  config: Config,
  subject: EndUserSubject,
  lifetimeSeconds: number,
): Promise<string> {
  const keys = await signingKeys(config);
  return new SignJWT({ app: subject.appId, org: subject.orgId })
    .setProtectedHeader({ alg: ACCESS_TOKEN_ALG, kid: keys.kid, typ: END_USER_TOKEN_TYPE })
    .setSubject(subject.endUserId)
    .setIssuer(config.issuer)
    .setAudience(endUserAudience(config))
    .setIssuedAt()
    .setExpirationTime(`${lifetimeSeconds}s`)
    .setJti(crypto.randomUUID())
    .sign(keys.privateKey);
}

export interface VerifiedEndUserToken extends EndUserSubject {
  tokenId: string;
  expiresAt: number;
}

/**
 * Verifies an end-user access token as `verifyAccessToken` does a member's, with its own `typ`
 * and audience pinned (a member's token is refused here). Whether the end user and their app still
 * exist is `requireLiveEndUser`'s question (auth/end-users.ts).
 */
export async function verifyEndUserAccessToken(
  config: Config,
  token: string,
): Promise<VerifiedEndUserToken> {
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
        audience: endUserAudience(config),
        typ: END_USER_TOKEN_TYPE,
        requiredClaims: ["exp", "iat", "jti", "sub", "app", "org"],
        maxTokenAge: `${END_USER_TOKEN_TTL_SECONDS + 60}s`,
      },
    ));
  } catch (cause) {
    throw new AppError("unauthorized", "Invalid or expired access token", { cause });
  }
  const { sub, jti, app, org, exp } = payload;
  if (
    typeof sub !== "string" ||
    typeof jti !== "string" ||
    typeof app !== "string" ||
    typeof org !== "string" ||
    typeof exp !== "number"
  ) {
    throw new AppError("unauthorized", "Invalid or expired access token");
  }
  return { endUserId: sub, appId: app, orgId: org, tokenId: jti, expiresAt: exp * 1000 };
}

/**
 * The `typ` header of a tool call's identity token (docs/2026-12-06-tools.md): no Parley verifier
 * pins it, and its audience is a tool source's URL, so the token opens nothing at Parley.
 */
export const TOOL_TOKEN_TYPE = "parley-tool+jwt";
/** How long a tool call's identity token lives: one call, with room for clock skew. */
export const TOOL_TOKEN_TTL_SECONDS = 60;

/** Whom a tool call acts for and where: the claims of its identity token. */
export interface ToolCallIdentity {
  /** The tool source's URL as registered: the token's audience. */
  audience: string;
  sourceId: string;
  /**
   * The end user's id in the tenant's product (their external id), the member's user id, or for
   * the source's own requests (its listing, its stream) the source id: no person.
   */
  subject: string;
  subjectKind: "member" | "end_user" | "source";
  orgId: string;
  /** The end user's app; null for a member. */
  appId: string | null;
  sessionId: string | null;
  /** The tool called; null for the source's own requests (its tool list). */
  tool: string | null;
}

/**
 * Signs a tool call's identity token: Parley's key (the JWKS at `/.well-known/jwks.json` verifies
 * it), ES256, a unique `jti`, `exp` a minute after `iat`. The tenant's server checks issuer,
 * audience (its own URL as registered) and expiry, and acts as `sub`. Never a member's or end
 * user's own Parley token: those never leave Parley.
 */
export async function signToolCallToken(
  config: Config,
  identity: ToolCallIdentity,
): Promise<string> {
  const keys = await signingKeys(config);
  return new SignJWT({
    kind: identity.subjectKind,
    org: identity.orgId,
    src: identity.sourceId,
    ...(identity.appId ? { app: identity.appId } : {}),
    ...(identity.sessionId ? { session: identity.sessionId } : {}),
    ...(identity.tool ? { tool: identity.tool } : {}),
  })
    .setProtectedHeader({ alg: ACCESS_TOKEN_ALG, kid: keys.kid, typ: TOOL_TOKEN_TYPE })
    .setSubject(identity.subject)
    .setIssuer(config.issuer)
    .setAudience(identity.audience)
    .setIssuedAt()
    .setExpirationTime(`${TOOL_TOKEN_TTL_SECONDS}s`)
    .setJti(crypto.randomUUID())
    .sign(keys.privateKey);
}

/** The public half of the signing key, as served at `/.well-known/jwks.json`. */
export async function jwks(config: Config): Promise<{ keys: JWK[] }> {
  const keys = await signingKeys(config);
  return { keys: [keys.publicJwk] };
}
