import { z } from "zod";
import { queryInteger } from "./pagination.ts";
import { pageSchemaOf } from "./responses.ts";
import { humanText } from "./schemas.ts";

/**
 * Knowledge (issue 31, docs/2026-12-06-knowledge.md): a project's documents, their versions, the
 * passages a search finds and the citations a reply carries. The API's shapes live here.
 */

/** The formats a document may be uploaded in (a body's Content-Type, without parameters). */
export const KNOWLEDGE_CONTENT_TYPES = [
  "text/plain",
  "text/markdown",
  "text/html",
  "application/pdf",
] as const;
export type KnowledgeContentType = (typeof KNOWLEDGE_CONTENT_TYPES)[number];

/** Largest upload of one document (the bytes of the file), 5 MiB. */
export const MAX_DOCUMENT_BYTES = 5 * 1024 * 1024;
/**
 * Largest text one document may yield once extracted, 2 MiB of UTF-8: a small PDF whose
 * compressed streams expand to far more (a "zip bomb") is refused rather than indexed.
 */
export const MAX_DOCUMENT_TEXT_BYTES = 2 * 1024 * 1024;
/** Default storage quota of an org's documents (uploaded bytes of current versions), 50 MiB. */
export const DEFAULT_KNOWLEDGE_QUOTA_BYTES = 50 * 1024 * 1024;

/** A document's name: the file name or a title, one line. */
export const documentNameSchema = humanText({ min: 1, max: 200 });

/**
 * `POST /api/projects/:projectId/documents` (and `.../documents/:id/versions`) with a JSON body:
 * the text of a text format. A PDF is sent as the raw body instead (`Content-Type:
 * application/pdf`, the name in `?name=`), as any format may be.
 */
export const documentJsonUploadSchema = z.strictObject({
  name: documentNameSchema,
  contentType: z.enum(["text/plain", "text/markdown", "text/html"]),
  text: z.string().min(1).max(MAX_DOCUMENT_BYTES),
});
export type DocumentJsonUpload = z.infer<typeof documentJsonUploadSchema>;

/** The query of a raw upload: its name (a new version may keep the document's). */
export const documentRawQuerySchema = z.strictObject({ name: documentNameSchema.optional() });

/** Where a document's newest version is in its indexing (the job a person can watch). */
export const DOCUMENT_STATUSES = ["queued", "indexing", "ready", "failed"] as const;
export type DocumentStatus = (typeof DOCUMENT_STATUSES)[number];

export const documentIndexingSchema = z
  .object({
    status: z.enum(DOCUMENT_STATUSES),
    /** The version being indexed, or the one searched when ready. */
    version: z.number().int().min(1),
    /** Passages indexed of `total`. */
    done: z.number().int().min(0),
    total: z.number().int().min(0),
    /** Why indexing failed; null otherwise. */
    error: z.string().nullable(),
  })
  .meta({ id: "DocumentIndexing" });
export type DocumentIndexing = z.infer<typeof documentIndexingSchema>;

export const documentVersionSchema = z
  .object({
    version: z.number().int().min(1),
    contentType: z.enum(KNOWLEDGE_CONTENT_TYPES),
    bytes: z.number().int().min(0),
    /** Characters of text extracted. */
    textChars: z.number().int().min(0),
    sha256: z.string(),
    createdBy: z.string().nullable(),
    createdAt: z.string(),
  })
  .meta({ id: "DocumentVersion" });
export type DocumentVersion = z.infer<typeof documentVersionSchema>;

export const documentSchema = z
  .object({
    id: z.string(),
    projectId: z.string(),
    orgId: z.string(),
    name: z.string(),
    contentType: z.enum(KNOWLEDGE_CONTENT_TYPES),
    /** The current version (the one a search finds once it is indexed). */
    version: z.number().int().min(1),
    bytes: z.number().int().min(0),
    createdBy: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
    indexing: documentIndexingSchema,
  })
  .meta({ id: "Document" });
export type KnowledgeDocument = z.infer<typeof documentSchema>;

export const documentDetailSchema = documentSchema
  .extend({ versions: z.array(documentVersionSchema) })
  .meta({ id: "DocumentDetail" });
