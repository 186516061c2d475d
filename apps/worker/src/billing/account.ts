import { config } from "../env.ts";

/** The org's BillingAccount Durable Object (one per org, named by the org id). */
export function billingAccount(env: Env, orgId: string) {
  return env.BILLING.get(env.BILLING.idFromName(orgId));
}

/**
 * Opens an org's account (idempotent): with the configured sign-up grant if this org is the one
 * that received its person's welcome grant (recorded in D1 at sign-up, once per person), else at
 * zero. Safe to call again: the grant's idempotency key is fixed, so it is posted at most once.
 */
export async function openBillingAccount(env: Env, orgId: string): Promise<void> {
  const granted = await env.DB.prepare("SELECT 1 AS ok FROM signup_grants WHERE org_id = ?")
    .bind(orgId)
    .first<{ ok: number }>();
  const { signupGrantMicros, signupGrantDays } = config(env);
  await billingAccount(env, orgId).open({
    orgId,
    grantMicros: granted ? signupGrantMicros : 0,
    grantDays: signupGrantDays,
  });
}
