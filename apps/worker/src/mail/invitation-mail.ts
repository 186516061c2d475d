import type { Context } from "hono";
import { keyedHash } from "../auth/keyed-hash.ts";
import type { AppEnv } from "../http/context.ts";
import { queueMailStatement } from "./outbox.ts";

/**
 * The outbox key of an invitation's mail: one mail per invitation, and how accepting it learns that
 * the link went to the invited address (routes/invitation-links.ts counts that as proof of it).
 */
export const invitationMailKey = (invitationId: string) => `invitation:${invitationId}`;

/**
 * The invitation's mail (routes/invitations.ts): the same link the inviter is handed, sent to the
 * invitee, queued in the batch that makes the invitation and only if it was made. Not mailed (the
 * inviter still has the link to send themselves) when the inviter's own address is unverified, or
 * past their limit of invitation mails: an account nobody proved, or a script, cannot use Parley
 * to mail strangers.
 */
export async function invitationMail(
  c: Context<AppEnv>,
  input: {
    row: {
      id: string;
      org_id: string;
      email: string;
      role: string;
      expires_at: number;
      created_at: number;
    };
    inviterId: string;
    link: string;
  },
): Promise<{ mailed: boolean; statements: D1PreparedStatement[] }> {
  const db = c.env.DB;
  const inviter = await db
    .prepare(
      `SELECT u.name, u.email_verified_at, o.name AS org_name FROM users u
       JOIN memberships m ON m.user_id = u.id JOIN organizations o ON o.id = m.org_id
       WHERE u.id = ? AND m.org_id = ?`,
    )
    .bind(input.inviterId, input.row.org_id)
    .first<{ name: string; email_verified_at: number | null; org_name: string }>();
  if (!inviter || inviter.email_verified_at === null) return { mailed: false, statements: [] };
  const { success } = await c.env.INVITE_MAIL_RATE_LIMITER.limit({
    key: await keyedHash(c.env.ERASURE_HASH_KEY, "invite-mail", input.inviterId),
  });
  if (!success) return { mailed: false, statements: [] };
  const statement = await queueMailStatement(
    c.env,
    {
      kind: "invitation",
      to: input.row.email,
      orgId: input.row.org_id,
      dedupeKey: invitationMailKey(input.row.id),
      data: {
        orgName: inviter.org_name,
        inviterName: inviter.name,
        role: input.row.role,
        link: input.link,
        expiresAt: input.row.expires_at,
      },
    },
    {
      now: input.row.created_at,
      onlyIf: { sql: "EXISTS (SELECT 1 FROM invitations WHERE id = ?)", bindings: [input.row.id] },
    },
  );
  return { mailed: true, statements: [statement] };
}
