import { AppError, newId } from "@parley/shared";
import { fromBase64Url, sha256Base64Url, toBase64Url } from "./encoding.ts";

/**
 * Rotating refresh tokens. Each token is random, stored only as its SHA-256, and belongs to a
 * family started at login. Using a token rotates it (the old row is marked, a new one is issued in
 * the same family); presenting a token that was already rotated means it leaked, so the whole family
 * is revoked and the legitimate holder has to sign in again - unless it comes back within
 * `ROTATION_GRACE_MS`, when it gets the family's current token instead (see below).
 *
 * Invariants: a family has at most one unrotated row (its live token), since only the request whose
 * conditional UPDATE rotated a row inserts that row's successor; the grace path never inserts; a
 * sealed successor exists only on a rotated, unrevoked row whose window has not passed (until the next
 * sweep), and only a holder of that row's raw token can open it.
 */

/**
 * How long a rotated token still answers with its successor. Tabs of one browser share the cookie
 * jar but refresh independently, so two of them can present the same cookie at once (page load,
 * waking from sleep); the slower one would otherwise look like a thief and sign the user out of every
 * tab. Long enough for slow round trips, short enough that a token replayed later (stolen from a
 * backup, a log, a shared machine) still trips reuse detection.
 */
export const ROTATION_GRACE_MS = 30_000;

interface RefreshRow {
  id: string;
  family_id: string;
  user_id: string;
  expires_at: number;
  rotated_at: number | null;
  revoked_at: number | null;
}

interface FamilyRow extends RefreshRow {
  successor_id: string | null;
  successor_sealed: string | null;
}

export interface IssuedRefreshToken {
  token: string;
  userId: string;
  /** The sign-in session: access tokens carry it (`sid`), and revoking the family revokes them. */
  familyId: string;
  expiresAt: number;
}

function newToken(): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(32)));
}

const utf8 = new TextEncoder();
const SEAL_INFO = utf8.encode("parley refresh-token successor v1");

/**
 * The key a rotated token's successor is sealed under: HKDF-SHA-256 of the rotated token itself, so
 * the database (which holds only SHA-256 of tokens, a different function) cannot open it.
 */
async function sealingKey(token: string, usage: "encrypt" | "decrypt"): Promise<CryptoKey> {
  const material = await crypto.subtle.importKey("raw", utf8.encode(token), "HKDF", false, [
    "deriveKey",
  ]);
  return crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: SEAL_INFO },
    material,
    { name: "AES-GCM", length: 256 },
    false,
    [usage],
  );
}

/** AES-GCM with a fresh IV, bound to the rotated row's id: `base64url(iv || ciphertext)`. */
async function seal(token: string, rowId: string, successor: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ciphertext = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: utf8.encode(rowId) },
    await sealingKey(token, "encrypt"),
    utf8.encode(successor),
  );
  const sealed = new Uint8Array(iv.byteLength + ciphertext.byteLength);
  sealed.set(iv);
  sealed.set(new Uint8Array(ciphertext), iv.byteLength);
  return toBase64Url(sealed);
}

/** The successor sealed by `seal`, or null when `token` is not the one it was sealed under. */
async function unseal(token: string, rowId: string, sealed: string): Promise<string | null> {
  const bytes = fromBase64Url(sealed);
  try {
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: bytes.subarray(0, 12), additionalData: utf8.encode(rowId) },
      await sealingKey(token, "decrypt"),
      bytes.subarray(12),
    );
    return new TextDecoder().decode(plain);
  } catch {
    return null;
  }
}

/**
 * Clears every sealed successor whose window has passed, in any family: rides in each sign-in's and
 * refresh's batch, so a ciphertext outlives its window only until the platform's next one.
 */
function sweepStatement(db: D1Database, now: number): D1PreparedStatement {
  return db
    .prepare(
      "UPDATE refresh_tokens SET successor_sealed = NULL WHERE successor_sealed IS NOT NULL AND rotated_at <= ?",
    )
    .bind(now - ROTATION_GRACE_MS);
}

/**
 * Deletes refresh tokens that expired over a day ago, so the table does not grow forever. Safe for
 * revocation: a family's newest row expires last and stays until then, still marked if the family
 * was revoked, and by the time it expires every access token of the family has expired too.
 */
function expiredStatement(db: D1Database, now: number): D1PreparedStatement {
  return db.prepare("DELETE FROM refresh_tokens WHERE expires_at < ?").bind(now - 86_400_000);
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
  return { statement, issued: { token, userId, familyId, expiresAt } };
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
  await db.batch([statement, sweepStatement(db, now), expiredStatement(db, now)]);
  return issued;
}

const refused = () => new AppError("unauthorized", "Session expired, please sign in again");

/**
 * Exchanges a refresh token for its successor. A token rotated less than `ROTATION_GRACE_MS` ago
 * gets the family's current token (no new one: the family does not fork); reuse after that revokes
 * the family.
 */
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
  if (row.rotated_at === null) {
    const rotated = await rotate(db, row, token, ttlSeconds, now);
    if (rotated) return rotated;
    // A concurrent refresh with the same token rotated it between our read and our UPDATE: its
    // successor is ours too, through the grace path (which reads the row again).
  }
  return currentTokenOf(db, row, token, now);
}

