import { describe, expect, it } from "vitest";
import { diffCounts, foldUnchanged, lineDiff } from "./line-diff.ts";

describe("lineDiff", () => {
  it("numbers each side and marks what was removed and added", () => {
    const lines = lineDiff(
      "Be kind.\nBe brief.\nUse English.",
      "Be kind.\nBe thorough.\nUse English.",
    );
    expect(lines).toEqual([
      { kind: "same", text: "Be kind.", oldNumber: 1, newNumber: 1 },
      { kind: "removed", text: "Be brief.", oldNumber: 2, newNumber: null },
      { kind: "added", text: "Be thorough.", oldNumber: null, newNumber: 2 },
      { kind: "same", text: "Use English.", oldNumber: 3, newNumber: 3 },
    ]);
    expect(diffCounts(lines)).toEqual({ added: 1, removed: 1 });
  });

  it("reads an empty side as no lines", () => {
    expect(lineDiff("", "One\nTwo")).toEqual([
      { kind: "added", text: "One", oldNumber: null, newNumber: 1 },
      { kind: "added", text: "Two", oldNumber: null, newNumber: 2 },
    ]);
    expect(lineDiff("Same", "Same")).toEqual([
      { kind: "same", text: "Same", oldNumber: 1, newNumber: 1 },
    ]);
  });
});

describe("foldUnchanged", () => {
  it("keeps three lines around a change and folds the rest", () => {
    const before = Array.from({ length: 20 }, (_, index) => `line ${index + 1}`).join("\n");
    const after = before.replace("line 10", "line ten");
    const rows = foldUnchanged(lineDiff(before, after));
    expect(rows[0]).toEqual({ kind: "gap", count: 6 });
    expect(rows.slice(1, 4).map((row) => ("text" in row ? row.text : ""))).toEqual([
      "line 7",
      "line 8",
      "line 9",
    ]);
    expect(rows.filter((row) => row.kind === "removed")).toHaveLength(1);
    expect(rows.at(-1)).toEqual({ kind: "gap", count: 7 });
  });
});
