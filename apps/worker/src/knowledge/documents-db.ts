import {
  AppError,
  DEFAULT_KNOWLEDGE_QUOTA_BYTES,
  type DocumentIndexing,
  type DocumentVersion,
  type KnowledgeContentType,
  type KnowledgeDocument,
  type Role,
} from "@parley/shared";
import { notFound } from "../auth/access.ts";
import { iso } from "../db/pagination.ts";
import type { OrgAccess } from "../http/context.ts";

/** D1's side of knowledge: the documents and versions listed, authorized and counted. */

export interface DocumentRow {
  id: string;
  org_id: string;
  project_id: string;
  name: string;
  content_type: KnowledgeContentType;
  version: number;
  bytes: number;
  created_by: string | null;
  created_at: number;
  updated_at: number;
}

export interface VersionRow {
  document_id: string;
  version: number;
  org_id: string;
  project_id: string;
  content_type: KnowledgeContentType;
  bytes: number;
  text_chars: number;
  sha256: string;
  created_by: string | null;
  created_at: number;
}

/** The org's storage quota in bytes (`KNOWLEDGE_QUOTA_BYTES`, else 50 MiB). */
export function knowledgeQuota(env: Env): number {
  const raw = (env.KNOWLEDGE_QUOTA_BYTES ?? "").trim();
  const value = raw === "" ? DEFAULT_KNOWLEDGE_QUOTA_BYTES : Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new Error("KNOWLEDGE_QUOTA_BYTES must be a whole number of bytes");
  }
  return value;
}

/** The org's stored bytes (current versions) and documents. */
export async function storageUsed(
  db: D1Database,
  orgId: string,
): Promise<{ bytes: number; documents: number }> {
  const row = await db
    .prepare(
      "SELECT COALESCE(SUM(bytes), 0) AS bytes, COUNT(*) AS documents FROM knowledge_documents WHERE org_id = ?",
    )
    .bind(orgId)
    .first<{ bytes: number; documents: number }>();
  return { bytes: row?.bytes ?? 0, documents: row?.documents ?? 0 };
}

/**
 * The document and the caller's role in its org, in one query: another org's document, or one
 * whose project was erased or deleted, answers `not_found` exactly like a missing one.
 */
export async function documentAccess(
  db: D1Database,
  userId: string,
  documentId: string,
): Promise<{ document: DocumentRow; access: OrgAccess }> {
  const row = await db
    .prepare(
      `SELECT d.*, m.role AS role FROM knowledge_documents d
       JOIN memberships m ON m.org_id = d.org_id AND m.user_id = ?
       JOIN projects p ON p.id = d.project_id AND p.deleted_at IS NULL
       WHERE d.id = ?`,
    )
    .bind(userId, documentId)
    .first<DocumentRow & { role: Role }>();
  if (!row) throw notFound("Document");
  const { role, ...document } = row;
  return { document, access: { orgId: document.org_id, role } };
}

const NOT_INDEXED: DocumentIndexing = {
  status: "queued",
  version: 1,
  done: 0,
  total: 0,
  error: null,
};

export function toDocument(row: DocumentRow, indexing?: DocumentIndexing): KnowledgeDocument {
  return {
    id: row.id,
    projectId: row.project_id,
    orgId: row.org_id,
    name: row.name,
    contentType: row.content_type,
    version: row.version,
    bytes: row.bytes,
    createdBy: row.created_by,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    // The object has not seen this version yet (its stage is in flight): it is queued.
    indexing:
      indexing && indexing.version === row.version
        ? indexing
        : { ...NOT_INDEXED, version: row.version },
  };
}

export function toVersion(row: VersionRow): DocumentVersion {
  return {
    version: row.version,
    contentType: row.content_type,
    bytes: row.bytes,
    textChars: row.text_chars,
    sha256: row.sha256,
    createdBy: row.created_by,
    createdAt: iso(row.created_at),
  };
}

export async function versionsOf(db: D1Database, documentId: string): Promise<VersionRow[]> {
  const { results } = await db
    .prepare("SELECT * FROM knowledge_versions WHERE document_id = ? ORDER BY version DESC")
    .bind(documentId)
    .all<VersionRow>();
  return results;
}

/** The quota condition of a write that adds `?bytes` net to the org (bound by name below). */
const FITS = `(SELECT COALESCE(SUM(bytes), 0) FROM knowledge_documents WHERE org_id = ?2) + ?3 <= ?4`;

export function quotaRefusal(quota: number): AppError {
  return new AppError(
    "conflict",
    `The organization's documents would pass its storage quota of ${quota} bytes: delete some first`,
  );
}

/**
 * Writes a new document's row and first version if the org's quota holds it, in one statement
 * each (the quota is read and written atomically: D1 runs one statement at a time). Answers
 * whether it was written.
 */
export function insertDocumentStatements(
  db: D1Database,
  row: DocumentRow,
  version: VersionRow,
  quota: number,
): D1PreparedStatement[] {
  return [
    db
      .prepare(
        `INSERT INTO knowledge_documents (id, org_id, project_id, name, content_type, version, bytes,
           created_by, created_at, updated_at)
         SELECT ?1, ?2, ?5, ?6, ?7, 1, ?3, ?8, ?9, ?9 WHERE ${FITS}`,
      )
      .bind(
        row.id,
        row.org_id,
        row.bytes,
        quota,
        row.project_id,
        row.name,
        row.content_type,
        row.created_by,
        row.created_at,
      ),
    versionStatement(db, version),
  ];
}

/** A version's row, written only if its document now has that version (the write before held). */
function versionStatement(db: D1Database, version: VersionRow): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO knowledge_versions (document_id, version, org_id, project_id, content_type, bytes,
         text_chars, sha256, created_by, created_at)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10
       WHERE EXISTS (SELECT 1 FROM knowledge_documents WHERE id = ?1 AND version = ?2)`,
    )
    .bind(
      version.document_id,
      version.version,
      version.org_id,
      version.project_id,
      version.content_type,
      version.bytes,
      version.text_chars,
      version.sha256,
      version.created_by,
      version.created_at,
    );
}

/**
 * A new version in place of `previous`: only if the document is still at that version (two
 * uploads racing: one wins, the other is told to try again) and the org's quota holds the
 * difference.
 */
export function replaceDocumentStatements(
  db: D1Database,
  previous: DocumentRow,
  next: { name: string; contentType: KnowledgeContentType; bytes: number; now: number },
  version: VersionRow,
  quota: number,
): D1PreparedStatement[] {
  return [
    db
      .prepare(
        `UPDATE knowledge_documents SET version = version + 1, bytes = ?5, content_type = ?6,
           name = ?7, updated_at = ?8
         WHERE id = ?1 AND version = ?9 AND ${FITS}`,
      )
      .bind(
        previous.id,
        previous.org_id,
        next.bytes - previous.bytes,
        quota,
        next.bytes,
        next.contentType,
        next.name,
        next.now,
        previous.version,
      ),
    versionStatement(db, version),
  ];
}
