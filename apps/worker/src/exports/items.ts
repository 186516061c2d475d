import { iso } from "../db/pagination.ts";

/**
 * An archive's items of the tables read row by row (exports/sections.ts): each row's columns,
 * named as the public API names them, with times as ISO strings.
 */

export const time = (ms: number | null) => (ms === null ? null : iso(ms));

export function auditItems(
  rows: {
    id: string;
    org_id: string | null;
    actor_id: string | null;
    action: string;
    subject_type: string | null;
    subject_id: string | null;
    data: string | null;
    created_at: number;
  }[],
) {
  return rows.map((r) => ({
    id: r.id,
    orgId: r.org_id,
    actorId: r.actor_id,
    action: r.action,
    subjectType: r.subject_type,
    subjectId: r.subject_id,
    data: r.data ? (JSON.parse(r.data) as unknown) : null,
    createdAt: iso(r.created_at),
  }));
}

export const EXPORT_COLUMNS = `id, kind, org_id, requested_by, status, created_at, completed_at, expires_at, size_bytes`;

export function exportItems(
  rows: {
    id: string;
    kind: string;
    org_id: string | null;
    requested_by: string;
    status: string;
    created_at: number;
    completed_at: number | null;
    expires_at: number | null;
    size_bytes: number | null;
  }[],
) {
  return rows.map((r) => ({
    id: r.id,
    kind: r.kind,
    orgId: r.org_id,
    requestedBy: r.requested_by,
    status: r.status,
    createdAt: iso(r.created_at),
    completedAt: time(r.completed_at),
    expiresAt: time(r.expires_at),
    sizeBytes: r.size_bytes,
  }));
}

export const API_KEY_COLUMNS =
  "id, org_id, name, prefix, scopes, created_by, created_at, last_used_at, expires_at, revoked_at";

export function apiKeyItems(
  rows: {
    id: string;
    org_id: string;
    name: string;
    prefix: string;
    scopes: string;
    created_by: string | null;
    created_at: number;
    last_used_at: number | null;
    expires_at: number | null;
    revoked_at: number | null;
  }[],
) {
  return rows.map((r) => ({
    id: r.id,
    orgId: r.org_id,
    name: r.name,
    prefix: r.prefix,
    scopes: JSON.parse(r.scopes) as unknown,
    createdBy: r.created_by,
    createdAt: iso(r.created_at),
    lastUsedAt: time(r.last_used_at),
    expiresAt: time(r.expires_at),
    revokedAt: time(r.revoked_at),
  }));
}

export const INVITATION_COLUMNS =
  "id, org_id, email, role, invited_by, created_at, expires_at, accepted_at, accepted_by, revoked_at";

export function invitationItems(
  rows: {
    id: string;
    org_id: string;
    email: string;
    role: string;
    invited_by: string | null;
    created_at: number;
    expires_at: number;
    accepted_at: number | null;
    accepted_by: string | null;
    revoked_at: number | null;
  }[],
) {
  return rows.map((r) => ({
    id: r.id,
    orgId: r.org_id,
    email: r.email,
    role: r.role,
    invitedBy: r.invited_by,
    createdAt: iso(r.created_at),
    expiresAt: iso(r.expires_at),
    acceptedAt: time(r.accepted_at),
    acceptedBy: r.accepted_by,
    revokedAt: time(r.revoked_at),
  }));
}

/** A session's directory row and its whole transcript, read from its AssistantAgent. */
