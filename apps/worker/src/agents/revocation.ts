import type { ConnectionFilter } from "./chat-agent.ts";

/**
 * Closes the open agent sockets a change of rights has made wrong, at once, without waiting for
 * their clients to speak: call it right after the change is written to D1 (a member removed, a role
 * changed, a sign-in revoked, an erasure filed). It finds the objects holding such sockets in the
 * connection registry and asks each to re-check them against D1; the agent decides, so a stale
 * registry row costs one re-check and nothing else. Returns how many sockets were closed.
 */
export async function revokeConnections(env: Env, filter: ConnectionFilter): Promise<number> {
  const now = Date.now();
  const [where, bindings] =
    "familyId" in filter
      ? ["family_id = ?", [filter.familyId]]
      : filter.orgId === undefined
        ? ["user_id = ?", [filter.userId]]
        : ["user_id = ? AND org_id = ?", [filter.userId, filter.orgId]];
  const { results } = await env.DB.prepare(
    // An erased object is never addressed again (that would recreate it): its sockets are closed
    // by the erasure itself.
    `SELECT DISTINCT agent, name FROM agent_connections
     WHERE ${where} AND expires_at > ? AND NOT EXISTS (SELECT 1 FROM tombstones WHERE subject_id = name)`,
  )
    .bind(...bindings, now)
    .all<{ agent: string; name: string }>();
  const outcomes = await Promise.allSettled(
    results.map(async ({ agent, name }) => {
      const namespace = agent === "assistant-agent" ? env.ASSISTANT_AGENT : env.ONBOARDING_AGENT;
      const stub = namespace.get(namespace.idFromName(name));
      return (await stub.recheckConnections(filter)).closed;
    }),
  );
  let closed = 0;
  let failed = 0;
  for (const outcome of outcomes) {
    if (outcome.status === "fulfilled") closed += outcome.value;
    else failed++;
  }
  // The change itself is written; a socket that could not be reached now still meets the per-turn
  // check and its token's expiry. Logged without ids: a count is enough to notice.
  if (failed > 0) {
    console.warn(JSON.stringify({ level: "warn", source: "revocation", unreachable: failed }));
  }
  return closed;
}
