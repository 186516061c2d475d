import { sourceClient } from "../tools/source-client.ts";
import { overwriteSql } from "./overwrite.ts";
import type { ErasurePlan } from "./plan.ts";
import { pseudonym } from "./pseudonym.ts";

/** An org's tool tables, calls before sources: all go when the org is erased whole. */
export const ORG_TOOL_TABLES = ["tool_calls", "tool_sources"];

const ID_LIST = "(SELECT value FROM json_each(?))";

/**
 * The erasure's `tools` step (issue 30, docs/2026-12-06-tools.md). Tool call records go with their
 * session, their project, and the person they were made for (a member in the org they leave, an
 * account everywhere, an end user of the org's apps); who registered a source that lives on
 * becomes their pseudonym, as for API keys. An org erased whole loses its sources (their text
 * overwritten first, the sealed credential with it) and calls, and each source's client object
 * forgets its connection. The ledger keeps the calls' usage, pseudonymized by the `ledger` step.
 * Idempotent: a second run finds nothing left.
 */
export async function eraseToolRecords(env: Env, plan: ErasurePlan): Promise<string> {
  const db = env.DB;
  const statements: D1PreparedStatement[] = [];
  if (plan.sessionIds.length > 0) {
    statements.push(
      db
        .prepare(`DELETE FROM tool_calls WHERE session_id IN ${ID_LIST}`)
        .bind(JSON.stringify(plan.sessionIds)),
    );
  }
  if (plan.projectIds.length > 0) {
    statements.push(
      db
        .prepare(`DELETE FROM tool_calls WHERE project_id IN ${ID_LIST}`)
        .bind(JSON.stringify(plan.projectIds)),
    );
  }
  if (plan.userId) {
    const alias = await pseudonym(env.ERASURE_HASH_KEY, plan.userId);
    const org = plan.membershipOrgId;
    const scoped = org ? "AND org_id = ?2" : "";
    const bind = (statement: D1PreparedStatement, ...first: string[]) =>
      statement.bind(...first, ...(org ? [org] : []));
    statements.push(
      bind(db.prepare(`DELETE FROM tool_calls WHERE caller_id = ?1 ${scoped}`), plan.userId),
      bind(db.prepare(`DELETE FROM tool_calls WHERE approved_by = ?1 ${scoped}`), plan.userId),
      db
        .prepare(
          `UPDATE tool_sources SET created_by = ?3 WHERE created_by = ?1 ${org ? "AND org_id = ?2" : "AND ?2 IS NULL"}`,
        )
        .bind(plan.userId, org, alias),
    );
  }
  const erased: string[] = [];
  for (const orgId of plan.deleteOrgIds) {
    const { results } = await db
      .prepare("SELECT id FROM tool_sources WHERE org_id = ?")
      .bind(orgId)
      .all<{ id: string }>();
    erased.push(...results.map((r) => r.id));
    statements.push(
      db
        // OR REPLACE: zeroed names of equal length collide on UNIQUE (org_id, name); the row
        // replaced is one already zeroed, and every row of the org goes next anyway.
        .prepare(
          overwriteSql(
            "tool_sources",
            ["name", "description", "url", "credential_sealed", "tools", "last_error"],
            "org_id = ?",
          ).replace(/^UPDATE /, "UPDATE OR REPLACE "),
        )
        .bind(orgId),
      ...ORG_TOOL_TABLES.map((table) =>
        db.prepare(`DELETE FROM ${table} WHERE org_id = ?`).bind(orgId),
      ),
    );
  }
  if (statements.length > 0) await db.batch(statements);
  for (const id of erased) await sourceClient(env, id).erase();
  return `${statements.length} statements, ${erased.length} tool sources of erased orgs`;
}
