import { describe, expect, it } from "vitest";
import {
  CHUNK_MAX_CHARS,
  CHUNK_OVERLAP_CHARS,
  chunkSections,
  ftsQuery,
  fuseRanks,
  queryTerms,
  quoteOf,
} from "./chunk.ts";
import { markdownSections } from "./markdown.ts";

describe("Markdown sections", () => {
  it("cut at ATX and setext headings with their path; fenced code is no heading", () => {
    const text = [
      "Intro line.",
      "",
      "# Guide",
      "",
      "Welcome.",
      "",
      "## Install",
      "",
      "```sh",
      "# not a heading",
      "```",
      "",
      "Usage",
      "-----",
      "",
      "Run it.",
    ].join("\n");
    const { sections } = markdownSections(text);
    expect(sections.map((s) => s.headings)).toEqual([
      [],
      ["Guide"],
      ["Guide", "Install"],
      ["Guide", "Usage"],
    ]);
    expect(text.slice(sections[2]?.start, sections[2]?.end)).toContain("# not a heading");
  });
});

describe("chunks", () => {
  it("stay within the maximum, overlap, start at a word and keep their heading", () => {
    const body = "Sentence number one is here. ".repeat(200);
    const text = `# Long\n\n${body}`;
    const chunks = chunkSections(markdownSections(text));
    expect(chunks.length).toBeGreaterThan(3);
    for (const chunk of chunks) {
      expect(chunk.end - chunk.start).toBeLessThanOrEqual(CHUNK_MAX_CHARS);
      expect(chunk.heading).toBe("Long");
      expect(text.slice(chunk.start, chunk.end).trim()).toBe(chunk.text);
      expect(/\s/.test(text[chunk.start - 1] ?? " ")).toBe(true);
    }
    for (let i = 1; i < chunks.length; i++) {
      const overlap = (chunks[i - 1]?.end ?? 0) - (chunks[i]?.start ?? 0);
      expect(overlap).toBeGreaterThan(0);
      expect(overlap).toBeLessThanOrEqual(CHUNK_OVERLAP_CHARS);
    }
  });
});

describe("queries", () => {
  it("keep the words that matter, quoted so none is FTS5 syntax", () => {
    expect(queryTerms("How do I get a REFUND for the Pro plan?")).toEqual([
      "get",
      "refund",
      "pro",
      "plan",
    ]);
    expect(ftsQuery('NEAR("x") OR title:* -y "quote"')).toBe('"near" OR "title" OR "quote"');
    expect(ftsQuery("the a of")).toBeNull();
  });

  it("fuse ranks: an item high in both lists wins", () => {
    const fused = fuseRanks(
      [
        ["a", "b", "c"],
        ["b", "d", "e"],
      ],
      (x) => x,
    ).map((e) => e.item);
    expect(fused[0]).toBe("b");
    expect(fused).toHaveLength(5);
  });

  it("quote the sentence with the most of the question's words", () => {
    const text =
      "Plans renew monthly. Refunds are paid within 30 days of a charge. Support answers fast.";
    expect(quoteOf(text, ["refund", "days"])).toBe("Refunds are paid within 30 days of a charge.");
    expect(quoteOf("x".repeat(400), ["y"]).length).toBe(300);
  });
});
