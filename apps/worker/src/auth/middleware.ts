import { AppError } from "@parley/shared";
import { createMiddleware } from "hono/factory";
import { type BatchedRead, firstRow, runRead } from "../db/batched-read.ts";
import { config } from "../env.ts";
import type { AppEnv } from "../http/context.ts";
import { type VerifiedAccessToken, verifyAccessToken } from "./tokens.ts";

/**
 * Reads `Authorization: Bearer <token>`; anything else is no token at all. The scheme is
 * case-insensitive (RFC 9110 §11.1: `bearer` and `BEARER` are `Bearer`) and may be followed by
 * several spaces (`1*SP`); the token itself is taken exactly as sent.
 */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer +([A-Za-z0-9_\-.]+)$/i.exec(header ?? "");
  return match?.[1];
}

/** The parts of a verified token that decide whether it is still good. */
export type LiveToken = Pick<VerifiedAccessToken, "userId" | "familyId" | "version">;

/**
 * Refuses a verified token that is no longer good: its user no longer exists or has an erasure
 * filed (an erased account's tokens die with the request, before its rows are gone), its sign-in
 * session was revoked (logout, or a refresh token reused), or it predates a change of the user's
 * rights (its version is older than the user's). Every surface that takes a token (the API, the
 * agents route, a connect ticket, an agent re-checking its sockets) asks this, in one D1 read.
 */
export async function requireLiveUser(db: D1Database, token: LiveToken): Promise<void> {
  await runRead(db, liveUserRead(db, token));
}

/** `requireLiveUser` as a read that can share a `DB.batch` with others (db/batched-read.ts). */
export function liveUserRead(db: D1Database, token: LiveToken): BatchedRead<void> {
  return {
    statements: [
      db
        .prepare(
          `SELECT u.token_version AS version,
         EXISTS (SELECT 1 FROM refresh_tokens r WHERE r.family_id = ?2 AND r.revoked_at IS NOT NULL) AS revoked
       FROM users u
       WHERE u.id = ?1 AND NOT EXISTS (SELECT 1 FROM tombstones WHERE subject_id = ?1)`,
        )
        .bind(token.userId, token.familyId),
    ],
    read([answer]) {
      const row = firstRow<{ version: number; revoked: number }>(answer);
      if (!row || row.revoked === 1 || row.version > token.version) {
        throw new AppError("unauthorized", "Invalid or expired access token");
      }
    },
  };
}

/** Verifies the access token and sets `caller`; a token no longer good is refused like a bad one. */
export const requireAuth = createMiddleware<AppEnv>(async (c, next) => {
  const token = bearerToken(c.req.header("authorization"));
  if (!token) throw new AppError("unauthorized", "Missing access token");
  const verified = await verifyAccessToken(config(c.env), token);
  await requireLiveUser(c.env.DB, verified);
  c.set("caller", verified);
  await next();
});
