import { revokeConnections } from "../agents/revocation.ts";
import { normalizedEmail } from "../auth/keyed-hash.ts";
import { billingAccount } from "../billing/account.ts";
import { stripeClient } from "../billing/stripe.ts";
import { mailRecordIds } from "../db/mail-records.ts";
import { config } from "../env.ts";
import { eraseExports } from "../exports/file.ts";
import { eraseKnowledge } from "../knowledge/erasure.ts";
import { overwriteSql } from "./overwrite.ts";
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

/**
 * An id list as one bound JSON value (`IN ${ID_LIST}`, bound as `JSON.stringify(ids)`): D1 binds
 * at most 100 parameters, and a member or project can have more sessions than that.
 */
export const ID_LIST = "(SELECT value FROM json_each(?))";

/** An org's app tables, children first: all go when the org is erased whole. */
export const ORG_APP_TABLES = ["end_users", "app_secrets", "app_origins", "app_projects", "apps"];

/**
 * An org's assistant tables (2026-12-06), versions before profiles: all go when the org is erased
 * whole; a member's erasure leaves the content with the org and pseudonymizes its author.
 */
export const ORG_ASSISTANT_TABLES = [
  "org_models",
  "assistant_profile_versions",
  "assistant_profiles",
];

const overwriteStatement = (
  db: D1Database,
  table: string,
  columns: readonly string[],
  where: string,
  ...bindings: string[]
) => db.prepare(overwriteSql(table, columns, where)).bind(...bindings);

/**
 * Invitations to the person's email (of one org, or of every org), matched as acceptance matches
 * an email: `+tags` and Gmail's dots aside, so `gus+tag@` goes with `gus@`.
 */
export async function invitationsTo(
  db: D1Database,
  email: string | null | undefined,
  orgId: string | null,
): Promise<string[]> {
  if (!email) return [];
  const person = normalizedEmail(email);
  const domain = person.split("@")[1] ?? "";
  const domains = domain === "gmail.com" ? ["gmail.com", "googlemail.com"] : [domain];
  const { results } = await db
    .prepare(
      `SELECT id, email FROM invitations
       WHERE lower(substr(email, instr(email, '@') + 1)) IN (SELECT value FROM json_each(?1))
       ${orgId ? "AND org_id = ?2" : ""}`,
    )
    .bind(JSON.stringify(domains), ...(orgId ? [orgId] : []))
    .all<{ id: string; email: string }>();
  return results.filter((row) => normalizedEmail(row.email) === person).map((row) => row.id);
}

