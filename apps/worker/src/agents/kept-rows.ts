/**
 * What a chat agent keeps of D1 between turns (the caller's access, what their turns resolve to),
 * in its own SQLite (`parley_kept`) with when it was read, so that it outlives a hibernation: workerd
 * evicts an object 10 s after its last event, sockets kept, so at a person's pace nearly every turn
 * wakes the object, and an in-memory copy made the first turn after each wake read D1 again.
 *
 * Kept under the same rules as in memory: at most `authzCacheMs` old when used; every push (a
 * change of rights or of what a turn resolves to) reaches the object through its registered
 * sockets and deletes what it names before re-checking them (connections.ts `recheckAll`); every
 * new socket reads it again after it is registered. The copies only spare the reads between.
 */
export class KeptRows {
  readonly #sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  /** The value kept under `key` and when it was read, or null. */
  get<T>(key: string): { at: number; value: T } | null {
    const row = this.#sql
      .exec<{ at: number; value: string }>("SELECT at, value FROM parley_kept WHERE key = ?", key)
      .toArray()[0];
    return row ? { at: row.at, value: JSON.parse(row.value) as T } : null;
  }

  put(key: string, at: number, value: unknown): void {
    this.#sql.exec(
      "INSERT INTO parley_kept (key, at, value) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET at = excluded.at, value = excluded.value",
      key,
      at,
      JSON.stringify(value),
    );
  }

  delete(key: string): void {
    this.#sql.exec("DELETE FROM parley_kept WHERE key = ?", key);
  }

  /** Deletes every key that starts with `prefix`. */
  deleteAll(prefix: string): void {
    this.#sql.exec("DELETE FROM parley_kept WHERE substr(key, 1, ?) = ?", prefix.length, prefix);
  }
}
