import { AppError, newId } from "@parley/shared";
import { sha256Base64Url, toBase64Url } from "./encoding.ts";

/**
 * Rotating refresh tokens. Each token is random, stored only as its SHA-256, and belongs to a
 * family started at login. Using a token rotates it (the old row is marked, a new one is issued in
 * the same family); presenting a token that was already rotated means it leaked, so the whole family
 * is revoked and the legitimate holder has to sign in again.
 */

interface RefreshRow {
  id: string;
  family_id: string;
  user_id: string;
  expires_at: number;
  rotated_at: number | null;
  revoked_at: number | null;
}

export interface IssuedRefreshToken {
  token: string;
  userId: string;
  expiresAt: number;
}

function newToken(): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(32)));
}

async function insertStatement(
  db: D1Database,
  userId: string,
  familyId: string,
  ttlSeconds: number,
  now: number,
): Promise<{ statement: D1PreparedStatement; issued: IssuedRefreshToken }> {
  const token = newToken();
  const expiresAt = now + ttlSeconds * 1000;
  const statement = db
    .prepare(
      `INSERT INTO refresh_tokens (id, family_id, user_id, token_hash, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?)`,
    )
    .bind(
      newId("refreshToken", now),
      familyId,
      userId,
      await sha256Base64Url(token),
      now,
      expiresAt,
    );
  return { statement, issued: { token, userId, expiresAt } };
}

/** Starts a new family, at sign-up or login. */
export async function issueRefreshToken(
  db: D1Database,
  userId: string,
  ttlSeconds: number,
): Promise<IssuedRefreshToken> {
  const now = Date.now();
  const { statement, issued } = await insertStatement(
    db,
    userId,
    crypto.randomUUID(),
    ttlSeconds,
    now,
  );
  await statement.run();
  return issued;
}

const refused = () => new AppError("unauthorized", "Session expired, please sign in again");

/** Exchanges a refresh token for its successor. Reuse of a rotated token revokes the family. */
export async function rotateRefreshToken(
  db: D1Database,
  token: string,
  ttlSeconds: number,
): Promise<IssuedRefreshToken> {
  const now = Date.now();
  const row = await db
    .prepare(
      `SELECT id, family_id, user_id, expires_at, rotated_at, revoked_at
       FROM refresh_tokens WHERE token_hash = ?`,
    )
    .bind(await sha256Base64Url(token))
    .first<RefreshRow>();
  if (!row || row.revoked_at !== null || row.expires_at <= now) throw refused();
  if (row.rotated_at !== null) {
    await revokeFamily(db, row.family_id, now);
    throw refused();
  }
  const { statement, issued } = await insertStatement(
    db,
    row.user_id,
    row.family_id,
    ttlSeconds,
    now,
  );
  // The conditional update makes two concurrent refreshes with one token a reuse, not a fork: only
  // the batch whose UPDATE matched may keep its new token.
  const [update] = await db.batch([
    db
      .prepare(
        "UPDATE refresh_tokens SET rotated_at = ? WHERE id = ? AND rotated_at IS NULL AND revoked_at IS NULL",
      )
      .bind(now, row.id),
    statement,
  ]);
  if (update?.meta.changes !== 1) {
    await revokeFamily(db, row.family_id, now);
    throw refused();
  }
  return issued;
}

export async function revokeFamily(
  db: D1Database,
  familyId: string,
  now = Date.now(),
): Promise<void> {
  await db
    .prepare("UPDATE refresh_tokens SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL")
    .bind(now, familyId)
    .run();
}

/** Logout: revokes the family of the presented token, whatever its state. Unknown tokens are ignored. */
export async function revokeRefreshToken(db: D1Database, token: string): Promise<void> {
  const row = await db
    .prepare("SELECT family_id FROM refresh_tokens WHERE token_hash = ?")
    .bind(await sha256Base64Url(token))
    .first<{ family_id: string }>();
  if (row) await revokeFamily(db, row.family_id);
}
