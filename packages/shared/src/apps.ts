import { z } from "zod";
import { microsSchema } from "./billing.ts";
import { tenantExternalIdSchema } from "./external-ids.ts";
import { humanText } from "./schemas.ts";
import { webUrlSchema } from "./urls.ts";

/**
 * Apps (embeds) of an org and the end-user token exchange (issue 15; design in
 * docs/2026-12-02-apps-and-end-users.md). A tenant's backend signs a short-lived JWT for one of its
 * users; Parley verifies it as the app says (a secret Parley made, the tenant's public key, or the
 * tenant's JWKS), with the algorithm pinned, and answers with an end-user access token.
 */

/** What a tenant may sign its end-user tokens with, besides HS256 under a secret Parley made. */
export const TOKEN_ALGORITHMS = ["RS256", "ES256", "EdDSA"] as const;
export type TokenAlgorithm = (typeof TOKEN_ALGORITHMS)[number];

export const DEFAULT_MAX_TOKEN_LIFETIME_SECONDS = 600;
export const MAX_TOKEN_LIFETIME_SECONDS = 86_400;
export const MAX_APP_ORIGINS = 20;
export const MAX_APP_PROJECTS = 20;
/** How long a rotated-out secret stays valid by default, and at most. */
export const DEFAULT_SECRET_OVERLAP_SECONDS = 3_600;
export const MAX_SECRET_OVERLAP_SECONDS = 7 * 86_400;
/** Longest tenant token accepted by the exchange (a JWT with a few claims is well under 2 KB). */
export const MAX_TENANT_TOKEN_CHARS = 8_192;

/** Plain http is for a tenant's own machine only (a page on localhost while they build). */
const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * Why `value` is not an origin an app may list, or null. An origin is exactly what a browser sends
 * in `Origin`: scheme, host and a port only when it is not the default one, in lower case, with no
 * path, not even `/`. Anything else is refused rather than normalized, so what is stored is what
 * the embed's page will send, and the message shows the form to use. No wildcards: each origin is
 * listed (a `*.example.com` would also admit every subdomain someone else can host pages on).
 */
export function originProblem(value: string): string | null {
  if (value.includes("*")) return "must be one exact origin: wildcards are not supported";
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "must be an origin like https://shop.example.com";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "must use https";
  if (url.protocol === "http:" && !LOOPBACK_HOSTS.has(url.hostname)) {
    return "must use https (plain http only for localhost)";
  }
  if (url.origin !== value) {
    return `must be only scheme, host and port, as a browser sends it (${url.origin})`;
  }
  return null;
}

const unique = (values: readonly string[]) => new Set(values).size === values.length;

const originsSchema = z
  .array(
    z
      .string()
      .max(300)
      .superRefine((value, ctx) => {
        const problem = originProblem(value);
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      }),
  )
  .max(MAX_APP_ORIGINS)
  .refine(unique, "must not list an origin twice");

const projectIdsSchema = z
  .array(z.string().min(1).max(100))
  .min(1, "must name at least one project")
  .max(MAX_APP_PROJECTS)
  .refine(unique, "must not list a project twice");

/** A per-end-user spend limit: integer micro-dollars, 0 or more; null is no limit. */
const endUserLimitSchema = microsSchema.min(0).nullable();

