// Test support only (not exported): runs SqlLedgerStore on Node's built-in SQLite, with
// savepoints standing in for workerd's nestable transactionSync.
import { DatabaseSync, type StatementSync } from "node:sqlite";
import type { SqlExecutor } from "./sql.ts";

export function nodeSqliteExecutor(db = new DatabaseSync(":memory:")): SqlExecutor {
  const statements = new Map<string, StatementSync>();
  let depth = 0;
  return {
    exec(query, ...bindings) {
      let statement = statements.get(query);
      if (statement === undefined) {
        statement = db.prepare(query);
        statements.set(query, statement);
      }
      return statement.all(...bindings);
    },
    transact(fn) {
      const savepoint = `ledger_${depth}`;
      db.exec(`SAVEPOINT ${savepoint}`);
      depth += 1;
      try {
        const result = fn();
        depth -= 1;
        db.exec(`RELEASE ${savepoint}`);
        return result;
      } catch (error) {
        depth -= 1;
        db.exec(`ROLLBACK TO ${savepoint}`);
        db.exec(`RELEASE ${savepoint}`);
        throw error;
      }
    },
  };
}
