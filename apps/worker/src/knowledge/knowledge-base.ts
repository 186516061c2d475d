import { DurableObject } from "cloudflare:workers";
import type { Chunk } from "./chunk.ts";
import {
  bindingBackend,
  chargeEmbedding,
  type EmbeddingBackend,
  type EmbeddingSide,
} from "./embeddings.ts";
import { readPassage } from "./passage.ts";
import type { Hit } from "./search.ts";
import { KnowledgeStore, SLICE_CHUNKS } from "./store.ts";

/** Failed attempts of one indexing slice (the embedding service down) before its job fails. */
const MAX_ATTEMPTS = 5;
/** When the alarm takes over if a slice does not finish (a crash, an eviction). */
const SAFETY_NET_MS = 30_000;

interface Meta {
  orgId: string;
  projectId: string;
}

/**
 * One project's knowledge (name = project id; docs/2026-12-06-knowledge.md): its documents' text,
 * passages and FTS5 index in this object's own SQLite, so every org's knowledge is physically
 * apart. The Worker authorizes before it addresses this object; the object trusts its caller.
 * Indexing runs from the alarm, a slice at a time, resumable after a reset. An erased project's
 * object keeps nothing but its tombstone and refuses every write after it.
 */
export class KnowledgeBase extends DurableObject<Env> {
  #store: KnowledgeStore | null = null;
  #erased: boolean;
  /** Workers AI and Vectorize, where both are bound (embeddings.ts); null: FTS5 alone. */
  readonly #backend: EmbeddingBackend | null;
  #running: Promise<void> | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const tables = ctx.storage.sql
      .exec(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('kb_erased', 'kb_documents')",
      )
      .toArray()
      .map((row) => String(row.name));
    this.#erased = tables.includes("kb_erased");
    // Tables are made at the first write: a project that never had a document has no storage.
    if (tables.includes("kb_documents") && !this.#erased) this.#open();
    this.#backend = bindingBackend(env);
  }

