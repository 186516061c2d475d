import { billingAccount } from "../billing/account.ts";
import { stripeClient } from "../billing/stripe.ts";
import { config } from "../env.ts";
import { exportsReached } from "../exports/file.ts";
import { knowledgeLeft } from "../knowledge/erasure.ts";
import { ID_LIST, ORG_APP_TABLES, ORG_ASSISTANT_TABLES } from "./directory-step.ts";
import type { ErasurePlan } from "./plan.ts";
import { objectReach, personReach } from "./reach.ts";
import { d1Source, type Finding, scanStore } from "./scan.ts";
import { sharedChats } from "./steps.ts";
import { ORG_TOOL_TABLES } from "./tools-step.ts";

export interface Verification {
  ok: boolean;
  checkedAt: string;
  findings: string[];
}

/**
 * Scans every store for what the erasure should have removed, over every table of each (not a
 * list), so a store or table added later is covered: D1, each BillingAccount the plan names (for a
 * person), and Stripe (for orgs erased whole). Fails with findings if anything is left; a planted
 * row makes it fail, which is how the scan itself is tested.
 */
export async function verifyErasure(
  env: Env,
  plan: ErasurePlan,
  orgId: string | null = null,
): Promise<Verification> {
  const db = env.DB;
  const findings: string[] = [];
  // Data exports hold copies: none that may hold what was erased is left (their rows name no
  // one the scans below look for when the subject is a project or a session).
  const exportsLeft = await exportsReached(env, plan, orgId);
  if (exportsLeft.length > 0) {
    findings.push(`D1 data_exports: ${exportsLeft.length} exports holding erased data left`);
  }
  // Knowledge: an erased project's object holds nothing (its FTS shadow tables included), and no
  // indexing job names an erased person.
  findings.push(...(await knowledgeLeft(env, plan)));
  const report = (store: string, found: Finding[]) => {
    for (const f of found) findings.push(`${store} ${f.table}.${f.column}: ${f.rows} left`);
  };
  const objects = [...plan.sessionIds, ...plan.projectIds];
  if (objects.length > 0) {
    report("D1", await scanStore(d1Source(db), { needles: objects, ...objectReach() }));
    for (const id of objects) {
      const tomb = await db
        .prepare("SELECT COUNT(*) AS n FROM tombstones WHERE subject_id = ?")
        .bind(id)
        .first<{ n: number }>();
      if ((tomb?.n ?? 0) === 0) findings.push(`D1 tombstones: ${id} has none`);
    }
  }
  if (plan.userId) {
    const needles = [plan.userId, ...(plan.email ? [plan.email] : [])];
    report("D1", await scanStore(d1Source(db), { needles, ...personReach(plan) }));
    for (const id of await sharedChats(env, plan)) {
      const chat = env.ONBOARDING_AGENT.get(env.ONBOARDING_AGENT.idFromName(id));
      for (const f of await chat.scanFor(needles)) {
        findings.push(`onboarding chat of ${id} ${f.table}.${f.column}: ${f.rows} left`);
      }
    }
    for (const orgId of plan.orgIds) {
      const left = await billingAccount(env, orgId).scanFor(needles);
      for (const f of left)
        findings.push(`ledger of ${orgId} ${f.table}.${f.column}: ${f.rows} left`);
    }
  }
  if (plan.deleteOrgIds.length > 0) {
    for (const table of [...ORG_APP_TABLES, ...ORG_ASSISTANT_TABLES, ...ORG_TOOL_TABLES]) {
      const left = await db
        .prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE org_id IN ${ID_LIST}`)
        .bind(JSON.stringify(plan.deleteOrgIds))
        .first<{ n: number }>();
      if (left?.n) findings.push(`D1 ${table}: ${left.n} rows of an org erased whole left`);
    }
    // An org erased whole keeps no API key (its rows name no person, so the scans above miss them).
    const keys = await db
      .prepare(`SELECT COUNT(*) AS n FROM api_keys WHERE org_id IN ${ID_LIST}`)
      .bind(JSON.stringify(plan.deleteOrgIds))
      .first<{ n: number }>();
    if ((keys?.n ?? 0) > 0) findings.push(`D1 api_keys: ${keys?.n} keys of erased orgs left`);
    const { results } = await db
      .prepare(
        `SELECT stripe_customer_id AS customer FROM organizations
         WHERE id IN ${ID_LIST} AND stripe_customer_id IS NOT NULL`,
      )
      .bind(JSON.stringify(plan.deleteOrgIds))
      .all<{ customer: string }>();
    const stripe = stripeClient(config(env));
    for (const { customer } of results) {
      // A customer Stripe does not know at all (deleted long ago, another account) is gone too.
      const found = await stripe.customers.retrieve(customer).catch((error: unknown) => {
        if ((error as { code?: string }).code === "resource_missing") return { deleted: true };
        throw error;
      });
      if (!found.deleted) findings.push(`Stripe customer ${customer}: not deleted`);
    }
  }
  return { ok: findings.length === 0, checkedAt: new Date().toISOString(), findings };
}
