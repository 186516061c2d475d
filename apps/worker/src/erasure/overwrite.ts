/**
 * Overwrites the text of the rows a delete is about to remove with as many zero bytes, so that the
 * deleted cells do not keep the erased bytes readable in the database file. D1 and Durable Object
 * SQLite refuse `PRAGMA secure_delete` and `VACUUM` (measured: SQLITE_AUTH, "cannot VACUUM from
 * within a transaction"); SQLite rewrites a value of the same size in place, so the cell the delete
 * then frees holds zeros. What this cannot reach (index entries, backups) is in
 * docs/2026-12-01-data-retention.md. `overwrite.test.ts` shows the effect on a real SQLite file.
 */
export function overwriteSql(table: string, columns: readonly string[], where: string): string {
  const bytes = (column: string) => `length(CAST(${column} AS BLOB))`;
  const sets = columns
    .map((c) => `${c} = substr(hex(zeroblob(${bytes(c)})), 1, ${bytes(c)})`)
    .join(", ");
  return `UPDATE ${table} SET ${sets} WHERE ${where}`;
}
