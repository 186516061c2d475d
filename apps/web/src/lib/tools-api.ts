import type {
  CreateToolSourceInput,
  OpenApiImportResult,
  ToolCall,
  ToolSource,
  UpdateToolSourceInput,
} from "@parley/shared";
import { type ApiClient, api } from "./api.ts";

/** A page of an org's tool sources (`GET /api/orgs/:orgId/tool-sources`). */
export interface ToolSourcePage {
  items: ToolSource[];
  nextCursor: string | null;
}

/**
 * The tool source routes of issue 30 (docs/2026-12-06-tools.md): an org's MCP servers and HTTP
 * actions, their tools, refresh and OpenAPI import. Beside `api.ts` on the same client (token,
 * refresh, errors), as `assistants-api.ts` is.
 */
export function createToolsApi(client: ApiClient) {
  const enc = encodeURIComponent;
  return {
    sources: (orgId: string, cursor?: string) =>
      client.call<ToolSourcePage>(
        "GET",
        `/api/orgs/${enc(orgId)}/tool-sources${cursor ? `?cursor=${enc(cursor)}` : ""}`,
      ),
    /** Owners and admins: registering an MCP server lists its tools at once. */
    create: (orgId: string, input: CreateToolSourceInput) =>
      client.call<ToolSource>("POST", `/api/orgs/${enc(orgId)}/tool-sources`, input),
    update: (sourceId: string, input: UpdateToolSourceInput) =>
      client.call<ToolSource>("PATCH", `/api/tool-sources/${enc(sourceId)}`, input),
    /** An MCP server's tools, listed again. */
    refresh: (sourceId: string) =>
      client.call<ToolSource>("POST", `/api/tool-sources/${enc(sourceId)}/refresh`),
    /** An HTTP source's actions replaced by an OpenAPI 3.x document's operations. */
    importOpenApi: (sourceId: string, document: Record<string, unknown>) =>
      client.call<OpenApiImportResult>(
        "POST",
        `/api/tool-sources/${enc(sourceId)}/import-openapi`,
        { document },
      ),
    /** A session's tool calls, newest first (its owner, or an admin). */
    sessionCalls: (sessionId: string, cursor?: string) =>
      client.call<{ items: ToolCall[]; nextCursor: string | null }>(
        "GET",
        `/api/sessions/${enc(sessionId)}/tool-calls${cursor ? `?cursor=${enc(cursor)}` : ""}`,
      ),
    remove: (sourceId: string) => client.call<void>("DELETE", `/api/tool-sources/${enc(sourceId)}`),
  };
}

export type ToolsApi = ReturnType<typeof createToolsApi>;

export const toolsApi: ToolsApi = createToolsApi(api);

/**
 * The query key of an org's tool sources (the Tools tab, the profile editor's switches): under
 * the org's keys (lib/query.ts), kept here so the app shell does not carry it.
 */
export const toolSourcesKey = (orgId: string) => ["org", orgId, "tool-sources"] as const;