  #open(): KnowledgeStore {
    this.#store ??= new KnowledgeStore(this.ctx.storage.sql, (fn) =>
      this.ctx.storage.transactionSync(fn),
    );
    this.ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS kb_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    );
    return this.#store;
  }

  #meta(): Meta | null {
    if (!this.#store) return null;
    const rows = this.ctx.storage.sql.exec("SELECT key, value FROM kb_meta").toArray();
    const map = new Map(rows.map((row) => [String(row.key), String(row.value)]));
    const orgId = map.get("orgId");
    const projectId = map.get("projectId");
    return orgId && projectId ? { orgId, projectId } : null;
  }

  #embedding(): EmbeddingSide | null {
    const meta = this.#meta();
    const backend = this.#backend;
    if (!backend || !meta) return null;
    return {
      backend,
      namespace: meta.projectId,
      charge: (input, run) =>
        chargeEmbedding(
          this.env,
          { ...input, orgId: meta.orgId, projectId: meta.projectId, model: backend.model },
          run,
        ),
    };
  }

  /**
   * Stores a version and queues its indexing (the alarm runs it). Answers `erased` for an erased
   * project's object, which takes nothing any more.
   */
  async stage(input: {
    orgId: string;
    projectId: string;
    documentId: string;
    version: number;
    name: string;
    text: string;
    chunks: Chunk[];
    memberId: string;
  }): Promise<{ staged: boolean }> {
    if (this.#erased) return { staged: false };
    const store = this.#open();
    this.ctx.storage.transactionSync(() => {
      for (const [key, value] of [
        ["orgId", input.orgId],
        ["projectId", input.projectId],
      ]) {
        this.ctx.storage.sql.exec(
          "INSERT INTO kb_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
          key,
          value,
        );
      }
    });
    store.stage(input);
    await this.ctx.storage.setAlarm(Date.now());
    return { staged: true };
  }

  /** Takes a document out of search now (its vectors too, where the embedding path is on). */
  async remove(documentId: string): Promise<void> {
    if (!this.#store) return;
    const meta = this.#meta();
    const ids = this.#store.remove(documentId, meta?.projectId ?? "");
    if (this.#backend && ids.length > 0) await this.#backend.remove(ids);
  }

  override async alarm(): Promise<void> {
    await this.runIndexing();
  }

  /**
   * Runs indexing slices until none is left or this invocation has done a few; the alarm set
   * before each slice takes over if the slice does not come back (a reset resumes at the job's
   * cursor, which moves with the passages it wrote, in one transaction).
   */
  runIndexing(maxSlices = 4): Promise<void> {
    if (!this.#running) {
      this.#running = this.#run(maxSlices).finally(() => {
        this.#running = null;
      });
    }
    return this.#running;
  }

  async #run(maxSlices: number): Promise<void> {
    const store = this.#store;
    if (!store || this.#erased) return;
    for (let slice = 0; slice < maxSlices; slice++) {
      if (!store.hasWork()) return;
      await this.ctx.storage.setAlarm(Date.now() + SAFETY_NET_MS);
      try {
        if (!(await store.indexSlice(SLICE_CHUNKS, this.#embedding()))) {
          await this.ctx.storage.deleteAlarm();
          return;
        }
      } catch (error) {
        const attempts = store.attemptFailed();
        if (attempts >= MAX_ATTEMPTS) {
          // The cause for the operator (a binding's or SQLite's message, never document text);
          // the document says why in words (store.ts `indexingFailure`).
          console.error(
            JSON.stringify({
              level: "error",
              source: "knowledge",
              event: "indexing_failed",
              error:
                error instanceof Error ? `${error.name}: ${error.message}` : "non-error thrown",
            }),
          );
          store.failJob(error);
        } else {
          await this.ctx.storage.setAlarm(Date.now() + 1000 * 2 ** attempts);
          return;
        }
      }
    }
    if (store.hasWork()) await this.ctx.storage.setAlarm(Date.now());
  }

  indexing(documentIds: string[]) {
    return this.#store?.indexing(documentIds) ?? {};
  }

  /** The best passages for a question (BM25, fused with vectors where the path is on). */
  async search(query: string, limit: number, memberId: string): Promise<Hit[]> {
    if (!this.#store) return [];
    return this.#store.search(query, limit, this.#embedding(), memberId);
  }

  content(documentId: string) {
    return this.#store?.content(documentId) ?? null;
  }

  /** One passage of the document's current version (a citation opened), not its whole text. */
  passage(documentId: string, chunkId: string) {
    return this.#store ? readPassage(this.ctx.storage.sql, documentId, chunkId) : null;
  }

  /**
   * Erasure of the project: the vectors, then everything this object stores, and a tombstone so
   * nothing is written here again (a late upload's `stage` answers 410).
   */
  async purge(): Promise<{ purged: true }> {
    if (this.#erased) return { purged: true };
    // A project that never had a document has no storage here: nothing to erase, nothing written
    // (the Worker never addresses an erased project's object again: D1's tombstone answers 410).
    if (!this.#store && this.leftovers().length === 0) return { purged: true };
    const meta = this.#meta();
    if (this.#store && this.#backend && meta) {
      await this.#backend.remove(this.#store.allVectorIds(meta.projectId));
    }
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    this.#store = null;
    this.#erased = true;
    this.ctx.storage.sql.exec("CREATE TABLE kb_erased (at INTEGER NOT NULL)");
    this.ctx.storage.sql.exec("INSERT INTO kb_erased (at) VALUES (?)", Date.now());
    return { purged: true };
  }

  /**
   * What an erased project's object still holds: every table but the tombstone, the FTS shadow
   * tables included, with its row count (the verification scan wants none).
   */
  leftovers(): { table: string; rows: number }[] {
    const sql = this.ctx.storage.sql;
    const tables = sql
      .exec(
        `SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'kb_erased'
         AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\'`,
      )
      .toArray()
      .map((row) => String(row.name));
    return tables.flatMap((table) => {
      const rows = Number(sql.exec(`SELECT COUNT(*) AS n FROM "${table}"`).one().n);
      return rows > 0 ? [{ table, rows }] : [];
    });
  }

  /** How many indexing jobs still name this member (the erasure's verification wants none). */
  jobsNaming(memberId: string): number {
    if (!this.#store) return 0;
    return Number(
      this.ctx.storage.sql
        .exec("SELECT COUNT(*) AS n FROM kb_jobs WHERE member_id = ?", memberId)
        .one().n,
    );
  }

  /** An erased member's id, where an indexing job still names who pays for its embeddings. */
  forgetMember(memberId: string, alias: string): number {
    if (!this.#store) return 0;
    return this.ctx.storage.sql.exec(
      "UPDATE kb_jobs SET member_id = ? WHERE member_id = ?",
      alias,
      memberId,
    ).rowsWritten;
  }
}
