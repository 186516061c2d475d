import { AppError, type DataExport, type DataExportKind, newId } from "@parley/shared";
import { auditStatement } from "../db/audit.ts";
import { iso } from "../db/pagination.ts";
import type { ErasurePlan } from "../erasure/plan.ts";
import type { ExportRow } from "./sections.ts";

export const exportJob = (env: Env, exportId: string) =>
  env.DATA_EXPORT.get(env.DATA_EXPORT.idFromName(exportId));

export interface RequestExport {
  kind: DataExportKind;
  subjectUserId: string;
  orgId: string | null;
  requestedBy: string;
}

/**
 * Files an export (the request and its audit row in one batch) without starting it; `startExport`
 * plans and starts it. One at a time per subject: a second while one is pending or running is 409
 * (the archive of the first one comes in moments). An org with an erasure in flight is refused
 * too: the archive would capture what is being erased.
 */
export async function fileExport(env: Env, input: RequestExport): Promise<ExportRow> {
  const db = env.DB;
  const conflict = () =>
    new AppError("conflict", "An export is already being prepared; wait for it");
  const running = await db
    .prepare(
      `SELECT 1 AS t FROM data_exports WHERE status IN ('pending', 'running') AND kind = ?1
       AND ((?1 = 'account' AND subject_user_id = ?2) OR (?1 = 'org' AND org_id = ?3))`,
    )
    .bind(input.kind, input.subjectUserId, input.orgId)
    .first();
  if (running) throw conflict();
  const erasing = await db
    .prepare(
      `SELECT 1 AS t FROM erasure_requests WHERE status IN ('pending', 'running')
       AND ((?1 <> '' AND org_id = ?1) OR subject_id = ?2)`,
    )
    .bind(input.orgId ?? "", input.subjectUserId)
    .first();
  if (erasing)
    throw new AppError("conflict", "An erasure is in progress here; export once it is done");
  const now = Date.now();
  const id = newId("dataExport", now);
  await db
    .batch([
      db
        .prepare(
          `INSERT INTO data_exports (id, kind, subject_user_id, org_id, requested_by, status, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)`,
        )
        .bind(id, input.kind, input.subjectUserId, input.orgId, input.requestedBy, now, now),
      auditStatement(
        db,
        {
          orgId: input.orgId,
          actorId: input.requestedBy,
          action: "export.requested",
          subjectType: "data_export",
          subjectId: id,
          data: { kind: input.kind },
        },
        { now },
      ),
    ])
    .catch((error: unknown) => {
      // Another request filed one between the check and the write.
      if (/UNIQUE/i.test(String(error))) throw conflict();
      throw error;
    });
  return (await exportRow(env, id)) as ExportRow;
}

export const exportRow = (env: Env, id: string) =>
  env.DB.prepare("SELECT * FROM data_exports WHERE id = ?").bind(id).first<ExportRow>();

/** Plans the export in its object (so the answer has the progress's total) and starts its alarm. */
export async function startExport(env: Env, id: string): Promise<ExportRow> {
  await exportJob(env, id).start(id);
  return (await exportRow(env, id)) as ExportRow;
}

/** Whether the archive can still be downloaded: finished, not expired, not deleted. */
export const downloadable = (row: ExportRow, now = Date.now()) =>
  row.status === "completed" &&
  row.purged_at === null &&
  row.expires_at !== null &&
  row.expires_at > now &&
  row.secret_hash !== null;

/**
 * Whether the person the export's link was issued to still stands where the link needs them
 * (docs/2026-12-06-bearer-links.md): their account is there and no erasure of it, or of the org,
 * is filed; for an org export, they are still an owner of the org. A link is a bearer secret: it
 * may reach no more than its holder could ask for now. Found by the outside probe (2026-12-05): a
 * second owner's org archive stayed downloadable for 24 h after that owner was removed.
 */
export async function holderStands(env: Env, row: ExportRow): Promise<boolean> {
  const found = await env.DB.prepare(
    `SELECT 1 AS ok FROM users u WHERE u.id = ?1
       AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.subject_id IN (?1, ?2, ?3))
       AND (?4 = 'account' OR EXISTS (
         SELECT 1 FROM memberships m WHERE m.org_id = ?3 AND m.user_id = ?1 AND m.role = 'owner'))`,
  )
    .bind(row.requested_by, row.subject_user_id, row.org_id ?? "", row.kind)
    .first<{ ok: number }>();
  return found !== null;
}

/**
 * The export as the API answers it. `base` (the public origin) is given only for the person who
 * asked for it: the link, with its secret, is theirs alone.
 */
export async function toDataExport(
  env: Env,
  row: ExportRow,
  base: string | null,
): Promise<DataExport> {
  let downloadUrl: string | null = null;
  if (base && downloadable(row)) {
    const secret = await exportJob(env, row.id).secret();
    if (secret) downloadUrl = `${base}/api/exports/${row.id}/download?key=${secret}`;
  }
  return {
    id: row.id,
    kind: row.kind,
    orgId: row.org_id,
    status: row.status,
    progress: { done: row.progress_done, total: row.progress_total },
    createdAt: iso(row.created_at),
    completedAt: row.completed_at === null ? null : iso(row.completed_at),
    expiresAt: row.expires_at === null || row.purged_at !== null ? null : iso(row.expires_at),
    downloadUrl,
    sizeBytes: row.size_bytes,
    error: row.error,
  };
}

/**
 * The exports an erasure reaches (erasure step `exports`): archives hold personal data, so every
 * archive that may hold what is being erased goes, with its request row: the person's own account
 * exports and those they asked for, and every org export of the orgs the erasure touches (an
 * org's archive holds its members' sessions, usage and profile).
 */
export async function exportsReached(env: Env, plan: ErasurePlan, orgId: string | null) {
  const orgs = [...new Set([...plan.orgIds, ...plan.deleteOrgIds, ...(orgId ? [orgId] : [])])];
  const { results } = await env.DB.prepare(
    `SELECT id FROM data_exports
     WHERE (kind = 'org' AND org_id IN (SELECT value FROM json_each(?1)))
        OR (?2 IS NOT NULL AND (subject_user_id = ?2 OR requested_by = ?2))
        OR (kind = 'account' AND subject_user_id IN (
              SELECT owner_id FROM sessions WHERE id IN (SELECT value FROM json_each(?3))))`,
  )
    .bind(JSON.stringify(orgs), plan.userId, JSON.stringify(plan.sessionIds))
    .all<{ id: string }>();
  return results.map((r) => r.id);
}

export async function eraseExports(
  env: Env,
  plan: ErasurePlan,
  orgId: string | null,
): Promise<string> {
  const ids = await exportsReached(env, plan, orgId);
  // The rows first: a job still running finds its request gone and deletes what it wrote.
  if (ids.length > 0) {
    await env.DB.prepare("DELETE FROM data_exports WHERE id IN (SELECT value FROM json_each(?))")
      .bind(JSON.stringify(ids))
      .run();
  }
  for (const id of ids) await exportJob(env, id).purge();
  return `${ids.length} data exports deleted`;
}
