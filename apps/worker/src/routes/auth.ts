import {
  AppError,
  type AuthResult,
  authResultSchema,
  loginSchema,
  newId,
  signupSchema,
} from "@parley/shared";
import { type Context, Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { describeRoute } from "hono-openapi";
import { revokeConnections } from "../agents/revocation.ts";
import { notFound } from "../auth/access.ts";
import { keyedHash, normalizedEmail } from "../auth/keyed-hash.ts";
import { bearerToken } from "../auth/middleware.ts";
import { decoyHash, hashPassword, verifyPassword } from "../auth/password.ts";
import {
  type IssuedRefreshToken,
  issueRefreshToken,
  revokedFamilyOf,
  revokeFamily,
  revokeRefreshToken,
  rotateRefreshToken,
} from "../auth/refresh-tokens.ts";
import { signAccessToken, verifyAccessToken } from "../auth/tokens.ts";
import { openBillingAccount } from "../billing/account.ts";
import { createOrgStatements } from "../db/orgs.ts";
import { config } from "../env.ts";
import type { AppEnv } from "../http/context.ts";
import { empty, errors, json, security } from "../http/openapi.ts";
import { sameOriginOnly } from "../http/same-origin.ts";
import { jsonBody, noBody } from "../http/validate.ts";
import { byToken, requirePending } from "./invitations.ts";

export const REFRESH_COOKIE = "parley_refresh";
/**
 * A cookie the page can read that says only "a refresh cookie was set": the web app tries a
 * refresh on load only when it is there, so a signed-out visit makes no request that fails (a 401
 * in every visitor's console). It holds no secret; forging it buys one refused refresh.
 */
export const SIGNED_IN_COOKIE = "parley_signed_in";

interface UserRow {
  id: string;
  email: string;
  name: string;
  password_hash: string;
  tokenVersion: number;
}

/** The refresh token travels only in this cookie: HttpOnly, SameSite=Strict, scoped to /api/auth. */
function setRefreshCookie(c: Context<AppEnv>, issued: IssuedRefreshToken): void {
  setCookie(c, REFRESH_COOKIE, issued.token, {
    httpOnly: true,
    sameSite: "Strict",
    secure: new URL(c.req.url).protocol === "https:",
    path: "/api/auth",
    expires: new Date(issued.expiresAt),
  });
  setCookie(c, SIGNED_IN_COOKIE, "1", {
    sameSite: "Strict",
    secure: new URL(c.req.url).protocol === "https:",
    path: "/",
    expires: new Date(issued.expiresAt),
  });
}

/** Ends the sign-in in this browser: the refresh cookie and its readable marker go together. */
export function clearRefreshCookie(c: Context<AppEnv>): void {
  deleteCookie(c, REFRESH_COOKIE, { path: "/api/auth" });
  deleteCookie(c, SIGNED_IN_COOKIE, { path: "/" });
}

async function signedIn(
  c: Context<AppEnv>,
  user: { id: string; email: string; name: string; tokenVersion: number },
): Promise<AuthResult> {
  const cfg = config(c.env);
  const refresh = await issueRefreshToken(c.env.DB, user.id, cfg.refreshTokenTtlSeconds);
  setRefreshCookie(c, refresh);
  const access = await signAccessToken(cfg, {
    userId: user.id,
    familyId: refresh.familyId,
    version: user.tokenVersion,
  });
  return {
    accessToken: access.token,
    expiresIn: access.expiresIn,
    user: { id: user.id, email: user.email, name: user.name },
  };
}

const wrongCredentials = () => new AppError("unauthorized", "Invalid email or password");

/**
 * The client address the rate limits count by, from `CF-Connecting-IP` (set by Cloudflare's edge,
 * which replaces any value a client sends). An IPv6 client is its /64: one home, phone or server
 * routinely holds a whole /64, so counting single addresses would give it billions of keys.
 *
 * Without the header (the Worker reached without Cloudflare's edge in front: vitest's `SELF.fetch`,
 * a local tool) every caller is the one client `NO_CLIENT_ADDRESS`. That keeps the limits in force:
 * skipping them instead would let anyone who can leave the header out go unlimited. (`wrangler dev`
 * sets the header to the caller's address, 127.0.0.1 locally, but keeps one a client sent.)
 */
export function clientAddress(header: string | null | undefined): string {
  const ip = header?.trim().toLowerCase();
  if (!ip) return NO_CLIENT_ADDRESS;
  if (!ip.includes(":")) return ip;
  // An IPv4 address written as IPv6 (::ffff:192.0.2.1) is that IPv4 address.
  const v4 = /:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(ip)?.[1];
  if (v4) return v4;
  const [head = "", tail, ...more] = ip.split("::");
  const groups = (part: string) => (part === "" ? [] : part.split(":"));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const zeros = 8 - left.length - right.length;
  const all =
    tail === undefined ? left : [...left, ...Array<string>(Math.max(0, zeros)).fill("0"), ...right];
  if (more.length > 0 || all.length !== 8 || !all.every((g) => /^[0-9a-f]{1,4}$/.test(g))) {
    return ip; // not an address we can read: counted as given
  }
  // The same IPv4-mapped address written in hex (::ffff:cb00:7158 is 203.0.113.88).
  const words = all.map((g) => Number.parseInt(g, 16));
  if (words.slice(0, 5).every((w) => w === 0) && words[5] === 0xffff) {
    const [high = 0, low = 0] = words.slice(6);
    return [high >> 8, high & 0xff, low >> 8, low & 0xff].join(".");
  }
  return `${all
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(":")}::/64`;
}

export const NO_CLIENT_ADDRESS = "no-client-address";

/** The keyed hash of the caller's client address (no address reaches the limiter). */
const clientKey = (c: Context<AppEnv>, label: string, ...more: string[]): Promise<string> =>
  keyedHash(
    c.env.ERASURE_HASH_KEY,
    label,
    [...more, clientAddress(c.req.header("cf-connecting-ip"))].join("\n"),
  );

export const auth = new Hono<AppEnv>()
  // Every route here uses or sets the refresh cookie, so none answers another origin's page:
  // refresh and logout would act on the victim's cookie, and signup and login would plant the
  // attacker's account in the victim's browser (login CSRF). Policy in http/same-origin.ts.
  .use("*", sameOriginOnly)
  /**
   * Creates the user, their first organization and their owner membership in one transaction; or,
   * signing up through an invitation (`invitation`: the link's secret), only the user, with the
   * invited email: they join by accepting the link, and found no org of their own.
   */
  .post(
    "/signup",
    describeRoute({
      tags: ["Auth"],
      summary: "Sign up (with a first org, or through an invitation)",
      security: security.public,
      responses: {
        201: json(authResultSchema, "Signed up; sets the refresh cookie"),
        ...errors(400, 404, 409, 410, 429),
      },
    }),
    jsonBody(signupSchema),
    async (c) => {
      const input = c.req.valid("json");
      // Per client address, before anything is hashed or written: the grant is once per person, but
      // without email verification a script could still make an org (and a grant) per invented
      // address. Limit and residual risk: wrangler.jsonc and docs/2026-12-01-hardening.md.
      const { success } = await c.env.SIGNUP_RATE_LIMITER.limit({
        key: await clientKey(c, "signup-rate"),
      });
      if (!success) {
        throw new AppError(
          "rate_limited",
          "Too many sign-ups from this network; try again in a minute",
        );
      }
      const db = c.env.DB;
      const now = Date.now();
      const userId = newId("user", now);
      const orgId = newId("org", now);
      // Through an invitation: the link must still be good and be for this address (as accepting
      // it will check again), so nobody is left with an account that can join nothing.
      if (input.invitation !== undefined) {
        const invitation = await byToken(db, input.invitation);
        if (!invitation) throw notFound("Invitation");
        requirePending(invitation, now);
        if (invitation.email.trim().toLowerCase() !== input.email.trim().toLowerCase()) {
          throw new AppError(
            "invalid_request",
            "This invitation is for another email address: sign up with the invited one",
            { field: "email" },
          );
        }
      }
      const passwordHash = await hashPassword(input.password);
      // The welcome grant goes to a person's first org, once per person however they spell their
      // email (a keyed hash of it, so the record outlives an erased account without naming anyone).
      const emailKey = await keyedHash(
        c.env.ERASURE_HASH_KEY,
        "signup-grant",
        normalizedEmail(input.email),
      );
      try {
        await db.batch([
          db
            .prepare(
              "INSERT INTO users (id, email, name, password_hash, created_at) VALUES (?, ?, ?, ?, ?)",
            )
            .bind(userId, input.email, input.name, passwordHash, now),
          ...(input.invitation !== undefined
            ? []
            : [
                ...createOrgStatements(db, {
                  id: orgId,
                  name: input.orgName ?? `${input.name}'s organization`,
                  ownerId: userId,
                  now,
                }),
                db
                  .prepare(
                    "INSERT INTO signup_grants (email_key, org_id, granted_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                  )
                  .bind(emailKey, orgId, now),
              ]),
        ]);
      } catch (cause) {
        if (String(cause).includes("UNIQUE constraint failed: users.email")) {
          throw new AppError("conflict", "An account with this email already exists", {
            field: "email",
          });
        }
        throw cause;
      }
      if (input.invitation === undefined) await openBillingAccount(c.env, orgId);
      return c.json(
        await signedIn(c, { id: userId, email: input.email, name: input.name, tokenVersion: 0 }),
        201,
      );
    },
  )

  .post(
    "/login",
    describeRoute({
      tags: ["Auth"],
      summary: "Sign in",
      security: security.public,
      responses: {
        200: json(authResultSchema, "Signed in; sets the refresh cookie"),
        ...errors(401, 429),
      },
    }),
    jsonBody(loginSchema),
    async (c) => {
      const input = c.req.valid("json");
      // Counted before the password is checked, so guesses are slowed whether or not the account
      // exists and the limit reveals nothing. Two limits, because one per email let a stranger lock
      // the owner out: 10 wrong guesses from anywhere and the right password got 429 too.
      // - Per (email, client address), 10 a minute: one client's guessing is slowed; the owner,
      //   signing in from their own address, is not affected by guesses from elsewhere.
      // - Per email from every address, 100 a minute: guesses spread over many addresses stay
      //   bounded (6,000 an hour). Checked second, so a client over its own limit spends none of it:
      //   locking the owner out now takes ten or more addresses guessing flat out.
      const tooMany = () =>
        new AppError("rate_limited", "Too many sign-in attempts; try again in a minute");
      const perClient = await c.env.LOGIN_RATE_LIMITER.limit({
        key: await clientKey(c, "login-rate", input.email),
      });
      if (!perClient.success) throw tooMany();
      const perEmail = await c.env.LOGIN_EMAIL_RATE_LIMITER.limit({
        key: await keyedHash(c.env.ERASURE_HASH_KEY, "login-email-rate", input.email),
      });
      if (!perEmail.success) throw tooMany();
      const user = await c.env.DB.prepare(
        "SELECT id, email, name, password_hash, token_version AS tokenVersion FROM users WHERE email = ?",
      )
        .bind(input.email)
        .first<UserRow>();
      // Verify against a decoy when the email is unknown: same work, same answer.
      const ok = await verifyPassword(input.password, user?.password_hash ?? (await decoyHash()));
      if (!user || !ok) throw wrongCredentials();
      return c.json(await signedIn(c, user));
    },
  )

  .post(
    "/refresh",
    describeRoute({
      tags: ["Auth"],
      summary: "A new access token from the refresh cookie",
      security: security.refreshCookie,
      responses: { 200: json(authResultSchema, "The cookie rotates"), ...errors(401, 403) },
    }),
    noBody,
    async (c) => {
      const token = getCookie(c, REFRESH_COOKIE);
      if (!token) {
        clearRefreshCookie(c);
        throw new AppError("unauthorized", "No refresh token");
      }
      const cfg = config(c.env);
      let issued: IssuedRefreshToken;
      try {
        issued = await rotateRefreshToken(c.env.DB, token, cfg.refreshTokenTtlSeconds);
      } catch (error) {
        clearRefreshCookie(c);
        // A reused token revoked its family: what the family's access tokens opened closes too.
        const revoked = await revokedFamilyOf(c.env.DB, token);
        if (revoked) await revokeConnections(c.env, { familyId: revoked });
        throw error;
      }
      const row = await c.env.DB.prepare(
        "SELECT id, email, name, token_version FROM users WHERE id = ?",
      )
        .bind(issued.userId)
        .first<Omit<UserRow, "password_hash" | "tokenVersion"> & { token_version: number }>();
      if (!row) throw new AppError("unauthorized", "Session expired, please sign in again");
      setRefreshCookie(c, issued);
      const access = await signAccessToken(cfg, {
        userId: row.id,
        familyId: issued.familyId,
        version: row.token_version,
      });
      return c.json({
        accessToken: access.token,
        expiresIn: access.expiresIn,
        user: { id: row.id, email: row.email, name: row.name },
      } satisfies AuthResult);
    },
  )

  .post(
    "/logout",
    describeRoute({
      tags: ["Auth"],
      summary: "Sign out: revokes this sign-in",
      security: [...security.refreshCookie, ...security.member],
      responses: { 204: empty(), ...errors(401, 403) },
    }),
    noBody,
    async (c) => {
      const token = getCookie(c, REFRESH_COOKIE);
      // The sign-in ends everywhere it reached: its refresh tokens, its access tokens (they carry the
      // family as `sid`, and requireLiveUser refuses a revoked one) and the sockets they opened.
      const familyId = token ? await revokeRefreshToken(c.env.DB, token) : null;
      if (familyId) await revokeConnections(c.env, { familyId });
      // A client without the cookie (a CLI, or someone ending a leaked token's sign-in) names the
      // sign-in with its access token. One that does not verify is refused: answering "signed out"
      // while nothing was revoked would be a lie (found by the outside probe, 2026-12-04).
      const bearer = bearerToken(c.req.header("authorization"));
      if (bearer) {
        const verified = await verifyAccessToken(config(c.env), bearer);
        if (verified.familyId !== familyId) {
          await revokeFamily(c.env.DB, verified.familyId);
          await revokeConnections(c.env, { familyId: verified.familyId });
        }
      }
      clearRefreshCookie(c);
      return c.body(null, 204);
    },
  );
