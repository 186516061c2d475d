import { billingAccount } from "../billing/account.ts";
import type { ErasurePlan, ErasureRequestRow, StepName } from "./plan.ts";
import { pseudonym } from "./pseudonym.ts";

/**
 * The erasure job's steps, one per store. Each is idempotent: the job may run a step again after a
 * crash, and a second run finds nothing left to do. The tombstones were written when the request was
 * filed, so no step races a reconnect that would recreate an object.
 */
export async function runStep(
  env: Env,
  request: ErasureRequestRow,
  plan: ErasurePlan,
  step: StepName,
): Promise<string> {
  switch (step) {
    case "agents":
      return eraseAgents(env, plan);
    case "d1":
      return eraseDirectory(env, plan);
    case "ledger":
      return pseudonymizeLedgers(env, plan);
    case "audit":
      return pseudonymizeAudit(env, request, plan);
    case "verify":
      return "see verification";
  }
}

async function eraseAgents(env: Env, plan: ErasurePlan): Promise<string> {
  // Addressed only by the job, after the tombstone: the Worker never routes a client to them again.
  for (const id of plan.sessionIds) {
    await env.ASSISTANT_AGENT.get(env.ASSISTANT_AGENT.idFromName(id)).destroyForErasure();
  }
  for (const id of plan.projectIds) {
    await env.ONBOARDING_AGENT.get(env.ONBOARDING_AGENT.idFromName(id)).destroyForErasure();
  }
  return `${plan.sessionIds.length} assistant sessions, ${plan.projectIds.length} onboarding chats`;
}

const placeholders = (n: number) => Array.from({ length: n }, () => "?").join(", ");

async function eraseDirectory(env: Env, plan: ErasurePlan): Promise<string> {
  const db = env.DB;
  const statements: D1PreparedStatement[] = [];
  if (plan.sessionIds.length > 0) {
    statements.push(
      db
        .prepare(`DELETE FROM sessions WHERE id IN (${placeholders(plan.sessionIds.length)})`)
        .bind(...plan.sessionIds),
    );
  }
  if (plan.projectIds.length > 0) {
    statements.push(
      db
        .prepare(
          `DELETE FROM sessions WHERE project_id IN (${placeholders(plan.projectIds.length)})`,
        )
        .bind(...plan.projectIds),
      db
        .prepare(`DELETE FROM projects WHERE id IN (${placeholders(plan.projectIds.length)})`)
        .bind(...plan.projectIds),
    );
  }
  if (plan.userId && plan.membershipOrgId) {
    statements.push(
      db
        .prepare("DELETE FROM memberships WHERE org_id = ? AND user_id = ?")
        .bind(plan.membershipOrgId, plan.userId),
    );
  }
  for (const orgId of plan.deleteOrgIds) {
    // The org's ledger lives on in its BillingAccount (financial records); its directory rows go.
    statements.push(
      db.prepare("DELETE FROM memberships WHERE org_id = ?").bind(orgId),
      db.prepare("UPDATE organizations SET name = '(erased)' WHERE id = ?").bind(orgId),
    );
  }
  if (plan.userId && !plan.membershipOrgId) {
    // The whole account.
    statements.push(
      db.prepare("DELETE FROM refresh_tokens WHERE user_id = ?").bind(plan.userId),
      db.prepare("DELETE FROM memberships WHERE user_id = ?").bind(plan.userId),
      db.prepare("DELETE FROM users WHERE id = ?").bind(plan.userId),
    );
  }
  if (statements.length > 0) await db.batch(statements);
  return `${statements.length} statements`;
}

async function pseudonymizeLedgers(env: Env, plan: ErasurePlan): Promise<string> {
  if (!plan.userId) return "no personal identity in the ledger";
  const alias = await pseudonym(env.ERASURE_HASH_KEY, plan.userId);
  let rows = 0;
  for (const orgId of plan.orgIds) {
    rows += (await billingAccount(env, orgId).pseudonymizeMember(plan.userId, alias)).rows;
  }
  return `${rows} ledger rows now carry the member's pseudonym`;
}

