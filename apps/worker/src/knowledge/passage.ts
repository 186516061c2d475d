import type { Passage } from "@parley/shared";

/**
 * One passage read from a project's index (the KnowledgeBase's SQLite), for opening a citation:
 * the passage row alone, never the document's text (up to 2 MiB, which the content route reads).
 * The Worker authorizes the document before it asks; here, the passage must belong to that
 * document's current version (the searched one, else the newest staged, as `content` reads).
 */

/** A citation's passage id as search makes them (`c` and the passage row). */
export const PASSAGE_ID = /^c\d{1,12}$/;

export interface CurrentPassage {
  /** The document's name and current version (a citation of another version is 410). */
  name: string;
  version: number;
  /** Null when the id names no passage of this document's current version. */
  passage: Passage | null;
}

/** The document's current version and, if it holds it, the passage `chunkId`; null: no document. */
export function readPassage(
  sql: SqlStorage,
  documentId: string,
  chunkId: string,
): CurrentPassage | null {
  const doc = sql
    .exec("SELECT name, active_version, latest_version FROM kb_documents WHERE id = ?", documentId)
    .toArray()[0];
  if (!doc) return null;
  const version = Number(doc.active_version ?? doc.latest_version);
  const name = String(doc.name);
  if (!PASSAGE_ID.test(chunkId)) return { name, version, passage: null };
  const row = sql
    .exec(
      `SELECT c.id, c.heading, c.start, c."end", COALESCE(c.pending_body, f.body) AS body
       FROM kb_chunks c LEFT JOIN kb_fts f ON f.rowid = c.id
       WHERE c.id = ? AND c.document_id = ? AND c.version = ?`,
      Number(chunkId.slice(1)),
      documentId,
      version,
    )
    .toArray()[0];
  const passage: Passage | null = row
    ? {
        chunkId,
        heading: String(row.heading),
        text: String(row.body ?? ""),
        start: Number(row.start),
        end: Number(row.end),
      }
    : null;
  return { name, version, passage };
}
