import { normalizedEmail } from "../auth/keyed-hash.ts";

/**
 * A person's mail records (`mail_outbox`, docs/2026-12-06-mail.md): those about their account
 * (`user_id`, whatever address it had then) and those to their address without an account behind
 * them (an invitation), matched as invitations are (`+tags` and Gmail's dots aside). `orgId`
 * narrows them to one org's (a member erased from that org). Erasure deletes them; an account
 * export lists them.
 */
export async function mailRecordIds(
  db: D1Database,
  who: { userId: string | null; email: string | null | undefined; orgId?: string | null },
): Promise<string[]> {
  const person = who.email ? normalizedEmail(who.email) : null;
  const domain = person?.split("@")[1] ?? "";
  const domains = domain === "gmail.com" ? ["gmail.com", "googlemail.com"] : [domain];
  const { results } = await db
    .prepare(
      `SELECT id, recipient, user_id FROM mail_outbox
       WHERE (user_id = ?1 OR lower(substr(recipient, instr(recipient, '@') + 1)) IN (SELECT value FROM json_each(?2)))
       ${who.orgId ? "AND org_id = ?3" : ""}`,
    )
    .bind(who.userId, JSON.stringify(person ? domains : []), ...(who.orgId ? [who.orgId] : []))
    .all<{ id: string; recipient: string; user_id: string | null }>();
  return results
    .filter(
      (row) =>
        (who.userId !== null && row.user_id === who.userId) ||
        (person !== null && normalizedEmail(row.recipient) === person),
    )
    .map((row) => row.id);
}
