import type { Role } from "@parley/shared";

/**
 * The verified identity the Worker hands to an agent with each request it forwards. The Worker
 * deletes any client-sent copy of this header (and the SDK's `x-agents-lifecycle-props`) before it
 * sets its own, and nothing but the Worker can reach a Durable Object, so the agent can trust it.
 */
export const CALLER_HEADER = "x-parley-caller";

export interface AgentCaller {
  /**
   * A member (a Parley account in the org) or an end user of one of the org's apps
   * (docs/2026-12-02-apps-and-end-users.md): then `userId` is the end user's id (`eu_...`),
   * `appId` their app, `familyId` the app's id too (revoking by it closes the app's sockets), the
   * role `member` and the token version 0.
   */
  kind: "member" | "end_user";
  /** The app an end user came through; null for a member. */
  appId: string | null;
  userId: string;
  orgId: string;
  projectId: string;
  /** Set for assistant sessions. */
  sessionId: string | null;
  role: Role;
  /** The sign-in session (refresh-token family) of the token that opened the socket. */
  familyId: string;
  /** That token's version (see `requireLiveUser`). */
  tokenVersion: number;
  /** When that token expires (ms): the socket is closed then, and the client reconnects. */
  expiresAt: number;
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
      typeof value.role !== "string" ||
      typeof value.familyId !== "string" ||
      !Number.isSafeInteger(value.tokenVersion) ||
      !Number.isSafeInteger(value.expiresAt)
    ) {
      return null;
    }
    const kind = value.kind === "end_user" ? "end_user" : "member";
    if (kind === "end_user" && typeof value.appId !== "string") return null;
    return {
      kind,
      appId: kind === "end_user" ? (value.appId as string) : null,
      userId: value.userId,
      orgId: value.orgId,
      projectId: value.projectId,
      sessionId: typeof value.sessionId === "string" ? value.sessionId : null,
      role: value.role,
      familyId: value.familyId,
      tokenVersion: value.tokenVersion as number,
      expiresAt: value.expiresAt as number,
    };
  } catch {
    return null;
  }
}