/** Rotates `row`, or returns null when another request rotated (or revoked) it first. */
async function rotate(
  db: D1Database,
  row: RefreshRow,
  token: string,
  ttlSeconds: number,
  now: number,
): Promise<IssuedRefreshToken | null> {
  const successor = newToken();
  const successorId = newId("refreshToken", now);
  const expiresAt = now + ttlSeconds * 1000;
  const [update] = await db.batch([
    db
      .prepare(
        `UPDATE refresh_tokens SET rotated_at = ?1, successor_id = ?2, successor_sealed = ?3
         WHERE id = ?4 AND rotated_at IS NULL AND revoked_at IS NULL`,
      )
      .bind(now, successorId, await seal(token, row.id, successor), row.id),
    // Inserted only if the UPDATE above made it the successor: a request that lost the race leaves
    // no second live token in the family.
    db
      .prepare(
        `INSERT INTO refresh_tokens (id, family_id, user_id, token_hash, created_at, expires_at)
         SELECT ?1, ?2, ?3, ?4, ?5, ?6
         WHERE EXISTS (SELECT 1 FROM refresh_tokens WHERE id = ?7 AND successor_id = ?1)`,
      )
      .bind(
        successorId,
        row.family_id,
        row.user_id,
        await sha256Base64Url(successor),
        now,
        expiresAt,
        row.id,
      ),
    sweepStatement(db, now),
  ]);
  if (update?.meta.changes !== 1) return null;
  return { token: successor, userId: row.user_id, familyId: row.family_id, expiresAt };
}

const withinGrace = (
  row: FamilyRow,
  now: number,
): row is FamilyRow & { successor_id: string; successor_sealed: string } =>
  row.rotated_at !== null &&
  row.revoked_at === null &&
  row.successor_id !== null &&
  row.successor_sealed !== null &&
  now - row.rotated_at < ROTATION_GRACE_MS;

/**
 * The grace path for a rotated token: follows the chain of sealed successors from it to the family's
 * live token and returns that one. Not the immediate successor: the tabs share one cookie jar, so if
 * another tab has rotated again since, handing back an older (rotated) token would put it in the jar
 * and the next refresh, minutes later, would revoke the family. Each hop needs the previous token to
 * open the next, and rotation times only grow along the chain, so a presented token inside its
 * window reaches the end unless the family was revoked meanwhile.
 */
async function currentTokenOf(
  db: D1Database,
  row: RefreshRow,
  token: string,
  now: number,
): Promise<IssuedRefreshToken> {
  const { results } = await db
    .prepare(
      `SELECT id, family_id, user_id, expires_at, rotated_at, revoked_at, successor_id, successor_sealed
       FROM refresh_tokens
       WHERE family_id = ? AND (rotated_at IS NULL OR successor_sealed IS NOT NULL)`,
    )
    .bind(row.family_id)
    .all<FamilyRow>();
  const family = new Map(results.map((r) => [r.id, r]));
  const presented = family.get(row.id);
  if (!presented || !withinGrace(presented, now)) {
    // Not a race between tabs: a rotated token came back after its window. It leaked.
    await revokeFamily(db, row.family_id, now);
    throw refused();
  }
  let current: FamilyRow | undefined = presented;
  let currentToken = token;
  for (let hops = 0; current && hops <= results.length; hops++) {
    if (current.revoked_at !== null || current.expires_at <= now) break;
    if (current.rotated_at === null) {
      return {
        token: currentToken,
        userId: current.user_id,
        familyId: row.family_id,
        expiresAt: current.expires_at,
      };
    }
    if (!withinGrace(current, now)) break;
    const next = await unseal(currentToken, current.id, current.successor_sealed);
    if (next === null) break;
    currentToken = next;
    current = family.get(current.successor_id);
  }
  // The chain ends in a revoked or expired token: the session is over, nothing more to revoke.
  throw refused();
}

/** Revokes every token of the family and drops their sealed successors with them. */
export async function revokeFamily(
  db: D1Database,
  familyId: string,
  now = Date.now(),
): Promise<void> {
  await db
    .prepare(
      "UPDATE refresh_tokens SET revoked_at = ?, successor_sealed = NULL WHERE family_id = ? AND revoked_at IS NULL",
    )
    .bind(now, familyId)
    .run();
}

/**
 * Logout: revokes the family of the presented token, whatever its state, and returns its id (the
 * caller closes what the family's access tokens opened). Unknown tokens are ignored (null).
 */
export async function revokeRefreshToken(db: D1Database, token: string): Promise<string | null> {
  const row = await db
    .prepare("SELECT family_id FROM refresh_tokens WHERE token_hash = ?")
    .bind(await sha256Base64Url(token))
    .first<{ family_id: string }>();
  if (!row) return null;
  await revokeFamily(db, row.family_id);
  return row.family_id;
}

/** The family of a presented token if that family is revoked (after a refused refresh), else null. */
export async function revokedFamilyOf(db: D1Database, token: string): Promise<string | null> {
  const row = await db
    .prepare(
      `SELECT t.family_id FROM refresh_tokens t WHERE t.token_hash = ?
       AND EXISTS (SELECT 1 FROM refresh_tokens r WHERE r.family_id = t.family_id AND r.revoked_at IS NOT NULL)`,
    )
    .bind(await sha256Base64Url(token))
    .first<{ family_id: string }>();
  return row?.family_id ?? null;
}
