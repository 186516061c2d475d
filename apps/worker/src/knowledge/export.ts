import { iso } from "../db/pagination.ts";
import type { ExportRow } from "../exports/sections.ts";
import { type DocumentRow, toVersion, versionsOf } from "./documents-db.ts";
import { knowledgeBase } from "./ingest.ts";

/**
 * Knowledge in a data export (docs/2026-12-06-knowledge.md, "Lifecycle"): the `documents`
 * section, one unit per document (a document's text can be megabytes): the org's documents in its
 * archive, the ones a person uploaded in theirs, each with its versions and the current text.
 */

/** The documents an archive holds (those of erased or deleted projects never). */
export async function documentIds(env: Env, row: ExportRow): Promise<{ id: string }[]> {
  const { results } = await env.DB.prepare(
    `SELECT d.id FROM knowledge_documents d JOIN projects p ON p.id = d.project_id
     WHERE p.deleted_at IS NULL AND ${row.kind === "account" ? "d.created_by = ?" : "d.org_id = ?"}
     ORDER BY d.id`,
  )
    .bind(row.kind === "account" ? row.subject_user_id : row.org_id)
    .all<{ id: string }>();
  return results;
}

/** One document as the archive holds it; null when it was deleted since the export started. */
export async function documentItem(env: Env, documentId: string) {
  const doc = await env.DB.prepare(
    `SELECT d.id, d.org_id, d.project_id, d.name, d.content_type, d.version, d.bytes, d.created_by,
       d.created_at, d.updated_at
     FROM knowledge_documents d JOIN projects p ON p.id = d.project_id
     WHERE d.id = ? AND p.deleted_at IS NULL`,
  )
    .bind(documentId)
    .first<DocumentRow>();
  if (!doc) return null;
  const content = await knowledgeBase(env, doc.project_id).content(doc.id);
  return {
    id: doc.id,
    orgId: doc.org_id,
    projectId: doc.project_id,
    name: doc.name,
    contentType: doc.content_type,
    version: doc.version,
    bytes: doc.bytes,
    createdBy: doc.created_by,
    createdAt: iso(doc.created_at),
    updatedAt: iso(doc.updated_at),
    versions: (await versionsOf(env.DB, doc.id)).map(toVersion),
    // The text as extracted and indexed (the uploaded file itself is not kept).
    text: content?.text ?? null,
  };
}
