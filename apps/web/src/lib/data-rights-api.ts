import type { DataExport, ErasureRequestInput, Page } from "@parley/shared";
import { type ApiClient, api, type ErasureRequest, queryString } from "./api.ts";

/**
 * Erasure requests and data exports (the admin and account screens, lazy chunks), beside `api.ts`
 * so the app shell's script does not carry them. The same client (token, refresh, errors).
 */
export function createDataRightsApi(client: ApiClient) {
  const enc = encodeURIComponent;
  return {
    fileErasure: (orgId: string, input: ErasureRequestInput) =>
      client.call<ErasureRequest>("POST", `/api/orgs/${enc(orgId)}/erasure-requests`, input),
    erasureRequests: (orgId: string, cursor?: string) =>
      client.call<Page<ErasureRequest>>(
        "GET",
        `/api/orgs/${enc(orgId)}/erasure-requests${queryString({ cursor })}`,
      ),
    erasureRequest: (orgId: string, requestId: string) =>
      client.call<ErasureRequest>(
        "GET",
        `/api/orgs/${enc(orgId)}/erasure-requests/${enc(requestId)}`,
      ),
    /** Starts an export of the caller's own data (GDPR Art. 15 and 20); 409 while one runs. */
    startAccountExport: () => client.call<DataExport>("POST", "/api/me/exports"),
    accountExports: (cursor?: string) =>
      client.call<Page<DataExport>>("GET", `/api/me/exports${queryString({ cursor })}`),
    /** Starts an export of the org's data (owners only). */
    startOrgExport: (orgId: string) =>
      client.call<DataExport>("POST", `/api/orgs/${enc(orgId)}/exports`),
    orgExports: (orgId: string, cursor?: string) =>
      client.call<Page<DataExport>>(
        "GET",
        `/api/orgs/${enc(orgId)}/exports${queryString({ cursor })}`,
      ),
  };
}

export const dataRightsApi = createDataRightsApi(api);
