import { env, runInDurableObject } from "cloudflare:test";
import { dollarsToMicrosCeil, type UsageRow } from "@parley/billing";
import type { OnboardingAgent } from "../src/agents/onboarding-agent.ts";
import { billingAccount } from "../src/billing/account.ts";
import { type World, world } from "./helpers.ts";

/** What the dev model (started by the global setup) saw and charged, read from its control API. */
const devModel = env.MODEL_BASE_URL.replace(/\/api\/v1$/, "");

export async function modelRequests(): Promise<number> {
  return ((await (await fetch(`${devModel}/__dev/requests`)).json()) as { count: number }).count;
}

export async function generation(id: string) {
  const all = (
    (await (await fetch(`${devModel}/__dev/generations`)).json()) as {
      data: { id: string; total_cost: number; cancelled: boolean }[];
    }
  ).data;
  return all.find((g) => g.id === id);
}

/** The micros the provider charged for the first generation named in a usage row. */
export async function generationCost(generationIds: string): Promise<number> {
  const [id] = JSON.parse(generationIds) as string[];
  return dollarsToMicrosCeil((await generation(id ?? ""))?.total_cost ?? -1);
}

/** The org's open session leases, as its account holds them. */
export async function openLeases(orgId: string) {
  return runInDurableObject(billingAccount(env, orgId), (_instance, state) =>
    state.storage.sql
      .exec(
        "SELECT request_id, amount_micros, session_id FROM ledger_holds WHERE status = 'open' AND request_id LIKE 'lease:%'",
      )
      .toArray(),
  );
}

/**
 * Returns every open session lease of the org (what an idle session does after a minute, or a
 * limit change at once): each session agent reports what it drew and gives the rest back. Then
 * the org's held credits are only per-call holds of calls in flight.
 */
export async function returnLeases(orgId: string): Promise<void> {
  const sessions = new Set((await openLeases(orgId)).map((lease) => lease.session_id as string));
  await Promise.all(
    [...sessions].map((id) =>
      env.ASSISTANT_AGENT.get(env.ASSISTANT_AGENT.idFromName(id)).dropLease(),
    ),
  );
}

/**
 * The most a session's latest model call could cost: what the call drew on the session's lease
 * (or held on its own). Read from the session's step rows.
 */
export async function latestCallMaximum(sessionId: string): Promise<number> {
  const stub = env.ASSISTANT_AGENT.get(env.ASSISTANT_AGENT.idFromName(sessionId));
  const drawn = await runInDurableObject(
    stub,
    (_instance, state) =>
      state.storage.sql
        .exec("SELECT draw_micros FROM parley_steps ORDER BY created_at DESC, rowid DESC LIMIT 1")
        .toArray()[0]?.draw_micros,
  );
  if (typeof drawn !== "number") throw new Error("the session's latest call drew nothing");
  return drawn;
}

/**
 * Drops the access a session agent kept from D1 (what happens once AUTHZ_CACHE_MS has passed
 * without a push): its next turn reads its rights and the project again.
 */
export async function forgetAccess(sessionId: string): Promise<void> {
  const stub = env.ASSISTANT_AGENT.get(env.ASSISTANT_AGENT.idFromName(sessionId));
  await runInDurableObject(stub, (instance) => {
    (instance as unknown as { forgetAccess(): void }).forgetAccess();
  });
}

/** The org's balance once its sessions' leases are returned (see `returnLeases`). */
export async function settledBalance(orgId: string) {
  await returnLeases(orgId);
  return billingAccount(env, orgId).balance();
}

/** A world whose org has credits (the worlds of helpers.ts have no BillingAccount yet). */
export async function funded(grantMicros = 10_000_000): Promise<World> {
  const w = await world();
  await billingAccount(env, w.orgId).open({ orgId: w.orgId, grantMicros });
  return w;
}

/**
 * The org's usage rows matching `match`, waiting (briefly) until `expected` have landed: metering
 * runs after the reply.
 */
export async function usageRowsOf(
  orgId: string,
  match: (row: UsageRow) => boolean,
  expected: number,
): Promise<UsageRow[]> {
  for (let i = 0; i < 100; i++) {
    const rows = (
      await billingAccount(env, orgId).usageRows({ from: 0, to: Date.now() + 1, limit: 1000 })
    ).filter(match);
    if (rows.length >= expected) return rows.sort((a, b) => a.requestId.localeCompare(b.requestId));
    await new Promise((r) => setTimeout(r, 20));
  }
  return [];
}

/** Sets how many free preview turns a project has used (the counter lives in its OnboardingAgent). */
export async function setTurnsUsed(projectId: string, used: number): Promise<void> {
  const stub = env.ONBOARDING_AGENT.get(env.ONBOARDING_AGENT.idFromName(projectId));
  await runInDurableObject(stub, (_instance: OnboardingAgent, state) => {
    state.storage.sql.exec(
      "INSERT INTO parley_counters (key, value) VALUES ('turns_used', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      used,
    );
  });
}

/** Puts an org at its daily cap of free preview turns for today. */
export async function fillPreviewCap(orgId: string): Promise<void> {
  const day = new Date().toISOString().slice(0, 10);
  await runInDurableObject(billingAccount(env, orgId), (_instance, state) => {
    state.storage.sql.exec(
      "INSERT INTO preview_turns (day, turns) VALUES (?, ?) ON CONFLICT (day) DO UPDATE SET turns = excluded.turns",
      day,
      Number(env.PREVIEW_ORG_DAILY_CAP),
    );
  });
}