async function eraseDirectory(env: Env, plan: ErasurePlan): Promise<string> {
  const db = env.DB;
  const statements: D1PreparedStatement[] = [];
  if (plan.sessionIds.length > 0) {
    const ids = plan.sessionIds;
    statements.push(
      overwriteStatement(db, "sessions", ["title"], `id IN ${ID_LIST}`, JSON.stringify(ids)),
      db.prepare(`DELETE FROM sessions WHERE id IN ${ID_LIST}`).bind(JSON.stringify(ids)),
    );
  }
  if (plan.projectIds.length > 0) {
    const ids = plan.projectIds;
    statements.push(
      overwriteStatement(
        db,
        "sessions",
        ["title"],
        `project_id IN ${ID_LIST}`,
        JSON.stringify(ids),
      ),
      db.prepare(`DELETE FROM sessions WHERE project_id IN ${ID_LIST}`).bind(JSON.stringify(ids)),
      overwriteStatement(
        db,
        "projects",
        ["name", "memory"],
        `id IN ${ID_LIST}`,
        JSON.stringify(ids),
      ),
      db.prepare(`DELETE FROM projects WHERE id IN ${ID_LIST}`).bind(JSON.stringify(ids)),
    );
  }
  if (plan.projectIds.length > 0) {
    statements.push(
      db
        .prepare(`DELETE FROM preview_authors WHERE project_id IN ${ID_LIST}`)
        .bind(JSON.stringify(plan.projectIds)),
      // Apps that offered the project keep their other projects.
      db
        .prepare(`DELETE FROM app_projects WHERE project_id IN ${ID_LIST}`)
        .bind(JSON.stringify(plan.projectIds)),
    );
  }
  if (plan.userId && plan.membershipOrgId) {
    const alias = await pseudonym(env.ERASURE_HASH_KEY, plan.userId);
    statements.push(
      db
        .prepare("DELETE FROM preview_authors WHERE org_id = ? AND user_id = ?")
        .bind(plan.membershipOrgId, plan.userId),
      db
        .prepare("DELETE FROM memberships WHERE org_id = ? AND user_id = ?")
        .bind(plan.membershipOrgId, plan.userId),
      // The projects they made stay the org's; who made them goes.
      db
        .prepare("UPDATE projects SET created_by = NULL WHERE org_id = ? AND created_by = ?")
        .bind(plan.membershipOrgId, plan.userId),
      // Invitations they made or took stay the org's record without them; those to their email go.
      // The links they made close first: a link grants no more than its maker could (the link
      // itself also checks its maker at use: routes/invitations.ts `MAKER_STANDS`).
      db
        .prepare(
          `UPDATE invitations SET revoked_at = ? WHERE org_id = ? AND invited_by = ?
           AND accepted_at IS NULL AND revoked_at IS NULL`,
        )
        .bind(Date.now(), plan.membershipOrgId, plan.userId),
      db
        .prepare("UPDATE invitations SET invited_by = NULL WHERE org_id = ? AND invited_by = ?")
        .bind(plan.membershipOrgId, plan.userId),
      db
        .prepare("UPDATE invitations SET accepted_by = NULL WHERE org_id = ? AND accepted_by = ?")
        .bind(plan.membershipOrgId, plan.userId),
      db
        .prepare(`DELETE FROM invitations WHERE id IN ${ID_LIST}`)
        .bind(JSON.stringify(await invitationsTo(db, plan.email, plan.membershipOrgId))),
      // The org's mail to them (receipts, alerts, an invitation) goes with them.
      db.prepare(`DELETE FROM mail_outbox WHERE id IN ${ID_LIST}`).bind(
        JSON.stringify(
          await mailRecordIds(db, {
            userId: plan.userId,
            email: plan.email,
            orgId: plan.membershipOrgId,
          }),
        ),
      ),
      // So do the API keys they made (the org's, and its servers still use them); who made one
      // becomes their pseudonym, as in the audit trail that records its creation.
      db
        .prepare("UPDATE api_keys SET created_by = ? WHERE org_id = ? AND created_by = ?")
        .bind(alias, plan.membershipOrgId, plan.userId),
      // The profile versions they wrote stay the org's (its assistant's history); who wrote them
      // becomes their pseudonym, as in the ledger, so the history still tells authors apart.
      db
        .prepare(
          "UPDATE assistant_profile_versions SET author_id = ? WHERE org_id = ? AND author_id = ?",
        )
        .bind(alias, plan.membershipOrgId, plan.userId),
      // An end user of the org's apps (erased by the tenant, as a member of the org is): their
      // row, with the tenant's id for them and their name, goes; their sessions are in the plan.
      db
        .prepare("DELETE FROM end_users WHERE org_id = ? AND id = ?")
        .bind(plan.membershipOrgId, plan.userId),
    );
  }
  for (const orgId of plan.deleteOrgIds) {
    // The org's ledger lives on in its BillingAccount (financial records); its directory rows go,
    // its API keys too (revoked when the request was filed).
    statements.push(
      db.prepare("DELETE FROM memberships WHERE org_id = ?").bind(orgId),
      db.prepare("DELETE FROM invitations WHERE org_id = ?").bind(orgId),
      db.prepare("DELETE FROM mail_outbox WHERE org_id = ?").bind(orgId),
      overwriteStatement(db, "api_keys", ["name", "secret_hash"], "org_id = ?", orgId),
      db.prepare("DELETE FROM api_keys WHERE org_id = ?").bind(orgId),
      overwriteStatement(db, "organizations", ["name"], "id = ?", orgId),
      db.prepare("UPDATE organizations SET name = '(erased)' WHERE id = ?").bind(orgId),
      // Its apps, their sealed secrets and its end users (the tenant's users' ids) go with it.
      // OR REPLACE: zeroed external ids of equal length collide on UNIQUE (app_id, external_id);
      // the row replaced is one already zeroed.
      db
        .prepare(
          overwriteSql("end_users", ["external_id", "name"], "org_id = ?").replace(
            /^UPDATE /,
            "UPDATE OR REPLACE ",
          ),
        )
        .bind(orgId),
      overwriteStatement(db, "app_secrets", ["sealed"], "org_id = ?", orgId),
      overwriteStatement(db, "apps", ["name"], "org_id = ?", orgId),
      ...ORG_APP_TABLES.map((table) =>
        db.prepare(`DELETE FROM ${table} WHERE org_id = ?`).bind(orgId),
      ),
      // Its assistant profiles (the tenant's instructions, welcome and suggestions) and allowed
      // models go too; the org row stays, named "(erased)", pointing at no profile.
      overwriteStatement(
        db,
        "assistant_profile_versions",
        ["name", "instructions", "welcome", "suggestions"],
        "org_id = ?",
        orgId,
      ),
      ...ORG_ASSISTANT_TABLES.map((table) =>
        db.prepare(`DELETE FROM ${table} WHERE org_id = ?`).bind(orgId),
      ),
      db.prepare("UPDATE organizations SET preview_profile_id = NULL WHERE id = ?").bind(orgId),
    );
  }
  if (plan.userId && !plan.membershipOrgId) {
    // The whole account.
    const user = plan.userId;
    const alias = await pseudonym(env.ERASURE_HASH_KEY, user);
    statements.push(
      db.prepare("DELETE FROM refresh_tokens WHERE user_id = ?").bind(user),
      db.prepare("DELETE FROM connect_tickets WHERE user_id = ?").bind(user),
      // Their links (verification, email change, reset) and every mail about them or to them.
      db.prepare("DELETE FROM account_tokens WHERE user_id = ?").bind(user),
      db
        .prepare(`DELETE FROM mail_outbox WHERE id IN ${ID_LIST}`)
        .bind(JSON.stringify(await mailRecordIds(db, { userId: user, email: plan.email }))),
      db.prepare("DELETE FROM preview_authors WHERE user_id = ?").bind(user),
      db.prepare("DELETE FROM memberships WHERE user_id = ?").bind(user),
      db.prepare("UPDATE projects SET created_by = NULL WHERE created_by = ?").bind(user),
      db
        .prepare(
          `UPDATE invitations SET revoked_at = ? WHERE invited_by = ?
           AND accepted_at IS NULL AND revoked_at IS NULL`,
        )
        .bind(Date.now(), user),
      db.prepare("UPDATE invitations SET invited_by = NULL WHERE invited_by = ?").bind(user),
      db.prepare("UPDATE invitations SET accepted_by = NULL WHERE accepted_by = ?").bind(user),
      db
        .prepare(`DELETE FROM invitations WHERE id IN ${ID_LIST}`)
        .bind(JSON.stringify(await invitationsTo(db, plan.email, null))),
      db.prepare("UPDATE api_keys SET created_by = ? WHERE created_by = ?").bind(alias, user),
      db
        .prepare("UPDATE assistant_profile_versions SET author_id = ? WHERE author_id = ?")
        .bind(alias, user),
      overwriteStatement(db, "users", ["email", "name", "password_hash"], "id = ?", user),
      db.prepare("DELETE FROM users WHERE id = ?").bind(user),
    );
  }
  if (statements.length > 0) await db.batch(statements);
  if (plan.userId) {
    // With the rights gone, whatever they still have open closes now; then the registry forgets them.
    const scope = plan.membershipOrgId
      ? { userId: plan.userId, orgId: plan.membershipOrgId }
      : { userId: plan.userId };
    await revokeConnections(env, scope);
    await db
      .prepare(
        `DELETE FROM agent_connections WHERE user_id = ? ${plan.membershipOrgId ? "AND org_id = ?" : ""}`,
      )
      .bind(plan.userId, ...(plan.membershipOrgId ? [plan.membershipOrgId] : []))
      .run();
  }
  return `${statements.length} statements`;
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

/** The person's identifiers and what replaces them: the id by its pseudonym, the email by a mark. */
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
