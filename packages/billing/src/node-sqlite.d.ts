// The slice of Node's built-in `node:sqlite` that the tests use to run SqlLedgerStore, declared
// here so the package does not take @types/node (which would let Node APIs into pure code).
declare module "node:sqlite" {
  type SqliteValue = string | number | bigint | null | Uint8Array;
  export interface StatementSync {
    all(...parameters: SqliteValue[]): Record<string, unknown>[];
  }
  export class DatabaseSync {
    constructor(path: string);
    exec(sql: string): void;
    prepare(sql: string): StatementSync;
    close(): void;
  }
}
