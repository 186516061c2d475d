import { AppError } from "@parley/shared";
import { sha256Base64Url, toBase64Url } from "./encoding.ts";

/**
 * Single-use links for one account (docs/2026-12-06-mail.md): proving an address at sign-up, moving
 * the account to a new address, resetting a forgotten password. The secret is 32 random bytes
 * behind a prefix naming its purpose; it travels only in the link's fragment and a request body,
 * and is stored only as its SHA-256. A new link of a purpose supersedes the older ones of that
 * purpose (only the newest works), and every link works once, until it expires.
 */
export type TokenPurpose = "verify_email" | "change_email" | "reset_password";

export const TOKEN_PREFIX: Record<TokenPurpose, string> = {
  verify_email: "vfy",
  change_email: "eml",
  reset_password: "rst",
};

/** How long a link works: a reset is short (it takes an account over); a verification waits a day. */
export const TOKEN_TTL_MS: Record<TokenPurpose, number> = {
  verify_email: 24 * 60 * 60 * 1000,
  change_email: 24 * 60 * 60 * 1000,
  reset_password: 30 * 60 * 1000,
};

/** The shape of every account link's secret (the zod schemas in packages/shared take the same). */
export const ACCOUNT_TOKEN_PATTERN = /^(vfy|eml|rst)_[A-Za-z0-9_-]{43}$/;

export interface IssuedToken {
  token: string;
  expiresAt: number;
  /** The older links of the purpose end, and this one is stored: put both in the change's batch. */
  statements: D1PreparedStatement[];
}

/**
 * A new link for `userId`, for `email`. `onlyIf` (SQL and its bindings) makes the insert
 * conditional on the rest of the batch, as the mail queued with it is.
 */
export async function issueToken(
  db: D1Database,
  input: { userId: string; purpose: TokenPurpose; email: string; now: number },
): Promise<IssuedToken> {
  const token = `${TOKEN_PREFIX[input.purpose]}_${toBase64Url(crypto.getRandomValues(new Uint8Array(32)))}`;
  const expiresAt = input.now + TOKEN_TTL_MS[input.purpose];
  return {
    token,
    expiresAt,
    statements: [
      endTokens(db, input.userId, [input.purpose], input.now),
      db
        .prepare(
          `INSERT INTO account_tokens (token_hash, user_id, purpose, email, created_at, expires_at)
           VALUES (?, ?, ?, ?, ?, ?)`,
        )
        .bind(
          await sha256Base64Url(token),
          input.userId,
          input.purpose,
          input.email.trim().toLowerCase(),
          input.now,
          expiresAt,
        ),
    ],
  };
}

/**
 * Ends the account's unused links of these purposes (superseded or cancelled); with `gate`, only
 * in the batch that used a link (`whenConsumed`).
 */
export function endTokens(
  db: D1Database,
  userId: string,
  purposes: readonly TokenPurpose[],
  now: number,
  gate?: { sql: string; bindings: unknown[] },
): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE account_tokens SET used_at = ?, used_by = 'ended'
       WHERE user_id = ? AND used_at IS NULL AND purpose IN (SELECT value FROM json_each(?))
       AND ${gate?.sql ?? "1"}`,
    )
    .bind(now, userId, JSON.stringify(purposes), ...(gate?.bindings ?? []));
}

export interface LiveToken {
  tokenHash: string;
  userId: string;
  purpose: TokenPurpose;
  email: string;
  /** Marks this request's use: statements after `consume` run only `whenConsumed(...)`. */
  nonce: string;
}

/**
 * The one answer for a link that cannot be used: used, expired, superseded, cancelled or never
 * issued alike (telling them apart would tell a guesser which secrets once existed).
 */
export const linkGone = () =>
  new AppError("gone", "This link has expired or was already used: ask for a new one");

/** The live link `token` is, for one of `purposes`, or `gone`. Nothing is written. */
export async function liveToken(
  db: D1Database,
  token: string,
  purposes: readonly TokenPurpose[],
  now: number,
): Promise<LiveToken> {
  const tokenHash = await sha256Base64Url(token);
  const row = await db
    .prepare(
      `SELECT user_id, purpose, email FROM account_tokens
       WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?`,
    )
    .bind(tokenHash, now)
    .first<{ user_id: string; purpose: TokenPurpose; email: string }>();
  if (!row || !purposes.includes(row.purpose)) throw linkGone();
  return {
    tokenHash,
    userId: row.user_id,
    purpose: row.purpose,
    email: row.email,
    nonce: crypto.randomUUID(),
  };
}

/**
 * The batch's first statement: uses the link, if it is still unused and unexpired. Two requests
 * with one link both read it live; only one of them marks it, and the statements after it run for
 * that one only (`whenConsumed`), so a link's change happens once.
 */
export function consume(db: D1Database, live: LiveToken, now: number): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE account_tokens SET used_at = ?, used_by = ?
       WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?`,
    )
    .bind(now, live.nonce, live.tokenHash, now);
}

/** SQL (and bindings) true only in the batch whose `consume` used the link. */
export const whenConsumed = (live: LiveToken) => ({
  sql: "EXISTS (SELECT 1 FROM account_tokens WHERE token_hash = ? AND used_by = ?)",
  bindings: [live.tokenHash, live.nonce] as unknown[],
});
