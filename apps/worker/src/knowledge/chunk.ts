/**
 * How a document's text becomes passages, and a question becomes an FTS5 query
 * (docs/2026-12-06-knowledge.md, "Chunks"). Pure: the Node bench runs the same code.
 */

/** A part of the text under one heading path (the extractors find them). */
export interface Section {
  /** Outermost first: ["Billing", "Refunds"]. Empty before the first heading. */
  headings: string[];
  start: number;
  end: number;
}

/** What extraction yields: the whole text and where its headings cut it. */
export interface Extracted {
  text: string;
  sections: Section[];
}

export interface Chunk {
  /** The heading path, joined with " › " ("" before the first heading). */
  heading: string;
  start: number;
  end: number;
  text: string;
}

/**
 * A passage aims at about 1,200 characters (roughly 300 tokens: a paragraph or three, what a
 * citation can quote and a model can read many of), is cut at a paragraph or sentence end when one
 * lies past 60% of the target, never exceeds 1,600, and the next passage of the same section starts
 * 200 characters before the previous one ended, so a sentence cut at a border is whole in one of
 * them. Sections are never merged: a passage stays under one heading, which its citation names.
 */
export const CHUNK_TARGET_CHARS = 1200;
export const CHUNK_MAX_CHARS = 1600;
export const CHUNK_OVERLAP_CHARS = 200;

export interface ChunkOptions {
  target: number;
  max: number;
  overlap: number;
}

const DEFAULT_OPTIONS: ChunkOptions = {
  target: CHUNK_TARGET_CHARS,
  max: CHUNK_MAX_CHARS,
  overlap: CHUNK_OVERLAP_CHARS,
};

/** Where to end a passage that starts at `start`: a paragraph, a sentence, a space, or `max`. */
function cutPoint(text: string, start: number, end: number, options: ChunkOptions): number {
  if (end - start <= options.max) return end;
  const hardEnd = start + options.max;
  const floor = start + Math.floor(options.target * 0.6);
  const window = text.slice(floor, hardEnd);
  const paragraph = window.lastIndexOf("\n\n");
  if (paragraph >= 0 && floor + paragraph <= start + options.target * 1.2)
    return floor + paragraph + 2;
  const sentence = Math.max(
    window.lastIndexOf(". "),
    window.lastIndexOf(".\n"),
    window.lastIndexOf("? "),
    window.lastIndexOf("! "),
  );
  if (sentence >= 0) return floor + sentence + 2;
  const space = window.lastIndexOf(" ");
  if (space >= 0) return floor + space + 1;
  return hardEnd;
}

/** Splits each section into passages (see the sizes above); empty sections yield none. */
export function chunkSections(
  extracted: Extracted,
  options: ChunkOptions = DEFAULT_OPTIONS,
): Chunk[] {
  const chunks: Chunk[] = [];
  for (const section of extracted.sections) {
    const heading = section.headings.join(" › ");
    let start = section.start;
    while (start < section.end) {
      // Leading blank space is not part of a passage.
      while (start < section.end && /\s/.test(extracted.text[start] ?? "")) start++;
      if (start >= section.end) break;
      const end = cutPoint(extracted.text, start, section.end, options);
      const text = extracted.text.slice(start, end).trim();
      if (text !== "") chunks.push({ heading, start, end, text });
      if (end >= section.end) break;
      // Overlap, but always move forward, and start at a word.
      let next = Math.max(end - options.overlap, start + 1);
      while (next < end && !/\s/.test(extracted.text[next - 1] ?? " ")) next++;
      start = next;
    }
  }
  return chunks;
}

/**
 * The FTS5 table's tokenizer: Unicode words, diacritics folded, English stems (Porter), so
 * "refunds" finds "refund". The BM25 weights of its columns (heading, body): a word in a
 * passage's heading path counts twice.
 */
export const FTS_TOKENIZE = "porter unicode61 remove_diacritics 2";
export const BM25_WEIGHTS = [2.0, 1.0] as const;

/**
 * Words too common to tell passages apart; dropping them keeps a query to what it is about and
 * keeps them from counting towards the relevance floor (relevance.ts: "not" matched a passage
 * saying "we can not dedicate"). NLTK's English stopword list (the standard list of information
 * retrieval in Python; its contractions' pieces are dropped, the splitting below cuts them off),
 * measured with `pnpm bench knowledge`'s questions offline: recall@5 unchanged, MRR 0.796 to
 * 0.813 (docs/2026-12-06-knowledge.md, "Relevance floor"). Only the query is filtered: the index
 * keeps every word, so a quoted sentence still finds its passage.
 */
