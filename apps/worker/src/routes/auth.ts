import { AppError, type AuthResult, loginSchema, newId, signupSchema } from "@parley/shared";
import { type Context, Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { decoyHash, hashPassword, verifyPassword } from "../auth/password.ts";
import {
  type IssuedRefreshToken,
  issueRefreshToken,
  revokeRefreshToken,
  rotateRefreshToken,
} from "../auth/refresh-tokens.ts";
import { signAccessToken } from "../auth/tokens.ts";
import { openBillingAccount } from "../billing/account.ts";
import { createOrgStatements } from "../db/orgs.ts";
import { config } from "../env.ts";
import type { AppEnv } from "../http/context.ts";
import { jsonBody } from "../http/validate.ts";

export const REFRESH_COOKIE = "parley_refresh";

interface UserRow {
  id: string;
  email: string;
  name: string;
  password_hash: string;
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
}

async function signedIn(
  c: Context<AppEnv>,
  user: { id: string; email: string; name: string },
): Promise<AuthResult> {
  const cfg = config(c.env);
  const refresh = await issueRefreshToken(c.env.DB, user.id, cfg.refreshTokenTtlSeconds);
  setRefreshCookie(c, refresh);
  const access = await signAccessToken(cfg, user.id);
  return {
    accessToken: access.token,
    expiresIn: access.expiresIn,
    user: { id: user.id, email: user.email, name: user.name },
  };
}

const wrongCredentials = () => new AppError("unauthorized", "Invalid email or password");

export const auth = new Hono<AppEnv>()
  /** Creates the user, their first organization and their owner membership in one transaction. */
  .post("/signup", jsonBody(signupSchema), async (c) => {
    const input = c.req.valid("json");
    const db = c.env.DB;
    const now = Date.now();
    const userId = newId("user", now);
    const orgId = newId("org", now);
    const passwordHash = await hashPassword(input.password);
    try {
      await db.batch([
        db
          .prepare(
            "INSERT INTO users (id, email, name, password_hash, created_at) VALUES (?, ?, ?, ?, ?)",
          )
          .bind(userId, input.email, input.name, passwordHash, now),
        ...createOrgStatements(db, {
          id: orgId,
          name: input.orgName ?? `${input.name}'s organization`,
          ownerId: userId,
          now,
        }),
      ]);
    } catch (cause) {
      if (String(cause).includes("UNIQUE constraint failed: users.email")) {
        throw new AppError("conflict", "An account with this email already exists", {
          field: "email",
        });
      }
      throw cause;
    }
    await openBillingAccount(c.env, orgId);
    return c.json(await signedIn(c, { id: userId, email: input.email, name: input.name }), 201);
  })

  .post("/login", jsonBody(loginSchema), async (c) => {
    const input = c.req.valid("json");
    // Per email address, counted before the password is checked: guesses are slowed whether or
    // not the account exists, so the limit reveals nothing either.
    const { success } = await c.env.LOGIN_RATE_LIMITER.limit({ key: input.email });
    if (!success)
      throw new AppError("rate_limited", "Too many sign-in attempts; try again in a minute");
    const user = await c.env.DB.prepare(
      "SELECT id, email, name, password_hash FROM users WHERE email = ?",
    )
      .bind(input.email)
      .first<UserRow>();
    // Verify against a decoy when the email is unknown: same work, same answer.
    const ok = await verifyPassword(input.password, user?.password_hash ?? (await decoyHash()));
    if (!user || !ok) throw wrongCredentials();
    return c.json(await signedIn(c, user));
  })

  .post("/refresh", async (c) => {
    const token = getCookie(c, REFRESH_COOKIE);
    if (!token) throw new AppError("unauthorized", "No refresh token");
    const cfg = config(c.env);
    let issued: IssuedRefreshToken;
    try {
      issued = await rotateRefreshToken(c.env.DB, token, cfg.refreshTokenTtlSeconds);
    } catch (error) {
      deleteCookie(c, REFRESH_COOKIE, { path: "/api/auth" });
      throw error;
    }
    const user = await c.env.DB.prepare("SELECT id, email, name FROM users WHERE id = ?")
      .bind(issued.userId)
      .first<Omit<UserRow, "password_hash">>();
    if (!user) throw new AppError("unauthorized", "Session expired, please sign in again");
    setRefreshCookie(c, issued);
    const access = await signAccessToken(cfg, user.id);
    return c.json({
      accessToken: access.token,
      expiresIn: access.expiresIn,
      user,
    } satisfies AuthResult);
  })

  .post("/logout", async (c) => {
    const token = getCookie(c, REFRESH_COOKIE);
    if (token) await revokeRefreshToken(c.env.DB, token);
    deleteCookie(c, REFRESH_COOKIE, { path: "/api/auth" });
    return c.body(null, 204);
  });
