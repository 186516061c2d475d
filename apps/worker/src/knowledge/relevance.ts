import { ftsPhrase, queryTerms } from "./chunk.ts";

/**
 * The relevance floor (docs/2026-12-06-knowledge.md, "Relevance floor"): a passage BM25 found is
 * kept only when it holds at least a third of the question's search words (stopwords and
 * greetings are no search words, chunk.ts `queryTerms`), and never fewer than two (all of them
 * when the question has one). BM25 over OR-ed words ranks a passage sharing one word with the
 * question as a match, so "have a nice day" found the refund policy's "14 days" and the reply
 * cited it; and a long message shares two words with almost anything: "Please open a ticket
 * [[tool:create_ticket {subject: Sync issue, body: Notes not syncing}]]" (ten search words) was
 * cited to the Gettysburg Address through "created" and "note". A raw BM25 threshold was not
 * chosen: its scale moves with the size of the project's index and how common a word is in it
 * (a word in most passages of a small project scores near zero), so one number cannot fit a
 * project of three passages and one of ten thousand; a share of the question's own words does
 * not move. Chosen by measuring (`pnpm bench knowledge`'s 42 questions, offline): the floor of
 * two kept recall@5 and MRR (they rose: passages sharing one common word no longer push a right
 * one out of the first five) while most greetings stopped finding anything; on top of it a
 * share of a quarter, a third or 40% changes neither figure, half loses a question (95.2% to
 * 92.9%). A third is the floor with room under that edge. Pure, over a lookup the caller runs
 * in SQL: the Durable Object and the Node bench share it.
 */

/** Distinct search words of the question a kept passage must hold (fewer only if it has fewer). */
export const MIN_MATCHED_TERMS = 2;

/** A kept passage holds at least 1 / this of the question's search words (rounded up). */
export const MATCHED_SHARE_DIVISOR = 3;

/** How many of `termCount` words a passage needs to clear the floor. */
export const requiredTerms = (termCount: number) =>
  Math.max(Math.min(MIN_MATCHED_TERMS, termCount), Math.ceil(termCount / MATCHED_SHARE_DIVISOR));

/**
 * The rows (best first, as given) that hold enough of the question's words. `rowsMatching` runs
 * one word's FTS5 match over the given rows (the same tokenizer as the ranking, so "refunds"
 * counts for "refund") and answers the rows it matched.
 */
export function aboveFloor(
  rows: readonly number[],
  query: string,
  rowsMatching: (phrase: string, rows: readonly number[]) => Iterable<number>,
): number[] {
  const terms = queryTerms(query);
  const needed = requiredTerms(terms.length);
  if (rows.length === 0 || needed <= 1) return [...rows];
  const matched = new Map<number, number>();
  for (const term of terms) {
    for (const row of rowsMatching(ftsPhrase(term), rows)) {
      matched.set(row, (matched.get(row) ?? 0) + 1);
    }
  }
  return rows.filter((row) => (matched.get(row) ?? 0) >= needed);
}

/** The statement `rowsMatching` runs: one phrase over a JSON array of rows. */
export const ROWS_MATCHING_SQL =
  "SELECT rowid FROM kb_fts WHERE kb_fts MATCH ? AND rowid IN (SELECT value FROM json_each(?))";
