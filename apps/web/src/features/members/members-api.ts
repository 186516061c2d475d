import type {
  FormerMember,
  Invitation,
  InvitationPreview,
  Member,
  Page,
  Role,
} from "@parley/shared";
import { type ApiClient, api, queryString } from "../../lib/api.ts";

/**
 * The members and invitations calls (`routes/orgs.ts`, `routes/invitations.ts`). Beside the
 * screens that use them, on the app's one client, so they load with those screens' chunks and not
 * in the app shell (its 120 KB budget, docs/2026-12-01-web.md).
 */
export function createMembersApi(client: ApiClient) {
  const enc = encodeURIComponent;
  return {
    members: (orgId: string, cursor?: string) =>
      client.call<Page<Member>>("GET", `/api/orgs/${enc(orgId)}/members${queryString({ cursor })}`),
    /** Who left the org (or was removed) and is not erased yet: owners and admins. */
    formerMembers: (orgId: string, cursor?: string) =>
      client.call<Page<FormerMember>>(
        "GET",
        `/api/orgs/${enc(orgId)}/former-members${queryString({ cursor })}`,
      ),
    updateMember: (orgId: string, userId: string, role: Role) =>
      client.call<Member>("PATCH", `/api/orgs/${enc(orgId)}/members/${enc(userId)}`, { role }),
    removeMember: (orgId: string, userId: string) =>
      client.call<void>("DELETE", `/api/orgs/${enc(orgId)}/members/${enc(userId)}`),
    /** Invites an email (with an account or not); the answer's `url` is the link to send. */
    invite: (orgId: string, input: { email: string; role: Role }) =>
      client.call<Invitation>("POST", `/api/orgs/${enc(orgId)}/invitations`, input),
    invitations: (orgId: string, cursor?: string) =>
      client.call<Page<Invitation>>(
        "GET",
        `/api/orgs/${enc(orgId)}/invitations${queryString({ cursor })}`,
      ),
    revokeInvitation: (orgId: string, invitationId: string) =>
      client.call<Invitation>("DELETE", `/api/orgs/${enc(orgId)}/invitations/${enc(invitationId)}`),
    /**
     * What an invitation link invites to; needs no sign-in (the link's secret is the credential).
     * The secret goes in the body, never in a path or query, which request logs keep.
     */
    invitationPreview: (secret: string) =>
      client.publicPost<InvitationPreview>("/api/auth/invitations/preview", { token: secret }),
    acceptInvitation: (secret: string) =>
      client.call<{ orgId: string; role: Role }>("POST", "/api/invitations/accept", {
        token: secret,
      }),
  };
}

export type MembersApi = ReturnType<typeof createMembersApi>;

/** The app's members client, over the app's one API client. */
export const membersApi: MembersApi = createMembersApi(api);
