import type { ConnectionFilter } from "./chat-agent.ts";

/**
 * Closes the open agent sockets a change of rights has made wrong, at once, without waiting for
 * their clients to speak: call it right after the change is written to D1 (a member removed, a role
 * changed, a sign-in revoked, an erasure filed). It finds the objects holding such sockets in the
 * connection registry and asks each to re-check them against D1; the agent decides, so a stale
 * registry row costs one re-check and nothing else. Returns how many sockets were closed.
 */
export async function revokeConnections(
  env: Env,
  filter: ConnectionFilter,
  options: { erasing?: boolean } = {},
): Promise<number> {
  const now = Date.now();
  const [where, bindings] = registryWhere(filter);
  const { results } = await env.DB.prepare(
    // An erased object is never addressed again (that would recreate it): its sockets are closed
    // by the erasure itself. Filing an erasure (`erasing`) tombstones objects the job has not yet
    // reached: they are live, and their sockets must hear it now.
    `SELECT DISTINCT agent, name FROM agent_connections
     WHERE (${where}) AND expires_at > ?
       ${options.erasing ? "" : "AND NOT EXISTS (SELECT 1 FROM tombstones WHERE subject_id = name)"}`,
  )
    .bind(...bindings, now)
    .all<{ agent: string; name: string }>();
  const push = async ({ agent, name }: { agent: string; name: string }) => {
    const namespace = agent === "assistant-agent" ? env.ASSISTANT_AGENT : env.ONBOARDING_AGENT;
    return (await namespace.get(namespace.idFromName(name)).recheckConnections(filter)).closed;
  };
  // Agents keep the access they read between turns: a push that fails is tried once more (after
  // that, AUTHZ_CACHE_MS bounds how long it may be missed).
  const outcomes = await Promise.allSettled(
    results.map((row) =>
      push(row).catch(async () => {
        await new Promise((resolve) => setTimeout(resolve, 50));
        return push(row);
      }),
    ),
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

/** The registry rows a revocation reaches. */
function registryWhere(filter: ConnectionFilter): [string, unknown[]] {
  if ("familyId" in filter) return ["family_id = ?", [filter.familyId]];
  if ("userId" in filter) {
    return filter.orgId === undefined
      ? ["user_id = ?", [filter.userId]]
      : ["user_id = ? AND org_id = ?", [filter.userId, filter.orgId]];
  }
  if ("sessionId" in filter) return ["agent = 'assistant-agent' AND name = ?", [filter.sessionId]];
  return [
    `(agent = 'onboarding-agent' AND name = ?1)
     OR (agent = 'assistant-agent' AND name <> ?2 AND name IN (SELECT id FROM sessions WHERE project_id = ?1))`,
    [filter.projectId, filter.except ?? ""],
  ];
}
