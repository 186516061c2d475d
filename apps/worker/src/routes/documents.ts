import {
  AppError,
  citedPassageQuerySchema,
  citedPassageSchema,
  documentContentQuerySchema,
  documentContentSchema,
  documentDetailSchema,
  documentPageSchema,
  documentSchema,
  knowledgeSearchQuerySchema,
  knowledgeSearchSchema,
  knowledgeStorageSchema,
  MAX_DOCUMENT_BYTES,
  pageQuerySchema,
} from "@parley/shared";
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { notFound, orgAccess, projectAccess, requireRole } from "../auth/access.ts";
import { auditStatement } from "../db/audit.ts";
import { idPage } from "../db/pagination.ts";
import type { AppEnv } from "../http/context.ts";
import { empty, errors, json } from "../http/openapi.ts";
import { query } from "../http/validate.ts";
import { citedPassage } from "../knowledge/cited-passage.ts";
import {
  type DocumentRow,
  documentAccess,
  knowledgeQuota,
  storageUsed,
  toDocument,
  toVersion,
  versionsOf,
} from "../knowledge/documents-db.ts";
import { ingest, knowledgeBase, readUpload } from "../knowledge/ingest.ts";
import { searchKnowledge } from "../knowledge/tool.ts";

/**
 * Knowledge documents (docs/2026-12-06-knowledge.md). Members of the project's org read them
 * (list, one, content, search); owners and admins write them (upload, new version, delete), as
 * they choose the assistant's profile: documents are what the assistant tells the org's end
 * users, and they draw on the org's storage quota. API keys are not taken yet.
 */

/** The upload body: a raw file of a supported type, or JSON `{ name, contentType, text }`. */
const uploadBody = {
  description: `A document of at most ${MAX_DOCUMENT_BYTES} bytes: the raw file with its Content-Type (text/plain, text/markdown, text/html, application/pdf; its name in \`?name=\`), or JSON for text.`,
  required: true,
  content: {
    "application/pdf": { schema: { type: "string" as const, format: "binary" } },
    "text/plain": { schema: { type: "string" as const } },
    "text/markdown": { schema: { type: "string" as const } },
    "text/html": { schema: { type: "string" as const } },
    "application/json": {
      schema: {
        type: "object" as const,
        required: ["name", "contentType", "text"],
        additionalProperties: false,
        properties: {
          name: { type: "string" as const, minLength: 1, maxLength: 200 },
          contentType: {
            type: "string" as const,
            enum: ["text/plain", "text/markdown", "text/html"],
          },
          text: { type: "string" as const, minLength: 1 },
        },
      },
    },
  },
};

const nameParameter = {
  name: "name",
  in: "query" as const,
  required: false,
  schema: { type: "string" as const, minLength: 1, maxLength: 200 },
  description: "The document's name (a raw upload; a new document needs one)",
};

async function withIndexing(env: Env, projectId: string, rows: DocumentRow[]) {
  if (rows.length === 0) return [];
  const indexing = await knowledgeBase(env, projectId).indexing(rows.map((row) => row.id));
  return rows.map((row) => toDocument(row, indexing[row.id]));
}

/** Under /api/projects: a project's documents and its search. */
export const projectDocuments = new Hono<AppEnv>()
  .get(
    "/:projectId/documents",
    describeRoute({
      tags: ["Knowledge"],
      summary: "The project's documents, with their indexing progress",
      responses: { 200: json(documentPageSchema), ...errors(401, 404, 410) },
    }),
    query(pageQuerySchema),
    async (c) => {
      const { project } = await projectAccess(
        c.env.DB,
        c.get("caller").userId,
        c.req.param("projectId"),
      );
      const page = await idPage<DocumentRow>(
        c.env.DB,
        {
          select: "SELECT * FROM knowledge_documents",
          where: "project_id = ?",
          binds: [project.id],
        },
        c.req.valid("query"),
      );
      return c.json({ ...page, items: await withIndexing(c.env, project.id, page.items) });
    },
  )

  .post(
    "/:projectId/documents",
    describeRoute({
      tags: ["Knowledge"],
      summary: "Upload a document (indexed in the background: watch its `indexing`)",
      parameters: [nameParameter],
      requestBody: uploadBody,
      responses: { 201: json(documentSchema), ...errors(400, 401, 403, 404, 409, 410, 413) },
    }),
    async (c) => {
      const { userId } = c.get("caller");
      const { project, access } = await projectAccess(c.env.DB, userId, c.req.param("projectId"));
      requireRole(access, "admin");
      const upload = await readUpload(c);
      const row = await ingest(c.env, {
        orgId: project.org_id,
        projectId: project.id,
        userId,
        upload,
        previous: null,
      });
      const [document] = await withIndexing(c.env, project.id, [row]);
      return c.json(document, 201);
    },
  )

  .get(
    "/:projectId/knowledge/search",
    describeRoute({
      tags: ["Knowledge"],
      summary: "Search the project's documents as the assistant's tool does",
      responses: { 200: json(knowledgeSearchSchema), ...errors(400, 401, 404, 410) },
    }),
    query(knowledgeSearchQuerySchema),
    async (c) => {
      const { userId } = c.get("caller");
      const { project } = await projectAccess(c.env.DB, userId, c.req.param("projectId"));
      const { q, limit } = c.req.valid("query");
      const hits = await searchKnowledge(c.env, {
        projectId: project.id,
        query: q,
        limit,
        memberId: userId,
      });
      return c.json({ items: hits });
    },
  );

