// The sessions the load benchmarks (concurrency.mjs, stress.mjs, soak.mjs, heap.mjs) drive on each
// agent, and the audit after: every message stored, every org's ledger exact. A session is
// `{ url, token? }` plus `sent`, the turns sent to it, which the drivers count.
import { json, signUp } from "./lib.mjs";

/** Platform sessions per org (each org one member's, with one project). */
const SESSIONS_PER_ORG = 10;

let bareRuns = 0;
/** `count` new sessions of the bare agent (its objects are made by their first connect). */
export function bareSessions(base, count, label = "load") {
  const run = `${Date.now()}-${++bareRuns}`;
  return Array.from({ length: count }, (_, i) => ({
    url: `${base}/agents/bare-chat-agent/${label}-${run}-${i}`,
    sent: 0,
  }));
}

/**
 * `count` assistant sessions on the platform at `base`, `perOrg` to an org; returns them and the
 * orgs (`{ orgId, token }`) for `ledgerMismatches`.
 */
export async function platformSessions(
  base,
  count,
  { perOrg = SESSIONS_PER_ORG, label = "load" } = {},
) {
  const orgs = [];
  const sessions = [];
  for (let o = 0; o * perOrg < count; o++) {
    const { token, orgId, post } = await signUp(base, `${label}-${o}`);
    const project = await post(`/api/orgs/${orgId}/projects`, { name: "Load" });
    orgs.push({ orgId, token });
    for (let s = o * perOrg; s < Math.min(count, (o + 1) * perOrg); s++) {
      const { id } = await post(`/api/projects/${project.id}/sessions`, {});
      sessions.push({ url: `${base}/agents/assistant-agent/${id}`, token, sent: 0 });
    }
  }
  return { orgs, sessions };
}

/** Messages missing from the sessions' stored transcripts: two per turn sent (a failed one's too). */
export async function lostMessages(sessions) {
  let lost = 0;
  for (const { url, token, sent } of sessions) {
    const headers = token ? { authorization: `Bearer ${token}` } : {};
    const messages = await json(`${url}/get-messages`, { headers });
    lost += Math.max(0, sent * 2 - messages.length);
  }
  return lost;
}

/**
 * Orgs whose posted balance is not `grant` less the usage charged, to the micro-dollar. What is
 * held aside is the sessions' leases (returned as they idle), never lost credit; the usage read
 * asks every lease holder to report first.
 */
export async function ledgerMismatches(base, orgs, grant) {
  let mismatches = 0;
  for (const { orgId, token } of orgs) {
    const auth = { headers: { authorization: `Bearer ${token}` } };
    const balance = await json(`${base}/api/orgs/${orgId}/billing`, auth);
    const usage = await json(`${base}/api/orgs/${orgId}/billing/usage?groupBy=session`, auth);
    if (balance.postedMicros !== grant - usage.totals.priceMicros) mismatches++;
  }
  return mismatches;
}
