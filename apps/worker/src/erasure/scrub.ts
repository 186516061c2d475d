/**
 * Free text other people typed that names an erased person (their email in a project's memory or a
 * request's reason, their id pasted into a note): each identifier is replaced, in any letter case,
 * so the verification scan (which also ignores case) finds nothing. A name, or an address spelled
 * out ("ada at example dot com"), cannot be told from other text and is not touched
 * (docs/2026-12-01-data-retention.md).
 */
export interface Replacement {
  find: string;
  replace: string;
}

const literally = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * `text` with every needle replaced, in any case. Safe inside JSON: ids and emails hold no quote,
 * backslash or control character, and neither do the replacements.
 */
export function scrubText(text: string, replacements: readonly Replacement[]): string {
  let out = text;
  for (const { find, replace } of replacements) {
    if (find === "") continue;
    out = out.replace(new RegExp(literally(find), "gi"), replace);
  }
  return out;
}

/**
 * Scrubs one text column of a D1 table (optionally only one org's rows). Returns the rows changed.
 * The rows are found with the same case-insensitive test the scan uses.
 */
export async function scrubColumn(
  db: D1Database,
  table: string,
  column: string,
  replacements: readonly Replacement[],
  orgId?: string,
): Promise<number> {
  const needles = replacements.map((r) => r.find.toLowerCase()).filter((n) => n !== "");
  if (needles.length === 0) return 0;
  const { results } = await db
    .prepare(
      `SELECT rowid AS r, ${column} AS v FROM ${table}
       WHERE (${needles.map(() => `instr(lower(${column}), ?) > 0`).join(" OR ")})
       ${orgId === undefined ? "" : "AND org_id = ?"}`,
    )
    .bind(...needles, ...(orgId === undefined ? [] : [orgId]))
    .all<{ r: number; v: string }>();
  if (results.length === 0) return 0;
  await db.batch(
    results.map((row) =>
      db
        .prepare(`UPDATE ${table} SET ${column} = ? WHERE rowid = ?`)
        .bind(scrubText(row.v, replacements), row.r),
    ),
  );
  return results.length;
}
