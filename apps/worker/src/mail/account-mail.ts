import type { Context } from "hono";
import { issueToken } from "../auth/account-tokens.ts";
import { keyedHash, normalizedEmail } from "../auth/keyed-hash.ts";
import type { AppEnv } from "../http/context.ts";
import { publicBase } from "../http/public-base.ts";
import { queueMailStatement } from "./outbox.ts";

/**
 * The account's own mails as statements for the batch of the change they belong to: a link issued
 * and its mail queued together, or neither (mail/outbox.ts). Links point at the web app's pages
 * with the secret in the fragment, which browsers never send to a server.
 */

/** SQL and bindings a statement is conditional on (account-tokens.ts `whenConsumed`). */
type Gate = { sql: string; bindings: unknown[] };

/**
 * A sign-up's (or a resend's) link to prove the address: `/verify-email#vfy_...`. `grantWaits`:
 * whether using it gives the sign-up grant (`grantWaits` below), so the mail promises credits
 * only then (an invitee, or a person who had the grant, gets none).
 */
export async function verificationMail(
  c: Context<AppEnv>,
  user: { userId: string; name: string; email: string; now: number; grantWaits: boolean },
): Promise<D1PreparedStatement[]> {
  const base = publicBase(c, "Email verification");
  const issued = await issueToken(c.env.DB, {
    userId: user.userId,
    purpose: "verify_email",
    email: user.email,
    now: user.now,
  });
  return [
    ...issued.statements,
    await queueMailStatement(
      c.env,
      {
        kind: "verify_email",
        to: user.email,
        userId: user.userId,
        data: {
          name: user.name,
          link: `${base}/verify-email#${issued.token}`,
          expiresAt: issued.expiresAt,
          grantWaits: user.grantWaits,
        },
      },
      { now: user.now },
    ),
  ];
}

/** Where a notice sends someone who did not make the change: the forgotten-password page. */
export const resetPage = (base: string) => `${base}/forgot-password`;

/**
 * Gives the account's sign-up org the sign-up grant, once per person (by the keyed hash of the
 * address now proven, as `signup_grants` always keyed it), if the account is still unverified and
 * still owns that org. Put it before the statement that marks the account verified; the caller
 * then opens the org's account (`openBillingAccount` posts the grant the row names).
 */
export async function grantStatement(
  env: Env,
  input: { userId: string; email: string; now: number; gate: Gate },
): Promise<D1PreparedStatement> {
  const emailKey = await grantKey(env, input.email);
  return env.DB.prepare(
    `INSERT INTO signup_grants (email_key, org_id, granted_at)
     SELECT ?, u.signup_org_id, ? FROM users u
     WHERE u.id = ? AND u.email_verified_at IS NULL AND u.signup_org_id IS NOT NULL
       AND EXISTS (SELECT 1 FROM memberships m
                   WHERE m.org_id = u.signup_org_id AND m.user_id = u.id AND m.role = 'owner')
       AND ${input.gate.sql}
     ON CONFLICT DO NOTHING`,
  ).bind(emailKey, input.now, input.userId, ...input.gate.bindings);
}

/** The key `signup_grants` records a person under: the keyed hash of the normalised address. */
const grantKey = (env: Env, email: string) =>
  keyedHash(env.ERASURE_HASH_KEY, "signup-grant", normalizedEmail(email));

/**
 * Whether proving the address now would give the sign-up grant, by `grantStatement`'s rules: the
 * account is unverified, still owns the org it signed up with (an invitee signed up with none),
 * and no account of this person's had the grant. For `GET /api/me` (the web's banner says so).
 */
export async function grantWaits(env: Env, userId: string, email: string): Promise<boolean> {
  const candidate = await env.DB.prepare(
    `SELECT 1 AS found FROM users u
     JOIN memberships m ON m.org_id = u.signup_org_id AND m.user_id = u.id AND m.role = 'owner'
     WHERE u.id = ? AND u.email_verified_at IS NULL`,
  )
    .bind(userId)
    .first();
  return candidate !== null && !(await hadGrant(env, email));
}

/** Whether the person at this address (however spelled) had the sign-up grant already. */
export async function hadGrant(env: Env, email: string): Promise<boolean> {
  const granted = await env.DB.prepare("SELECT 1 AS found FROM signup_grants WHERE email_key = ?")
    .bind(await grantKey(env, email))
    .first();
  return granted !== null;
}

/** The org a just-verified account's sign-up grant went to, if this verification gave it. */
export async function grantedOrg(env: Env, userId: string, now: number): Promise<string | null> {
  const row = await env.DB.prepare(
    `SELECT g.org_id FROM signup_grants g JOIN users u ON u.signup_org_id = g.org_id
     WHERE u.id = ? AND g.granted_at = ?`,
  )
    .bind(userId, now)
    .first<{ org_id: string }>();
  return row?.org_id ?? null;
}
