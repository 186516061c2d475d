/**
 * The smallest synchronous SQL that both the BillingAccount Durable Object
 * (`ctx.storage.sql.exec`, `ctx.storage.transactionSync`) and a Node test harness can provide, and
 * the helpers every store of this package reads and writes with. No platform import: the
 * BillingAccount passes
 * `{ exec: (query, ...bindings) => ctx.storage.sql.exec(query, ...bindings), transact: (fn) => ctx.storage.transactionSync(fn) }`.
 */

export type SqlValue = string | number | null;

/** Runs SQL synchronously. `exec` returns the statement's rows (none for writes). */
export interface SqlExecutor {
  exec(query: string, ...bindings: SqlValue[]): Iterable<Record<string, unknown>>;
  /** Atomic; a nested call must work, e.g. by joining the outer transaction. */
  transact<T>(fn: () => T): T;
}

/** Runs a statement for its effect: the cursor is drained, since workerd runs it as it is consumed. */
export function sqlRun(exec: SqlExecutor["exec"], query: string, ...bindings: SqlValue[]): void {
  for (const _ of exec(query, ...bindings)) {
    // nothing to read
  }
}

/** A query's rows, read at once. */
export function sqlRows(
  exec: SqlExecutor["exec"],
  query: string,
  ...bindings: SqlValue[]
): Record<string, unknown>[] {
  return [...exec(query, ...bindings)];
}

/**
 * A row as SQLite returns it. The readers below check and convert one column each: a value of
 * another type throws (`TypeError`), so a row that drifted from its table is never read as money.
 */
export type Row = Record<string, unknown>;

export function num(row: Row, column: string): number {
  const value = row[column];
  if (typeof value !== "number") throw new TypeError(`column ${column} is not a number`);
  return value;
}

export function numOrNull(row: Row, column: string): number | null {
  return row[column] === null ? null : num(row, column);
}

export function str(row: Row, column: string): string {
  const value = row[column];
  if (typeof value !== "string") throw new TypeError(`column ${column} is not text`);
  return value;
}

export function strOrNull(row: Row, column: string): string | null {
  return row[column] === null ? null : str(row, column);
}

/** A text column that must be one of `allowed` (an enum the schema does not check). */
export function oneOf<T extends string>(row: Row, column: string, allowed: readonly T[]): T {
  const value = str(row, column);
  const found = allowed.find((candidate) => candidate === value);
  if (found === undefined) throw new TypeError(`column ${column} has unknown value ${value}`);
  return found;
}
