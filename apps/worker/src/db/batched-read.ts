/**
 * A read of D1 that can travel with others in one `DB.batch`: its statements, and what to make of
 * their answers. Checks that run together (a token's liveness and the caller's right to a session,
 * at a socket's connect) then cost one round trip to D1 instead of one each, and a write put
 * before them in the same batch is ordered before them in one transaction (the connection
 * registry relies on that: connections.ts `register`).
 */
export interface BatchedRead<T> {
  readonly statements: D1PreparedStatement[];
  /** What the answers mean; throws an `AppError` when they refuse. */
  read(results: D1Result[]): T | Promise<T>;
}

/** The first row of a statement's answer, as `first()` gives it. */
export function firstRow<T>(result: D1Result | undefined): T | null {
  return ((result?.results ?? [])[0] as T | undefined) ?? null;
}

/** Runs one read alone (one statement is one call, as `first()` would be). */
export async function runRead<T>(db: D1Database, read: BatchedRead<T>): Promise<T> {
  if (read.statements.length === 0) return read.read([]);
  const results =
    read.statements.length === 1
      ? [await (read.statements[0] as D1PreparedStatement).all()]
      : await db.batch(read.statements);
  return read.read(results);
}

/**
 * Sends `before` (writes) and then every read's statements in one `DB.batch` (one transaction, in
 * that order), and gives each read its own answers, in order: the caller reads them (`read.read`)
 * and decides what each refusal means.
 */
export async function batchAnswers(
  db: D1Database,
  reads: readonly BatchedRead<unknown>[],
  before: readonly D1PreparedStatement[] = [],
): Promise<D1Result[][]> {
  const statements = [...before, ...reads.flatMap((r) => r.statements)];
  const results = statements.length === 0 ? [] : await db.batch(statements);
  let at = before.length;
  return reads.map((r) => {
    const mine = results.slice(at, at + r.statements.length);
    at += r.statements.length;
    return mine;
  });
}

/** Two reads as one (both statements in the batch); `a`'s refusal first, then `b`'s. */
export function bothReads(a: BatchedRead<unknown>, b: BatchedRead<unknown>): BatchedRead<void> {
  return {
    statements: [...a.statements, ...b.statements],
    async read(results) {
      const first = results.slice(0, a.statements.length);
      const second = results.slice(a.statements.length);
      // Both are read (each keeps what it learned), then a refusal of either is thrown.
      const [x, y] = await Promise.allSettled([a.read(first), b.read(second)]);
      if (x.status === "rejected") throw x.reason;
      if (y.status === "rejected") throw y.reason;
    },
  };
}
