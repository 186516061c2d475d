import type {
  ApiKey,
  ApiKeyScope,
  App,
  AppWithSecret,
  CreateApp,
  EmbedToken,
  EndUserWithUsage,
  Page,
  RotatedAppSecret,
  UpdateApp,
} from "@parley/shared";
import { type ApiClient, api } from "../../lib/api.ts";

/**
 * The developers' area's routes (docs/2026-12-01-contract.md, "Apps and end users" and "API
 * keys"): an org's apps with their secrets, its server API keys, an app's end users and the
 * preview's end-user token. Here, not in `lib/api.ts`, so none of it is in the app shell's script;
 * the same client (token, refresh, errors).
 */
export function createDevelopersApi(client: ApiClient) {
  const enc = encodeURIComponent;
  const cursorQuery = (cursor?: string) => (cursor ? `?cursor=${enc(cursor)}` : "");
  return {
    apps: (orgId: string, cursor?: string) =>
      client.call<Page<App>>("GET", `/api/orgs/${enc(orgId)}/apps${cursorQuery(cursor)}`),
    /** The answer carries `secret` this once when the app verifies with a Parley secret. */
    createApp: (orgId: string, input: CreateApp) =>
      client.call<AppWithSecret>("POST", `/api/orgs/${enc(orgId)}/apps`, input),
    app: (appId: string) => client.call<App>("GET", `/api/apps/${enc(appId)}`),
    /** Only the fields sent change; `secret` when it switched to secret verification. */
    updateApp: (appId: string, input: UpdateApp) =>
      client.call<AppWithSecret>("PATCH", `/api/apps/${enc(appId)}`, input),
    deleteApp: (appId: string) => client.call<void>("DELETE", `/api/apps/${enc(appId)}`),
    rotateSecret: (appId: string, overlapSeconds: number) =>
      client.call<RotatedAppSecret>("POST", `/api/apps/${enc(appId)}/secrets`, { overlapSeconds }),
    endUsers: (appId: string, cursor?: string) =>
      client.call<Page<EndUserWithUsage>>(
        "GET",
        `/api/apps/${enc(appId)}/end-users${cursorQuery(cursor)}`,
      ),
    /** The end user's id travels in the body, never the path (docs/2026-12-06-end-user-ids.md). */
    eraseEndUser: (appId: string, endUserId: string) =>
      client.call<{ id: string }>("POST", `/api/apps/${enc(appId)}/end-users/erase`, {
        endUserId,
      }),
    /** An end-user token for the caller's own preview end user of the app. */
    previewToken: (appId: string) =>
      client.call<EmbedToken>("POST", `/api/apps/${enc(appId)}/preview-token`),
    apiKeys: (orgId: string, cursor?: string) =>
      client.call<Page<ApiKey>>("GET", `/api/orgs/${enc(orgId)}/api-keys${cursorQuery(cursor)}`),
    /** The answer's `secret` is the whole key, shown this once. */
    createApiKey: (
      orgId: string,
      input: { name: string; scopes: ApiKeyScope[]; expiresAt?: string | null },
    ) =>
      client.call<ApiKey & { secret: string }>("POST", `/api/orgs/${enc(orgId)}/api-keys`, input),
    revokeApiKey: (orgId: string, keyId: string) =>
      client.call<void>("DELETE", `/api/orgs/${enc(orgId)}/api-keys/${enc(keyId)}`),
  };
}

export const developersApi = createDevelopersApi(api);

/** Query keys of the area, under the org's and app's own (a write invalidates what it changed). */
export const devKeys = {
  apps: (orgId: string) => ["org", orgId, "apps"] as const,
  app: (appId: string) => ["app", appId] as const,
  endUsers: (appId: string) => ["app", appId, "end-users"] as const,
  apiKeys: (orgId: string) => ["org", orgId, "api-keys"] as const,
};