/** Under /api/documents: one document. */
export const documents = new Hono<AppEnv>()
  .get(
    "/:documentId",
    describeRoute({
      tags: ["Knowledge"],
      summary: "One document, its versions and indexing progress",
      responses: { 200: json(documentDetailSchema), ...errors(401, 404) },
    }),
    async (c) => {
      const { document } = await documentAccess(
        c.env.DB,
        c.get("caller").userId,
        c.req.param("documentId"),
      );
      const [shown] = await withIndexing(c.env, document.project_id, [document]);
      const versions = await versionsOf(c.env.DB, document.id);
      return c.json({ ...shown, versions: versions.map(toVersion) });
    },
  )

  .post(
    "/:documentId/versions",
    describeRoute({
      tags: ["Knowledge"],
      summary: "Replace a document with a new version (searched once it is indexed)",
      parameters: [nameParameter],
      requestBody: uploadBody,
      responses: { 201: json(documentSchema), ...errors(400, 401, 403, 404, 409, 413) },
    }),
    async (c) => {
      const { userId } = c.get("caller");
      const { document, access } = await documentAccess(
        c.env.DB,
        userId,
        c.req.param("documentId"),
      );
      requireRole(access, "admin");
      const upload = await readUpload(c);
      const row = await ingest(c.env, {
        orgId: document.org_id,
        projectId: document.project_id,
        userId,
        upload,
        previous: document,
      });
      const [shown] = await withIndexing(c.env, document.project_id, [row]);
      return c.json(shown, 201);
    },
  )

  .get(
    "/:documentId/content",
    describeRoute({
      tags: ["Knowledge"],
      summary: "The document's text and passages (`?chunkId=` opens a citation's passage)",
      responses: { 200: json(documentContentSchema), ...errors(400, 401, 404, 410) },
    }),
    query(documentContentQuerySchema),
    async (c) => {
      const { document } = await documentAccess(
        c.env.DB,
        c.get("caller").userId,
        c.req.param("documentId"),
      );
      const { chunkId, version } = c.req.valid("query");
      const content = await knowledgeBase(c.env, document.project_id).content(document.id);
      if (!content) throw notFound("Document");
      if (version !== undefined && version !== content.version) {
        throw new AppError(
          "gone",
          `Version ${version} was replaced: the document is at version ${content.version}`,
        );
      }
      const passages =
        chunkId === undefined
          ? content.passages
          : content.passages.filter((p) => p.chunkId === chunkId);
      if (chunkId !== undefined && passages.length === 0) throw notFound("Passage");
      return c.json({
        documentId: document.id,
        version: content.version,
        name: content.name,
        text: content.text,
        passages,
      });
    },
  )

  /**
   * One passage a reply cited, alone: what the chat's sources open (the content route sends the
   * whole document, up to 2 MiB, for one paragraph). The passage must be this document's, in its
   * current version: another document's or another project's passage id is 404, a citation of a
   * replaced version 410.
   */
  .get(
    "/:documentId/passages/:chunkId",
    describeRoute({
      tags: ["Knowledge"],
      summary: "A passage a reply cited (`?version=` checks it is still current)",
      responses: { 200: json(citedPassageSchema), ...errors(400, 401, 404, 410) },
    }),
    query(citedPassageQuerySchema),
    async (c) => {
      const { document } = await documentAccess(
        c.env.DB,
        c.get("caller").userId,
        c.req.param("documentId"),
      );
      const { version } = c.req.valid("query");
      return c.json(
        await citedPassage(
          c.env,
          { id: document.id, projectId: document.project_id },
          c.req.param("chunkId"),
          version,
        ),
      );
    },
  )

  /** Out of search at once (the index first), then out of the list and the quota. */
  .delete(
    "/:documentId",
    describeRoute({
      tags: ["Knowledge"],
      summary: "Delete a document: out of search at once, its text and index erased",
      responses: { 204: empty(), ...errors(401, 403, 404) },
    }),
    async (c) => {
      const { userId } = c.get("caller");
      const db = c.env.DB;
      const { document, access } = await documentAccess(db, userId, c.req.param("documentId"));
      requireRole(access, "admin");
      await knowledgeBase(c.env, document.project_id).remove(document.id);
      const now = Date.now();
      await db.batch([
        db.prepare("DELETE FROM knowledge_documents WHERE id = ?").bind(document.id),
        auditStatement(
          db,
          {
            orgId: document.org_id,
            actorId: userId,
            action: "document.deleted",
            subjectType: "document",
            subjectId: document.id,
          },
          { now, afterChange: true },
        ),
        db.prepare("DELETE FROM knowledge_versions WHERE document_id = ?").bind(document.id),
      ]);
      return c.body(null, 204);
    },
  );

/** Under /api/orgs: what the org's documents hold against its quota (any member). */
export const knowledgeStorage = new Hono<AppEnv>().get(
  "/:orgId/billing/storage",
  describeRoute({
    tags: ["Billing"],
    summary: "Knowledge storage used against the org's quota",
    responses: { 200: json(knowledgeStorageSchema), ...errors(401, 404) },
  }),
  async (c) => {
    const access = await orgAccess(c.env.DB, c.get("caller").userId, c.req.param("orgId"));
    const used = await storageUsed(c.env.DB, access.orgId);
    return c.json({
      orgId: access.orgId,
      usedBytes: used.bytes,
      quotaBytes: knowledgeQuota(c.env),
      documents: used.documents,
      maxDocumentBytes: MAX_DOCUMENT_BYTES,
    });
  },
);
