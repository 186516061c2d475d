import type { Role } from "@parley/shared";

/**
 * The verified identity the Worker hands to an agent with each request it forwards. The Worker
 * deletes any client-sent copy of this header (and the SDK's `x-agents-lifecycle-props`) before it
 * sets its own, and nothing but the Worker can reach a Durable Object, so the agent can trust it.
 */
export const CALLER_HEADER = "x-parley-caller";

export interface AgentCaller {
  userId: string;
  orgId: string;
  projectId: string;
  /** Set for assistant sessions. */
  sessionId: string | null;
  role: Role;
}

export function readCaller(request: Request): AgentCaller | null {
  const raw = request.headers.get(CALLER_HEADER);
  if (!raw) return null;
  try {
    const value = JSON.parse(raw) as Partial<AgentCaller>;
    if (
      typeof value.userId !== "string" ||
      typeof value.orgId !== "string" ||
      typeof value.projectId !== "string" ||
      typeof value.role !== "string"
    ) {
      return null;
    }
    return {
      userId: value.userId,
      orgId: value.orgId,
      projectId: value.projectId,
      sessionId: typeof value.sessionId === "string" ? value.sessionId : null,
      role: value.role,
    };
  } catch {
    return null;
  }
}
