import { isEndUserId, newId } from "@parley/shared";
import { revokeConnections } from "../agents/revocation.ts";
import { auditStatement } from "../db/audit.ts";
import {
  type ErasurePlan,
  type ErasureRequestRow,
  STEP_NAMES,
  type Step,
  type SubjectType,
} from "./plan.ts";
import { pseudonym } from "./pseudonym.ts";

export const LEGAL_BASIS = "GDPR Art. 17 (right to erasure)";

export interface FileErasure {
  requestedBy: string;
  orgId: string | null;
  subject: { type: SubjectType; id: string };
  reason: string | null;
  plan: ErasurePlan;
}

/**
 * Files an erasure request: in one D1 transaction, the request with its steps, the tombstones of
 * everything it reaches (from this moment the Worker answers 410 and never addresses those objects,
 * so nothing can recreate them while the job runs) and an audit entry naming the subject by its
 * hash only; then the job is started. Filing the same subject again (same org, same type) while a
 * request runs returns it, and a failed one runs again: erasure is idempotent and finishable.
 */
/**
 * The newest request filed for this subject in this org, of this subject type, whatever its status:
 * the same person erased in two orgs, or a member and then their whole account, are different
 * erasures, each of which must run. `orgId` null is an account erasure.
 */
export async function earlierRequest(
  env: Env,
  orgId: string | null,
  subject: { type: SubjectType; id: string },
): Promise<ErasureRequestRow | null> {
  return env.DB.prepare(
    `SELECT * FROM erasure_requests
     WHERE subject_hash = ? AND subject_type = ? AND org_id IS ?
     ORDER BY id DESC LIMIT 1`,
  )
    .bind(await pseudonym(env.ERASURE_HASH_KEY, subject.id), subject.type, orgId)
    .first<ErasureRequestRow>();
}

/**
 * Runs a failed request again from the step that failed, with its attempts reset: erasure must be
 * finishable even after its first run gave up (say a step failed six times while a store was down),
 * though the subject's rows the run already removed cannot be looked up again to file anew.
 */
export async function retryErasure(
  env: Env,
  request: ErasureRequestRow,
): Promise<ErasureRequestRow> {
  const steps = (JSON.parse(request.steps) as Step[]).map((step) =>
    step.status === "failed" ? { ...step, status: "pending" as const } : step,
  );
  const now = Date.now();
  await env.DB.batch([
    env.DB.prepare(
      "UPDATE erasure_requests SET status = 'running', attempts = 0, steps = ?, updated_at = ? WHERE id = ? AND status = 'failed'",
    ).bind(JSON.stringify(steps), now, request.id),
    auditStatement(
      env.DB,
      {
        orgId: request.org_id,
        actorId: request.requested_by,
        action: "erasure.retried",
        subjectType: request.subject_type,
        subjectId: request.subject_hash,
        data: { requestId: request.id },
      },
      { now, afterChange: true },
    ),
  ]);
  await startJob(env, request.id);
  return (await env.DB.prepare("SELECT * FROM erasure_requests WHERE id = ?")
    .bind(request.id)
    .first<ErasureRequestRow>()) as ErasureRequestRow;
}

