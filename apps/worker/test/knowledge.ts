import { env, SELF } from "cloudflare:test";
import { expect, inject } from "vitest";
import { type ApiResponse, api, BASE } from "./helpers.ts";

/** Knowledge test helpers: uploads as a client sends them, and waiting for indexing. */

export const fixture = (name: string): Uint8Array => {
  const base64 = inject("knowledgeFixtures")[name];
  if (base64 === undefined) throw new Error(`no fixture ${name}`);
  return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
};

/** A raw upload (the body as is, with its Content-Type). */
export async function sendRaw(
  method: string,
  path: string,
  token: string | undefined,
  body: Uint8Array | string,
  contentType: string,
): Promise<ApiResponse> {
  const headers = new Headers({ "content-type": contentType });
  if (token !== undefined) headers.set("authorization", `Bearer ${token}`);
  const response = await SELF.fetch(`${BASE}${path}`, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON
  }
  return { status: response.status, body: parsed, headers: response.headers };
}

export interface DocumentBody {
  id: string;
  version: number;
  bytes: number;
  indexing: { status: string; version: number; done: number; total: number };
}

/** Uploads text through the JSON form; answers the document. */
export async function uploadText(
  token: string,
  projectId: string,
  name: string,
  text: string,
  contentType: "text/plain" | "text/markdown" | "text/html" = "text/markdown",
): Promise<DocumentBody> {
  const res = await api<DocumentBody>("POST", `/api/projects/${projectId}/documents`, {
    token,
    body: { name, contentType, text },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** Waits until the document's current version is searched (its indexing job ran). */
export async function indexed(token: string, documentId: string): Promise<DocumentBody> {
  for (let i = 0; i < 100; i++) {
    const res = await api<DocumentBody>("GET", `/api/documents/${documentId}`, { token });
    if (res.body.indexing?.status === "ready" && res.body.indexing.version === res.body.version) {
      return res.body;
    }
    if (res.body.indexing?.status === "failed") throw new Error(JSON.stringify(res.body));
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`document ${documentId} was not indexed`);
}

export interface Found {
  documentId: string;
  documentName: string;
  version: number;
  heading: string;
  quote: string;
  chunkId: string;
  text: string;
}

export async function search(token: string, projectId: string, q: string, limit = 5) {
  const res = await api<{ items: Found[] }>(
    "GET",
    `/api/projects/${projectId}/knowledge/search?q=${encodeURIComponent(q)}&limit=${limit}`,
    { token },
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.items;
}

export const knowledgeBase = (projectId: string) =>
  env.KNOWLEDGE_BASE.get(env.KNOWLEDGE_BASE.idFromName(projectId));

/**
 * A document written straight into D1 and its project's KnowledgeBase, as an upload by `userId`
 * would leave it (for worlds whose people could not upload it through the API any more).
 */
export async function documentIn(
  w: { orgId: string; projectId: string },
  userId: string,
  text: string,
  id = `doc_${crypto.randomUUID().replaceAll("-", "").slice(0, 26)}`,
  options: { stage: boolean } = { stage: true },
): Promise<string> {
  const now = Date.now();
  const bytes = new TextEncoder().encode(text).byteLength;
  await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO knowledge_documents (id, org_id, project_id, name, content_type, version, bytes, created_by, created_at, updated_at)
       VALUES (?, ?, ?, 'notes.md', 'text/markdown', 1, ?, ?, ?, ?)`,
    ).bind(id, w.orgId, w.projectId, bytes, userId, now, now),
    env.DB.prepare(
      `INSERT INTO knowledge_versions (document_id, version, org_id, project_id, content_type, bytes, text_chars, sha256, created_by, created_at)
       VALUES (?, 1, ?, ?, 'text/markdown', ?, ?, 'x', ?, ?)`,
    ).bind(id, w.orgId, w.projectId, bytes, text.length, userId, now),
  ]);
  if (!options.stage) return id;
  await knowledgeBase(w.projectId).stage({
    orgId: w.orgId,
    projectId: w.projectId,
    documentId: id,
    version: 1,
    name: "notes.md",
    text,
    chunks: [{ heading: "", start: 0, end: text.length, text }],
    memberId: userId,
  });
  return id;
}
