/**
 * Former members of an org: people the audit trail records leaving it (or being removed: both are
 * `member.removed`), who are not members again, and whose account still exists. An erasure of a
 * member replaces their id in the org's audit trail with its pseudonym, so someone already erased
 * here is no longer found: the list is what is left to erase.
 */

const FORMER = `FROM audit_log a JOIN users u ON u.id = a.subject_id
  WHERE a.org_id = ?1 AND a.action = 'member.removed' AND a.subject_type = 'user'
    AND NOT EXISTS (SELECT 1 FROM memberships m WHERE m.org_id = ?1 AND m.user_id = u.id)`;

export interface FormerMemberRow {
  user_id: string;
  email: string;
  name: string;
  left_at: number;
}

/** One page of the org's former members, by user id descending (as the members list pages). */
export async function formerMembers(
  db: D1Database,
  orgId: string,
  page: { before: string; limit: number },
): Promise<FormerMemberRow[]> {
  const { results } = await db
    .prepare(
      `SELECT u.id AS user_id, u.email, u.name, MAX(a.created_at) AS left_at ${FORMER}
         AND u.id < ?2
       GROUP BY u.id ORDER BY u.id DESC LIMIT ?3`,
    )
    .bind(orgId, page.before, page.limit)
    .all<FormerMemberRow>();
  return results;
}

/** Whether `userId` is a former member of the org (see above). */
export async function isFormerMember(
  db: D1Database,
  orgId: string,
  userId: string,
): Promise<boolean> {
  const row = await db
    .prepare(`SELECT 1 AS ok ${FORMER} AND u.id = ?2 LIMIT 1`)
    .bind(orgId, userId)
    .first();
  return row !== null;
}
