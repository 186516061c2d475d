import { revokeConnections } from "../agents/revocation.ts";

/**
 * Tells the chat agents a change of what a turn resolves to (a profile's new version, a project's
 * or app's profile, an org's allowed models, a session's model) so the next turn reads it: each
 * agent holding an affected socket is asked to re-check its sockets, which first drops what it
 * kept (`forgetAccess`; the agent's `TurnResolver.forget()` belongs there). The agents' own
 * `maxAgeMs` bounds a push that never arrives. Scopes follow what changed: a project's chats, a
 * session's, an app's end users' (their sign-in family is the app), or every chat of an org.
 */
export type AssistantScope =
  | { projectId: string }
  | { sessionId: string }
  | { appId: string }
  | { orgId: string };

export async function assistantChanged(env: Env, scope: AssistantScope): Promise<void> {
  if ("projectId" in scope) {
    await revokeConnections(env, { projectId: scope.projectId });
    return;
  }
  if ("sessionId" in scope) {
    await revokeConnections(env, { sessionId: scope.sessionId });
    return;
  }
  if ("appId" in scope) {
    await revokeConnections(env, { familyId: scope.appId });
    return;
  }
  // Every live chat of the org: the registry knows each socket's org, so one query finds them.
  const { results } = await env.DB.prepare(
    `SELECT DISTINCT agent, name FROM agent_connections
     WHERE org_id = ? AND expires_at > ?
       AND NOT EXISTS (SELECT 1 FROM tombstones WHERE subject_id = name)`,
  )
    .bind(scope.orgId, Date.now())
    .all<{ agent: string; name: string }>();
  const outcomes = await Promise.allSettled(
    results.map(({ agent, name }) =>
      agent === "assistant-agent"
        ? env.ASSISTANT_AGENT.get(env.ASSISTANT_AGENT.idFromName(name)).recheckConnections({
            sessionId: name,
          })
        : env.ONBOARDING_AGENT.get(env.ONBOARDING_AGENT.idFromName(name)).recheckConnections({
            projectId: name,
          }),
    ),
  );
  const failed = outcomes.filter((outcome) => outcome.status === "rejected").length;
  // Counted, never named: the bound of a lost push is the agents' cache age.
  if (failed > 0) {
    console.warn(JSON.stringify({ level: "warn", source: "assistant-push", unreachable: failed }));
  }
}
