import { BM25_WEIGHTS, ftsQuery, fuseRanks, queryTerms, quoteOf } from "./chunk.ts";
import { type EmbeddingSide, embeddingTokens } from "./embeddings.ts";
import { aboveFloor, ROWS_MATCHING_SQL } from "./relevance.ts";

/**
 * The retriever over a project's index (docs/2026-12-06-knowledge.md, "Index"): BM25 over the
 * FTS5 table of `store.ts`, fused with the vector ranks where the embedding path is on. Reads
 * only; `KnowledgeStore` owns the tables and answers through these functions.
 */

/** BM25 over the FTS columns, weighted (chunk.ts `BM25_WEIGHTS`). */
const BM25 = `bm25(kb_fts, ${BM25_WEIGHTS.map((w) => w.toFixed(1)).join(", ")})`;
/** How many candidates each ranking contributes to a fused one. */
const CANDIDATES = 50;

export interface Hit {
  chunkId: string;
  documentId: string;
  documentName: string;
  version: number;
  heading: string;
  text: string;
  quote: string;
  start: number;
  end: number;
}

/** A passage's public id from its chunk row id. */
export const chunkId = (row: number) => `c${row}`;
const rowOf = (id: string) => Number(id.slice(1));

/**
 * BM25 over the searched versions: the best `limit` passages, best first, each holding enough
 * of the question's words (the relevance floor, relevance.ts): a greeting finds nothing.
 */
export function lexicalSearch(sql: SqlStorage, query: string, limit: number): Hit[] {
  const match = ftsQuery(query);
  if (match === null) return [];
  // The best rows by BM25 alone first: FTS5 ranks them without reading another table. Joins
  // or snippet() in the ranking query ran for every matching row (a common word matches most
  // of them). A few spare rows cover passages of a version not searched yet (a re-upload).
  const ranked = sql
    .exec(
      `SELECT rowid FROM kb_fts WHERE kb_fts MATCH ? ORDER BY ${BM25} LIMIT ?`,
      match,
      limit * 2 + 8,
    )
    .toArray()
    .map((row) => Number(row.rowid));
  const kept = aboveFloor(ranked, query, (phrase, rows) =>
    sql
      .exec(ROWS_MATCHING_SQL, phrase, JSON.stringify(rows))
      .toArray()
      .map((row) => Number(row.rowid)),
  );
  return hitsByRows(sql, kept, queryTerms(query)).slice(0, limit);
}

/** Passages by their chunk row ids, searched versions only, in the order given. */
export function hitsByRows(
  sql: SqlStorage,
  rows: readonly number[],
  terms: readonly string[],
): Hit[] {
  if (rows.length === 0) return [];
  const found = sql
    .exec(
      `SELECT c.id, c.document_id, c.version, c.heading, c.start, c."end", f.body, d.name
       FROM kb_chunks c JOIN kb_fts f ON f.rowid = c.id
       JOIN kb_documents d ON d.id = c.document_id AND d.active_version = c.version
       WHERE c.id IN (SELECT value FROM json_each(?))`,
      JSON.stringify(rows),
    )
    .toArray()
    .map(toHit);
  const byId = new Map(found.map((hit) => [hit.chunkId, hit]));
  return rows.flatMap((row) => {
    const hit = byId.get(chunkId(row));
    return hit ? [{ ...hit, quote: quoteOf(hit.text, terms) }] : [];
  });
}

/**
 * The one retriever: BM25 alone, or BM25 and vector ranks fused (reciprocal rank fusion) where
 * the embedding path is on. Answers at most `limit` passages; none when nothing matches.
 */
export async function searchIndex(
  sql: SqlStorage,
  query: string,
  limit: number,
  embedding: EmbeddingSide | null,
  memberId: string,
): Promise<Hit[]> {
  if (!embedding) return lexicalSearch(sql, query, limit);
  const lexical = lexicalSearch(sql, query, CANDIDATES);
  let matches: { id: string; score: number }[];
  try {
    matches = await embedding.charge(
      {
        requestId: `kb-query:${crypto.randomUUID()}`,
        memberId,
        tokens: embeddingTokens([query]),
      },
      async () => {
        const [vector] = await embedding.backend.embed([query]);
        return vector ? embedding.backend.query(embedding.namespace, vector, CANDIDATES) : [];
      },
    );
  } catch {
    // No credits for the query's embedding, or the service is down: BM25 still answers.
    return lexical.slice(0, limit);
  }
  const prefix = `${embedding.namespace}:`;
  const rows = matches
    .filter((m) => m.id.startsWith(prefix))
    .map((m) => Number(m.id.slice(prefix.length)))
    .filter(Number.isSafeInteger);
  const semantic = hitsByRows(sql, rows, queryTerms(query));
  return fuseRanks([lexical, semantic], (hit) => hit.chunkId)
    .slice(0, limit)
    .map((entry) => entry.item);
}

function toHit(row: Record<string, SqlStorageValue>): Hit {
  return {
    chunkId: chunkId(Number(row.id)),
    documentId: String(row.document_id),
    documentName: String(row.name),
    version: Number(row.version),
    heading: String(row.heading),
    text: String(row.body),
    quote: "",
    start: Number(row.start),
    end: Number(row.end),
  };
}

export { rowOf as chunkRow };
