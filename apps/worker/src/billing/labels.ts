import { LABEL_FALLBACKS } from "@parley/shared";

/** The ids a page names, by kind; nulls and repeats are fine. */
export interface LabelRequest {
  members?: Iterable<string | null>;
  projects?: Iterable<string | null>;
  sessions?: Iterable<string | null>;
}

/** What a person reads for each id of a page (see `LABEL_FALLBACKS` for what no longer exists). */
export interface Labels {
  member(id: string | null): string;
  project(id: string | null): string;
  session(id: string | null): string;
}

const distinct = (ids: Iterable<string | null> | undefined): string[] =>
  [...new Set(ids ?? [])].filter((id): id is string => typeof id === "string" && id !== "");

/** A pseudonym an erasure left in the ledger in place of a member's id (erasure/pseudonym.ts). */
const isPseudonym = (id: string) => id.startsWith("anon_");

/**
 * Names for the ids of one page of billing data, from D1 in one query whatever the page's size
 * (the ids travel as JSON arrays, not one bound parameter each: D1 caps those at 100). Projects
 * and sessions are looked up in `orgId` only; members by id, as only this org's usage names them.
 * An end user of one of the org's apps (`eu_...`, in the member column) reads as "End user: " and
 * their name, or the tenant's id for them: usage groups by end user as by member. The mark comes
 * first: a tenant's id can be any text, a member's `usr_...` id or a member's name included, and
 * "usr_... (end user)" read as a member (the security probe of 2026-12-06, finding 4).
 */
export async function resolveLabels(
  db: D1Database,
  orgId: string,
  request: LabelRequest,
): Promise<Labels> {
  const members = distinct(request.members).filter((id) => !isPseudonym(id));
  const projects = distinct(request.projects);
  const sessions = distinct(request.sessions);
  const found = { member: new Map<string, string>(), project: new Map(), session: new Map() };
  if (members.length + projects.length + sessions.length > 0) {
    const { results } = await db
      .prepare(
        `SELECT 'member' AS kind, id, COALESCE(NULLIF(name, ''), email) AS label FROM users
           WHERE id IN (SELECT value FROM json_each(?1))
         UNION ALL SELECT 'member', id, 'End user: ' || COALESCE(NULLIF(name, ''), external_id)
           FROM end_users WHERE org_id = ?4 AND id IN (SELECT value FROM json_each(?1))
         UNION ALL SELECT 'project', id, name FROM projects
           WHERE org_id = ?4 AND id IN (SELECT value FROM json_each(?2))
         UNION ALL SELECT 'session', id, COALESCE(NULLIF(title, ''), ?5) FROM sessions
           WHERE org_id = ?4 AND id IN (SELECT value FROM json_each(?3))`,
      )
      .bind(
        JSON.stringify(members),
        JSON.stringify(projects),
        JSON.stringify(sessions),
        orgId,
        LABEL_FALLBACKS.untitledSession,
      )
      .all<{ kind: "member" | "project" | "session"; id: string; label: string }>();
    for (const row of results) found[row.kind].set(row.id, row.label);
  }
  return {
    member: (id) =>
      id === null || id === ""
        ? LABEL_FALLBACKS.noMember
        : isPseudonym(id)
          ? LABEL_FALLBACKS.erasedMember
          : (found.member.get(id) ?? LABEL_FALLBACKS.unknownMember),
    project: (id) =>
      id === null || id === ""
        ? LABEL_FALLBACKS.noProject
        : (found.project.get(id) ?? LABEL_FALLBACKS.deletedProject),
    session: (id) =>
      id === null || id === ""
        ? LABEL_FALLBACKS.noSession
        : (found.session.get(id) ?? LABEL_FALLBACKS.deletedSession),
  };
}
