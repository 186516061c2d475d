import { QueryClient } from "@tanstack/react-query";
import { isApiError } from "./api.ts";

/**
 * The app's data cache. A refusal (4xx) is an answer, not a blip: only network failures and 5xx
 * are retried, twice. Data is fresh for 15 s, so moving between screens does not refetch everything,
 * while a role or balance changed elsewhere shows up soon.
 */
export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        staleTime: 15_000,
        retry: (failures, error) =>
          failures < 2 && (!isApiError(error) || error.status === 0 || error.status >= 500),
        refetchOnWindowFocus: true,
      },
      mutations: { retry: false },
    },
  });
}

/** Query keys, in one place so a write invalidates exactly what it changed. */
export const keys = {
  me: ["me"] as const,
  org: (orgId: string) => ["org", orgId] as const,
  projects: (orgId: string) => ["org", orgId, "projects"] as const,
  members: (orgId: string) => ["org", orgId, "members"] as const,
  /** Under members: a removal (which invalidates the members) lists the person as former. */
  formerMembers: (orgId: string) => ["org", orgId, "members", "former"] as const,
  invitations: (orgId: string) => ["org", orgId, "invitations"] as const,
  billing: (orgId: string) => ["org", orgId, "billing"] as const,
  erasures: (orgId: string) => ["org", orgId, "erasures"] as const,
  /** Data exports: the caller's own account's, and an org's (owners). */
  accountExports: ["me", "exports"] as const,
  orgExports: (orgId: string) => ["org", orgId, "exports"] as const,
  project: (projectId: string) => ["project", projectId] as const,
  sessions: (projectId: string) => ["project", projectId, "sessions"] as const,
  session: (sessionId: string) => ["session", sessionId] as const,
  /** The org's sessions across projects (`GET /api/orgs/:orgId/sessions`, everyone's for admins). */
  orgSessions: (orgId: string) => ["org", orgId, "sessions"] as const,
  /**
   * What this tab filed erasures of, by request id (the server keeps only a hash of the subject):
   * held in memory only, so a reload forgets the names.
   */
  erasureLabels: (orgId: string) => ["org", orgId, "erasure-labels"] as const,
  // Assistants (issue 29, lib/assistants-api.ts). Prices are what an org is charged: per org.
  catalogue: ["models"] as const,
  allowedModels: (orgId: string) => ["org", orgId, "models"] as const,
  previewProfile: (orgId: string) => ["org", orgId, "preview-profile"] as const,
  profiles: (orgId: string) => ["org", orgId, "profiles"] as const,
  /** A profile, its versions under it (a rollback or a save invalidates both). */
  profile: (profileId: string) => ["profile", profileId] as const,
  profileVersions: (profileId: string) => ["profile", profileId, "versions"] as const,
  promptPreview: (profileId: string, projectId: string, audience: string, version: number) =>
    ["profile", profileId, "prompt", projectId, audience, version] as const,
  // Billing: every key below starts with `billing(orgId)`, so invalidating it refreshes them all.
  billingUsage: (orgId: string, groupBy: string, range: { from?: string; to?: string }) =>
    ["org", orgId, "billing", "usage", groupBy, range] as const,
  billingActivity: (orgId: string, filters: Record<string, string | undefined>) =>
    ["org", orgId, "billing", "activity", filters] as const,
  billingLedger: (orgId: string) => ["org", orgId, "billing", "ledger"] as const,
  billingPayments: (orgId: string) => ["org", orgId, "billing", "payments"] as const,
  billingAlerts: (orgId: string) => ["org", orgId, "billing", "alerts"] as const,
  autoTopUp: (orgId: string) => ["org", orgId, "billing", "auto-top-up"] as const,
  limitRules: (orgId: string) => ["org", orgId, "billing", "limit-rules"] as const,
  myLimits: (orgId: string) => ["org", orgId, "billing", "my-limits"] as const,
  /** Under billing: a turn's end (which invalidates billing) reads the chat's limits again. */
  sessionLimits: (orgId: string, sessionId: string) =>
    ["org", orgId, "billing", "session-limits", sessionId] as const,
};