async function pseudonymizeAudit(
  env: Env,
  request: ErasureRequestRow,
  plan: ErasurePlan,
): Promise<string> {
  const db = env.DB;
  const ids = [plan.userId, ...plan.sessionIds, ...plan.projectIds].filter(
    (id): id is string => id !== null,
  );
  const scoped = plan.membershipOrgId ? "AND org_id = ?" : "";
  const scope = plan.membershipOrgId ? [plan.membershipOrgId] : [];
  const statements: D1PreparedStatement[] = [];
  for (const id of ids) {
    const alias = await pseudonym(env.ERASURE_HASH_KEY, id);
    statements.push(
      db
        .prepare(`UPDATE audit_log SET actor_id = ? WHERE actor_id = ? ${scoped}`)
        .bind(alias, id, ...scope),
      db
        .prepare(`UPDATE audit_log SET subject_id = ? WHERE subject_id = ? ${scoped}`)
        .bind(alias, id, ...scope),
    );
    if (!plan.membershipOrgId && id === plan.userId) {
      statements.push(
        db
          .prepare(
            "UPDATE erasure_requests SET requested_by = ? WHERE requested_by = ? AND id <> ?",
          )
          .bind(alias, id, request.id),
      );
    }
  }
  if (statements.length > 0) await db.batch(statements);
  return `${ids.length} identifiers replaced by their pseudonyms`;
}

export interface Verification {
  ok: boolean;
  checkedAt: string;
  findings: string[];
}

/**
 * Scans every store for what the erasure should have removed. Fails (with findings) if anything is
 * left: a planted row makes it fail, which is how the scan itself is tested.
 */
export async function verifyErasure(env: Env, plan: ErasurePlan): Promise<Verification> {
  const db = env.DB;
  const findings: string[] = [];
  const count = async (label: string, sql: string, ...bindings: string[]) => {
    const row = await db
      .prepare(sql)
      .bind(...bindings)
      .first<{ n: number }>();
    if ((row?.n ?? 0) > 0) findings.push(`${label}: ${row?.n} left`);
  };
  for (const id of plan.sessionIds) {
    await count("session row", "SELECT COUNT(*) AS n FROM sessions WHERE id = ?", id);
    await count(
      "session tombstone missing",
      "SELECT 1 - COUNT(*) AS n FROM tombstones WHERE subject_id = ?",
      id,
    );
  }
  for (const id of plan.projectIds) {
    await count("project row", "SELECT COUNT(*) AS n FROM projects WHERE id = ?", id);
    await count(
      "project tombstone missing",
      "SELECT 1 - COUNT(*) AS n FROM tombstones WHERE subject_id = ?",
      id,
    );
  }
  if (plan.userId) {
    const scoped = plan.membershipOrgId ? " AND org_id = ?" : "";
    const scope = plan.membershipOrgId ? [plan.membershipOrgId] : [];
    await count(
      "membership",
      `SELECT COUNT(*) AS n FROM memberships WHERE user_id = ?${scoped}`,
      plan.userId,
      ...scope,
    );
    await count(
      "audit actor",
      `SELECT COUNT(*) AS n FROM audit_log WHERE actor_id = ?${scoped}`,
      plan.userId,
      ...scope,
    );
    await count(
      "audit subject",
      `SELECT COUNT(*) AS n FROM audit_log WHERE subject_id = ?${scoped}`,
      plan.userId,
      ...scope,
    );
    if (!plan.membershipOrgId) {
      await count("user row", "SELECT COUNT(*) AS n FROM users WHERE id = ?", plan.userId);
      await count(
        "refresh tokens",
        "SELECT COUNT(*) AS n FROM refresh_tokens WHERE user_id = ?",
        plan.userId,
      );
    }
    for (const orgId of plan.orgIds) {
      const left = await billingAccount(env, orgId).countIdentity(plan.userId);
      if (left > 0) findings.push(`ledger of ${orgId}: ${left} rows still name the member`);
    }
  }
  return { ok: findings.length === 0, checkedAt: new Date().toISOString(), findings };
}
