import { config } from "../env.ts";

/** The org's BillingAccount Durable Object (one per org, named by the org id). */
export function billingAccount(env: Env, orgId: string) {
  return env.BILLING.get(env.BILLING.idFromName(orgId));
}

/** Opens a new org's account with the configured sign-up grant (idempotent). */
export async function openBillingAccount(env: Env, orgId: string): Promise<void> {
  await billingAccount(env, orgId).open({ orgId, grantMicros: config(env).signupGrantMicros });
}
