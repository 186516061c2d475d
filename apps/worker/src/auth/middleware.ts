import { AppError } from "@parley/shared";
import { createMiddleware } from "hono/factory";
import { config } from "../env.ts";
import type { AppEnv } from "../http/context.ts";
import { verifyAccessToken } from "./tokens.ts";

/** Reads `Authorization: Bearer <token>`; anything else is no token at all. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer ([A-Za-z0-9_\-.]+)$/.exec(header ?? "");
  return match?.[1];
}

/**
 * Refuses a verified token whose user no longer exists, or whose erasure was filed: an erased
 * account's tokens die with the erasure request, before its rows are gone. Every surface that takes
 * a token (the API and the agents route) asks this after verifying the signature.
 */
export async function requireLiveUser(db: D1Database, userId: string): Promise<void> {
  const user = await db
    .prepare(
      "SELECT 1 AS ok FROM users WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM tombstones WHERE subject_id = ?1)",
    )
    .bind(userId)
    .first<{ ok: number }>();
  if (!user) throw new AppError("unauthorized", "Invalid or expired access token");
}

/**
 * Verifies the access token and sets `caller`. The user must still exist: a token outliving its
 * account (erased, say) is refused like any bad token.
 */
export const requireAuth = createMiddleware<AppEnv>(async (c, next) => {
  const token = bearerToken(c.req.header("authorization"));
  if (!token) throw new AppError("unauthorized", "Missing access token");
  const verified = await verifyAccessToken(config(c.env), token);
  await requireLiveUser(c.env.DB, verified.userId);
  c.set("caller", verified);
  await next();
});