export async function fileErasure(env: Env, input: FileErasure): Promise<ErasureRequestRow> {
  const db = env.DB;
  const subjectHash = await pseudonym(env.ERASURE_HASH_KEY, input.subject.id);
  // One erasure at a time per subject: one in progress is nudged, a failed one runs again. A
  // completed one does not stand in for a new one (a member re-added since is a new erasure).
  const existing = await earlierRequest(env, input.orgId, input.subject);
  if (existing?.status === "failed") return retryErasure(env, existing);
  if (existing && existing.status !== "completed") {
    await startJob(env, existing.id);
    return existing;
  }
  const now = Date.now();
  const id = newId("erasure", now);
  const steps: Step[] = STEP_NAMES.map((name) => ({
    name,
    status: "pending",
    at: null,
    detail: null,
  }));
  const tombstoned: [string, string][] = [
    ...input.plan.sessionIds.map((s): [string, string] => [s, "session"]),
    ...input.plan.projectIds.map((p): [string, string] => [p, "project"]),
    ...(input.subject.type === "account"
      ? [[input.subject.id, "account"] as [string, string]]
      : []),
    // An end user is refused from now on (their token checks look for the tombstone).
    ...(isEndUserId(input.subject.id) ? [[input.subject.id, "end_user"] as [string, string]] : []),
  ];
  await db.batch([
    db
      .prepare(
        `INSERT INTO erasure_requests (id, org_id, requested_by, subject_type, subject_hash, subject_id, plan, legal_basis,
           reason, status, steps, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)`,
      )
      .bind(
        id,
        input.orgId,
        input.requestedBy,
        input.subject.type,
        subjectHash,
        input.subject.id,
        JSON.stringify(input.plan),
        LEGAL_BASIS,
        input.reason,
        JSON.stringify(steps),
        now,
        now,
      ),
    // The rows stay until the job's D1 step; marking them now makes the API answer 410 at once.
    ...input.plan.sessionIds.map((sessionId) =>
      db
        .prepare("UPDATE sessions SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL")
        .bind(now, sessionId),
    ),
    ...input.plan.projectIds.map((projectId) =>
      db
        .prepare("UPDATE projects SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL")
        .bind(now, projectId),
    ),
    // An org erased whole: its apps verify no token from now on (the job removes them).
    ...(input.plan.deleteOrgIds.length > 0
      ? [
          db
            .prepare(
              `UPDATE apps SET deleted_at = ? WHERE deleted_at IS NULL
               AND org_id IN (SELECT value FROM json_each(?))`,
            )
            .bind(now, JSON.stringify(input.plan.deleteOrgIds)),
        ]
      : []),
    // The API keys of orgs erased whole stop working now, as the account's tokens do (the job
    // deletes them with the org's directory rows).
    ...input.plan.deleteOrgIds.map((orgId) =>
      db
        .prepare("UPDATE api_keys SET revoked_at = ? WHERE org_id = ? AND revoked_at IS NULL")
        .bind(now, orgId),
    ),
    ...tombstoned.map(([subjectId, type]) =>
      db
        .prepare(
          `INSERT INTO tombstones (subject_id, subject_type, org_id, request_id, erased_at) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT DO NOTHING`,
        )
        .bind(subjectId, type, input.orgId, id, now),
    ),
    auditStatement(
      db,
      {
        orgId: input.orgId,
        actorId: input.requestedBy,
        action: "erasure.requested",
        subjectType: input.subject.type,
        subjectId: subjectHash,
        data: { requestId: id },
      },
      { now },
    ),
  ]);
  // The chats being erased close now (their agents keep access between turns): the job wipes
  // them a moment later.
  for (const sessionId of input.plan.sessionIds) {
    await revokeConnections(env, { sessionId }, { erasing: true });
  }
  for (const projectId of input.plan.projectIds) {
    await revokeConnections(env, { projectId }, { erasing: true });
  }
  if (isEndUserId(input.subject.id)) {
    await revokeConnections(env, { userId: input.subject.id });
  }
  if (input.subject.type === "account") {
    // The account stops working now, not when the job reaches its rows: its sign-ins are revoked
    // (a refresh would otherwise still mint tokens) and its open sockets close.
    await db
      .prepare("UPDATE refresh_tokens SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL")
      .bind(now, input.subject.id)
      .run();
    await revokeConnections(env, { userId: input.subject.id });
  }
  await startJob(env, id);
  return (await db
    .prepare("SELECT * FROM erasure_requests WHERE id = ?")
    .bind(id)
    .first<ErasureRequestRow>()) as ErasureRequestRow;
}

/**
 * Runs the job now, in the job's own object, so the answer usually reports it completed; its alarm
 * stays set as the safety net that resumes it after a crash.
 */
async function startJob(env: Env, requestId: string): Promise<void> {
  const job = env.ERASURE_JOB.get(env.ERASURE_JOB.idFromName(requestId));
  await job.start(requestId);
  await job.run(requestId);
}

/** The request as the API shows it: the subject by its hash, never by its id. */
export function toErasureRequest(row: ErasureRequestRow) {
  return {
    id: row.id,
    orgId: row.org_id,
    status: row.status,
    subject: { type: row.subject_type, hash: row.subject_hash },
    legalBasis: row.legal_basis,
    reason: row.reason,
    requestedBy: row.requested_by,
    steps: JSON.parse(row.steps) as Step[],
    verification: row.verification ? (JSON.parse(row.verification) as unknown) : null,
    attempts: row.attempts,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
    completedAt: row.completed_at === null ? null : new Date(row.completed_at).toISOString(),
  };
}