const STOPWORDS = new Set(
  (
    "i me my myself we our ours ourselves you your yours yourself yourselves he him his himself " +
    "she her hers herself it its itself they them their theirs themselves what which who whom " +
    "this that these those am is are was were be been being have has had having do does did " +
    "doing a an the and but if or because as until while of at by for with about against " +
    "between into through during before after above below to from up down in out on off over " +
    "under again further then once here there when where why how all any both each few more " +
    "most other some such no nor not only own same so than too very can will just don should " +
    "now ll re ve ain aren couldn didn doesn hadn hasn haven isn ma mightn mustn needn shan " +
    "shouldn wasn weren won wouldn"
  ).split(" "),
);

/**
 * Words of greetings, thanks and assent: a message made of them is talk, not a question, and no
 * passage answers it ("Hi! Thanks, have a nice day" found the refund policy's "14 days"). Dropped
 * like stopwords, so they neither find a passage nor count towards the relevance floor
 * (relevance.ts). Only words that carry nothing else in a question: "help", "day" or "good" stay.
 */
const CHAT_WORDS = new Set(
  "hi hello hey hiya thanks thank thx ty please ok okay yes yeah yep nope bye goodbye cheers lol".split(
    " ",
  ),
);

/** At most this many distinct words of a question reach the index. */
export const MAX_QUERY_TERMS = 32;

/** The words of a question that a search looks for (lower case, no stopwords, deduplicated). */
export function queryTerms(query: string): string[] {
  const words = query
    .normalize("NFKC")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 1 || /\d/.test(word))
    .filter((word) => !STOPWORDS.has(word) && !CHAT_WORDS.has(word));
  return [...new Set(words)].slice(0, MAX_QUERY_TERMS);
}

/**
 * The FTS5 query for a question: its words, each a quoted string (so no word is read as FTS5
 * syntax: `NEAR`, `-`, `*`, a column filter), joined by OR and ranked by BM25. Null when the
 * question has no word worth searching.
 */
export function ftsQuery(query: string): string | null {
  const terms = queryTerms(query);
  if (terms.length === 0) return null;
  return terms.map(ftsPhrase).join(" OR ");
}

/** One word as an FTS5 string: quoted, so it is never read as FTS5 syntax. */
export const ftsPhrase = (term: string) => `"${term.replaceAll('"', '""')}"`;

/**
 * Reciprocal rank fusion (Cormack et al., 2009): each list gives an item 1 / (k + rank), the sums
 * rank the union. k = 60 as in the paper: no list's top item dominates.
 */
export function fuseRanks<T>(lists: readonly (readonly T[])[], key: (item: T) => string, k = 60) {
  const scores = new Map<string, { item: T; score: number }>();
  for (const list of lists) {
    list.forEach((item, index) => {
      const id = key(item);
      const entry = scores.get(id) ?? { item, score: 0 };
      entry.score += 1 / (k + index + 1);
      scores.set(id, entry);
    });
  }
  return [...scores.values()].sort((a, b) => b.score - a.score);
}

/** Longest quote a citation carries, in characters. */
export const MAX_QUOTE_CHARS = 300;

/**
 * The passage's sentence that holds the most of the question's words (matched on their first
 * five letters, as a stemmer would roughly), as the citation's quote: what the reply rests on,
 * short enough to show as a source. The passage's start when no word is found in it.
 */
export function quoteOf(text: string, terms: readonly string[]): string {
  const stems = terms.map((term) => term.slice(0, 5));
  const sentences = text.split(/(?<=[.!?])\s+|\n{2,}/).filter((s) => s.trim() !== "");
  let best = sentences[0] ?? text;
  let bestScore = 0;
  for (const sentence of sentences) {
    const words = sentence.toLowerCase().split(/[^\p{L}\p{N}]+/u);
    const score = stems.filter((stem) => words.some((word) => word.startsWith(stem))).length;
    if (score > bestScore) {
      best = sentence;
      bestScore = score;
    }
  }
  const quote = best.trim().replace(/\s+/g, " ");
  return quote.length > MAX_QUOTE_CHARS ? `${quote.slice(0, MAX_QUOTE_CHARS - 1)}…` : quote;
}
