import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ensureLocalSchema, LOCAL_SCHEMA_VERSION } from "../src/agents/local-schema.ts";

/**
 * The chat agents' own tables (agents/local-schema.ts): a new object gets them whole, an object from
 * before gets the columns added since, and a current one's start costs two statements.
 */

const stub = () =>
  env.ASSISTANT_AGENT.get(env.ASSISTANT_AGENT.idFromName(`schema-${crypto.randomUUID()}`));

const columns = (sql: SqlStorage, table: string): string[] =>
  sql
    .exec(`SELECT name FROM pragma_table_info('${table}')`)
    .toArray()
    .map((row) => row.name as string);

/** `sql`, counting its statements. */
function counted(sql: SqlStorage): { sql: SqlStorage; statements: string[] } {
  const statements: string[] = [];
  const wrapper = {
    exec: (query: string, ...bindings: unknown[]) => {
      statements.push(query);
      return sql.exec(query, ...bindings);
    },
  } as unknown as SqlStorage;
  return { sql: wrapper, statements };
}

describe("the chat agents' local tables", () => {
  it("are made whole on a new object, and a start of a current one reads one row", async () => {
    await runInDurableObject(stub(), (_instance, state) => {
      const sql = state.storage.sql;
      expect(columns(sql, "parley_steps")).toEqual(
        expect.arrayContaining([
          "hold_id",
          "lease_id",
          "draw_micros",
          "model",
          "billable",
          "attribution",
        ]),
      );
      expect(columns(sql, "parley_pending_usage")).toEqual(
        expect.arrayContaining(["parked_reason", "lease_id"]),
      );
      expect(columns(sql, "parley_lease")).toContain("last_draw_at");
      expect(
        sql.exec("SELECT value FROM parley_counters WHERE key = 'local_schema'").one().value,
      ).toBe(LOCAL_SCHEMA_VERSION);
      const start = counted(sql);
      ensureLocalSchema(start.sql);
      expect(start.statements).toHaveLength(2);
      expect(start.statements.some((query) => /ALTER|pragma_table_info/.test(query))).toBe(false);
    });
  });

  it("bring an object from before up to date, keeping its rows", async () => {
    await runInDurableObject(stub(), (_instance, state) => {
      const sql = state.storage.sql;
      // The tables as they first shipped, with a row each, and no schema version.
      sql.exec("DROP TABLE parley_steps");
      sql.exec("DROP TABLE parley_pending_usage");
      sql.exec("DROP TABLE parley_lease");
      sql.exec("DELETE FROM parley_counters WHERE key = 'local_schema'");
      sql.exec(`CREATE TABLE parley_steps (hold_id TEXT PRIMARY KEY, org_id TEXT NOT NULL,
        generation_id TEXT, streamed_chars INTEGER NOT NULL DEFAULT 0,
        prompt_estimate INTEGER NOT NULL, status TEXT NOT NULL, created_at INTEGER NOT NULL)`);
      sql.exec(
        "CREATE TABLE parley_pending_usage (request_id TEXT PRIMARY KEY, org_id TEXT NOT NULL, payload TEXT NOT NULL)",
      );
      sql.exec(`CREATE TABLE parley_lease (id INTEGER PRIMARY KEY CHECK (id = 1),
        org_id TEXT NOT NULL, member_id TEXT NOT NULL, project_id TEXT, session_id TEXT NOT NULL,
        lease_id TEXT, next_n INTEGER NOT NULL, granted_micros INTEGER NOT NULL,
        drawn_micros INTEGER NOT NULL, expires_at INTEGER NOT NULL)`);
      sql.exec("INSERT INTO parley_steps VALUES ('req-1:0', 'org_1', NULL, 0, 10, 'reserved', 1)");
      sql.exec("INSERT INTO parley_pending_usage VALUES ('req-1:0', 'org_1', '{}')");

      ensureLocalSchema(sql);

      expect(columns(sql, "parley_steps")).toEqual(
        expect.arrayContaining(["lease_id", "draw_micros", "model", "billable", "attribution"]),
      );
      expect(columns(sql, "parley_pending_usage")).toEqual(
        expect.arrayContaining(["parked_reason", "lease_id"]),
      );
      expect(columns(sql, "parley_lease")).toContain("last_draw_at");
      // A call from before is billable (the preview's kept none), priced as the default model.
      expect(
        sql.exec("SELECT hold_id, lease_id, model, billable FROM parley_steps").toArray(),
      ).toEqual([{ hold_id: "req-1:0", lease_id: null, model: null, billable: 1 }]);
      expect(sql.exec("SELECT COUNT(*) AS n FROM parley_pending_usage").one().n).toBe(1);
      const again = counted(sql);
      ensureLocalSchema(again.sql);
      expect(again.statements).toHaveLength(2);
    });
  });
});
