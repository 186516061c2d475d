import { auditStatement } from "./audit.ts";

/**
 * The statements that create an organization with its first owner, for one batch (a transaction)
 * with whatever else the caller writes; the caller then opens the org's BillingAccount.
 */
export function createOrgStatements(
  db: D1Database,
  org: { id: string; name: string; ownerId: string; now: number },
): D1PreparedStatement[] {
  return [
    db
      .prepare("INSERT INTO organizations (id, name, created_at) VALUES (?, ?, ?)")
      .bind(org.id, org.name, org.now),
    db
      .prepare(
        "INSERT INTO memberships (org_id, user_id, role, created_at) VALUES (?, ?, 'owner', ?)",
      )
      .bind(org.id, org.ownerId, org.now),
    auditStatement(
      db,
      {
        orgId: org.id,
        actorId: org.ownerId,
        action: "org.created",
        subjectType: "org",
        subjectId: org.id,
      },
      { now: org.now },
    ),
  ];
}