/** Claim values the tenant's tokens must carry: one line of printable text. */
const claimValue = z
  .string()
  .min(1)
  .max(300)
  .regex(/^[^\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+$/u, "must be one line of printable text");

const tokenRules = {
  /** The `iss` the tenant's tokens carry (exact match). */
  issuer: claimValue,
  /** The `aud` they must carry (exact match, or one entry of an `aud` array). */
  audience: claimValue,
  /** The longest `exp - iat` accepted; tokens are meant to be minted per page load. */
  maxTokenLifetimeSeconds: z
    .number()
    .int()
    .min(1)
    .max(MAX_TOKEN_LIFETIME_SECONDS)
    .default(DEFAULT_MAX_TOKEN_LIFETIME_SECONDS),
};

const b64url = (min: number, max: number) =>
  z
    .string()
    .min(min)
    .max(max)
    .regex(/^[A-Za-z0-9_-]+$/, "must be base64url");

/** Members of a JWK that only a private or symmetric key has: a public key must have none. */
export const PRIVATE_JWK_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"] as const;

/**
 * A public JWK as a tenant pastes it. The members a key of its algorithm needs are checked by
 * `jwkProblem`; unknown members pass (tools add `use`, `kid`, `x5c`...) but are not stored.
 */
const publicJwkSchema = z.looseObject({
  kty: z.enum(["RSA", "EC", "OKP"]),
  crv: z.string().max(20).optional(),
  x: b64url(43, 43).optional(),
  y: b64url(43, 43).optional(),
  // 2048 to 8192 bits; jose refuses RSA keys under 2048 bits as well.
  n: b64url(342, 1366).optional(),
  e: b64url(1, 8).optional(),
  kid: z.string().min(1).max(200).optional(),
  alg: z.string().max(20).optional(),
  use: z.string().max(20).optional(),
});
export type PublicJwk = z.infer<typeof publicJwkSchema>;

/** Why `jwk` is not a public key for `alg`, with the member at fault, or null. */
export function jwkProblem(
  alg: TokenAlgorithm,
  jwk: Record<string, unknown>,
): { member: string; message: string } | null {
  for (const member of PRIVATE_JWK_MEMBERS) {
    if (member in jwk) {
      return { member, message: "must be a public key: it has a private or secret member" };
    }
  }
  const needs: Record<TokenAlgorithm, { kty: string; crv?: string; members: string[] }> = {
    RS256: { kty: "RSA", members: ["n", "e"] },
    ES256: { kty: "EC", crv: "P-256", members: ["x", "y"] },
    EdDSA: { kty: "OKP", crv: "Ed25519", members: ["x"] },
  };
  const need = needs[alg];
  if (jwk.kty !== need.kty) return { member: "kty", message: `must be ${need.kty} for ${alg}` };
  if (need.crv !== undefined && jwk.crv !== need.crv) {
    return { member: "crv", message: `must be ${need.crv} for ${alg}` };
  }
  for (const member of need.members) {
    if (jwk[member] === undefined) return { member, message: `is required for ${alg}` };
  }
  if (jwk.alg !== undefined && jwk.alg !== alg) {
    return { member: "alg", message: `must be ${alg} (or absent)` };
  }
  if (jwk.use !== undefined && jwk.use !== "sig") return { member: "use", message: "must be sig" };
  return null;
}

/**
 * How an app's end-user tokens are verified. The algorithm is part of the configuration, never
 * read from a token: `secret` is HS256 under a secret Parley generates (shown once), the others
 * the tenant's own key pair. The whole object is replaced when it is changed.
 */
export const tokenVerificationSchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("secret"), ...tokenRules }),
  z
    .strictObject({
      type: z.literal("public_key"),
      alg: z.enum(TOKEN_ALGORITHMS),
      jwk: publicJwkSchema,
      ...tokenRules,
    })
    .superRefine((value, ctx) => {
      const problem = jwkProblem(value.alg, value.jwk);
      if (problem) {
        ctx.addIssue({ code: "custom", message: problem.message, path: ["jwk", problem.member] });
      }
    }),
  z.strictObject({
    type: z.literal("jwks"),
    alg: z.enum(TOKEN_ALGORITHMS),
    // Where it may point (https, a public host) is checked by the Worker, which knows its settings.
    url: webUrlSchema(2000),
    ...tokenRules,
  }),
]);
export type TokenVerificationInput = z.infer<typeof tokenVerificationSchema>;

export const createAppSchema = z.strictObject({
  name: humanText({ min: 1, max: 100 }),
  allowedOrigins: originsSchema.default([]),
  projectIds: projectIdsSchema,
  verification: tokenVerificationSchema,
  endUserDailyLimitMicros: endUserLimitSchema.default(null),
  endUserWeeklyLimitMicros: endUserLimitSchema.default(null),
  endUserMonthlyLimitMicros: endUserLimitSchema.default(null),
  showCost: z.boolean().default(false),
  /** A profile of the org for its end users' sessions (2026-12-06); null: the project's. */
  profileId: z.string().min(1).max(100).nullable().default(null),
});
export type CreateApp = z.infer<typeof createAppSchema>;

/** Any of the fields of an app; lists and `verification` are replaced whole. */
export const updateAppSchema = z
  .strictObject({
    name: humanText({ min: 1, max: 100 }).optional(),
    allowedOrigins: originsSchema.optional(),
    projectIds: projectIdsSchema.optional(),
    verification: tokenVerificationSchema.optional(),
    endUserDailyLimitMicros: endUserLimitSchema.optional(),
    endUserWeeklyLimitMicros: endUserLimitSchema.optional(),
    endUserMonthlyLimitMicros: endUserLimitSchema.optional(),
    showCost: z.boolean().optional(),
    profileId: z.string().min(1).max(100).nullable().optional(),
  })
  .refine((value) => Object.values(value).some((v) => v !== undefined), {
    message: "at least one field is required",
  });
export type UpdateApp = z.infer<typeof updateAppSchema>;

