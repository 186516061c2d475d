import type { ErasurePlan } from "../erasure/plan.ts";
import { pseudonym } from "../erasure/pseudonym.ts";
import { knowledgeBase } from "./ingest.ts";

/**
 * Knowledge in an erasure (docs/2026-12-06-knowledge.md, "Lifecycle"). An erased project (one
 * deleted, or the projects of an org erased whole) loses its documents: its KnowledgeBase deletes
 * everything it stores (text, passages, the FTS index and its shadow tables, its vectors) and
 * keeps a tombstone; D1's rows go. A member's or account's erasure leaves the org's documents
 * with the org and puts the uploader's pseudonym where their id was.
 */

const ID_LIST = "(SELECT value FROM json_each(?))";

/** Projects of these orgs that have documents (their objects may name an uploader). */
async function projectsWithDocuments(db: D1Database, orgIds: readonly string[]) {
  const { results } = await db
    .prepare(`SELECT DISTINCT project_id FROM knowledge_documents WHERE org_id IN ${ID_LIST}`)
    .bind(JSON.stringify(orgIds))
    .all<{ project_id: string }>();
  return results.map((row) => row.project_id);
}

export async function eraseKnowledge(env: Env, plan: ErasurePlan): Promise<string> {
  const db = env.DB;
  for (const projectId of plan.projectIds) await knowledgeBase(env, projectId).purge();
  const statements: D1PreparedStatement[] = [];
  for (const table of ["knowledge_versions", "knowledge_documents"]) {
    if (plan.projectIds.length > 0) {
      statements.push(
        db
          .prepare(`DELETE FROM ${table} WHERE project_id IN ${ID_LIST}`)
          .bind(JSON.stringify(plan.projectIds)),
      );
    }
    if (plan.deleteOrgIds.length > 0) {
      statements.push(
        db
          .prepare(`DELETE FROM ${table} WHERE org_id IN ${ID_LIST}`)
          .bind(JSON.stringify(plan.deleteOrgIds)),
      );
    }
  }
  let jobs = 0;
  if (plan.userId) {
    const alias = await pseudonym(env.ERASURE_HASH_KEY, plan.userId);
    const orgs = plan.membershipOrgId ? [plan.membershipOrgId] : plan.orgIds;
    for (const table of ["knowledge_versions", "knowledge_documents"]) {
      statements.push(
        db
          .prepare(
            `UPDATE ${table} SET created_by = ? WHERE created_by = ? AND org_id IN ${ID_LIST}`,
          )
          .bind(alias, plan.userId, JSON.stringify(orgs)),
      );
    }
    const erased = new Set(plan.projectIds);
    for (const projectId of await projectsWithDocuments(db, orgs)) {
      if (!erased.has(projectId)) {
        jobs += await knowledgeBase(env, projectId).forgetMember(plan.userId, alias);
      }
    }
  }
  if (statements.length > 0) await db.batch(statements);
  return `${plan.projectIds.length} knowledge bases erased, ${jobs} indexing jobs pseudonymized`;
}

/** What the verification finds left: an erased project's object holding anything, a job naming the person. */
export async function knowledgeLeft(env: Env, plan: ErasurePlan): Promise<string[]> {
  const findings: string[] = [];
  for (const projectId of plan.projectIds) {
    for (const left of await knowledgeBase(env, projectId).leftovers()) {
      findings.push(`knowledge base of ${projectId} ${left.table}: ${left.rows} rows left`);
    }
  }
  if (plan.userId) {
    const orgs = plan.membershipOrgId ? [plan.membershipOrgId] : plan.orgIds;
    const erased = new Set(plan.projectIds);
    for (const projectId of await projectsWithDocuments(env.DB, orgs)) {
      if (erased.has(projectId)) continue;
      const rows = await knowledgeBase(env, projectId).jobsNaming(plan.userId);
      if (rows > 0) findings.push(`knowledge base of ${projectId} kb_jobs.member_id: ${rows} left`);
    }
  }
  return findings;
}
