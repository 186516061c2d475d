import type { DocumentIndexing, Passage } from "@parley/shared";
import { shownReason } from "../http/errors.ts";
import { type Chunk, FTS_TOKENIZE } from "./chunk.ts";
import { type EmbeddingSide, embedPassages } from "./embeddings.ts";
import { chunkId, type Hit, hitsByRows, lexicalSearch, searchIndex } from "./search.ts";

/**
 * A project's index in its KnowledgeBase's SQLite (docs/2026-12-06-knowledge.md, "Index"):
 * documents, their text, passages, a plain FTS5 table (its own content, so a deletion is a real
 * delete the index merges away, unlike the contentless and external-content modes), and the
 * indexing jobs. Logic only: the Durable Object (knowledge-base.ts) owns the alarm and the
 * bindings, and tests drive this class over a real object's storage. Searching is `search.ts`;
 * embedding a slice's passages is `embeddings.ts`.
 */

/** Passages one alarm indexes before it hands over to the next alarm. */
export const SLICE_CHUNKS = 200;
/** Largest piece of a document's text one row holds (rows are limited to 2 MB). */
const TEXT_PIECE_CHARS = 512 * 1024;

export interface StageInput {
  documentId: string;
  version: number;
  name: string;
  text: string;
  chunks: Chunk[];
  /** Who uploaded it: the embedding's usage is theirs in the ledger. */
  memberId: string;
}

export class KnowledgeStore {
  readonly #sql: SqlStorage;
  readonly #transaction: <T>(fn: () => T) => T;

  constructor(sql: SqlStorage, transaction: <T>(fn: () => T) => T) {
    this.#sql = sql;
    this.#transaction = transaction;
    sql.exec(
      `CREATE TABLE IF NOT EXISTS kb_documents (
         id TEXT PRIMARY KEY, name TEXT NOT NULL, active_version INTEGER,
         latest_version INTEGER NOT NULL, status TEXT NOT NULL, done INTEGER NOT NULL DEFAULT 0,
         total INTEGER NOT NULL DEFAULT 0, error TEXT);
       CREATE TABLE IF NOT EXISTS kb_texts (
         document_id TEXT NOT NULL, version INTEGER NOT NULL, seq INTEGER NOT NULL,
         body TEXT NOT NULL, PRIMARY KEY (document_id, version, seq));
       CREATE TABLE IF NOT EXISTS kb_chunks (
         id INTEGER PRIMARY KEY AUTOINCREMENT, document_id TEXT NOT NULL,
         version INTEGER NOT NULL, seq INTEGER NOT NULL, heading TEXT NOT NULL,
         start INTEGER NOT NULL, "end" INTEGER NOT NULL, pending_body TEXT);
       CREATE INDEX IF NOT EXISTS kb_chunks_document ON kb_chunks (document_id, version, seq);
       CREATE VIRTUAL TABLE IF NOT EXISTS kb_fts USING fts5(
         heading, body, tokenize = '${FTS_TOKENIZE}');
       CREATE TABLE IF NOT EXISTS kb_jobs (
         document_id TEXT NOT NULL, version INTEGER NOT NULL, member_id TEXT NOT NULL,
         next INTEGER NOT NULL DEFAULT 0, attempts INTEGER NOT NULL DEFAULT 0,
         PRIMARY KEY (document_id, version));`,
    );
  }

