import type { Memory, OrgSummary, Page, Project, Session } from "@parley/shared";
import { type ApiClient, api, queryString } from "./api.ts";

/**
 * The org and project calls: a new org, an org's projects and sessions, one project and its
 * memory. Beside `api.ts` on the same client (token, refresh, errors), and imported only by the
 * screens that use them (lazy route chunks), so the app shell's initial JavaScript does not carry
 * them (its 120 KB budget, docs/2026-12-01-web.md).
 */
export function createOrgsApi(client: ApiClient) {
  const enc = encodeURIComponent;
  return {
    createOrg: (name: string) => client.call<OrgSummary>("POST", "/api/orgs", { name }),
    projects: (orgId: string, cursor?: string) =>
      client.call<Page<Project>>(
        "GET",
        `/api/orgs/${enc(orgId)}/projects${queryString({ cursor })}`,
      ),
    createProject: (orgId: string, input: { name: string; memory?: Memory }) =>
      client.call<Project>("POST", `/api/orgs/${enc(orgId)}/projects`, input),
    project: (projectId: string) => client.call<Project>("GET", `/api/projects/${enc(projectId)}`),
    updateProject: (projectId: string, input: { name?: string; memory?: Memory }) =>
      client.call<Project>("PATCH", `/api/projects/${enc(projectId)}`, input),
    /**
     * The org's sessions across its projects, newest first: a member gets their own, owners and
     * admins everyone's (the erasure picker), optionally of one `project` or one `member`.
     */
    orgSessions: (
      orgId: string,
      filter: { cursor?: string; project?: string; member?: string; limit?: number } = {},
    ) =>
      client.call<Page<Session>>(
        "GET",
        `/api/orgs/${enc(orgId)}/sessions${queryString({
          cursor: filter.cursor,
          project: filter.project,
          member: filter.member,
          limit: filter.limit === undefined ? undefined : String(filter.limit),
        })}`,
      ),
  };
}

export type OrgsApi = ReturnType<typeof createOrgsApi>;

/** The app's org and project client, over the app's one API client. */
export const orgsApi: OrgsApi = createOrgsApi(api);