export type DocumentDetail = z.infer<typeof documentDetailSchema>;

export const documentPageSchema = pageSchemaOf(documentSchema).meta({ id: "DocumentPage" });

/** One passage of a document: a chunk as indexed, with the heading path it sits under. */
export const passageSchema = z
  .object({
    chunkId: z.string(),
    heading: z.string(),
    text: z.string(),
    /** Its place in the document's text (UTF-16 offsets), for opening it in context. */
    start: z.number().int().min(0),
    end: z.number().int().min(0),
  })
  .meta({ id: "Passage" });
export type Passage = z.infer<typeof passageSchema>;

/** `GET /api/documents/:documentId/content`: the current version's text and its passages. */
export const documentContentSchema = z
  .object({
    documentId: z.string(),
    version: z.number().int().min(1),
    name: z.string(),
    text: z.string(),
    passages: z.array(passageSchema),
  })
  .meta({ id: "DocumentContent" });
export type DocumentContent = z.infer<typeof documentContentSchema>;

/** `?chunkId=` opens one passage (a citation's), `?version=` checks it is still current. */
export const documentContentQuerySchema = z.strictObject({
  chunkId: z
    .string()
    .regex(/^c\d{1,12}$/, "must be a passage id from a citation")
    .optional(),
  version: z
    .string()
    .regex(/^[1-9]\d{0,8}$/, "must be a version number")
    .transform(Number)
    .optional(),
});

/**
 * A citation a reply carries in its metadata (`metadata.citations`): which document, which
 * version, under which heading, and the passage quoted, so the chat and the embed can show it as
 * a source that opens the passage (`GET /api/documents/:documentId/content?chunkId=`).
 */
export const citationSchema = z
  .object({
    documentId: z.string(),
    documentName: z.string(),
    version: z.number().int().min(1),
    heading: z.string(),
    quote: z.string(),
    chunkId: z.string(),
  })
  .meta({ id: "Citation" });
export type Citation = z.infer<typeof citationSchema>;

/**
 * `GET /api/embed/documents/:documentId/passages/:chunkId`: a cited passage as an end user opens
 * it from a reply's sources (the passage alone, never the whole document).
 */
export const citedPassageSchema = z
  .object({
    documentId: z.string(),
    documentName: z.string(),
    /** The document's current version (a citation of an older one is 410). */
    version: z.number().int().min(1),
    chunkId: z.string(),
    heading: z.string(),
    text: z.string(),
  })
  .meta({ id: "CitedPassage" });
export type CitedPassage = z.infer<typeof citedPassageSchema>;

/** `?version=`: the version the citation names (absent: whatever is current). */
export const citedPassageQuerySchema = documentContentQuerySchema.pick({ version: true });

/** The metadata a reply with sources carries (merged into the message's metadata). */
export const citationsMetadataSchema = z.object({ citations: z.array(citationSchema) });
export type CitationsMetadata = z.infer<typeof citationsMetadataSchema>;

/** `GET /api/orgs/:orgId/billing/storage`: what the org's documents hold against its quota. */
export const knowledgeStorageSchema = z
  .object({
    orgId: z.string(),
    usedBytes: z.number().int().min(0),
    quotaBytes: z.number().int().min(0),
    documents: z.number().int().min(0),
    maxDocumentBytes: z.number().int().min(0),
  })
  .meta({ id: "KnowledgeStorage" });
export type KnowledgeStorage = z.infer<typeof knowledgeStorageSchema>;

/** `GET /api/projects/:projectId/knowledge/search?q=&limit=`: what the assistant's tool finds. */
export const knowledgeSearchQuerySchema = z.strictObject({
  q: z.string().min(1).max(1000),
  limit: queryInteger(1, 20).default(5),
});

/** A passage found: its citation and its whole text. */
export const knowledgeHitSchema = citationSchema
  .extend({ text: z.string() })
  .meta({ id: "KnowledgeHit" });
export type KnowledgeHit = z.infer<typeof knowledgeHitSchema>;

export const knowledgeSearchSchema = z
  .object({ items: z.array(knowledgeHitSchema) })
  .meta({ id: "KnowledgeSearch" });