  /**
   * Stores a version's text and passages and queues its indexing. A version still waiting from an
   * earlier upload is dropped (the newest wins); the version searched so far stays searched until
   * the new one is indexed whole, then they swap in one transaction.
   */
  stage(input: StageInput): void {
    this.#transaction(() => {
      const current = this.#sql
        .exec("SELECT active_version FROM kb_documents WHERE id = ?", input.documentId)
        .toArray()[0];
      const active = (current?.active_version as number | null | undefined) ?? null;
      this.#dropVersions(input.documentId, (version) => version !== active);
      for (let i = 0, seq = 0; i < input.text.length; i += TEXT_PIECE_CHARS, seq++) {
        this.#sql.exec(
          "INSERT INTO kb_texts (document_id, version, seq, body) VALUES (?, ?, ?, ?)",
          input.documentId,
          input.version,
          seq,
          input.text.slice(i, i + TEXT_PIECE_CHARS),
        );
      }
      for (const [seq, chunk] of input.chunks.entries()) {
        this.#sql.exec(
          `INSERT INTO kb_chunks (document_id, version, seq, heading, start, "end", pending_body)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
          input.documentId,
          input.version,
          seq,
          chunk.heading,
          chunk.start,
          chunk.end,
          chunk.text,
        );
      }
      this.#sql.exec(
        `INSERT INTO kb_documents (id, name, active_version, latest_version, status, done, total, error)
         VALUES (?1, ?2, NULL, ?3, 'queued', 0, ?4, NULL)
         ON CONFLICT (id) DO UPDATE SET name = ?2, latest_version = ?3, status = 'queued',
           done = 0, total = ?4, error = NULL`,
        input.documentId,
        input.name,
        input.version,
        input.chunks.length,
      );
      this.#sql.exec(
        "INSERT INTO kb_jobs (document_id, version, member_id) VALUES (?, ?, ?)",
        input.documentId,
        input.version,
        input.memberId,
      );
    });
  }

  /** Deletes the versions of `documentId` that `drop` picks, with their FTS rows; answers their chunk rows. */
  #dropVersions(documentId: string, drop: (version: number) => boolean): number[] {
    const versions = this.#sql
      .exec("SELECT DISTINCT version FROM kb_chunks WHERE document_id = ?", documentId)
      .toArray()
      .map((row) => Number(row.version))
      .concat(
        this.#sql
          .exec("SELECT version FROM kb_jobs WHERE document_id = ?", documentId)
          .toArray()
          .map((row) => Number(row.version)),
      )
      .filter(drop);
    const rows: number[] = [];
    for (const version of new Set(versions)) {
      for (const row of this.#sql.exec(
        "SELECT id FROM kb_chunks WHERE document_id = ? AND version = ?",
        documentId,
        version,
      )) {
        rows.push(Number(row.id));
      }
      this.#sql.exec(
        `DELETE FROM kb_fts WHERE rowid IN
           (SELECT id FROM kb_chunks WHERE document_id = ? AND version = ?)`,
        documentId,
        version,
      );
      for (const table of ["kb_chunks", "kb_texts", "kb_jobs"]) {
        this.#sql.exec(
          `DELETE FROM ${table} WHERE document_id = ? AND version = ?`,
          documentId,
          version,
        );
      }
    }
    return rows;
  }

  /**
   * Takes a document out of search at once: its passages, text, job and row go in one
   * transaction, then the FTS index is merged so no deleted word stays in its shadow tables.
   * Answers the vector ids to delete from the vector index.
   */
  remove(documentId: string, namespace: string): string[] {
    const rows = this.#transaction(() => {
      const dropped = this.#dropVersions(documentId, () => true);
      this.#sql.exec("DELETE FROM kb_documents WHERE id = ?", documentId);
      return dropped;
    });
    this.#purgeDeleted();
    return rows.map((row) => `${namespace}:${row}`);
  }

  /**
   * FTS5 records a deletion as a marker in a new segment: the deleted words stay in `kb_fts_data`
   * until the segments are merged. 'optimize' merges them all into one, leaving none.
   */
  #purgeDeleted(): void {
    this.#sql.exec("INSERT INTO kb_fts (kb_fts) VALUES ('optimize')");
  }

  /** Whether some indexing is waiting. */
  hasWork(): boolean {
    return this.#sql.exec("SELECT 1 FROM kb_jobs LIMIT 1").toArray().length > 0;
  }

  /**
   * Indexes up to `budget` passages of the oldest job: embeds them first where the embedding path
   * is on (metered once per batch of a version: the batch's key is its first passage's place, so a
   * slice run again after a reset charges nothing twice), then writes them to FTS5 with the job's
   * cursor in one transaction. The last slice of a version swaps it in for the one searched before.
   * Answers whether work is left.
   */
  async indexSlice(budget: number, embedding: EmbeddingSide | null): Promise<boolean> {
    const job = this.#sql
      .exec("SELECT document_id, version, member_id, next FROM kb_jobs ORDER BY rowid LIMIT 1")
      .toArray()[0];
    if (!job) return false;
    const documentId = String(job.document_id);
    const version = Number(job.version);
    const next = Number(job.next);
    const rows = this.#sql
      .exec(
        `SELECT id, seq, heading, pending_body FROM kb_chunks
         WHERE document_id = ? AND version = ? AND seq >= ? ORDER BY seq LIMIT ?`,
        documentId,
        version,
        next,
        budget,
      )
      .toArray()
      .map((row) => ({
        id: Number(row.id),
        seq: Number(row.seq),
        heading: String(row.heading),
        body: String(row.pending_body ?? ""),
      }));
    this.#transaction(() =>
      this.#sql.exec(
        "UPDATE kb_documents SET status = 'indexing' WHERE id = ? AND latest_version = ?",
        documentId,
        version,
      ),
    );
    if (embedding && rows.length > 0) {
      await embedPassages(documentId, version, String(job.member_id), rows, embedding);
    }
    this.#transaction(() => {
      for (const row of rows) {
        this.#sql.exec(
          "INSERT INTO kb_fts (rowid, heading, body) VALUES (?, ?, ?)",
          row.id,
          row.heading,
          row.body,
        );
        this.#sql.exec("UPDATE kb_chunks SET pending_body = NULL WHERE id = ?", row.id);
      }
      const done = next + rows.length;
      this.#sql.exec(
        "UPDATE kb_jobs SET next = ?, attempts = 0 WHERE document_id = ? AND version = ?",
        done,
        documentId,
        version,
      );
      this.#sql.exec(
        "UPDATE kb_documents SET done = ? WHERE id = ? AND latest_version = ?",
        done,
        documentId,
        version,
      );
    });
    if (rows.length < budget) return this.#finish(documentId, version, embedding);
    return true;
  }

  /** The version is indexed whole: it becomes the one searched, and the one before it goes. */
  async #finish(
    documentId: string,
    version: number,
    embedding: EmbeddingSide | null,
  ): Promise<boolean> {
    const dropped = this.#transaction(() => {
      const old = this.#dropVersions(documentId, (v) => v !== version);
      this.#sql.exec(
        "DELETE FROM kb_jobs WHERE document_id = ? AND version = ?",
        documentId,
        version,
      );
      this.#sql.exec(
        `UPDATE kb_documents SET active_version = ?2, status = 'ready', error = NULL
         WHERE id = ?1 AND latest_version = ?2`,
        documentId,
        version,
      );
      return old;
    });
    if (dropped.length > 0) this.#purgeDeleted();
    if (embedding && dropped.length > 0) {
      await embedding.backend.remove(dropped.map((row) => `${embedding.namespace}:${row}`));
    }
    return this.hasWork();
  }

  /**
   * A job that cannot go on: the document keeps the version it had, and says why in words every
   * member of the project reads (`indexingFailure`), never the raw error's text.
   */
  failJob(cause: unknown): void {
    const error = indexingFailure(cause);
    const job = this.#sql
      .exec("SELECT document_id, version FROM kb_jobs ORDER BY rowid LIMIT 1")
      .toArray()[0];
    if (!job) return;
    this.#transaction(() => {
      this.#dropVersions(String(job.document_id), (v) => v === Number(job.version));
      this.#sql.exec(
        "UPDATE kb_documents SET status = 'failed', error = ? WHERE id = ? AND latest_version = ?",
        error.slice(0, 300),
        job.document_id,
        job.version,
      );
    });
    this.#purgeDeleted();
  }

  /** Counts a failed attempt of the oldest job; answers how many there were. */
  attemptFailed(): number {
    this.#sql.exec(
      "UPDATE kb_jobs SET attempts = attempts + 1 WHERE rowid = (SELECT MIN(rowid) FROM kb_jobs)",
    );
    const row = this.#sql.exec("SELECT attempts FROM kb_jobs ORDER BY rowid LIMIT 1").toArray()[0];
    return Number(row?.attempts ?? 0);
  }

  /** Indexing progress of these documents (absent: not in this index). */
  indexing(documentIds: readonly string[]): Record<string, DocumentIndexing> {
    const out: Record<string, DocumentIndexing> = {};
    for (const row of this.#sql.exec(
      `SELECT id, latest_version, status, done, total, error FROM kb_documents
       WHERE id IN (SELECT value FROM json_each(?))`,
      JSON.stringify(documentIds),
    )) {
      out[String(row.id)] = {
        status: row.status as DocumentIndexing["status"],
        version: Number(row.latest_version),
        done: Number(row.done),
        total: Number(row.total),
        error: row.error === null ? null : String(row.error),
      };
    }
    return out;
  }

  /** BM25 alone over the searched versions (search.ts `lexicalSearch`). */
  lexical(query: string, limit: number): Hit[] {
    return lexicalSearch(this.#sql, query, limit);
  }

  /** Passages by their chunk row ids, searched versions only, in the order given. */
  byRows(rows: readonly number[], terms: readonly string[]): Hit[] {
    return hitsByRows(this.#sql, rows, terms);
  }

  /** The one retriever (search.ts `searchIndex`): at most `limit` passages, best first. */
  search(
    query: string,
    limit: number,
    embedding: EmbeddingSide | null,
    memberId: string,
  ): Promise<Hit[]> {
    return searchIndex(this.#sql, query, limit, embedding, memberId);
  }

  /** A document's current text and passages (the searched version, else the newest staged). */
  content(
    documentId: string,
  ): { version: number; name: string; text: string; passages: Passage[] } | null {
    const doc = this.#sql
      .exec(
        "SELECT name, active_version, latest_version FROM kb_documents WHERE id = ?",
        documentId,
      )
      .toArray()[0];
    if (!doc) return null;
    const version = Number(doc.active_version ?? doc.latest_version);
    let text = "";
    for (const row of this.#sql.exec(
      "SELECT body FROM kb_texts WHERE document_id = ? AND version = ? ORDER BY seq",
      documentId,
      version,
    )) {
      text += String(row.body);
    }
    const passages: Passage[] = this.#sql
      .exec(
        `SELECT c.id, c.heading, c.start, c."end", COALESCE(c.pending_body, f.body) AS body
         FROM kb_chunks c LEFT JOIN kb_fts f ON f.rowid = c.id
         WHERE c.document_id = ? AND c.version = ? ORDER BY c.seq`,
        documentId,
        version,
      )
      .toArray()
      .map((row) => ({
        chunkId: chunkId(Number(row.id)),
        heading: String(row.heading),
        text: String(row.body ?? ""),
        start: Number(row.start),
        end: Number(row.end),
      }));
    return { version, name: String(doc.name), text, passages };
  }

  /** Every chunk row id of the index (erasure removes their vectors). */
  allVectorIds(namespace: string): string[] {
    return this.#sql
      .exec("SELECT id FROM kb_chunks")
      .toArray()
      .map((row) => `${namespace}:${Number(row.id)}`);
  }
}

/** Why indexing stopped, as a document's `indexing.error` says it to every member. */
export const indexingFailure = (cause: unknown): string =>
  shownReason(
    cause,
    "Indexing failed after several attempts. Upload the document again, or try later.",
  );
