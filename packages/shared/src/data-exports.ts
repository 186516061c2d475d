/**
 * Data exports (GDPR Art. 15 and 20; docs/2026-12-02-data-export.md): what the API answers for an
 * export job and what the archive it produces looks like.
 */

/** The archive's `format` field: one JSON document, versioned. */
export const EXPORT_FORMAT = "parley.data-export";
export const EXPORT_FORMAT_VERSION = 1;

export type DataExportKind = "account" | "org";
export type DataExportStatus = "pending" | "running" | "completed" | "failed";

/** An export job as `GET /api/me/exports/:id` and `GET /api/orgs/:orgId/exports/:id` answer it. */
export interface DataExport {
  id: string;
  kind: DataExportKind;
  orgId: string | null;
  status: DataExportStatus;
  /** Units of work: a section of the archive, or one session's transcript. */
  progress: { done: number; total: number };
  createdAt: string;
  completedAt: string | null;
  /** When the download link (and the archive) stops existing; null until completed. */
  expiresAt: string | null;
  /** The link, for the person who asked, while it is good; null otherwise. */
  downloadUrl: string | null;
  sizeBytes: number | null;
  /** Why a failed export failed (no content). */
  error: string | null;
}
