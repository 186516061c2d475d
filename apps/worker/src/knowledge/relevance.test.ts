import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { BM25_WEIGHTS, FTS_TOKENIZE, ftsQuery, queryTerms } from "./chunk.ts";
import { aboveFloor, ROWS_MATCHING_SQL, requiredTerms } from "./relevance.ts";

/** The Worker's FTS5 table and statements in Node's SQLite (as the bench runs them). */
function index(passages: string[]) {
  const db = new DatabaseSync(":memory:");
  db.exec(`CREATE VIRTUAL TABLE kb_fts USING fts5(heading, body, tokenize = '${FTS_TOKENIZE}')`);
  const insert = db.prepare("INSERT INTO kb_fts (heading, body) VALUES (?, ?)");
  for (const passage of passages) insert.run("Policies", passage);
  const rank = db.prepare(
    `SELECT rowid FROM kb_fts WHERE kb_fts MATCH ? ORDER BY bm25(kb_fts, ${BM25_WEIGHTS.join(", ")})`,
  );
  const matching = db.prepare(ROWS_MATCHING_SQL);
  return (query: string) => {
    const match = ftsQuery(query);
    if (match === null) return { ranked: [], kept: [] };
    const ranked = rank.all(match).map((row) => Number(row.rowid));
    const kept = aboveFloor(ranked, query, (phrase, rows) =>
      matching.all(phrase, JSON.stringify(rows)).map((row) => Number(row.rowid)),
    );
    return { ranked, kept };
  };
}

const search = index([
  "Items may be returned within 14 days of delivery, in their box.",
  "Parcels leave the depot on Tuesdays by barge.",
  "Gift cards never expire and cannot be refunded.",
]);

describe("the relevance floor", () => {
  it("drops a passage sharing one word with small talk, which BM25 alone ranks", () => {
    const greeting = search("Have a nice day!");
    expect(greeting.ranked).toEqual([1]);
    expect(greeting.kept).toEqual([]);
  });

  it("keeps passages holding two of the question's words, stems counting ('returned' for 'return')", () => {
    expect(search("how many days do I have to return items?").kept).toEqual([1]);
    expect(search("can gift cards be refunded").kept).toEqual([3]);
  });

  it("asks a long message for a third of its words: two common ones are not a match", () => {
    expect([1, 2, 3, 4, 6, 7, 9, 10, 30].map(requiredTerms)).toEqual([1, 2, 2, 2, 2, 3, 3, 4, 10]);
    // The Gettysburg Address (public domain) and a message asking for a ticket with a tool call:
    // ten search words, two of which ("created", "note") the address holds.
    const address = index([
      "Four score and seven years ago our fathers brought forth on this continent, a new nation, conceived in Liberty, and dedicated to the proposition that all men are created equal.",
      "The world will little note, nor long remember what we say here, but it can never forget what they did here. We can not dedicate, we can not consecrate this ground; all men are created equal.",
    ]);
    const ticket =
      'Please open a ticket [[tool:create_ticket {"subject":"Sync issue","body":"Notes not syncing"}]]';
    expect(queryTerms(ticket)).toHaveLength(10);
    expect(address(ticket).ranked).toEqual([2, 1]);
    expect(address(ticket).kept).toEqual([]);
    // A question about the address still finds it.
    expect(address("what did the world note and remember").kept).toEqual([2]);
  });

  it("stopwords are no search words ('not' in a message never matches 'can not')", () => {
    expect(queryTerms("Please Notes not")).toEqual(["notes"]);
    expect(queryTerms("why is it not syncing after all these hours")).toEqual(["syncing", "hours"]);
  });

  it("asks a one-word question for its one word", () => {
    expect(requiredTerms(1)).toBe(1);
    expect(search("refunds?").kept).toEqual([3]);
  });

  it("greetings, thanks and assent are no search words at all", () => {
    expect(queryTerms("Hi! Thanks, ok, bye")).toEqual([]);
    expect(ftsQuery("hello, thank you so much")).toBe('"much"');
    // A question keeps its words, "help" and "day" included.
    expect(queryTerms("Hi, can you help with my delivery day?")).toEqual([
      "help",
      "delivery",
      "day",
    ]);
  });
});
