import { billingAccount } from "../billing/account.ts";
import { stripeClient } from "../billing/stripe.ts";
import { config } from "../env.ts";
import { eraseExports } from "../exports/file.ts";
import { eraseKnowledge } from "../knowledge/erasure.ts";
import { eraseDirectory, ID_LIST } from "./directory-step.ts";
import type { ErasurePlan, ErasureRequestRow, StepName } from "./plan.ts";
import { pseudonym } from "./pseudonym.ts";
import { objectReach, personReach, personReplacements } from "./reach.ts";
import { d1Source, scrubStore } from "./scan.ts";
import type { Replacement } from "./scrub.ts";
import { eraseToolRecords } from "./tools-step.ts";

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
    case "exports":
      return eraseExports(env, plan, request.org_id);
    case "knowledge":
      return eraseKnowledge(env, plan);
    case "tools":
      return eraseToolRecords(env, plan);
    case "d1":
      return eraseDirectory(env, plan);
    case "ledger":
      return pseudonymizeLedgers(env, plan, request.org_id);
    case "audit":
      return pseudonymizeAudit(env, request, plan);
    case "stripe":
      return eraseAtStripe(env, plan);
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
  // What the person wrote in shared chats that live on, and what others wrote naming them.
  let removed = 0;
  const shared = plan.userId ? await sharedChats(env, plan) : [];
  if (plan.userId && shared.length > 0) {
    const alias = await pseudonym(env.ERASURE_HASH_KEY, plan.userId);
    for (const id of shared) {
      const chat = env.ONBOARDING_AGENT.get(env.ONBOARDING_AGENT.idFromName(id));
      removed += (await chat.eraseSubject(plan.userId, alias, plan.email ?? null)).removed;
    }
  }
  return `${plan.sessionIds.length} assistant sessions, ${plan.projectIds.length} onboarding chats, ${removed} messages in ${shared.length} shared chats`;
}

/**
 * The shared onboarding chats of the orgs the person leaves that still exist: an object erased
 * since (it has a tombstone) is never addressed again, since addressing it would recreate it.
 */
export async function sharedChats(env: Env, plan: ErasurePlan): Promise<string[]> {
  const ids = (plan.chatProjectIds ?? []).filter((id) => !plan.projectIds.includes(id));
  if (ids.length === 0) return [];
  const { results } = await env.DB.prepare(
    `SELECT subject_id FROM tombstones WHERE subject_id IN ${ID_LIST}`,
  )
    .bind(JSON.stringify(ids))
    .all<{ subject_id: string }>();
  const erased = new Set(results.map((row) => row.subject_id));
  return ids.filter((id) => !erased.has(id));
}

async function pseudonymizeLedgers(
  env: Env,
  plan: ErasurePlan,
  requestOrgId: string | null,
): Promise<string> {
  // An erased project's limits go with it (its usage stays, under its id: not personal data).
  if (plan.projectIds.length > 0 && requestOrgId !== null) {
    await billingAccount(env, requestOrgId).dropProjectLimits(plan.projectIds);
  }
  if (!plan.userId) return "no personal identity in the ledger";
  const alias = await pseudonym(env.ERASURE_HASH_KEY, plan.userId);
  let rows = 0;
  const replacements = await personReplacements(env, plan);
  for (const orgId of plan.orgIds) {
    const account = billingAccount(env, orgId);
    rows += (await account.pseudonymizeMember(plan.userId, alias)).rows;
    // And anything else there that names them (a webhook URL, a memo): every table.
    rows += await account.scrubFor(replacements);
  }
  return `${rows} ledger rows now carry the member's pseudonym`;
}

/**
 * The audit trail keeps what happened, with every erased identifier replaced by its pseudonym: as
 * actor, as subject, as the requester of erasure requests (this one included); an erased account's
 * tombstone keeps only its pseudonym too (the account's rows are gone, so nothing needs the raw id
 * to refuse it any more). Free text other people typed (audit event data, a request's reason, a
 * project's memory, a session's title) loses the ids and the email in any letter case. A member
 * erasure reaches only the org they leave: their trail elsewhere is still theirs.
 */
async function pseudonymizeAudit(
  env: Env,
  _request: ErasureRequestRow,
  plan: ErasurePlan,
): Promise<string> {
  const db = env.DB;
  const ids = [plan.userId, ...plan.sessionIds, ...plan.projectIds].filter(
    (id): id is string => id !== null,
  );
  const org = plan.membershipOrgId ?? undefined;
  const scoped = org ? "AND org_id = ?3" : "";
  const statements: D1PreparedStatement[] = [];
  const replaceIn = (table: string, column: string, needle: string, alias: string) =>
    db
      .prepare(`UPDATE ${table} SET ${column} = ?2 WHERE ${column} = ?1 ${scoped}`)
      .bind(needle, alias, ...(org ? [org] : []));
  const replacements: Replacement[] = [];
  for (const id of ids) {
    const alias = await pseudonym(env.ERASURE_HASH_KEY, id);
    replacements.push({ find: id, replace: alias });
    statements.push(
      replaceIn("audit_log", "actor_id", id, alias),
      replaceIn("audit_log", "subject_id", id, alias),
    );
    if (id === plan.userId) {
      statements.push(replaceIn("erasure_requests", "requested_by", id, alias));
      if (!plan.membershipOrgId) {
        statements.push(
          db
            .prepare(
              "UPDATE tombstones SET subject_id = ? WHERE subject_id = ? AND subject_type = 'account'",
            )
            .bind(alias, id),
        );
      }
    }
  }
  if (statements.length > 0) await db.batch(statements);
  // Then whatever is left anywhere in D1 that names them, typed by anyone: a project or org named
  // after them, a colleague's display name holding their email, a memory, a reason, audit data.
  const objects = replacements.filter((r) => r.find !== plan.userId);
  let scrubbed = 0;
  if (plan.userId) {
    scrubbed += await scrubStore(d1Source(db), await personReplacements(env, plan), {
      ...personReach(plan),
    });
  }
  if (objects.length > 0) scrubbed += await scrubStore(d1Source(db), objects, objectReach());
  return `${ids.length} identifiers replaced by their pseudonyms, ${scrubbed} texts scrubbed`;
}

/**
 * Stripe holds an org's customer (its name, by default the owner's, and the payer's email). An org
 * erased whole has its customer deleted; Stripe itself keeps the payment records it must keep
 * (docs/ on data retention). Orgs that live on keep their customer: it names the org, not a member.
 */
async function eraseAtStripe(env: Env, plan: ErasurePlan): Promise<string> {
  if (plan.deleteOrgIds.length === 0) return "no customer to erase";
  const { results } = await env.DB.prepare(
    `SELECT id, stripe_customer_id FROM organizations
     WHERE id IN ${ID_LIST} AND stripe_customer_id IS NOT NULL`,
  )
    .bind(JSON.stringify(plan.deleteOrgIds))
    .all<{ id: string; stripe_customer_id: string }>();
  const stripe = stripeClient(config(env));
  for (const org of results) {
    try {
      await stripe.customers.del(org.stripe_customer_id);
    } catch (error) {
      // Deleted by an earlier run of this step: Stripe answers "No such customer".
      if ((error as { code?: string }).code !== "resource_missing") throw error;
    }
  }
  return `${results.length} Stripe customers deleted`;
}
