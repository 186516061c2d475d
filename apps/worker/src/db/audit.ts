import { newId } from "@parley/shared";

export interface AuditEvent {
  orgId: string | null;
  actorId: string | null;
  action: string;
  subjectType?: string;
  subjectId?: string;
  /** Small, content-free facts (a role, a name change flag). Never message text or credentials. */
  data?: Record<string, string | number | boolean | null>;
}

/**
 * A prepared audit insert, to run in the same batch (one transaction) as the change it records.
 * With `afterChange`, the row is written only if the statement just before it in the batch changed a
 * row (SQLite's `changes()`), so a conditional write that was refused leaves no audit entry.
 */
export function auditStatement(
  db: D1Database,
  event: AuditEvent,
  options: { now?: number; afterChange?: boolean } = {},
): D1PreparedStatement {
  const now = options.now ?? Date.now();
  return db
    .prepare(
      `INSERT INTO audit_log (id, org_id, actor_id, action, subject_type, subject_id, data, created_at)
       SELECT ?, ?, ?, ?, ?, ?, ?, ? ${options.afterChange ? "WHERE changes() = 1" : ""}`,
    )
    .bind(
      newId("audit", now),
      event.orgId,
      event.actorId,
      event.action,
      event.subjectType ?? null,
      event.subjectId ?? null,
      event.data ? JSON.stringify(event.data) : null,
      now,
    );
}
