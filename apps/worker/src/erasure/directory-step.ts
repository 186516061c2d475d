import { revokeConnections } from "../agents/revocation.ts";
import { normalizedEmail } from "../auth/keyed-hash.ts";
import { mailRecordIds } from "../db/mail-records.ts";
import { overwriteSql } from "./overwrite.ts";
import type { ErasurePlan } from "./plan.ts";
import { pseudonym } from "./pseudonym.ts";

/**
 * The directory step of an erasure (D1's own rows) and the table lists and queries the other steps,
 * the verification and the data export share with it. Imports nothing of the exports, so an export
 * may use `invitationsTo` without an import cycle.
 */

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

/**
 * The erasure job's "d1" step: the plan's rows in D1 are overwritten, then deleted or
 * pseudonymized (sessions, projects, a membership and what the member made, invitations, mail,
 * end users, whole orgs, the account), and their open sockets revoked. Idempotent like every step
 * (steps.ts).
 */
export async function eraseDirectory(env: Env, plan: ErasurePlan): Promise<string> {
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