/** A new secret; the one current until now stays valid for `overlapSeconds` (0: refused at once). */
export const rotateAppSecretSchema = z.strictObject({
  overlapSeconds: z
    .number()
    .int()
    .min(0)
    .max(MAX_SECRET_OVERLAP_SECONDS)
    .default(DEFAULT_SECRET_OVERLAP_SECONDS),
});
export type RotateAppSecret = z.infer<typeof rotateAppSecretSchema>;

/** The exchange of a tenant-signed end-user token for a Parley end-user access token. */
export const embedTokenSchema = z.strictObject({
  appId: z.string().min(1).max(100),
  token: z.string().min(1).max(MAX_TENANT_TOKEN_CHARS),
});
export type EmbedTokenRequest = z.infer<typeof embedTokenSchema>;

/**
 * What a tenant's server asks an end-user token for when it authenticates with an org API key
 * (`POST /api/apps/:appId/end-user-tokens`, the API-key step) instead of a signed token: the same
 * `sub` rules as the exchange's tokens, and an optional display name.
 */
export const endUserTokenRequestSchema = z.strictObject({
  sub: tenantExternalIdSchema,
  name: humanText({ min: 1, max: 100 }).optional(),
});
export type EndUserTokenRequest = z.infer<typeof endUserTokenRequestSchema>;

/** A secret's public facts: the `kid` to put in tokens, and until when it is accepted. */
export interface AppSecretInfo {
  kid: string;
  createdAt: string;
  /** Null for the current secret; a rotated-out one is accepted until then. */
  expiresAt: string | null;
}

interface TokenRules {
  issuer: string;
  audience: string;
  maxTokenLifetimeSeconds: number;
}

export type TokenVerification =
  | ({ type: "secret"; alg: "HS256"; secrets: AppSecretInfo[] } & TokenRules)
  | ({ type: "public_key"; alg: TokenAlgorithm; jwk: Record<string, string> } & TokenRules)
  | ({ type: "jwks"; alg: TokenAlgorithm; url: string } & TokenRules);

export interface App {
  id: string;
  orgId: string;
  name: string;
  allowedOrigins: string[];
  projectIds: string[];
  verification: TokenVerification;
  endUserDailyLimitMicros: number | null;
  /** Per UTC week, from Monday 00:00 (2026-12-02). */
  endUserWeeklyLimitMicros: number | null;
  endUserMonthlyLimitMicros: number | null;
  showCost: boolean;
  /** The assistant profile its end users' sessions run (2026-12-06); null: the project's. */
  profileId: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A signing secret, in the one response that shows it (creation or rotation). */
export interface NewAppSecret {
  kid: string;
  secret: string;
  createdAt: string;
}

/** An app as created (or changed to secret verification): `secret` is shown this once. */
export interface AppWithSecret extends App {
  secret?: NewAppSecret;
}

export interface RotatedAppSecret {
  secret: NewAppSecret;
  /** Every secret still accepted after the rotation, the new one first. */
  secrets: AppSecretInfo[];
}

export interface EmbedToken {
  accessToken: string;
  expiresIn: number;
  endUser: { id: string; externalId: string };
}

/** An end user's new session (`POST /api/embed/sessions`): in one of the app's projects. */
export const createEndUserSessionSchema = z.strictObject({
  /** One of the app's projects; absent: its first. */
  projectId: z.string().min(1).max(100).optional(),
  title: humanText({ min: 1, max: 200 }).optional(),
});
export type CreateEndUserSession = z.infer<typeof createEndUserSessionSchema>;

/** A connect ticket for one of the end user's sessions (`POST /api/embed/connect-tickets`). */
export const endUserConnectTicketSchema = z.strictObject({
  sessionId: z.string().min(1).max(100),
});

/** What the embed needs to know of its end user and app (`GET /api/embed/me`). */
export interface EmbedMe {
  endUser: { id: string; externalId: string; name: string | null };
  app: { id: string; name: string; showCost: boolean; projects: { id: string; name: string }[] };
}

/** An end user as the org sees them (`GET /api/apps/:appId/end-users`). */
export interface EndUser {
  id: string;
  appId: string;
  externalId: string;
  name: string | null;
  createdAt: string;
  lastSeenAt: string;
}

/** How many days back an end-user list's usage reaches (the usage report's default window). */
export const END_USER_USAGE_DAYS = 30;

/**
 * An end user in the org's list, with their usage over the last `END_USER_USAGE_DAYS` days:
 * model calls and what the org was charged for them (integer micro-dollars), as billing's
 * usage by member counts them.
 */
export interface EndUserWithUsage extends EndUser {
  usage: { requests: number; priceMicros: number };
}
