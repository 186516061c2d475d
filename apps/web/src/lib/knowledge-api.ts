import type { DocumentDetail, KnowledgeDocument, KnowledgeStorage, Page } from "@parley/shared";
import { type ApiClient, ApiError, api } from "./api.ts";

/**
 * The knowledge routes of issue 31 (docs/2026-12-01-contract.md, "Knowledge"): a project's
 * documents, their versions, and the org's storage against its quota (a chat's cited passage is
 * read by features/chat/chats.tsx). Beside
 * `api.ts`, over the same client (token, refresh, errors).
 */

/** The formats a document may be uploaded in, by file extension (a browser often sends no type). */
const TYPES_BY_EXTENSION: Record<string, string> = {
  txt: "text/plain",
  text: "text/plain",
  md: "text/markdown",
  markdown: "text/markdown",
  html: "text/html",
  htm: "text/html",
  pdf: "application/pdf",
};
const KNOWN_TYPES = new Set(Object.values(TYPES_BY_EXTENSION));

/** What the file picker accepts (extensions and types alike). */
export const DOCUMENT_ACCEPT = [
  ...Object.keys(TYPES_BY_EXTENSION).map((ext) => `.${ext}`),
  ...KNOWN_TYPES,
].join(",");

/**
 * The Content-Type a file is uploaded with: its extension's (a `.md` file has no type in most
 * browsers), else its own when the server takes it; null for anything else (refused before
 * sending, with words the person can act on).
 */
export function documentType(file: { name: string; type: string }): string | null {
  const extension = file.name.toLowerCase().split(".").pop() ?? "";
  const byName = TYPES_BY_EXTENSION[extension];
  if (byName) return byName;
  const own = file.type.split(";")[0]?.trim().toLowerCase() ?? "";
  return KNOWN_TYPES.has(own) ? own : null;
}

/**
 * Query keys of knowledge (beside lib/query.ts's, kept here so the app shell does not carry them):
 * the storage key sits under the org's billing key, which a turn's end invalidates too.
 */
export const knowledgeKeys = {
  documents: (projectId: string) => ["project", projectId, "documents"] as const,
  document: (documentId: string) => ["document", documentId] as const,
  storage: (orgId: string) => ["org", orgId, "billing", "storage"] as const,
};

/** A refusal's `{ error: { code, message } }` as the app's ApiError (the server's words). */
async function refusal(response: Response): Promise<ApiError> {
  const body = (await response.json().catch(() => null)) as {
    error?: { code?: string; message?: string; field?: string };
  } | null;
  const error = body?.error;
  return new ApiError(
    (error?.code as ApiError["code"] | undefined) ?? "internal",
    error?.message ?? `Upload failed (${response.status})`,
    response.status,
    error?.field,
  );
}

export function createKnowledgeApi(client: ApiClient, doFetch: typeof fetch = fetch) {
  const enc = encodeURIComponent;
  /**
   * The file as the raw body with its type (`?name=` carries its name): the client's `call` sends
   * JSON only, and the app shell, which holds it, has no room for a file path (its 120 KB budget).
   */
  async function upload<T>(path: string, file: File, type: string): Promise<T> {
    const token = await client.accessToken();
    let response: Response;
    try {
      response = await doFetch(`${path}?name=${enc(file.name)}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": type },
        credentials: "same-origin",
        body: file,
      });
    } catch {
      throw new ApiError("network", "Cannot reach the server. Check your connection.", 0);
    }
    if (!response.ok) throw await refusal(response);
    return (await response.json()) as T;
  }
  return {
    documents: (projectId: string, cursor?: string) =>
      client.call<Page<KnowledgeDocument>>(
        "GET",
        `/api/projects/${enc(projectId)}/documents${cursor ? `?cursor=${enc(cursor)}` : ""}`,
      ),
    /** One document with its versions (newest first). */
    document: (documentId: string) =>
      client.call<DocumentDetail>("GET", `/api/documents/${enc(documentId)}`),
    /** Owners and admins: a new document, indexed in the background. */
    uploadDocument: (projectId: string, file: File, type: string) =>
      upload<KnowledgeDocument>(`/api/projects/${enc(projectId)}/documents`, file, type),
    /** Owners and admins: a new version of a document (it replaces the searched one once indexed). */
    uploadVersion: (documentId: string, file: File, type: string) =>
      upload<KnowledgeDocument>(`/api/documents/${enc(documentId)}/versions`, file, type),
    /** Owners and admins: out of search at once, its text erased. */
    deleteDocument: (documentId: string) =>
      client.call<void>("DELETE", `/api/documents/${enc(documentId)}`),
    storage: (orgId: string) =>
      client.call<KnowledgeStorage>("GET", `/api/orgs/${enc(orgId)}/billing/storage`),
  };
}

export type KnowledgeApi = ReturnType<typeof createKnowledgeApi>;

/** The app's knowledge client, over the app's one API client. */
export const knowledgeApi: KnowledgeApi = createKnowledgeApi(api, (input, init) =>
  fetch(input, init),
);
