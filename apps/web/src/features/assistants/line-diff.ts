import { diffLines } from "diff";

/** One line of a diff, with its number in the old and the new text (none for the other side). */
export interface DiffLine {
  kind: "same" | "added" | "removed";
  text: string;
  oldNumber: number | null;
  newNumber: number | null;
}

/** A run of unchanged lines folded away: "12 unchanged lines". */
export interface DiffGap {
  kind: "gap";
  count: number;
}

export type DiffRow = DiffLine | DiffGap;

/** Split into lines; a final line break makes no empty last line. */
const linesOf = (value: string): string[] => {
  const lines = value.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines;
};

/**
 * The lines of `before` and `after` as removed, added or the same (jsdiff's `diffLines`, the
 * Myers algorithm git uses), numbered on each side.
 */
export function lineDiff(before: string, after: string): DiffLine[] {
  const rows: DiffLine[] = [];
  let oldNumber = 1;
  let newNumber = 1;
  for (const change of diffLines(before, after)) {
    for (const text of linesOf(change.value)) {
      if (change.added) rows.push({ kind: "added", text, oldNumber: null, newNumber: newNumber++ });
      else if (change.removed) {
        rows.push({ kind: "removed", text, oldNumber: oldNumber++, newNumber: null });
      } else rows.push({ kind: "same", text, oldNumber: oldNumber++, newNumber: newNumber++ });
    }
  }
  return rows;
}

/**
 * Keeps `context` unchanged lines around each change and folds longer unchanged runs into a gap,
 * as a code review does: a long prompt with one changed sentence shows that sentence.
 */
export function foldUnchanged(lines: readonly DiffLine[], context = 3): DiffRow[] {
  const near = lines.map(() => false);
  lines.forEach((line, index) => {
    if (line.kind === "same") return;
    for (
      let at = Math.max(0, index - context);
      at <= Math.min(lines.length - 1, index + context);
      at++
    ) {
      near[at] = true;
    }
  });
  const rows: DiffRow[] = [];
  let folded = 0;
  lines.forEach((line, index) => {
    if (near[index]) {
      if (folded > 0) rows.push({ kind: "gap", count: folded });
      folded = 0;
      rows.push(line);
    } else folded++;
  });
  if (folded > 0) rows.push({ kind: "gap", count: folded });
  return rows;
}

/** How many lines were added and removed. */
export const diffCounts = (lines: readonly DiffLine[]) => ({
  added: lines.filter((line) => line.kind === "added").length,
  removed: lines.filter((line) => line.kind === "removed").length,
});
